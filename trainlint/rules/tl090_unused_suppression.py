from __future__ import annotations

from collections.abc import Iterator

from trainlint.problem import Problem, Severity
from trainlint.rule import rule
from trainlint.suppression import Entry, removal

#: Where a suppression of each scope looks for the finding it silences.
_WHERE = {"file": "in this file", "object": "on this object"}


@rule(
    "TL090", "unused-suppression", reports=Entry, severity=Severity.WARNING,
    remediation="Remove the code from the suppression (or the whole comment or annotation).",
)
def check(entry: Entry) -> Iterator[Problem]:
    """## What it does
    Reports a suppression that silences nothing: a `# trainlint: disable=CODE` comment
    whose line has no such finding, a `# trainlint: disable-file=CODE` in a file without
    one, or a code in the `trainlint.dev/ignore` annotation of an object without one.
    Only codes of rules that ran are judged; a suppression of a rule that is not enabled
    (or not for this Trainer release) is left alone.

    ## Why is this bad?
    The problem it was written for is gone, but the suppression stays and silently hides
    the next real finding of that rule on the same line, file or object. On an object,
    the annotation also travels into the cluster, where the admission webhook honours it.

    ## When it stays silent
    On suppressions of rules that did not run in this configuration: they may well
    silence something where the rule is enabled.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
      annotations:
        trainlint.dev/ignore: "TL302=checkpoints go to object storage"
    spec:
      runtimeRef:
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
    assert entry.rule is not None  # an entry of no rule is TL091's
    where = _WHERE.get(entry.scope, f"on line {entry.target}")
    yield Problem(
        entry.path,
        f"unused suppression of {entry.rule.code} ({entry.rule.name}): it finds nothing "
        f"{where}, so the suppression would hide a future finding unseen; remove it",
        fix=removal(entry),
    )
