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
    Reports documents that are a list of objects, `kind: List` items that are not
    objects, and mappings meant as Kubernetes objects that have `kind` or `apiVersion`
    but not both as strings: a kind of Kubernetes' (`TrainJob`, `ConfigMap`) with
    `metadata`, any kind with `metadata` and `spec`, an apiVersion with a group
    (`trainer.kubeflow.org/v1alpha1`) or with `metadata`. In a file of Kubernetes
    objects, any document that is not one (a scalar, a mapping with one of the two keys).

    ## Why is this bad?
    Nothing in such a document can be checked, and kubectl refuses to apply it.

    ## When it stays silent
    On other tools' files, which a pre-commit hook is handed with the manifests: YAML and
    JSON with neither key (CI configs, Helm values), or with one of them as the tool
    means it (Grafana's `apiVersion: 1`, Drone's `kind: pipeline`, kustomize's `kind:
    Kustomization`, Zarf's `kind: ZarfPackageConfig`, Helm's `apiVersion: v2`), a
    document that is one value (an Ansible Vault file), a list of anything else; unless
    the same file holds Kubernetes objects.

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
