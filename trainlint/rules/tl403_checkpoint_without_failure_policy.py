from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trainlint.document import Manifest, mapping, mappings
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render import Render
from trainlint.render.checkpoint import CheckpointDir, CheckpointOptions, writers
from trainlint.render.trainer import JOBSET, jobset, rendered, runtime_render
from trainlint.rule import rule


def _message(path: str, origin: str) -> str:
    return (
        f"the trainer checkpoints to `{path}` ({origin}) but its job has `backoffLimit: 0` "
        "and the runtime's JobSet no `failurePolicy`: the first pod failure fails the whole "
        "TrainJob, and nothing restarts it to resume from the checkpoint"
    )


@rule(
    "TL403", "checkpoint-without-failure-policy",
    kinds=TRAINER_KINDS, severity=Severity.WARNING,
    remediation=(
        "Add `failurePolicy: {maxRestarts: N}` (with `backoffLimit: 0`) to the runtime's JobSet."
    ),
    options=CheckpointOptions,
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags a trainer that writes checkpoints (env vars such as `CKPT_DIR`, flags such as
    `--output_dir`) in a runtime whose trainer job sets `backoffLimit: 0` and whose JobSet
    has no `failurePolicy`. On a TrainJob, it fires when the TrainJob sets the checkpoint
    directory and its runtime has none.

    ## Why is this bad?
    With `backoffLimit: 0` the Job fails with its first failed pod, and without
    `failurePolicy` the JobSet fails with it: there is no restart at all, so the
    checkpoint is written but never used to resume, and someone must resubmit the run.

    ## When it stays silent
    When the JobSet has a `failurePolicy`, when the trainer job's `backoffLimit` is not
    0 (the Job then retries the pod, which can resume), when its `podFailurePolicy`
    ignores a disrupted pod (`action: Ignore` on `DisruptionTarget`: a preempted or
    evicted pod is replaced without counting, and resumes; only crashes fail at once),
    when nothing is saved (see TL301), and on a TrainJob whose runtime checkpoints by
    itself (reported there).

    ## Options
    `env-name-parts`, `env-names`, `flags`: how a checkpoint directory is recognised.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-ckpt
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
                  backoffLimit: 0
                  template:
                    spec:
                      containers:
                        - name: node
                          image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
                          env:
                            - name: CKPT_DIR
                              value: /mnt/ckpt
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-ckpt
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          failurePolicy:
            maxRestarts: 3
          replicatedJobs:
            - name: node
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: trainer
                spec:
                  backoffLimit: 0
                  template:
                    spec:
                      containers:
                        - name: node
                          image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
                          env:
                            - name: CKPT_DIR
                              value: /mnt/ckpt
    ```
    """
    runtime = ctx.runtime_for(manifest) if manifest.kind == "TrainJob" else manifest
    if runtime is None or "failurePolicy" in jobset(runtime):
        return
    own = _unretried(runtime_render(runtime, ctx), ctx.options)
    if manifest.kind != "TrainJob":
        if own:
            yield Problem(JOBSET, _message(own[0].path, own[0].origin))
        return
    if own:
        return  # reported on the runtime
    for directory in _unretried(rendered(manifest, ctx), ctx.options):
        if directory.at.manifest is manifest:
            yield Problem(directory.at.path, _message(directory.path, directory.origin))
            return


def _unretried(render: Render, options: CheckpointOptions) -> list[CheckpointDir]:
    """The checkpoint directories of containers whose Job retries no pod (`backoffLimit:
    0`): a failed pod fails the Job at once (others retry the pod, which may resume)."""
    return [
        directory for container, directories in writers(render, options)
        if container.job.spec.get("backoffLimit") == 0
        and not _replaces_disrupted(container.job.spec)
        for directory in directories
    ]


def _replaces_disrupted(spec: dict[str, Any]) -> bool:
    """Whether a Job's `podFailurePolicy` ignores a disrupted pod (`Ignore` on the
    `DisruptionTarget` condition), which the Job then replaces without counting it."""
    return any(
        rule.get("action") == "Ignore" and any(
            condition.get("type") == "DisruptionTarget"
            for _, condition in mappings(rule.get("onPodConditions")))
        for _, rule in mappings(mapping(spec.get("podFailurePolicy")).get("rules"))
    )
