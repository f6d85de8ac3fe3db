from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import DuplicateKey
from trainlint.problem import Problem, Severity
from trainlint.rule import rule


@rule(
    "TL002", "duplicate-key", reports=DuplicateKey, severity=Severity.ERROR,
    remediation="Keep one of the keys.",
)
def check(problem: DuplicateKey) -> Iterator[Problem]:
    """## What it does
    Reports a key that appears twice in the same mapping.

    ## Why is this bad?
    kubectl silently keeps the last value, and drops the first; other tools keep the
    first or refuse the file, so what is reviewed, and what a CI step checks, is not
    what runs. In another tool's YAML (a training config, a CI workflow), a key written
    again with another value loses the first where the program reads it with PyYAML,
    and stricter parsers (go-yaml v3, js-yaml, ruamel.yaml) refuse the file.

    ## When it stays silent
    On the same key in different mappings, and on a key written again as it was with its
    value written again as it was: nothing is lost where the last is kept (a reader that
    refuses any repeated key, as kustomize, GitHub Actions and Compose do, says so
    itself). In another tool's YAML, on keys written apart that kubectl alone reads as
    one (`1` and `"1"`), and in JSON that is no Kubernetes object (JSON takes repeated
    names, and tools write them).

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef:
        name: torch-ckpt
      runtimeRef:
        name: torch-ckpt-v2
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef:
        name: torch-ckpt-v2
    ```
    """
    yield Problem((), problem.message)
