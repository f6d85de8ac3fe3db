from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import KeyPath, Manifest, dig, mapping
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render.volcano import QUEUE, TEMPLATE_ANNOTATIONS, queue_places, uses_volcano
from trainlint.rule import rule

DETAIL = "Volcano queue name must not be empty"


@rule(
    "TL217", "empty-volcano-queue-name",
    kinds=TRAINER_KINDS, severity=Severity.ERROR,
    since="2.1",
    remediation="Name the Volcano queue, or remove the annotation to use the default queue.",
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    For a runtime with `podGroupPolicy.volcano`, flags an empty
    `scheduling.volcano.sh/queue-name` annotation: on the runtime's JobSet template
    (`spec.template.metadata`), in a TrainJob's `spec.annotations` (v2.1) or in the
    metadata of its `runtimePatches` (v2.2+); and a TrainJob that sets no queue on a
    runtime whose queue is empty (that runtime may be the cluster's, or a context file's).

    ## Why is this bad?
    The Trainer webhook denies the TrainJob: "Volcano queue name must not be empty". An
    empty annotation on the runtime makes every TrainJob that uses it fail.

    ## When it stays silent
    On a queue name that is set (a TrainJob's replaces its runtime's, and the last of its
    patches the others), on runtimes without the Volcano policy, and when the runtime is
    not known.

    ## Example
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
            scheduling.volcano.sh/queue-name: ""
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
            scheduling.volcano.sh/queue-name: training
        spec:
          replicatedJobs: []
    ```
    """
    is_job = manifest.kind == "TrainJob"
    runtime = ctx.runtime_for(manifest) if is_job else manifest
    if runtime is None or not uses_volcano(runtime):
        return
    whose = "the TrainJob" if is_job else "every TrainJob using this runtime"
    places = queue_places(manifest, ctx.trainer_version)
    # The plugin reads one value: the runtime's, replaced by each of the TrainJob's in turn.
    setting = [path for path in places if _queue(manifest, path) is not _UNSET][-1:]
    for path in setting:
        if _queue(manifest, path) in ("", None):
            yield Problem(
                (*path, QUEUE),
                f"`{QUEUE}` is empty on a Volcano runtime: the Trainer webhook denies {whose} "
                f'("{DETAIL}")',
            )
    if is_job and not setting and _queue(runtime, TEMPLATE_ANNOTATIONS) in ("", None):
        yield Problem(  # the runtime's own empty queue, which nothing here replaces
            ("spec", "runtimeRef"),
            f"{runtime.describe()} leaves `{QUEUE}` empty and this TrainJob sets no queue: "
            f'the Trainer webhook denies the TrainJob ("{DETAIL}")',
        )


_UNSET = object()


def _queue(manifest: Manifest, path: KeyPath) -> object:
    """The queue annotation at `path`, `_UNSET` where it is not there."""
    return mapping(dig(manifest.body, *path)).get(QUEUE, _UNSET)
