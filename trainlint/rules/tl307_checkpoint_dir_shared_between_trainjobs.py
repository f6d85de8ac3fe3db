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
    writers = ctx.remember(  # the namespace's first TrainJob stands for it
        _FIRST_WRITERS, neighbours[0], lambda: _FirstWriters(job.namespace, ctx),
        ctx.trainer_version, ctx.options,
    )
    if id(job) not in writers.position:
        return  # no other TrainJob mounts a PVC this one mounts
    first = writers.up_to(job, ctx)
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


class _FirstWriters:
    """Each location where TrainJobs of a namespace checkpoint, and the first of them in
    the run's order: the one a later TrainJob is told it clashes with. Only the TrainJobs
    that may mount a PVC another one mounts (`sharing`) count: the only ones whose pods
    are built for it.

    The TrainJobs are looked at in order, only as far as the one that asks (`up_to`): the
    first to write a location of a TrainJob is never after it. A run checks the TrainJobs
    before it first, so where they checkpoint was worked out with their own renders;
    looking at all of them at the first would render every TrainJob of the
    namespace ahead of its own rules, and again for them (a render is kept only while it
    is recent): with 2,000 TrainJobs on one PVC, 4,001 renders instead of 2,001. What it
    holds only grows, and what it found never changes."""

    def __init__(self, namespace: str, ctx: Context) -> None:
        neighbours = ctx.trainjobs_in(namespace)
        claims = [_claims(neighbour, ctx) for neighbour in neighbours]
        mounts = Counter(claim for some in claims for claim in some)
        self.sharing = [
            neighbour for neighbour, some in zip(neighbours, claims, strict=True)
            if any(mounts[claim] > 1 for claim in some)
        ]
        #: The place of each sharing TrainJob (by `id`) among them.
        self.position = {id(neighbour): place for place, neighbour in enumerate(self.sharing)}
        self.first: dict[Location, Manifest] = {}
        self._looked_at = 0

    def up_to(self, job: Manifest, ctx: Context) -> dict[Location, Manifest]:
        """The first writers of the locations of the TrainJobs up to `job` (and perhaps
        more): those of `job`'s own locations are final."""
        end = self.position[id(job)] + 1
        while self._looked_at < end:
            neighbour = self.sharing[self._looked_at]
            for location in _locations(neighbour, ctx):
                self.first.setdefault(location, neighbour)
            self._looked_at += 1
        return self.first


#: The first writers of each namespace, kept for the run: they read the TrainJobs of the
#: namespace and the runtimes they find, nothing else.
_FIRST_WRITERS: PerRun[_FirstWriters] = PerRun(
    "first-writers",
    reads=lambda first: [("trainjobs-in", first.namespace), ("runtimes-in", first.namespace)],
)


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
