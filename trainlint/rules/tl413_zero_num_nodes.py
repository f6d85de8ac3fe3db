from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import KeyPath, Manifest, dig, is_count
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Problem, Severity
from trainlint.rule import rule


@rule(
    "TL413", "zero-num-nodes",
    kinds=TRAINER_KINDS, severity=Severity.WARNING,
    remediation="Set `numNodes` to 1 or more; suspend the TrainJob to pause it.",
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags `numNodes` of 0 or less: a TrainJob's `spec.trainer.numNodes` or a runtime's
    `mlPolicy.numNodes`.

    ## Why is this bad?
    The node count becomes the trainer Job's parallelism and completions. With 0 the Job
    has nothing to run and completes at once, so the TrainJob reports success without
    training (the newest API even accepts 0 explicitly); a negative count produces an
    invalid Job or a negative `PET_NPROC_PER_NODE`.

    ## When it stays silent
    On counts of 1 or more, and on `numNodes` given as something other than a number
    (the schema rules report that).

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: run
    spec:
      runtimeRef:
        name: torch-distributed
      trainer:
        numNodes: 0
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: run
    spec:
      suspend: true
      runtimeRef:
        name: torch-distributed
      trainer:
        numNodes: 1
    ```
    """
    path: KeyPath = (
        ("spec", "trainer", "numNodes") if manifest.kind == "TrainJob"
        else ("spec", "mlPolicy", "numNodes")
    )
    nodes = dig(manifest.body, *path)
    if is_count(nodes) and nodes <= 0:
        yield Problem(
            path,
            f"`numNodes: {nodes}` leaves the trainer Job with no pods to run: it completes at "
            "once (or is invalid when negative) and the TrainJob ends without training",
        )
