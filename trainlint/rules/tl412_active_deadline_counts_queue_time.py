from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig, mapping
from trainlint.engine.context import Context
from trainlint.problem import Problem, Severity
from trainlint.rule import rule


@rule(
    "TL412", "active-deadline-counts-queue-time",
    kinds={"TrainJob"}, severity=Severity.WARNING, since="2.2",
    remediation=(
        "Create the TrainJob with `suspend: true` and resume it when it may start, or allow "
        "for the queue time in the deadline."
    ),
    preview=True,
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    From v2.2, flags `spec.activeDeadlineSeconds` on a TrainJob that is not created
    suspended.

    ## Why is this bad?
    The deadline is counted from the TrainJob's creation unless it was created suspended,
    so time spent waiting for nodes or GPUs uses it up. When it expires the controller
    deletes the JobSet: the pods get only their termination grace period to save a
    checkpoint, and the run ends as failed.

    ## When it stays silent
    On a TrainJob created with `suspend: true`, and on v2.0–v2.1 (no such field).

    ## Preview
    Set on purpose ("stop this run after an hour"), the deadline is what the user wants,
    and how long a TrainJob waits for its pods is not in any manifest: on real manifests
    the warning told users what they meant to do.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: run
    spec:
      activeDeadlineSeconds: 86400
      runtimeRef:
        name: torch-distributed
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: run
    spec:
      suspend: true
      activeDeadlineSeconds: 86400
      runtimeRef:
        name: torch-distributed
    ```
    """
    spec = mapping(job.body.get("spec"))
    deadline = spec.get("activeDeadlineSeconds")
    if deadline is None or dig(spec, "suspend") is True:
        return
    yield Problem(
        ("spec", "activeDeadlineSeconds"),
        f"`activeDeadlineSeconds: {deadline}` counts from the TrainJob's creation, queue time "
        "included, because it is not created suspended: on expiry the JobSet is deleted and "
        "the pods get only their grace period to save a checkpoint",
    )
