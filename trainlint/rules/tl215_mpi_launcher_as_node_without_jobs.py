from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig, mapping
from trainlint.engine.context import Context
from trainlint.problem import Problem, Severity
from trainlint.render.trainer import JOBS, framework, named
from trainlint.rule import rule

DETAIL = (
    "must have 1 when MPI trainingRuntime with enabled runLauncherAsNode does not have either "
    "launcher and node"
)


@rule(
    "TL215", "mpi-launcher-as-node-without-jobs", kinds={"TrainJob"}, severity=Severity.ERROR,
    remediation="Use a runtime with both a `launcher` and a `node` job, or `numNodes: 1`.",
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags `spec.trainer.numNodes` of 2 or more on an MPI runtime with
    `runLauncherAsNode: true` that lacks a replicatedJob named `launcher` or one named
    `node`.

    ## Why is this bad?
    With `runLauncherAsNode` the launcher counts as the first node and the `node` job runs
    the rest, so both jobs must exist to run on several nodes. The Trainer webhook denies
    the TrainJob: "must have 1 when MPI trainingRuntime with enabled runLauncherAsNode does
    not have either launcher and node".

    ## When it stays silent
    On one node, on MPI runtimes without `runLauncherAsNode: true`, on runtimes that
    have both jobs, and when the runtime is not among the checked files.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: mpi-single
    spec:
      mlPolicy:
        mpi:
          runLauncherAsNode: true
      template:
        spec:
          replicatedJobs:
            - name: launcher
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: hpc-run-1
    spec:
      runtimeRef:
        name: mpi-single
      trainer:
        numNodes: 2
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: mpi-single
    spec:
      mlPolicy:
        mpi:
          runLauncherAsNode: true
      template:
        spec:
          replicatedJobs:
            - name: launcher
            - name: node
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: hpc-run-1
    spec:
      runtimeRef:
        name: mpi-single
      trainer:
        numNodes: 2
    ```
    """
    runtime = ctx.runtime_for(job)
    if runtime is None or framework(runtime) != "mpi":
        return
    if dig(runtime.body, "spec", "mlPolicy", "mpi", "runLauncherAsNode") is not True:
        return
    nodes = mapping(dig(job.body, "spec", "trainer")).get("numNodes", 1)
    if not isinstance(nodes, int) or nodes < 2:
        return
    jobs = dig(runtime.body, *JOBS)
    missing = [name for name in ("launcher", "node") if named(jobs, name) is None]
    if missing:
        yield Problem(
            ("spec", "trainer", "numNodes"),
            f"`numNodes: {nodes}` but {runtime.describe()} runs the launcher as a node and has "
            f"no `{missing[0]}` job: the Trainer webhook denies the TrainJob (\"{DETAIL}\")",
        )
