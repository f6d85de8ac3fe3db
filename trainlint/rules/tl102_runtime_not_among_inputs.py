from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine.context import Context
from trainlint.problem import Problem, Severity
from trainlint.release import format_version
from trainlint.rule import rule


@rule(
    "TL102", "runtime-not-among-inputs", kinds={"TrainJob"}, severity=Severity.WARNING,
    remediation=(
        "Give trainlint the runtime: check it with the TrainJob, or add it with `--context` "
        "or `--from-cluster`."
    ),
    preview=True,
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Says, once per TrainJob, that the runtime its `spec.runtimeRef` names was found
    nowhere: not among the checked files, their context (`--context`, `--from-cluster`),
    nor (for a ClusterTrainingRuntime) among the runtimes the Trainer release installs; in
    the webhook, not in the cluster. None of the checks that need the runtime were made:
    initializer jobs, override and patch targets, framework checks (reserved env,
    numProcPerNode, torchtune, MPI, Flux, Volcano).

    ## Why is this bad?
    Most of what the Trainer webhook denies depends on the runtime, and trainlint never
    guesses a runtime it has not read. A clean result without the runtime is therefore a
    weaker promise than it looks. Without this rule, the run says so once on standard error
    ("2 TrainJobs not checked against their runtime"); select it to make each such TrainJob
    a finding, for a CI step that must see every runtime.

    ## Preview
    A runtime trainlint was not given is a limit of the run, not a problem of the TrainJob:
    on real manifests (a documentation page, a pre-commit hook given one changed file) the
    finding failed runs that had nothing wrong.

    ## When it stays silent
    When a runtime of that name is among the checked files or their context, in any
    namespace or kind (TL101 judges the mismatch), or is a ClusterTrainingRuntime the
    release installs (unless `bundled-runtimes = false`).

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
    if not ctx.runtime_unknown(job):
        return  # found, found elsewhere (TL101), or nothing to look up
    kind, _, name = ctx.runtime_key(job)
    namespace = f" in namespace `{job.namespace}`" if kind == "TrainingRuntime" else ""
    installed = (
        f", nor one that Trainer {format_version(ctx.bundled)} installs"
        if kind == "ClusterTrainingRuntime" and ctx.bundled else ""
    )
    yield Problem(
        ("spec", "runtimeRef"),
        f"{kind} `{name}`{namespace} is not in {ctx.where}{installed}: this TrainJob was not "
        "checked against its runtime, so webhook denials that depend on the runtime "
        "(initializer jobs, override targets, framework checks) may still come",
    )
