from __future__ import annotations

import re
from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine import Context
from trainlint.rule import Problem, Severity, rule
from trainlint.trainer import command_matches

OVERWRITE = re.compile(
    r"--overwrite_output_dir(?!\s*[=\s]\s*[\"']?(?:false|False|0)\b)"
    r"|\boverwrite_output_dir[ \t]*[:=][ \t]*[\"']?(?:true|True|1)\b"
)


@rule(
    "TL500", "overwrite-output-dir",
    kinds={"TrainingRuntime", "ClusterTrainingRuntime", "TrainJob"}, severity=Severity.WARNING,
    fix="Drop `overwrite_output_dir` so that a restarted run resumes from its checkpoints.",
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Finds `--overwrite_output_dir` or `overwrite_output_dir: true` (HF Trainer,
    LlamaFactory) in the trainer's command or args, inline configs included.

    ## Why is this bad?
    These trainers skip the resume from the output directory when they may overwrite it:
    after a restart, suspend or preemption the run starts again from step 0 and writes
    over the checkpoints it was meant to resume from.

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
          - llamafactory-cli
          - train
          - /config/sft.yaml
          - output_dir=/mnt/ckpt/sft
          - overwrite_output_dir=true
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
          - llamafactory-cli
          - train
          - /config/sft.yaml
          - output_dir=/mnt/ckpt/sft
    ```
    """
    for item, found in command_matches(manifest, ctx, OVERWRITE):
        yield Problem(
            item.at.path,
            f"`{found}` makes the trainer ignore the checkpoints in its output "
            "directory: a restarted or resumed run starts again from step 0 and "
            "overwrites them",
        )
