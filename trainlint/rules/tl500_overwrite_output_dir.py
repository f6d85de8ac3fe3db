from __future__ import annotations

import re
from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render import checkpoint, script
from trainlint.render.trainer import rendered
from trainlint.rule import rule

#: A program that reads the setting itself (`if not args.overwrite_output_dir:`).
_READ = re.compile(r"\.overwrite_output_dir\b")


@rule(
    "TL500", "overwrite-output-dir",
    kinds=TRAINER_KINDS, severity=Severity.WARNING,
    remediation="Drop `overwrite_output_dir` so that a restarted run resumes from its checkpoints.",
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Finds `--overwrite_output_dir` or `overwrite_output_dir: true` (HF Trainer,
    LlamaFactory) in the trainer's command or args, inline configs included.

    ## Why is this bad?
    These trainers skip the resume from the output directory when they may overwrite it:
    after a restart, suspend or preemption the run starts again from step 0 and writes
    over the checkpoints it was meant to resume from.

    ## When it stays silent
    When the setting is false, or its value is not a boolean; in an inline Python program
    that only gives it to `TrainingArguments` (Hugging Face's Trainer never reads it: the
    example scripts, LlamaFactory and a program that reads `args.overwrite_output_dir`
    do); when the script saves no
    checkpoint (`save_strategy` `no`, `save_steps` not below `max_steps`); on a TrainJob,
    when the setting is the runtime's (reported there).

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
    for container in rendered(manifest, ctx).workload():
        if checkpoint.saves_nothing(container) is not None:
            continue  # no checkpoint to ignore
        found = script.read(container)
        setting = script.written_by(found, "overwrite_output_dir", manifest)
        if setting is not None and setting.in_program() and not any(
                _READ.search(text) for text in found.texts):
            continue  # given to Hugging Face's Trainer, which never reads it
        if setting is not None and script.truth(setting):
            yield Problem(
                setting.at.path,
                f"`overwrite_output_dir` ({setting.origin}) makes the trainer ignore the "
                "checkpoints in its output directory: a restarted or resumed run starts "
                "again from step 0 and overwrites them",
            )
