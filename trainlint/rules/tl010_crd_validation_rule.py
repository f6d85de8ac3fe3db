from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_API, TRAINER_KINDS
from trainlint.model.crd_violations import crd_violations
from trainlint.problem import Problem, Severity
from trainlint.rule import rule


@rule(
    "TL010", "crd-validation-rule", kinds=TRAINER_KINDS,
    severity=Severity.ERROR,
    remediation="Change the object so that the CRD's validation rule holds (see the message).",
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Evaluates the validation rules (CEL `x-kubernetes-validations`) of the selected
    release's CRDs with a CEL engine, as the API server does: each rule at the field that
    declares it, once nulls and unknown fields are pruned and defaults applied, and reports
    a broken rule with the CRD's own message. Among them: one ML policy per runtime, RFC
    1035 TrainJob names (v2.1+), `storageUri` URI form (v2.3+), `managedBy` values, torch
    `numProcPerNode` values (v2.0–v2.1), flux `numProcPerNode` ≥ 1 (v2.2+), `envInjection`
    container names (v2.3+), `startupPolicyOrder: InOrder` with `dependsOn`, and
    namespaces in `volumeClaimPolicies` templates (v2.2+). The rules that compare with the
    stored object (`oldSelf`) are TL012's. On an update (`--base`, the webhook), a rule
    whose value did not change is not reported, as Kubernetes ratchets it from 1.30.

    ## Why is this bad?
    The API server rejects the object (HTTP 422 `Invalid`). For a runtime this surfaces
    only when the platform team applies it; for a TrainJob, only at submission.

    ## When it stays silent
    On objects that are not `trainer.kubeflow.org/v1alpha1`; on a rule whose field is
    absent (after defaults) or whose evaluation fails for a reason the API server would
    not report as this rule (a missing key, such as a name left to `generateName`); on
    `status`, which the API server never takes from the object; and, on an update, on a
    rule whose value did not change (ratcheted from Kubernetes 1.30).

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-and-mpi
    spec:
      mlPolicy:
        numNodes: 2
        torch: {}
        mpi:
          numProcPerNode: 1
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-only
    spec:
      mlPolicy:
        numNodes: 2
        torch: {}
    ```
    """
    if manifest.api_version != TRAINER_API:
        return
    for violation in crd_violations(manifest, ctx):
        if violation.rule.transition:
            continue
        quoted = violation.detail == violation.rule.message
        what = f'with "{violation.detail}"' if quoted else f"because {violation.detail}"
        yield Problem(
            (*violation.path, *violation.rule.anchor),
            f"the API server rejects the {manifest.kind} {what} "
            f"(CRD rule `{violation.rule.expression}`)",
        )
