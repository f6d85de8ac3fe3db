from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from trainlint.document import Manifest, dig, mappings
from trainlint.engine.context import Context
from trainlint.memo import PerRun
from trainlint.problem import Problem, Related, Severity
from trainlint.render.checkpoint import CheckpointOptions, Place, places
from trainlint.render.trainer import override_pods, pod_specs
from trainlint.rule import rule

#: A checkpoint location shared between runs: namespace, PVC and path inside it.
Location = tuple[str, str, str]


def _locations(job: Manifest, ctx: Context) -> dict[Location, Place]:
    """Where a TrainJob's checkpoints land on named PVCs, from every container of its
    JobSet that writes one."""
    found: dict[Location, Place] = {}
    for place in places(job, ctx, ctx.options):
        if place.claim is not None and "$(" not in place.path:
            found.setdefault((job.namespace, place.claim, place.inside), place)
    return found


@rule(
    "TL307", "checkpoint-dir-shared-between-trainjobs",
    kinds={"TrainJob"}, severity=Severity.ERROR,
    remediation=(
        "Give each TrainJob its own checkpoint directory (`CKPT_DIR` in `spec.trainer.env`)."
    ),
    options=CheckpointOptions,
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Computes each TrainJob's effective checkpoint directory (its `spec.trainer` over its
    runtime) and the PVC under it, and flags a TrainJob of the run whose directory on that
    PVC is the same as an earlier TrainJob's in its namespace, whatever their runtimes.

    ## Why is this bad?
    The runs write their checkpoints into one directory: running together they overwrite
    each other's files. Where the command shows the trainer resumes from what it finds
    (`get_last_checkpoint`, `resume_from_checkpoint`, `--resume`), one run started after
    another also resumes from the other run's newest checkpoint instead of starting clean;
    the message says so only then.

    ## When it stays silent
    On a TrainJob alone in its namespace, on directories on different PVCs or sub-paths,
    and when the trainer saves nothing (see TL301).

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
    neighbours = ctx.trainjobs_in(job.namespace)
    if len(neighbours) < 2:
        return  # no other TrainJob to share a PVC, and so a directory, with
    first, sharing = ctx.remember(  # the namespace's first TrainJob stands for it
        _FIRST_WRITERS, neighbours[0], lambda: _first_writers(job.namespace, ctx),
        ctx.trainer_version, ctx.options,
    )
    if id(job) not in sharing:
        return  # no other TrainJob mounts a PVC this one mounts
    for location, mine in _locations(job, ctx).items():
        other = first.get(location)
        if other is not None and other is not job:
            theirs = _locations(other, ctx)[location].at
            yield Problem(
                mine.at.path,
                f"TrainJob `{other.name}` also checkpoints to `{mine.path}` on PVC "
                f"`{location[1]}`: the runs overwrite each other's checkpoints"
                + (f", and a later run resumes from the other's instead of starting clean "
                   f"(`{mine.resume}`)" if mine.resume else ""),
                related=(Related(other, theirs.path,
                                 f"where TrainJob `{other.name}` checkpoints to `{mine.path}`"),),
            )


#: Where each TrainJob of a namespace checkpoints, worked out once per namespace: it reads
#: the TrainJobs of the namespace and the runtimes they find, nothing else.
_FIRST_WRITERS: PerRun[tuple[dict[Location, Manifest], frozenset[int]]] = PerRun(
    "first-writers",
    reads=lambda first: [("trainjobs-in", first.namespace), ("runtimes-in", first.namespace)],
)


def _first_writers(
    namespace: str, ctx: Context
) -> tuple[dict[Location, Manifest], frozenset[int]]:
    """Each location where TrainJobs of the namespace checkpoint, and the first of them in
    the run's order: the one a later TrainJob is told it clashes with; and the TrainJobs
    (by `id`) that may mount a PVC another one mounts, the only ones whose pods are built
    for it. Worked out once per namespace, so a namespace with thousands of TrainJobs
    costs one look at each."""
    neighbours = ctx.trainjobs_in(namespace)
    claims = [_claims(neighbour, ctx) for neighbour in neighbours]
    mounts = Counter(claim for some in claims for claim in some)
    sharing = [
        neighbour for neighbour, some in zip(neighbours, claims, strict=True)
        if any(mounts[claim] > 1 for claim in some)
    ]
    first: dict[Location, Manifest] = {}
    for neighbour in sharing:
        for location in _locations(neighbour, ctx):
            first.setdefault(location, neighbour)
    return first, frozenset(map(id, sharing))


def _claims(job: Manifest, ctx: Context) -> set[str]:
    """The PVCs a TrainJob's pods may mount, at a glance: those named by the pod specs of
    its runtime's jobs and by its own overrides or patches (never fewer than its pods
    mount, and no JobSet built to know it)."""
    runtime = ctx.runtime_for(job)
    pods = [spec for _, _, spec in pod_specs(runtime)] if runtime is not None else []
    pods += [pod for _, pod, _ in override_pods(job, ctx.trainer_version)]
    names = (
        dig(volume, "persistentVolumeClaim", "claimName")
        for pod in pods for _, volume in mappings(pod.get("volumes"))
    )
    return {name for name in names if isinstance(name, str)}
