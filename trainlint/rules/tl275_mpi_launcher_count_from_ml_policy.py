from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig, mapping
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render.trainer import rendered
from trainlint.rule import rule


@rule(
    "TL275", "mpi-launcher-count-from-ml-policy",
    kinds=TRAINER_KINDS, severity=Severity.WARNING,
    remediation=(
        "Keep `mlPolicy.numNodes: 1` in MPI runtimes and set `spec.trainer.numNodes` per TrainJob."
    ),
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags an MPI runtime whose `mlPolicy.numNodes` is above 1, on a TrainJob of the run
    that uses it without setting `spec.trainer.numNodes`, or on the runtime itself when
    no TrainJob of the run uses it.

    ## Why is this bad?
    Read from the controller code, not confirmed by an upstream test: the controller sizes
    the job labelled `trainer`, which in an MPI runtime is the launcher, from
    `mlPolicy.numNodes`, while the MPI plugin sizes the `node` job only from the
    TrainJob's `numNodes`. Without it the run gets several launcher pods, each starting
    `mpirun`, and the `node` job keeps its own parallelism.

    ## When it stays silent
    On MPI runtimes of one node, on TrainJobs that set `numNodes`, and on a runtime that
    a TrainJob of the run uses (reported there).

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: mpi-4
    spec:
      mlPolicy:
        numNodes: 4
        mpi: {}
      template:
        spec:
          replicatedJobs:
            - name: launcher
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: trainer
            - name: node
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: mpi-4
    spec:
      mlPolicy:
        numNodes: 1
        mpi: {}
      template:
        spec:
          replicatedJobs:
            - name: launcher
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: trainer
            - name: node
    ```
    """
    render = rendered(manifest, ctx)
    runtime, launcher = render.runtime, render.trainer
    if render.framework != "mpi" or runtime is None or launcher is None:
        return
    nodes, at = launcher.pods, launcher.pods_at
    if nodes <= 1 or at.manifest is not runtime or at.note is not None:
        return  # one launcher, or its count is not the runtime's `mlPolicy.numNodes`
    effect = (
        f"the controller makes the trainer-labelled job `{launcher.name}` {nodes} "
        "launcher pods, each starting mpirun, while the `node` job keeps its own parallelism"
    )
    if manifest.kind != "TrainJob":
        if not ctx.trainjobs_using(runtime):
            yield Problem(
                at.path,
                f"MPI runtime with `mlPolicy.numNodes: {nodes}`: for a TrainJob that sets no "
                f"`numNodes`, {effect}",
            )
        return
    trainer = mapping(dig(manifest.body, "spec", "trainer"))
    if "numNodes" not in trainer:
        path = ("spec", "trainer") if "trainer" in mapping(manifest.body.get("spec")) else (
            "spec", "runtimeRef"
        )
        yield Problem(
            path,
            f"this TrainJob sets no `numNodes` and {runtime.describe()} is an MPI runtime with "
            f"`mlPolicy.numNodes: {nodes}`: {effect}",
        )
