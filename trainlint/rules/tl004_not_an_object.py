from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import NotAnObject
from trainlint.problem import Problem, Severity
from trainlint.rule import rule


@rule(
    "TL004", "not-a-kubernetes-object", reports=NotAnObject, severity=Severity.WARNING,
    remediation="Make each document one object with `apiVersion` and `kind`, or exclude the file.",
)
def check(problem: NotAnObject) -> Iterator[Problem]:
    """## What it does
    Reports documents that are a scalar or a list of objects, `kind: List` items that are
    not objects, and mappings that have `kind` or `apiVersion` but not both as strings.
    Mappings and lists of anything else (CI configs, Helm values, hook lists) are other
    YAML files and are skipped silently.

    ## Why is this bad?
    Nothing in such a document can be checked, and kubectl refuses to apply it.

    ## When it stays silent
    On YAML that is not a Kubernetes object at all (CI configs, Helm values, lists of
    other things): those files are skipped.

    ## Example
    ```yaml
    - apiVersion: trainer.kubeflow.org/v1alpha1
      kind: TrainJob
      metadata:
        name: sft-run-1
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    ```
    """
    yield Problem((), problem.message)
