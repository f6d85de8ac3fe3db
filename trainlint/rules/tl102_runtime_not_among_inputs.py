from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine import RUNTIME_KINDS, Context
from trainlint.rule import Problem, Severity, rule


@rule(
    "TL102", "runtime-not-among-inputs", kinds={"TrainJob"}, severity=Severity.WARNING,
    fix="Lint the TrainJob together with its runtime (or ignore TL102 when the runtime is "
    "a cluster built-in).",
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Says, once per TrainJob, that the runtime its `spec.runtimeRef` names is not among the
    checked files, so none of the checks that need the runtime were made: initializer
    jobs, override and patch targets, framework checks (reserved env, numProcPerNode,
    torchtune, MPI, Flux, Volcano).

    ## Why is this bad?
    Most of what the Trainer webhook denies depends on the runtime, and trainlint never
    guesses a runtime it has not read. A clean result without the runtime is therefore a
    weaker promise than it looks. Turn this warning off (`--ignore TL102`) when the runtime
    is a cluster built-in you do not keep in your repository.

    ## When it stays silent
    When a runtime of that name is among the checked files, in any namespace or kind
    (TL101 judges the mismatch).

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef:
        name: torch-sft
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-sft
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          replicatedJobs: []
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef:
        name: torch-sft
    ```
    """
    kind, _, name = ctx.index.runtime_key(job)
    if not name or kind not in RUNTIME_KINDS:
        return  # nothing to look up, or TL101 already reports an unsupported reference
    if ctx.runtime_for(job) is not None or ctx.index.runtimes_named(name):
        return  # found, or found elsewhere (TL101)
    where = f" in namespace `{job.namespace}`" if kind == "TrainingRuntime" else ""
    yield Problem(
        ("spec", "runtimeRef"),
        f"{kind} `{name}`{where} is not among the checked files: this TrainJob was not "
        "checked against its runtime, so webhook denials that depend on the runtime "
        "(initializer jobs, override targets, framework checks) may still come",
    )
