from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trainlint import roundtrip
from trainlint.document import Manifest, dig
from trainlint.engine.context import Context
from trainlint.model.check import SCHEMA_KINDS, Flaw, Issue, issues
from trainlint.problem import Fix, Problem, Severity
from trainlint.rule import rule


@rule(
    "TL008", "invalid-field-value", kinds=set(SCHEMA_KINDS), severity=Severity.ERROR,
    remediation="Use a value the schema allows (see the message for the bound or the values); "
    "write quantities as Kubernetes spells them (`64Gi`, `500m`).",
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Checks values against the bounds of the selected release's schema: enumerations
    (`restartStrategy`, rule `action`, `mpiImplementation`...), minimums
    (`activeDeadlineSeconds` ≥ 1), string lengths, list sizes (at most 16
    `runtimePatches`, 5 `dependsOn`, only 1 in v2.0), empty objects where the CRD wants
    at least one property, and quantities (`resources`, `sizeLimit`, a claim's `storage`)
    that Kubernetes cannot read: `64GB`, `4 gi`, `200GiB`. For a misspelt quantity it
    offers the one it spells (`64G`, `4Gi`, `200Gi`) as an unsafe fix.

    ## Why is this bad?
    The API server rejects the object with the CRD's own message (`Unsupported value`,
    `should be greater than or equal to 1`, `Too many`, a regular expression for a
    quantity, which the finding says in words). Several bounds depend
    on the release: `InPlaceRestart` exists from v2.2, `RestartJob` from v2.3.

    ## When it stays silent
    On kinds it has no schema for, and on values whose type is already wrong (TL005
    reports those).

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-ckpt
    spec:
      template:
        spec:
          failurePolicy:
            maxRestarts: 3
            restartStrategy: recreate
          replicatedJobs: []
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-ckpt
    spec:
      template:
        spec:
          failurePolicy:
            maxRestarts: 3
            restartStrategy: Recreate
          replicatedJobs: []
    ```
    """
    for issue in issues(manifest, ctx):
        if issue.flaw is Flaw.INVALID_VALUE:
            yield Problem(issue.path, issue.message, fix=_quantity_fix(manifest, issue))


def _quantity_fix(manifest: Manifest, issue: Issue) -> Fix | None:
    """Write a misspelt quantity as the one it spells: `64GB` as `64G`. Unsafe: the
    object, rejected so far, is then created, and a `GB` may have been meant as `Gi`."""
    if issue.match is None:
        return None
    written, meant = dig(manifest.body, *issue.path), issue.match

    def edit(node: Any) -> None:
        roundtrip.respell(node, issue.path, written, meant)

    return Fix(f"write `{written}` as `{meant}`", edit, safe=False)
