from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trainlint.document import KeyPath, Manifest, dig, mapping, sequence
from trainlint.engine.context import Context
from trainlint.problem import Problem, Severity
from trainlint.render import devices
from trainlint.render.trainer import POD_SPEC, is_torchtune, named, trainer_job
from trainlint.rule import rule

#: Models the torchtune recipes support, by the first release with that set.
MODELS = {
    (2, 0): {"llama3_2/1B", "llama3_2/7B", "llama3_3/70B"},
    (2, 1): {"llama3_2/1B", "llama3_2/3B", "llama3_3/70B", "qwen2_5/1.5B"},
}
MULTI_NODE_MODEL = "llama3_3/70B"
QLORA_SMALL_MODELS = {"llama3_2/1B", "llama3_2/3B"}
TRAINER: KeyPath = ("spec", "trainer")


@rule(
    "TL213", "torchtune-unsupported-config", kinds={"TrainJob"}, severity=Severity.ERROR,
    remediation="Use a model and a node, device and LoRA setup the torchtune runtime supports.",
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    For a TrainJob whose `spec.trainer.command` is `[tune, run]` on a torch runtime (a
    torchtune fine-tune), checks what the torchtune plugin supports: the model named by the
    runtime (`torchtune-<model>-<size>`, e.g. `torchtune-llama3.2-1b`), a single node
    except for Llama 3.3 70B, QLoRA only for Llama 3.2 on one device and never for Qwen 2.5
    (v2.1+), and no LoRA on several nodes (v2.3+). On v2.0–v2.1 these checks run only when
    `numProcPerNode` is set, and then crash the webhook if `numNodes` is not.

    ## Why is this bad?
    The Trainer webhook denies the TrainJob, e.g. "must have a supported pretrained model,
    invalid model configured: llama3_2/8B" or "must be 1 for llama3_2/1B model". The recipe
    and config file are chosen from the runtime name, so a renamed runtime is refused too.

    ## When it stays silent
    On TrainJobs that are not `tune run` on a torch runtime, when the runtime is not
    among the checked files, and when the GPU count is ambiguous (several `gpu` names of
    different quantities).

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torchtune-llama3.2-1b
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          replicatedJobs: []
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: tune-run-1
    spec:
      runtimeRef:
        name: torchtune-llama3.2-1b
      trainer:
        command: [tune, run]
        numNodes: 2
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torchtune-llama3.2-1b
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          replicatedJobs: []
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: tune-run-1
    spec:
      runtimeRef:
        name: torchtune-llama3.2-1b
      trainer:
        command: [tune, run]
        numNodes: 1
    ```
    """
    runtime = ctx.runtime_for(job)
    if runtime is None or not is_torchtune(job, runtime):
        return
    trainer = mapping(dig(job.body, *TRAINER))
    version = ctx.trainer_version
    if version <= (2, 1):
        if "numProcPerNode" not in trainer:
            return  # the v2.0-v2.1 plugin returns before its torchtune checks
        if "numNodes" not in trainer:
            yield Problem(
                TRAINER,
                "`numNodes` is not set on a torchtune TrainJob that sets `numProcPerNode`: the "
                "Trainer webhook of this release dereferences it and crashes, so the apply "
                "fails with an internal error",
                remediation="set `numNodes: 1`",
            )
            return
    ref_name = dig(job.body, "spec", "runtimeRef", "name")
    model = _model(ref_name if isinstance(ref_name, str) else "")
    supported = next(models for since, models in reversed(MODELS.items()) if version >= since)
    if model not in supported:
        yield _denied(
            ("spec", "runtimeRef", "name"),
            f"the runtime name gives model `{model}`, which torchtune does not support",
            f"must have a supported pretrained model, invalid model configured: {model}",
        )
    nodes = trainer.get("numNodes", 1)
    nodes = nodes if isinstance(nodes, int) else 1
    args = [arg for arg in sequence(trainer.get("args")) if isinstance(arg, str)]
    if nodes > 1 and model != MULTI_NODE_MODEL:
        yield _denied(
            (*TRAINER, "numNodes"), f"only {MULTI_NODE_MODEL} trains on several nodes",
            f"must be 1 for {model} model",
        )
    if version >= (2, 1) and nodes == 1 and _qlora(args):
        yield from _qlora_problems(job, runtime, model, trainer)
    if version >= (2, 3) and nodes > 1 and any("model.lora_attn_modules" in arg for arg in args):
        yield _denied(
            (*TRAINER, "numNodes"), "LoRA (`model.lora_attn_modules`) runs on one node only",
            "LoRA fine-tuning is not supported for multi-node training in TorchTune",
        )


def _denied(path: KeyPath, what: str, detail: str) -> Problem:
    return Problem(path, f'{what}: the Trainer webhook denies the TrainJob ("{detail}")')


def _model(runtime_name: str) -> str:
    """The torchtune model a runtime name stands for: `torchtune-llama3.2-1b` → `llama3_2/1B`."""
    parts = runtime_name.split("-")
    if len(parts) != 3:
        return ""
    return f"{parts[1].replace('.', '_')}/{parts[2].upper()}"


def _qlora(args: list[str]) -> bool:
    """QLoRA: the base model is quantized, and DoRA is not asked for."""
    if any("model.use_dora" in arg for arg in args):
        return False
    return any(
        "model.quantize_base" in arg and arg.partition("=")[2].lower() != "false" for arg in args
    )


def _qlora_problems(
    job: Manifest, runtime: Manifest, model: str, trainer: dict[str, Any]
) -> Iterator[Problem]:
    if model == "qwen2_5/1.5B":
        yield _denied(
            ("spec", "runtimeRef", "name"), f"QLoRA (`model.quantize_base`) with {model}",
            f"QLoRA is not supported for {model} model",
        )
    gpus = _gpus(runtime, trainer)
    single = trainer.get("numProcPerNode") == 1 or gpus == 1
    if model in QLORA_SMALL_MODELS and not single and gpus is not None:
        what = f"QLoRA with {model} runs on a single device"
        yield _denied(
            (*TRAINER, "numProcPerNode"), what,
            f"must be auto or 1 for {model} model when using QLoRA",
        )
        yield _denied(
            (*TRAINER, "resourcesPerNode"), what,
            f"must have gpu resource with value 1 for {model} model when using QLoRA",
        )


def _gpus(runtime: Manifest, trainer: dict[str, Any]) -> int | None:
    """GPUs per node as the webhook reads them (resourcesPerNode, else the runtime's node
    container); None when it would pick among `gpu` names of different quantities."""
    resources = trainer.get("resourcesPerNode")
    if not isinstance(resources, dict):
        found = trainer_job(runtime)
        node = named(dig(found[1], *POD_SPEC, "containers"), "node") if found else None
        resources = mapping(node[1].get("resources")) if node else {}
    return devices.controller_gpu_count(resources)
