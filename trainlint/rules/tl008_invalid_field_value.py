from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine import Context
from trainlint.model.check import INVALID, SCHEMA_KINDS, problems
from trainlint.rule import Problem, Severity, rule


@rule(
    INVALID, "invalid-field-value", kinds=set(SCHEMA_KINDS), severity=Severity.ERROR,
    fix="Use a value the schema allows (see the message for the bound or the values).",
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Checks values against the bounds of the selected release's schema: enumerations
    (`restartStrategy`, rule `action`, `mpiImplementation`...), minimums
    (`activeDeadlineSeconds` ≥ 1), string lengths, list sizes (at most 16
    `runtimePatches`, 5 `dependsOn`, only 1 in v2.0) and empty objects where the CRD wants
    at least one property.

    ## Why is this bad?
    The API server rejects the object with the CRD's own message (`Unsupported value`,
    `should be greater than or equal to 1`, `Too many`). Several bounds depend on the
    release: `InPlaceRestart` exists from v2.2, `RestartJob` from v2.3.

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
    yield from problems(manifest, ctx, INVALID)
