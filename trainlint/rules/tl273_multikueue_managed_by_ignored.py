from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig
from trainlint.engine.context import Context
from trainlint.problem import Problem, Severity
from trainlint.rule import rule

MULTIKUEUE = "kueue.x-k8s.io/multikueue"


@rule(
    "TL273", "multikueue-managed-by-ignored",
    kinds={"TrainJob"}, severity=Severity.ERROR, until="2.2",
    remediation="Upgrade Trainer to v2.3+ before dispatching TrainJobs with MultiKueue.",
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Up to v2.2, flags `spec.managedBy: kueue.x-k8s.io/multikueue`.

    ## Why is this bad?
    The field is accepted but the controller ignores it before v2.3: the management
    cluster runs the TrainJob itself, besides the copy MultiKueue dispatches to a worker
    cluster.

    ## When it stays silent
    From v2.3, where the controller honours `managedBy`.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: run
    spec:
      managedBy: kueue.x-k8s.io/multikueue
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
      runtimeRef:
        name: torch-distributed
    ```
    """
    if dig(job.body, "spec", "managedBy") == MULTIKUEUE:
        yield Problem(
            ("spec", "managedBy"),
            f"`managedBy: {MULTIKUEUE}` is ignored before v2.3: the local controller runs "
            "this TrainJob anyway, alongside the copy MultiKueue dispatches to a worker cluster",
        )
