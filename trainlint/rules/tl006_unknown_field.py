from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine import Context
from trainlint.model.check import SCHEMA_KINDS, UNKNOWN, problems
from trainlint.rule import Problem, Severity, rule


@rule(
    UNKNOWN, "unknown-field", kinds=set(SCHEMA_KINDS), severity=Severity.ERROR,
    fix="Fix the field's name (see the suggestion) or remove it.",
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags fields that no schema of the selected Trainer release has (or, inside Pod and Job
    templates, PVCs and StorageClasses, no Kubernetes schema has), and suggests the nearest
    known name: `numNode` → `numNodes`.

    ## Why is this bad?
    Unknown fields of a custom resource are pruned silently: under the default
    `fieldValidation=Warn` the API server accepts the object and drops the field with a
    warning that GitOps tools and SDKs never show. A typo in `numNodes` trains on one node.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef:
        name: torch-distributed
      trainer:
        numNode: 4
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
      trainer:
        numNodes: 4
    ```
    """
    yield from problems(manifest, ctx, UNKNOWN)
