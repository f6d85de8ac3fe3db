from __future__ import annotations

from collections.abc import Iterator, Sequence

from trainlint.document import Manifest
from trainlint.engine.context import Context
from trainlint.finding import Note
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Fact, Problem, Severity
from trainlint.render import Container, script
from trainlint.render.checkpoint import (
    CheckpointDir,
    CheckpointOptions,
    claim_name,
    named_by_variables,
    path_on_volume,
    places,
    storage,
    writers,
)
from trainlint.render.trainer import rendered
from trainlint.rule import rule


def _fixed(notes: Sequence[Note]) -> Iterator[tuple[Note, Problem]]:
    """Each fixed directory of a runtime, unless the runtime has TrainJobs in the run
    and none of them writes to it (each sets its own directory, or patches in its own
    claim), or where some of them told nothing (a file whose configuration turns this
    rule off): where they write is unknown."""
    users: dict[tuple[str, ...], list[set[tuple[str, str]]]] = {}
    for note in notes:
        if note.value[0] == "uses":
            users.setdefault(tuple(note.value[1]), []).append(
                {(claim, inside) for claim, inside in note.value[2]})
    for note in notes:
        if note.value[0] == "fixed":
            _, key, count, claim, place, message = note.value
            theirs = users.get(tuple(key), [])
            if len(theirs) < count:
                continue
            if not theirs or any((claim, place) in written for written in theirs):
                yield note, note.problem(message)


@rule(
    "TL308", "checkpoint-dir-fixed-in-runtime",
    kinds=TRAINER_KINDS, severity=Severity.WARNING,
    remediation="Set the checkpoint directory per TrainJob (`CKPT_DIR` in `spec.trainer.env`), or "
    "use a `volumeClaimPolicies` PVC per run.",
    options=CheckpointOptions, across=_fixed,
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Fact]:
    """## What it does
    Flags a runtime whose trainer writes checkpoints to a fixed directory on a named PVC,
    unless every TrainJob of the run that uses the runtime sets its own directory.

    ## Why is this bad?
    A runtime is shared by all its TrainJobs. With one fixed directory on one PVC, every
    run checkpoints to the same place: runs overwrite each other's checkpoints. Where the
    command shows the trainer resumes from what it finds (`get_last_checkpoint`,
    `resume_from_checkpoint`, `--resume`), a new run also resumes from the previous run's
    checkpoint instead of starting clean; the message says so only then (torchtune's
    recipes, for one, resume only when told to).

    ## When it stays silent
    When the directory is set per TrainJob (`$(VAR)`, a mount's `subPathExpr`, or a
    TrainJob's own setting), when it is not on a named PVC, when every TrainJob of the run
    sets its own (or patches a claim of its own into the volume), when some TrainJob of the
    run that uses it is not checked by this rule (its file's configuration turns the rule
    off: where it writes is unknown), and when the trainer saves nothing (see TL301).

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
                          env:
                            - name: CKPT_DIR
                              value: /mnt/ckpt/run
                          volumeMounts:
                            - name: ckpt
                              mountPath: /mnt/ckpt
                      volumes:
                        - name: ckpt
                          persistentVolumeClaim:
                            claimName: train-ckpt
    ```

    Use instead:
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
    ```
    """
    if manifest.kind == "TrainJob":  # where each TrainJob writes, inside its volumes
        runtime = ctx.runtime_for(manifest)
        if runtime is not None and any(True for _ in _fixed_dirs(runtime, ctx)):  # else no use
            written = sorted({(place.claim or "", place.inside)
                              for place in places(manifest, ctx, ctx.options)})
            pairs = [list(pair) for pair in written]
            yield Fact((), ["uses", list(ctx.runtime_key(manifest)), pairs])
        return
    key = list(ctx.key_of(manifest))
    count: int | None = None  # how many TrainJobs of the run use it: looked up once
    for directory, claim, place, container in _fixed_dirs(manifest, ctx):
        if count is None:
            count = len(ctx.trainjobs_using(manifest))
        resume = script.resumes(script.read(container))
        yield Fact(directory.at.path, [
            "fixed", key, count, claim, place,
            f"every TrainJob using this runtime checkpoints to `{directory.path}` on PVC "
            f"`{claim}` ({directory.origin}): runs overwrite each other's checkpoints"
            + (f", and a new run resumes from the last run's (`{resume}`)" if resume else ""),
        ])


def _fixed_dirs(
    runtime: Manifest, ctx: Context
) -> Iterator[tuple[CheckpointDir, str, str, Container]]:
    """Each directory the runtime's own trainer writes checkpoints to on a named PVC,
    whatever its TrainJobs: the PVC, the path inside it, and the container that writes."""
    for container, directories in writers(rendered(runtime, ctx), ctx.options):
        for directory in directories:
            where = storage(container, directory.path)
            claim = claim_name(container, where)
            if (claim is None or directory.varies or named_by_variables(container, where)
                    or directory.at.manifest is not runtime):
                continue
            yield directory, claim, path_on_volume(container, where, directory.path), container
