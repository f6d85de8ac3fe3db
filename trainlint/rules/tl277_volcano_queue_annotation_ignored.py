from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import KeyPath, Manifest, dig, dotted, mapping, mappings
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Problem, Related, Severity
from trainlint.render.trainer import JOBS
from trainlint.render.volcano import QUEUE, TEMPLATE_ANNOTATIONS, queue_places, uses_volcano
from trainlint.rule import rule


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
    TrainJob's metadata.

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
    When the queue is set where the plugin reads it (on the runtime, for the runtime's
    other places; on the TrainJob, for its metadata); on runtimes without the Volcano
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
    if any(QUEUE in mapping(dig(manifest.body, *path)) for path in queue_places(manifest, version)):
        return
    if not is_job:
        for path, where in _runtime_places(runtime):
            yield Problem((*path, QUEUE), (
                f"`{QUEUE}` on {where} is read by nothing: Trainer's Volcano plugin takes the "
                "PodGroup's queue from the JobSet template's annotations "
                f"(`{dotted(TEMPLATE_ANNOTATIONS)}`), so the PodGroups of this runtime's "
                f"TrainJobs go to the queue Volcano gives a PodGroup that names none (the "
                f"namespace's, else `default`), not `{_queue(runtime, path)}` (unless a "
                "TrainJob names one)"))
        return
    path = ("metadata", "annotations")
    if QUEUE not in mapping(dig(manifest.body, *path)):
        return
    read = "`spec.annotations`" if version <= (2, 1) else (
        "a runtime patch's `trainingRuntimeSpec.template.metadata.annotations`")
    given = mapping(dig(runtime.body, *TEMPLATE_ANNOTATIONS)).get(QUEUE)
    instead = f"the runtime's queue `{given}`" if given else (
        "the queue Volcano gives a PodGroup that names none (the namespace's, else `default`)")
    related = (Related(runtime, (*TEMPLATE_ANNOTATIONS, QUEUE), "the runtime's queue"),) \
        if given else ()
    yield Problem((*path, QUEUE), (
        f"`{QUEUE}` on the TrainJob's metadata is read by nothing: Trainer's Volcano plugin "
        f"takes a TrainJob's queue from {read}, so its PodGroup goes to {instead}, not "
        f"`{_queue(manifest, path)}`"), related=related)


def _runtime_places(runtime: Manifest) -> Iterator[tuple[KeyPath, str]]:
    """The annotation maps of a runtime that hold the queue and that no plugin reads."""
    places: list[tuple[KeyPath, str]] = [(("metadata", "annotations"), "the runtime's metadata")]
    for index, job in mappings(dig(runtime.body, *JOBS)):
        name = f"job `{job.get('name')}`"
        places.append(((*JOBS, index, "template", "metadata", "annotations"),
                       f"the job template of {name}"))
        places.append(((*JOBS, index, "template", "spec", "template", "metadata", "annotations"),
                       f"the pod template of {name}"))
    for path, where in places:
        if QUEUE in mapping(dig(runtime.body, *path)):
            yield path, where


def _queue(manifest: Manifest, path: KeyPath) -> object:
    return mapping(dig(manifest.body, *path)).get(QUEUE)
