from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig, is_count
from trainlint.engine.context import Context
from trainlint.problem import Problem, Severity
from trainlint.render.trainer import JOBS, framework, named
from trainlint.rule import rule


@rule(
    "TL274", "mpi-launcher-as-node-single-node", kinds={"TrainJob"}, severity=Severity.WARNING,
    remediation=(
        "Use `numNodes: 2` or more, or a runtime without `runLauncherAsNode` to run on one pod."
    ),
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags `spec.trainer.numNodes: 1` on an MPI runtime with `runLauncherAsNode: true` that
    has both a `launcher` and a `node` job.

    ## Why is this bad?
    With `runLauncherAsNode` the launcher is the first node and the `node` job gets
    `max(numNodes − 1, 1)` pods: `numNodes: N` gives N pods for N ≥ 2, but `numNodes: 1`
    still gives 2 pods, the launcher and one `node` pod. Both are in the MPI hostfile, so
    the run takes two nodes' resources and starts twice the processes asked for.

    ## When it stays silent
    On several nodes, on MPI runtimes without `runLauncherAsNode: true` or without both
    jobs, and when the runtime is not among the checked files.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: deepspeed-distributed
    spec:
      mlPolicy:
        numNodes: 1
        mpi:
          runLauncherAsNode: true
      template:
        spec:
          replicatedJobs:
            - name: node
            - name: launcher
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: ds-run-1
    spec:
      runtimeRef:
        name: deepspeed-distributed
      trainer:
        numNodes: 1
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: deepspeed-distributed
    spec:
      mlPolicy:
        numNodes: 1
        mpi:
          runLauncherAsNode: true
      template:
        spec:
          replicatedJobs:
            - name: node
            - name: launcher
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: ds-run-1
    spec:
      runtimeRef:
        name: deepspeed-distributed
      trainer:
        numNodes: 2
    ```
    """
    nodes = dig(job.body, "spec", "trainer", "numNodes")
    runtime = ctx.runtime_for(job)
    if not is_count(nodes) or nodes != 1 or runtime is None or framework(runtime) != "mpi":
        return
    if dig(runtime.body, "spec", "mlPolicy", "mpi", "runLauncherAsNode") is not True:
        return
    jobs = dig(runtime.body, *JOBS)
    if named(jobs, "launcher") is None or named(jobs, "node") is None:
        return
    yield Problem(
        ("spec", "trainer", "numNodes"),
        f"`numNodes: 1` on {runtime.describe()}, which runs the launcher as a node: the "
        "`node` job still gets one pod (max(numNodes − 1, 1)), so the TrainJob runs 2 pods, "
        "both in the MPI hostfile, with twice the processes and resources asked for",
    )
