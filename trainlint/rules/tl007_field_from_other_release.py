from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine import Context
from trainlint.model.check import OTHER_RELEASE, SCHEMA_KINDS, problems
from trainlint.rule import Problem, Severity, rule


@rule(
    OTHER_RELEASE, "field-from-other-release", kinds=set(SCHEMA_KINDS), severity=Severity.ERROR,
    fix="Use the field of the release the cluster runs, or set `trainer-version` to it.",
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags fields that exist in another Trainer release but not in the selected one
    (`--trainer-version`), says which releases have them and what replaced them:
    `podSpecOverrides` (v2.0) became `podTemplateOverrides` (v2.1), then `runtimePatches`
    (v2.2); `spec.labels`, `mlPolicy.torch.numProcPerNode` and `elasticPolicy` went away in
    v2.2; `jax`, `xgboost`, `flux`, `volumeClaimPolicies` and `activeDeadlineSeconds`
    arrived in v2.2, `envInjection` in v2.3.

    ## Why is this bad?
    The Trainer API changed in every minor release, and the API server prunes fields its
    CRD does not know without an error: the overrides, deadline or policy of a manifest
    written for another release are silently dropped.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef:
        name: torch-distributed
      podTemplateOverrides:
        - targetJobs:
            - name: node
          spec:
            nodeSelector:
              gpu: a100
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef:
        name: torch-distributed
      runtimePatches:
        - manager: example.com/sft
          trainingRuntimeSpec:
            template:
              spec:
                replicatedJobs:
                  - name: node
                    template:
                      spec:
                        template:
                          spec:
                            nodeSelector:
                              gpu: a100
    ```
    """
    yield from problems(manifest, ctx, OTHER_RELEASE)
