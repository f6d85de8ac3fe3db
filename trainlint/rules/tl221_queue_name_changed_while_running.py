from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig
from trainlint.engine.context import Context
from trainlint.problem import Problem, Severity
from trainlint.render.change import KUEUE_QUEUE, suspended
from trainlint.rule import rule


@rule(
    "TL221", "queue-name-changed-while-running", kinds={"TrainJob"}, severity=Severity.ERROR,
    remediation=(
        "Suspend the TrainJob in the same update (`spec.suspend: true`), or keep its queue."
    ),
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    On an update (`--base`, or the webhook's UPDATE requests), flags a change or removal of
    the label `kueue.x-k8s.io/queue-name` of a TrainJob that Kueue manages (the stored
    TrainJob has the label) when the updated TrainJob is not suspended: Kueue has admitted
    it (Kueue unsuspends what it admits).

    ## Why is this bad?
    Kueue's webhook rejects the update: `metadata.labels[kueue.x-k8s.io/queue-name]:
    Invalid value: "<new queue>": field is immutable`. An admitted job's quota was taken
    from its queue; it can move only while suspended (waiting, or preempted).

    ## When it stays silent
    On a new TrainJob; when the stored TrainJob has no queue label (Kueue did not manage
    it, or it was not queued); when the updated TrainJob is suspended; and on Kueue's other
    update check (an emptied queue name in a namespace with a default LocalQueue), which
    needs the cluster's queues.

    ## Example
    Before the change:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
      labels:
        kueue.x-k8s.io/queue-name: team-a
    spec:
      runtimeRef:
        name: torch-distributed
    ```
    After:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
      labels:
        kueue.x-k8s.io/queue-name: team-b
    spec:
      runtimeRef:
        name: torch-distributed
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
      labels:
        kueue.x-k8s.io/queue-name: team-b
    spec:
      runtimeRef:
        name: torch-distributed
      suspend: true
    ```
    """
    stored = ctx.previous(job)
    if stored is None or suspended(job):
        return
    before = dig(stored.body, "metadata", "labels", KUEUE_QUEUE)
    after = dig(job.body, "metadata", "labels", KUEUE_QUEUE)
    if not isinstance(before, str) or before == after:
        return
    shown = after if isinstance(after, str) else ""
    yield Problem(
        ("metadata", "labels", KUEUE_QUEUE),
        f"the queue of a running TrainJob changed from `{before}` to "
        f"`{shown or '(none)'}`: Kueue's webhook rejects the update "
        f'(`metadata.labels[{KUEUE_QUEUE}]: Invalid value: "{shown}": field is immutable`); '
        "suspend the TrainJob to move it",
    )
