from __future__ import annotations

import re
from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine import Context
from trainlint.rule import Problem, Severity, rule
from trainlint.trainer import command_items

SAVE_STEPS = re.compile(r"\bsave_steps\b")
TOTAL_LIMIT = re.compile(r"\bsave_total_limit\b")


@rule(
    "TL502", "save-steps-without-save-total-limit",
    kinds={"TrainingRuntime", "ClusterTrainingRuntime", "TrainJob"}, severity=Severity.WARNING,
    fix="Add `save_total_limit` (for example 3) next to `save_steps`.",
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags `save_steps` in the trainer's command or args (HF Trainer, LlamaFactory flags
    or inline configs) when `save_total_limit` appears nowhere in them.

    ## Why is this bad?
    Without `save_total_limit` every checkpoint is kept. Full-weight checkpoints of a 7B
    model are tens of GiB each, so the PVC fills up and the run fails at a save, hours
    in, on a volume that cannot hold the next checkpoint.

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
    items = command_items(manifest, ctx)
    if any(TOTAL_LIMIT.search(item.value) for item in items):
        return
    for item in items:
        if SAVE_STEPS.search(item.value) and item.at.manifest is manifest:
            yield Problem(
                item.at.path,
                "`save_steps` without `save_total_limit` keeps every checkpoint: the PVC "
                "fills up and the run fails at a later save",
            )
            return
