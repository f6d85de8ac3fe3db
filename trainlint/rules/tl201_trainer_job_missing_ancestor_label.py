from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from trainlint import roundtrip
from trainlint.document import KeyPath, Manifest, dig, is_count, mapping, says_nothing
from trainlint.engine.context import Context
from trainlint.finding import Note
from trainlint.kinds import TRAINER_KINDS
from trainlint.model.check import Flaw, issues
from trainlint.problem import Edit, Fact, Fix, Problem, Related, Severity
from trainlint.render import INITIALIZERS
from trainlint.render.trainer import (
    ANCESTOR_LABEL,
    JOBS,
    MAIN_CONTAINERS,
    PRE_RELEASE_NODE,
    TRAINER,
    ancestor,
    container_names,
    is_mpi,
    rendered,
    replicated_jobs,
)
from trainlint.rule import rule

_LABEL = f"`{ANCESTOR_LABEL}: trainer`"


def _lost(notes: Sequence[Note]) -> Iterator[tuple[Note, Problem]]:
    """Each runtime without the trainer label that something shows loses a value: first
    a TrainJob of the run that uses it and sets one the controller drops (the first by
    namespace and name, so that the message does not follow the order of the files),
    else what the runtime says itself (`_evidence`)."""
    dropping: dict[tuple[str, ...], Note] = {}
    for note in sorted(notes, key=lambda note: (note.object.namespace or "", note.object.name)):
        if note.value[0] == "drops":  # the first by namespace and name, wherever written
            dropping.setdefault(tuple(note.value[1]), note)
    for note in notes:
        if note.value[0] != "unlabelled":
            continue
        _, key, where, own, own_path = note.value
        user = dropping.get(tuple(key))
        if user is not None:
            names = ", ".join(f"`{field}`" for field in user.value[2])
            name = user.object.name
            yield note, note.problem(
                f"{where}: the controller silently drops {names} that TrainJob `{name}` sets",
                related=user.related(f"TrainJob `{name}` sets {names}"),
            )
        elif own is not None:
            consequence, related = own
            yield note, note.problem(
                f"{where}: {consequence}", related=note.related(related, tuple(own_path)))


@rule(
    "TL201", "trainer-job-missing-ancestor-label",
    kinds=TRAINER_KINDS, severity=Severity.ERROR,
    remediation=f"Add {_LABEL} to `template.metadata.labels` of the trainer replicatedJob.",
    across=_lost,
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem | Fact]:
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
    injected, and the runtime's own `mlPolicy.numNodes` sizes no job: the job runs the
    runtime's defaults, on one node. A runtime with no replicatedJobs at all (its jobs
    written a floor too high, or left out) is accepted too: the JobSet of each of its
    TrainJobs has no Job, runs nothing and never completes (JobSet judges its success
    policy only once a Job succeeded).

    ## When it stays silent
    When some replicatedJob carries the label with the value `trainer`. On a runtime with no
    such label anywhere (not even misplaced), unless something shows a value is lost: a
    TrainJob of the run that uses it sets one the controller drops, its own
    `mlPolicy.numNodes` reaches no job, or it carries the Kubeflow SDK's
    `trainer.kubeflow.org/framework` label (the SDK lists it, and fails on it). A runtime
    used as a plain JobSet, whose TrainJobs only name it, loses nothing; nor do TrainJobs
    that write a field empty (`resourcesPerNode: {}`, as builders emit it). (A runtime whose
    JobSet spec is written with no job in it is reported alone: every TrainJob of it runs
    nothing. One with no JobSet spec at all, most often a page's excerpt, is judged by its
    TrainJobs.) On a runtime the API server rejects because its `spec` or `template` is
    missing or holds only fields it prunes (TL008, TL009 say so): it never exists, so no
    TrainJob of it loses anything. On a TrainJob, when its runtime is not among the checked
    files or is such a runtime, or when the TrainJob sets no `spec.trainer` field that would
    be dropped (for MPI, `numNodes` and `numProcPerNode` are kept).

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
    if any(ancestor(job) == TRAINER for _, job in jobs) or _never_created(manifest, ctx):
        return
    if not jobs and isinstance(dig(manifest.body, "spec", "template", "spec"), dict):
        # Its JobSet spec is written, with no job: every TrainJob of it runs nothing. (A
        # runtime without one is most often cut short on a page: judged by its TrainJobs.)
        yield Problem(_expected_place(manifest, jobs), _NO_JOBS)
        return
    path, where, misplaced = _missing_label(manifest, jobs)
    fix = _label_fix(manifest, jobs, path if misplaced else None)
    if misplaced:  # the label was meant: whatever a TrainJob sets is lost
        yield Problem(
            path, f"{where}: every TrainJob's image, command, args, env, resourcesPerNode "
            "and numNodes will be dropped silently", fix=fix,
        )
        return
    # Whether anything is lost needs the TrainJobs that use it: `_lost` judges.
    own = _evidence(manifest, ctx)
    yield Fact(path, [
        "unlabelled", list(ctx.key_of(manifest)), where,
        None if own is None else [own[0], own[2]], None if own is None else list(own[1]),
    ], fix)


#: What a runtime with no replicatedJobs does (JobSet judges its success policy only once
#: a Job succeeded).
_NO_JOBS = ("the JobSet template has no replicatedJobs (`spec.template.spec.replicatedJobs`), "
            "so the JobSet of each TrainJob has no Job, runs nothing and never completes")
#: Where a runtime left with nothing (or nothing the schema knows) is rejected.
_EMPTY_AT = frozenset({("spec",), ("spec", "template")})


def _never_created(runtime: Manifest, ctx: Context) -> bool:
    """Whether the API server rejects the runtime for a `spec` or `template` that is missing
    or holds only pruned fields (TL008, TL009): no TrainJob of it ever reaches the
    controller, so nothing is dropped, whatever labels its jobs will have once written
    where the schema has them."""
    return any(
        issue.flaw in (Flaw.INVALID_VALUE, Flaw.MISSING_REQUIRED) and issue.path in _EMPTY_AT
        for issue in issues(runtime, ctx)
    )


#: The label by which the Kubeflow SDK lists a runtime (Trainer's docs, "Framework Label
#: Requirement"); the SDK (0.1 to 0.5) reads the trainer container of each runtime it
#: lists, by the ancestor label, and raises where there is none.
FRAMEWORK_LABEL = "trainer.kubeflow.org/framework"


def _evidence(runtime: Manifest, ctx: Context) -> tuple[str, KeyPath, str] | None:
    """What the runtime itself shows it loses, if anything (its own `mlPolicy.numNodes`
    that reaches no job, or the SDK's framework label, by which the SDK lists it and
    fails), the key that shows it and what that key does."""
    nodes = dig(runtime.body, "spec", "mlPolicy", "numNodes")
    # Each job's pods, per replica and in all (replicas of one pod are nodes too).
    counts = {job.name: (job.pods, job.pods * job.replicas) for job in rendered(runtime, ctx).jobs
              if job.ancestor not in INITIALIZERS}
    if is_count(nodes) and counts and all(nodes not in pods for pods in counts.values()):
        runs = ", ".join(f"job `{name}` runs {pods} pod{'s' * (pods != 1)}"
                         for name, (_, pods) in counts.items())
        return (f"`mlPolicy.numNodes` {nodes} reaches no job ({runs})",
                ("spec", "mlPolicy", "numNodes"), "the node count it sets")
    labels = mapping(dig(runtime.body, "metadata", "labels"))
    if FRAMEWORK_LABEL in labels:
        return (
            f"the Kubeflow SDK takes it for one of its runtimes (`{FRAMEWORK_LABEL}`) and "
            "finds no trainer container in it: its `list_runtimes()` fails, for every "
            "runtime, and `get_runtime()` for this one (\"Runtime doesn't have trainer "
            "container\"), so no trainer of the SDK can use it",
            ("metadata", "labels", FRAMEWORK_LABEL), "what makes the SDK list it",
        )
    return None


def _missing_label(
    runtime: Manifest, jobs: Sequence[tuple[int, dict[str, Any]]]
) -> tuple[KeyPath, str, bool]:
    """Where a runtime without the trainer label should have it (or has it misplaced), what
    is wrong there, and whether the label is misplaced."""
    found = _misplaced(runtime, jobs)
    if found:
        path, where = found
        return path, (
            f"the trainer label {_LABEL} is {where}, but the controller reads it only from "
            "a replicatedJob's `template.metadata.labels`"
        ), True
    if not jobs:
        return _expected_place(runtime, jobs), _NO_JOBS, False
    return _expected_place(runtime, jobs), (
        f"no replicatedJob carries {_LABEL} on its job template{_pre_release(jobs)}"
    ), False


def _pre_release(jobs: Sequence[tuple[int, dict[str, Any]]]) -> str:
    """What a runtime written before v2.0.0 shows: its trainer job under the name the
    controller found it by then."""
    if any(job.get("name") == PRE_RELEASE_NODE for _, job in jobs):
        return f" (before v2.0.0 the controller found job `{PRE_RELEASE_NODE}` by its name)"
    return ""


def _label_fix(
    manifest: Manifest, jobs: Sequence[tuple[int, dict[str, Any]]], misplaced: KeyPath | None
) -> Fix | None:
    """Label the job the misplaced label was found on, else the job named like the
    trainer; a misplaced label is moved (with its comment), a misspelt one corrected. No
    fix for a job without a `node` container or of more than one replica: labelled, the
    runtime webhook denies it (TL204, TL203), and the controller would still fill no
    container from the TrainJob."""
    index: str | int | None = None
    if misplaced is not None and misplaced[: len(JOBS)] == JOBS:
        index = misplaced[len(JOBS)]
        if misplaced[-1] != ANCESTOR_LABEL and dig(manifest.body, *misplaced) != TRAINER:
            return None  # a misspelt key with another value: which job it meant is unclear
    else:
        index = _trainer_named(manifest, jobs)
    if not isinstance(index, int):
        return None
    job = dict(jobs)[index]
    if MAIN_CONTAINERS[TRAINER] not in container_names(job) or job.get("replicas", 1) != 1:
        return None
    verb = "add" if misplaced is None else "move"
    title = f"{verb} {_LABEL} to the template of job `{job.get('name')}`"
    return Fix(title, _label_job(index, misplaced))


def _label_job(index: int, misplaced: KeyPath | None) -> Edit:
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
) -> tuple[KeyPath, str] | None:
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


def _expected_place(manifest: Manifest, jobs: Sequence[tuple[int, dict[str, Any]]]) -> KeyPath:
    """The job template that should carry the label: the job named like the trainer."""
    index = _trainer_named(manifest, jobs)
    if index is None:
        return JOBS
    metadata = dig(dict(jobs)[index], "template", "metadata")
    return (*JOBS, index, "template", *(("metadata",) if metadata is not None else ()))


#: The fields of a TrainJob's `spec.trainer` (the API's `Trainer`, `trainlint.model`),
#: each applied to the trainer job by the controller, in the API's order: a message names
#: them so, however they are written.
TRAINER_FIELDS = (
    "image", "command", "args", "env", "numNodes", "resourcesPerNode", "numProcPerNode"
)


def _dropped(job: Manifest, ctx: Context) -> list[str]:
    """The `spec.trainer` keys of a TrainJob whose runtime has no trainer label that the
    controller drops: those no rendered value came from (MPI applies numNodes and
    numProcPerNode by job name, label or not). A key the API does not know (a typo) never
    reaches the controller: TL006 names it."""
    runtime = ctx.runtime_for(job)
    trainer = mapping(dig(job.body, "spec", "trainer"))
    if runtime is None or not trainer or _never_created(runtime, ctx):
        return []
    if any(ancestor(runtime_job) == TRAINER for _, runtime_job in replicated_jobs(runtime)):
        return []
    kept = {
        origin.path[2] for origin in rendered(job, ctx).tree.sources()
        if origin.manifest is job and origin.path[:2] == ("spec", "trainer")
        and len(origin.path) > 2
    }
    return [key for key in TRAINER_FIELDS
            if key in trainer and key not in kept and not says_nothing(trainer[key])]


def _check_trainjob(job: Manifest, ctx: Context) -> Iterator[Problem | Fact]:
    dropped = _dropped(job, ctx)
    runtime = ctx.runtime_for(job)
    if dropped and runtime is not None:
        # What shows, on the runtime, that its missing label loses something (`_lost`).
        yield Fact(("spec", "trainer"), ["drops", list(ctx.runtime_key(job)), dropped])
        jobs = replicated_jobs(runtime)
        names = ", ".join(f"`{key}`" for key in dropped)
        yield Problem(
            ("spec", "trainer"),
            f"{runtime.describe()} has no job labelled {_LABEL}{_pre_release(jobs)}, so the "
            f"controller silently drops {names} set here: the job runs with the runtime's "
            "defaults" if jobs else
            f"{runtime.describe()} has no replicatedJobs, so the JobSet of this TrainJob has no "
            f"Job: nothing runs, the TrainJob never completes, and the controller drops {names} "
            "set here",
            remediation=(
                f"label the trainer job of {runtime.describe()} (see `trainlint rule TL201`)"
            ),
            related=(Related(runtime, *_missing_label(runtime, jobs)[:2]),),
        )
