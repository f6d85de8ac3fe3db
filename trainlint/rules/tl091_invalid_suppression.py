from __future__ import annotations

from collections.abc import Iterator

from trainlint.problem import Problem, Severity
from trainlint.rule import rule
from trainlint.suppression import Invalid


@rule(
    "TL091", "invalid-suppression", reports=Invalid, severity=Severity.WARNING,
    remediation=(
        "Name a rule by its code or name (`trainlint rules` lists them), or fix the syntax."
    ),
)
def check(invalid: Invalid) -> Iterator[Problem]:
    """## What it does
    Reports a suppression that cannot work: a comment starting `# trainlint:` that is not
    `disable=CODES` or `disable-file=CODES`, or a code or name in a comment or in the
    `trainlint.dev/ignore` annotation that belongs to no rule.

    ## Why is this bad?
    A misspelt suppression silences nothing, so the finding it was meant for still
    fails the build, or, worse, the intended exemption never reaches the webhook.

    ## When it stays silent
    On suppressions that name a rule's code or name, known or not selected.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef:  # trainlint: disable=TL9999
        name: torch-distributed
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
    ```
    """
    yield Problem(invalid.path, invalid.message)
