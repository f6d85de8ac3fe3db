from trainlint.problem import Severity
from trainlint.rule import declare

declare(
    "TL090", "unused-suppression", severity=Severity.WARNING,
    fix="Remove the code from the suppression (or the whole comment or annotation).",
    doc="""## What it does
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
    """,
)
