from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from trainlint import roundtrip
from trainlint.document import Manifest, Path, dig, mapping
from trainlint.engine.context import Context
from trainlint.problem import Edit, Fix, Problem, Related, Severity
from trainlint.render.trainer import (
    ANCESTOR_LABEL,
    JOBS,
    MAIN_CONTAINERS,
    TRAINER,
    ancestor,
    is_mpi,
    rendered,
    replicated_jobs,
)
from trainlint.rule import rule

_LABEL = f"`{ANCESTOR_LABEL}: trainer`"


@rule(
    "TL201", "trainer-job-missing-ancestor-label",
    kinds={"TrainingRuntime", "ClusterTrainingRuntime", "TrainJob"}, severity=Severity.ERROR,
    fix=f"Add {_LABEL} to `template.metadata.labels` of the trainer replicatedJob.",
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Checks that a (Cluster)TrainingRuntime marks its trainer job with the label
    `trainer.kubeflow.org/trainjob-ancestor-step: trainer` on the **job template**
    (`spec.template.spec.replicatedJobs[i].template.metadata.labels`), and says where the
    label is instead when it is misplaced or has another value. On a TrainJob whose runtime
    lacks the label, it names the `spec.trainer` fields that will be lost.

    ## Why is this bad?
    The controller reads the label from the job template only. Without it, the TrainJob's
    image, command, args, env, resourcesPerNode and (except for MPI) numNodes are dropped
    with no error and no event, and no framework variables (`PET_*`, `JAX_*`, `DMLC_*`) are
    injected: the job runs the runtime's defaults, on one node.

    ## When it stays silent
    When some replicatedJob carries the label with the value `trainer`; on a TrainJob,
    when its runtime is not among the checked files or the TrainJob sets no
    `spec.trainer` field that would be dropped (for MPI, `numNodes` and `numProcPerNode`
    are kept).

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
                spec:
                  template:
                    metadata:
                      labels:
                        trainer.kubeflow.org/trainjob-ancestor-step: trainer
                    spec:
                      containers:
                        - name: node
                          image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
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
    ```
    """
    if manifest.kind == "TrainJob":
        yield from _check_trainjob(manifest, ctx)
        return
    jobs = replicated_jobs(manifest)
    if any(ancestor(job) == TRAINER for _, job in jobs):
        return
    path, where, misplaced = _missing_label(manifest, jobs)
    yield Problem(
        path,
        f"{where}: every TrainJob's image, command, args, env, resourcesPerNode and numNodes "
        "will be dropped silently",
        fix=_label_fix(manifest, jobs, path if misplaced else None),
    )


def _missing_label(
    runtime: Manifest, jobs: Sequence[tuple[int, dict[str, Any]]]
) -> tuple[Path, str, bool]:
    """Where a runtime without the trainer label should have it (or has it misplaced), what
    is wrong there, and whether the label is misplaced."""
    found = _misplaced(runtime, jobs)
    if found:
        path, where = found
        return path, (
            f"the trainer label {_LABEL} is {where}, but the controller reads it only from "
            "a replicatedJob's `template.metadata.labels`"
        ), True
    return _expected_place(runtime, jobs), (
        f"no replicatedJob carries {_LABEL} on its job template"
    ), False


def _label_fix(
    manifest: Manifest, jobs: Sequence[tuple[int, dict[str, Any]]], misplaced: Path | None
) -> Fix | None:
    """Label the job the misplaced label was found on, else the job named like the
    trainer; a misplaced label is moved (with its comment), a misspelt one corrected."""
    index: str | int | None = None
    if misplaced is not None and misplaced[: len(JOBS)] == JOBS:
        index = misplaced[len(JOBS)]
        if misplaced[-1] != ANCESTOR_LABEL and dig(manifest.body, *misplaced) != TRAINER:
            return None  # a misspelt key with another value: which job it meant is unclear
    else:
        index = _trainer_named(manifest, jobs)
    if not isinstance(index, int):
        return None
    verb = "add" if misplaced is None else "move"
    title = f"{verb} {_LABEL} to the template of job `{dict(jobs)[index].get('name')}`"
    return Fix(title, _label_job(index, misplaced))


def _label_job(index: int, misplaced: Path | None) -> Edit:
    def edit(runtime: Any) -> None:
        labels_path = (*JOBS, index, "template", "metadata", "labels")
        labels = roundtrip.ensure(runtime, labels_path, first=True)
        comment = None
        if misplaced is not None and misplaced[:-1] == labels_path:
            if misplaced[-1] != ANCESTOR_LABEL:
                roundtrip.rename(labels, str(misplaced[-1]), ANCESTOR_LABEL)
        elif misplaced is not None:
            _, comment = roundtrip.take(roundtrip.at(runtime, misplaced[:-1]), ANCESTOR_LABEL)
            roundtrip.carry(labels, roundtrip.prune(runtime, misplaced[:-1]))
        if ANCESTOR_LABEL in labels:
            labels[ANCESTOR_LABEL] = TRAINER
        else:
            roundtrip.place(labels, ANCESTOR_LABEL, TRAINER, comment)

    return edit


def _trainer_named(manifest: Manifest, jobs: Sequence[tuple[int, dict[str, Any]]]) -> int | None:
    """The job named like the trainer (`launcher` for MPI, else `node`)."""
    trainer_name = "launcher" if is_mpi(manifest) else "node"
    return next((index for index, job in jobs if job.get("name") == trainer_name), None)


def _misplaced(
    manifest: Manifest, jobs: Sequence[tuple[int, dict[str, Any]]]
) -> tuple[Path, str] | None:
    """Where a trainer label was put instead, or spelt otherwise, if anywhere."""
    for index, job in jobs:
        labels_path = (*JOBS, index, "template", "metadata", "labels")
        value = ancestor(job)
        if value is not None and not (isinstance(value, str) and value in MAIN_CONTAINERS):
            where = f"misspelt on job `{job.get('name')}` (value `{value}`, not `trainer`)"
            return (*labels_path, ANCESTOR_LABEL), where
        for key in mapping(dig(job, "template", "metadata", "labels")):
            if key != ANCESTOR_LABEL and "ancestor" in key:
                where = f"misspelt on job `{job.get('name')}` (key `{key}`)"
                return (*labels_path, key), where
    for index, job in jobs:
        pod_labels = mapping(dig(job, "template", "spec", "template", "metadata", "labels"))
        if ANCESTOR_LABEL in pod_labels:
            path = (*JOBS, index, "template", "spec", "template", "metadata", "labels")
            return (*path, ANCESTOR_LABEL), f"on the pod template of job `{job.get('name')}`"
    for path, where in (
        (("spec", "template", "metadata", "labels"), "on the JobSet template (`spec.template`)"),
        (("metadata", "labels"), f"on the {manifest.kind} itself"),
    ):
        if ANCESTOR_LABEL in mapping(dig(manifest.body, *path)):
            return (*path, ANCESTOR_LABEL), where
    return None


def _expected_place(manifest: Manifest, jobs: Sequence[tuple[int, dict[str, Any]]]) -> Path:
    """The job template that should carry the label: the job named like the trainer."""
    index = _trainer_named(manifest, jobs)
    if index is None:
        return JOBS
    metadata = dig(dict(jobs)[index], "template", "metadata")
    return (*JOBS, index, "template", *(("metadata",) if metadata is not None else ()))


#: The fields of a TrainJob's `spec.trainer` (the API's `Trainer`, `trainlint.model`),
#: each applied to the trainer job by the controller.
TRAINER_FIELDS = frozenset(
    {"image", "command", "args", "env", "numNodes", "resourcesPerNode", "numProcPerNode"}
)


def _check_trainjob(job: Manifest, ctx: Context) -> Iterator[Problem]:
    runtime = ctx.runtime_for(job)
    trainer = mapping(dig(job.body, "spec", "trainer"))
    if runtime is None or not trainer:
        return
    jobs = replicated_jobs(runtime)
    if any(ancestor(runtime_job) == TRAINER for _, runtime_job in jobs):
        return
    # What reaches the JobSet: the keys of `spec.trainer` some rendered value came from
    # (MPI applies numNodes and numProcPerNode by job name, label or not).
    kept = {
        origin.path[2] for origin in rendered(job, ctx).tree.sources()
        if origin.manifest is job and origin.path[:2] == ("spec", "trainer")
        and len(origin.path) > 2
    }
    # A key the API does not know (a typo) never reaches the controller: TL006 names it.
    dropped = [key for key in trainer if key in TRAINER_FIELDS and key not in kept]
    if dropped:
        names = ", ".join(f"`{key}`" for key in dropped)
        yield Problem(
            ("spec", "trainer"),
            f"{runtime.describe()} has no job labelled {_LABEL}, so the controller silently "
            f"drops {names} set here: the job runs with the runtime's defaults",
            help=f"label the trainer job of {runtime.describe()} (see `trainlint rule TL201`)",
            related=(Related(runtime, *_missing_label(runtime, jobs)[:2]),),
        )
