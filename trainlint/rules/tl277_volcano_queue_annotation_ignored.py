from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import KeyPath, Manifest, dig, dotted, mapping, mappings
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.patches import PATCH_JOBS
from trainlint.problem import Problem, Related, Severity
from trainlint.render.trainer import JOBS
from trainlint.render.volcano import (
    PATCHES,
    QUEUE,
    TEMPLATE_ANNOTATIONS,
    queue_places,
    uses_volcano,
)
from trainlint.rule import rule

#: A TrainJob's pod template overrides (v2.1).
POD_OVERRIDES: KeyPath = ("spec", "podTemplateOverrides")


@rule(
    "TL277", "volcano-queue-annotation-ignored",
    kinds=TRAINER_KINDS, severity=Severity.WARNING, since="2.1",
    remediation=(
        "Move the annotation to the runtime's `spec.template.metadata.annotations`, or, per "
        "TrainJob, to its runtime patches (`spec.annotations` on v2.1)."
    ),
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    On a runtime with `podGroupPolicy.volcano`, and on a TrainJob of such a runtime, flags
    a `scheduling.volcano.sh/queue-name` annotation where Trainer's Volcano plugin does
    not read it: the runtime's own metadata, a job or pod template of the runtime, the
    TrainJob's metadata, the pods of its v2.1 overrides, the job or pod templates of its
    runtime patches.

    ## Why is this bad?
    The plugin creates the PodGroup of every TrainJob with the queue of the JobSet
    template's annotation (`spec.template.metadata.annotations` of the runtime), which a
    TrainJob overrides in `spec.annotations` (v2.1) or in its runtime patches' template
    metadata (v2.2+). The same annotation anywhere else is read by nothing (Volcano reads
    a pod's own annotation only for pods with no PodGroup, and Trainer gives them one): the
    PodGroup names no queue, Volcano puts it in the namespace's queue (the namespace's
    annotation) or else `default`, and the job runs under that queue's share and priority,
    with no error and no event.

    ## When it stays silent
    Where the annotation names the queue the plugin reads anyway (said twice, no harm); on
    runtimes without the Volcano
    policy (where Volcano itself may read a pod's annotation); before v2.1; on a TrainJob
    whose runtime is not among the checked files.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-volcano
      annotations:
        scheduling.volcano.sh/queue-name: research
    spec:
      mlPolicy:
        torch: {}
      podGroupPolicy:
        volcano: {}
      template:
        spec:
          replicatedJobs: []
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-volcano
    spec:
      mlPolicy:
        torch: {}
      podGroupPolicy:
        volcano: {}
      template:
        metadata:
          annotations:
            scheduling.volcano.sh/queue-name: research
        spec:
          replicatedJobs: []
    ```
    """
    is_job = manifest.kind == "TrainJob"
    runtime = ctx.runtime_for(manifest) if is_job else manifest
    if runtime is None or not uses_volcano(runtime):
        return
    version = ctx.trainer_version
    queue, read_at = _queue_read(manifest, runtime, version)
    theirs = read_at is not None and read_at[0] is not manifest
    instead = (f"the runtime's queue `{queue}`" if theirs else f"queue `{queue}`") \
        if read_at is not None else (
            "the queue Volcano gives a PodGroup that names none (the namespace's, else "
            "`default`)")
    related = (Related(runtime, read_at[1], "the runtime's queue"),) \
        if read_at is not None and theirs else ()
    if is_job:
        read = "`spec.annotations`" if version <= (2, 1) else (
            "a runtime patch's `trainingRuntimeSpec.template.metadata.annotations`")
        told = f"takes a TrainJob's queue from {read}, so its PodGroup goes"
    else:
        told = (f"takes the PodGroup's queue from the JobSet template's annotations "
                f"(`{dotted(TEMPLATE_ANNOTATIONS)}`), so the PodGroups of this runtime's "
                "TrainJobs go")
    for path, where in _unread(manifest, version):
        written = mapping(dig(manifest.body, *path)).get(QUEUE)
        if read_at is not None and written == queue:
            continue  # said again where it is not read: the same queue, no harm
        later = "" if is_job or read_at is not None else " (unless a TrainJob names one)"
        yield Problem((*path, QUEUE), (
            f"`{QUEUE}` on {where} is read by nothing: Trainer's Volcano plugin {told} to "
            f"{instead}, not `{written}`{later}"), related=related)


def _queue_read(
    manifest: Manifest, runtime: Manifest, version: tuple[int, int]
) -> tuple[object, tuple[Manifest, KeyPath] | None]:
    """The queue the plugin reads for `manifest` (a TrainJob's own first, then its
    runtime's), and where; None where nothing names one."""
    for source in ([manifest] if manifest is runtime else [manifest, runtime]):
        for path in reversed(queue_places(source, version)):  # the last patch wins
            annotations = mapping(dig(source.body, *path))
            if QUEUE in annotations:
                return annotations[QUEUE], (source, (*path, QUEUE))
    return None, None


def _unread(manifest: Manifest, version: tuple[int, int]) -> Iterator[tuple[KeyPath, str]]:
    """The annotation maps of `manifest` that hold the queue where no plugin reads it,
    with what messages call them: a runtime's metadata and job and pod templates; a
    TrainJob's metadata and what its overrides or patches set on jobs and pods."""
    kind = "TrainJob" if manifest.kind == "TrainJob" else "runtime"
    places: list[tuple[KeyPath, str]] = [(("metadata", "annotations"), f"the {kind}'s metadata")]
    if manifest.kind != "TrainJob":
        jobs = [((*JOBS, index), f"job `{job.get('name')}`")
                for index, job in mappings(dig(manifest.body, *JOBS))]
    elif version <= (2, 1):
        jobs = []
        places += [((*POD_OVERRIDES, index, "metadata", "annotations"),
                    f"`podTemplateOverrides[{index}].metadata` (the pods')")
                   for index, _ in mappings(dig(manifest.body, *POD_OVERRIDES))]
    else:
        jobs = [((*PATCHES, index, *PATCH_JOBS, number),
                 f"job `{job.get('name')}` of runtime patch {index}")
                for index, patch in mappings(dig(manifest.body, *PATCHES))
                for number, job in mappings(dig(patch, *PATCH_JOBS))]
    for job, name in jobs:
        places.append(((*job, "template", "metadata", "annotations"),
                       f"the job template of {name}"))
        places.append(((*job, "template", "spec", "template", "metadata", "annotations"),
                       f"the pod template of {name}"))
    for path, where in places:
        if QUEUE in mapping(dig(manifest.body, *path)):
            yield path, where
