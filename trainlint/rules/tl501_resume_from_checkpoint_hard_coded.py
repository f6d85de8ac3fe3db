from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render import script
from trainlint.render.trainer import rendered
from trainlint.rule import rule


@rule(
    "TL501", "resume-from-checkpoint-hard-coded",
    kinds=TRAINER_KINDS, severity=Severity.WARNING,
    remediation="Resume from the newest checkpoint if one exists, else start clean "
    "(`resume_from_checkpoint=last or None`).",
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Finds `resume_from_checkpoint=True` (or `: true`) hard-coded in the trainer's command
    or args, inline scripts and configs included.

    ## Why is this bad?
    HF Trainer raises "No valid checkpoint found in output directory" when asked to
    resume and there is none: the first submission of the TrainJob fails before it
    trains a step. Only the restarts could ever work.

    ## When it stays silent
    When the value is a path, `False`, or an expression (`get_last_checkpoint(...)`,
    `last or None`): those resume only from what exists. On a TrainJob, when the setting
    is the runtime's (reported there).

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
        command:
          - python
          - -c
          - |
            from train import trainer
            trainer.train(resume_from_checkpoint=True)
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
        command:
          - python
          - -c
          - |
            from transformers.trainer_utils import get_last_checkpoint
            from train import trainer
            trainer.train(resume_from_checkpoint=get_last_checkpoint("/mnt/ckpt"))
    ```
    """
    for container in rendered(manifest, ctx).workload():
        setting = script.written_by(script.read(container), "resume_from_checkpoint", manifest)
        if setting is not None and setting.value is not None and script.truth(setting):
            yield Problem(
                setting.at.path,
                f"`resume_from_checkpoint` is true ({setting.origin}), which requires a "
                "checkpoint to exist: the first run has none, so the trainer fails before "
                "training a step",
            )
