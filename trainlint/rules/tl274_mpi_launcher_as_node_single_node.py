from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig
from trainlint.engine.context import Context
from trainlint.problem import Problem, Severity
from trainlint.render.trainer import rendered
from trainlint.rule import rule

NUM_NODES = ("spec", "trainer", "numNodes")


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
    render = rendered(job, ctx)
    node = render.job_named("node")
    if render.framework != "mpi" or render.runtime is None or node is None:
        return
    at = node.pods_at
    if node.pods != 1 or at.manifest is not job or at.path != NUM_NODES:
        return  # the node job's count is not the TrainJob's `numNodes: 1`
    hosts = [line for kind, _, data, _ in render.extras if kind == "ConfigMap"
             for line in str(data.get("hostfile", "")).splitlines()]
    if dig(job.body, *NUM_NODES) != 1 or len(hosts) < 2:
        return  # the launcher is no node of the hostfile
    yield Problem(
        NUM_NODES,
        f"`numNodes: 1` on {render.runtime.describe()}, which runs the launcher as a node: "
        "the `node` job still gets one pod (max(numNodes − 1, 1)), so the TrainJob runs "
        f"{len(hosts)} pods, {'both' if len(hosts) == 2 else 'all'} in the MPI hostfile, "
        f"with {'twice' if len(hosts) == 2 else f'{len(hosts)} times'} the processes and "
        "resources asked for",
    )
