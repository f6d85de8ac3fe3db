from __future__ import annotations

from collections.abc import Iterator

from trainlint.checkpoint import (
    CheckpointOptions,
    claim_name,
    first_on,
    path_on_volume,
    storage,
    written_dirs,
)
from trainlint.document import Manifest
from trainlint.engine import Context
from trainlint.rule import Problem, Severity, rule
from trainlint.trainer import At, job_pod

#: A checkpoint location shared between runs: namespace, PVC and path inside it.
Location = tuple[str, str, str]


def _locations(job: Manifest, ctx: Context) -> dict[Location, tuple[str, At]]:
    """Where a TrainJob's checkpoints land on named PVCs: location → (path, where it is set)."""
    pod = job_pod(job, ctx)
    found: dict[Location, tuple[str, At]] = {}
    for directory in written_dirs(pod, ctx.options):
        where = storage(pod, directory.path)
        claim = claim_name(pod, where)
        if claim is None or "$(" in directory.path:
            continue
        location = (job.namespace, claim, path_on_volume(where, directory.path))
        mount_at = where.mount.at if where.mount else None
        at = first_on(job, directory.at, mount_at, where.volume_at) or At(job, ("metadata", "name"))
        found.setdefault(location, (directory.path, at))
    return found


@rule(
    "TL307", "checkpoint-dir-shared-between-trainjobs",
    kinds={"TrainJob"}, severity=Severity.ERROR,
    fix="Give each TrainJob its own checkpoint directory (`CKPT_DIR` in `spec.trainer.env`).",
    options=CheckpointOptions,
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Computes each TrainJob's effective checkpoint directory (its `spec.trainer` over its
    runtime) and the PVC under it, and flags a TrainJob of the run whose directory on that
    PVC is the same as an earlier TrainJob's on the same runtime.

    ## Why is this bad?
    The runs write their checkpoints into one directory: running together they overwrite
    each other's files, and one run started after another resumes from the other run's
    newest checkpoint instead of starting clean.

    ## Options
    `env-name-parts`, `env-names`, `flags`: how a checkpoint directory is recognised.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainingRuntime
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
                  template:
                    spec:
                      containers:
                        - name: node
                          image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
                          volumeMounts:
                            - name: ckpt
                              mountPath: /mnt/ckpt
                      volumes:
                        - name: ckpt
                          persistentVolumeClaim:
                            claimName: train-ckpt
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-lr-1
    spec:
      runtimeRef:
        kind: TrainingRuntime
        name: torch-ckpt
      trainer:
        env:
          - name: CKPT_DIR
            value: /mnt/ckpt/sft
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-lr-2
    spec:
      runtimeRef:
        kind: TrainingRuntime
        name: torch-ckpt
      trainer:
        env:
          - name: CKPT_DIR
            value: /mnt/ckpt/sft
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-lr-2
    spec:
      runtimeRef:
        kind: TrainingRuntime
        name: torch-ckpt
      trainer:
        env:
          - name: CKPT_DIR
            value: /mnt/ckpt/sft-lr-2
    ```
    """
    runtime = ctx.runtime_for(job)
    if runtime is None or len(ctx.trainjobs_using(runtime)) < 2:
        return  # no other TrainJob to share a directory with
    first = ctx.index.derived(
        runtime, ("first-writers", ctx.trainer_version, ctx.options),
        lambda: _first_writers(runtime, ctx),
    )
    for location, (path, at) in _locations(job, ctx).items():
        other = first.get(location)
        if other is not None and other is not job:
            yield Problem(
                at.path,
                f"TrainJob `{other.name}` also checkpoints to `{path}` on PVC `{location[1]}`: "
                "the runs overwrite each other's checkpoints, and a later run resumes from "
                "the other's instead of starting clean",
            )


def _first_writers(runtime: Manifest, ctx: Context) -> dict[Location, Manifest]:
    """Each location where TrainJobs of the runtime checkpoint, and the first of them in the
    run's order: the one a later TrainJob is told it clashes with. Worked out once per
    runtime, so a runtime with thousands of TrainJobs costs one look at each."""
    first: dict[Location, Manifest] = {}
    for user in ctx.trainjobs_using(runtime):
        for location in _locations(user, ctx):
            first.setdefault(location, user)
    return first
