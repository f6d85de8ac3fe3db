from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render import checkpoint, script
from trainlint.render.trainer import rendered
from trainlint.rule import rule


@rule(
    "TL502", "save-steps-without-save-total-limit",
    kinds=TRAINER_KINDS, severity=Severity.WARNING,
    remediation="Add `save_total_limit` (for example 3) next to `save_steps`.",
    preview=True,
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags `save_steps` in the trainer's command or args (HF Trainer, LlamaFactory flags
    or inline configs) when `save_total_limit` appears nowhere in them.

    ## Why is this bad?
    Without `save_total_limit` every checkpoint is kept. Full-weight checkpoints of a 7B
    model are tens of GiB each, so the PVC fills up and the run fails at a save, hours
    in, on a volume that cannot hold the next checkpoint.

    ## When it stays silent
    When the script saves nothing (`save_strategy` `no`, `save_steps` not below
    `max_steps`), or `save_total_limit` is set anywhere in the command.

    ## Preview
    Whether the volume fills depends on the size of a checkpoint (a LoRA adapter is a
    few MiB, full weights tens of GiB), the number of saves and the volume, none of which
    a manifest states: on real manifests the warning was as often wrong as right.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft
    spec:
      runtimeRef:
        name: torch-distributed
      trainer:
        args:
          - --output_dir=/mnt/ckpt/sft
          - --save_steps=100
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft
    spec:
      runtimeRef:
        name: torch-distributed
      trainer:
        args:
          - --output_dir=/mnt/ckpt/sft
          - --save_steps=100
          - --save_total_limit=3
    ```
    """
    for container in rendered(manifest, ctx).workload():
        if checkpoint.saves_nothing(container) is not None:
            continue
        found = script.read(container)
        setting = script.written_by(found, "save_steps", manifest)
        if setting is not None and found.get("save_total_limit") is None:
            yield Problem(
                setting.at.path,
                f"`save_steps` ({setting.origin}) without `save_total_limit` keeps every "
                "checkpoint: a volume too small for all of them fills up and the run fails "
                "at a later save",
            )
