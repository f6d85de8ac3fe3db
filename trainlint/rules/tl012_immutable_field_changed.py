from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dotted
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_API, TRAINER_KINDS
from trainlint.model.crd_violations import crd_violations
from trainlint.problem import Problem, Severity
from trainlint.rule import rule

#: What to do instead, by kind: an immutable field changes only with a new object.
RECREATE = {
    "TrainJob": "keep the stored value, or delete the TrainJob and create it again (under a "
                "new name, to keep the old run's history)",
    "TrainingRuntime": "keep the stored value, or create a new runtime and move new TrainJobs "
                       "to it",
}
RECREATE["ClusterTrainingRuntime"] = RECREATE["TrainingRuntime"]


@rule(
    "TL012", "immutable-field-changed",
    kinds=TRAINER_KINDS, severity=Severity.ERROR,
    remediation="Keep the field as it is stored, or replace the object instead of updating it.",
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    On an update (`trainlint check --base REV`, or the webhook's UPDATE requests), compares
    the object with its previous state through the CRD's transition rules (`self ==
    oldSelf`) of the selected release, evaluated by the CEL engine, and reports each field
    that changed with the CRD's message. TrainJob: `runtimeRef` and `managedBy` (every
    release), `trainer`, `initializer`, `activeDeadlineSeconds` and, in `runtimePatches`,
    `manager` and the pod spec's `containers`, `initContainers`, `volumes`,
    `imagePullSecrets`, `securityContext`, `serviceAccountName` (v2.2+) and
    `terminationGracePeriodSeconds` (v2.3+). Runtimes: the JobSet's `failurePolicy`,
    `network`, `startupPolicy`, `successPolicy`, `replicatedJobs[].dependsOn` and
    `volumeClaimPolicies` (v2.2+). Defaults count as the API server applies them: adding
    `kind: ClusterTrainingRuntime` to a `runtimeRef` changes nothing.

    ## Why is this bad?
    The API server rejects the update (HTTP 422 `Invalid`, `field is immutable`). A pull
    request that edits the field merges green, then `kubectl apply` or the GitOps sync
    fails, and the live object keeps its old value.

    ## When it stays silent
    On a new object (nothing to compare with); on a field absent before or after the
    update (the CRD rule runs only where both exist: removing an immutable field without a
    default is accepted); on values equal once defaults are applied and unknown fields and
    nulls pruned; on list items that cannot be paired (only `x-kubernetes-list-type: map`
    items pair, by their keys); and in releases whose CRD does not make the field immutable.

    ## Example
    Before the change:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef:
        name: torch-distributed
      trainer:
        numNodes: 2
    ```
    After:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef:
        name: torch-distributed
      trainer:
        numNodes: 4
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-2
    spec:
      runtimeRef:
        name: torch-distributed
      trainer:
        numNodes: 4
    ```
    """
    if manifest.api_version != TRAINER_API or ctx.previous(manifest) is None:
        return
    for violation in crd_violations(manifest, ctx):
        if not violation.rule.transition:
            continue
        field = dotted(violation.path) or "the object"
        yield Problem(
            violation.path,
            f'`{field}` changed: the API server rejects the update of the {manifest.kind} '
            f'with "{violation.detail}" (CRD rule `{violation.rule.expression}`); '
            f"{RECREATE[manifest.kind]}",
        )
