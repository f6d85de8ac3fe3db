from __future__ import annotations

from collections.abc import Iterator, Sequence

from trainlint.document import Manifest
from trainlint.engine.context import Context
from trainlint.finding import Note
from trainlint.problem import Fact, Problem, Severity
from trainlint.render.checkpoint import CheckpointOptions, Place, places
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


def _shared(notes: Sequence[Note]) -> Iterator[tuple[Note, Problem]]:
    """Each TrainJob's location that an earlier TrainJob of the run writes too, on the
    first of them. A TrainJob of the context comes after every one checked, so it is
    never the earlier one: a new run that picks up where a finished one left off is no
    clash."""
    first: dict[tuple[str, ...], Note] = {}
    for note in notes:
        location, path, resume = note.value
        other = first.setdefault(tuple(location), note)
        if other.order == note.order:
            continue
        name = other.object.name
        yield note, note.problem(
            f"TrainJob `{name}` also checkpoints to `{path}` on PVC `{location[1]}`: the "
            "runs overwrite each other's checkpoints"
            + (f", and a later run resumes from the other's instead of starting clean "
               f"(`{resume}`)" if resume else ""),
            related=other.related(f"where TrainJob `{name}` checkpoints to `{path}`"),
        )


@rule(
    "TL307", "checkpoint-dir-shared-between-trainjobs",
    kinds={"TrainJob"}, severity=Severity.ERROR,
    remediation=(
        "Give each TrainJob its own checkpoint directory (`CKPT_DIR` in `spec.trainer.env`)."
    ),
    options=CheckpointOptions, across=_shared,
)
def check(job: Manifest, ctx: Context) -> Iterator[Fact]:
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
    on a mount whose folder of the volume is named by a variable the container does not
    spell out (`subPathExpr: $(JOBSET_NAME)`, from a pod label), and when the trainer
    saves nothing (see TL301).

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
    for (namespace, claim, inside), place in _locations(job, ctx).items():
        yield Fact(place.at.path, [[namespace, claim, inside], place.path, place.resume])
