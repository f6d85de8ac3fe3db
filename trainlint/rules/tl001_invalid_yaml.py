from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import InvalidYaml
from trainlint.problem import Problem, Severity
from trainlint.rule import rule


@rule(
    "TL001", "invalid-yaml", reports=InvalidYaml, severity=Severity.ERROR,
    remediation="Fix the syntax at the position shown; the rest of the file is checked up to it.",
)
def check(problem: InvalidYaml) -> Iterator[Problem]:
    """## What it does
    Reports text that is not valid YAML or JSON, or not valid UTF-8, at the line and
    column where the parser stopped; and a file that cannot be read, such as a named pipe
    or a device (only regular files are read: a FIFO would block the run forever).

    ## Why is this bad?
    kubectl and the API server refuse the whole document; GitOps tools stop the sync.
    Documents before the error are still checked.

    ## When it stays silent
    On text the parser reads to its end; a file that is not YAML or JSON by its
    extension is not read when walking folders.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef: {name: torch-ckpt
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef: {name: torch-ckpt}
    ```
    """
    yield Problem((), problem.message)
