from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from trainlint.document import KeyPath, Manifest, dig, mapping
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render import devices, script
from trainlint.render.trainer import framework, rendered, trainer_container, trainer_container_of
from trainlint.rule import rule


@rule(
    "TL276", "npu-nproc-from-cpu-count",
    kinds=TRAINER_KINDS, severity=Severity.WARNING,
    since="2.1",
    remediation="Set `spec.trainer.numProcPerNode` to the NPUs per node.",
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags NPUs (Huawei's `huawei.com/Ascend*`, or names config `device-resources` calls
    `npu`) among the trainer's resources (the runtime's `node` container, or a TrainJob's
    `resourcesPerNode`) on a torch runtime whose processes per node are left to `auto`:
    `numProcPerNode` unset or `auto` (in v2.1 the TrainJob's, else the runtime's
    `mlPolicy.torch.numProcPerNode`; from v2.2 the TrainJob's only).

    ## Why is this bad?
    With `auto` the torch plugin counts GPUs only (resource names containing `gpu`). It
    finds none, so PET_NPROC_PER_NODE becomes the CPU count of the node container
    (`requests.cpu`, else `limits.cpu`, at least 1): torchrun starts that many processes
    instead of one per NPU.

    ## When it stays silent
    When the torch plugin sets no PET_NPROC_PER_NODE (the runtime has no job labelled
    `trainer` with a `node` container, see TL201); when the command does not run `torchrun`
    (nothing reads PET_NPROC_PER_NODE), or gives it `--nproc_per_node` itself; when a
    resource named like a GPU is set; when the CPU count equals the NPU count.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: npu-run-1
    spec:
      runtimeRef:
        name: torch-distributed
      trainer:
        resourcesPerNode:
          limits:
            cpu: 32
            huawei.com/Ascend910: 8
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-distributed
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          replicatedJobs:
            - name: node
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: trainer
                spec:
                  template:
                    spec:
                      containers:
                        - name: node
                          image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
                          command: [torchrun, /workspace/train.py]
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: npu-run-1
    spec:
      runtimeRef:
        name: torch-distributed
      trainer:
        numProcPerNode: 8
        resourcesPerNode:
          limits:
            cpu: 32
            huawei.com/Ascend910: 8
    ```
    """
    runtime = ctx.runtime_for(manifest) if manifest.kind == "TrainJob" else manifest
    if runtime is None or framework(runtime) != "torch":
        return
    node = trainer_container_of(rendered(manifest, ctx))
    if node is None or "PET_NPROC_PER_NODE" not in node.env:
        return  # the torch plugin fills no container here (no trainer label, no `node`)
    found = script.read(node)
    if not script.runs_torchrun(found) or script.flag(found, "nproc_per_node"):
        return  # no torchrun reads PET_NPROC_PER_NODE
    runtime_nproc = (
        dig(runtime.body, "spec", "mlPolicy", "torch", "numProcPerNode")
        if ctx.trainer_version < (2, 2) else None
    )
    container = trainer_container(runtime)
    if manifest.kind != "TrainJob":
        if container is not None and runtime_nproc in (None, "auto"):
            yield from _npus(
                container[1].get("resources"), (*container[0], "resources"), ctx.device_resources
            )
        return
    trainer = mapping(dig(manifest.body, "spec", "trainer"))
    nproc = trainer.get("numProcPerNode", runtime_nproc)
    if nproc not in (None, "auto"):
        return
    if "resourcesPerNode" in trainer:
        yield from _npus(
            trainer["resourcesPerNode"], ("spec", "trainer", "resourcesPerNode"),
            ctx.device_resources,
        )
    elif trainer.get("numProcPerNode") == "auto" and container is not None:
        for problem in _npus(container[1].get("resources"), (), ctx.device_resources):
            yield Problem(("spec", "trainer", "numProcPerNode"), problem.message)


def _npus(resources: Any, path: KeyPath, extra: Mapping[str, str]) -> Iterator[Problem]:
    """A problem on the first NPU resource (by the device catalogue), unless a resource
    the controller takes for GPUs (any name containing `gpu`) makes `auto` count GPUs."""
    parts = {part: mapping(mapping(resources).get(part)) for part in ("requests", "limits")}
    if devices.gpu_named(resources):
        return
    for part in ("limits", "requests"):
        npu = next((name for name in parts[part] if devices.kind(str(name), extra) == "npu"), None)
        if npu is None:
            continue
        cpu = parts["requests"].get("cpu", parts["limits"].get("cpu"))
        if devices.whole(cpu, default=1) == devices.whole(parts[part][npu]):
            return  # as many CPUs as NPUs: the count comes out right
        count = f"`cpu: {cpu}`" if cpu is not None else "no CPU set, so 1"
        yield Problem(
            (*path, part, npu),
            f"`{npu}` gives the trainer NPUs, but with `numProcPerNode` auto the torch plugin "
            f"counts GPUs only: PET_NPROC_PER_NODE becomes the CPU count ({count}), not one "
            "process per NPU; set `numProcPerNode` to the NPUs per node",
        )
        return
