from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from trainlint.document import KeyPath, Manifest, mapping
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render import devices
from trainlint.render.trainer import is_torchtune, rendered
from trainlint.rule import rule

#: What the GPUs per node size, by the framework plugin that reads them as a number.
USES = {
    "mpi": "the MPI slots per node",
    "xgboost": "the XGBoost workers per node",
    "flux": "the GPUs Flux gives each task",
    "torchtune": "the torchtune recipe (single device or distributed)",
}
#: The uses a plugin writes into the trainer job's container (env, command): with no job
#: labelled `trainer` they land nowhere. MPI's slots go into the hostfile of the `node`
#: job whatever its labels.
IN_TRAINER_CONTAINER = frozenset({"xgboost", "flux", "torchtune"})


@rule(
    "TL258", "gpu-resource-not-a-count",
    kinds=TRAINER_KINDS, severity=Severity.WARNING,
    since="2.1",
    remediation="Keep one GPU count resource (`nvidia.com/gpu`) among the trainer's resources.",
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Looks at the resources the controller counts GPUs per node from (a TrainJob's
    `resourcesPerNode`, else the `node` container of the runtime's first job labelled
    `trainer` or named `node`, label or not) on an MPI, XGBoost or Flux runtime (the last
    two from v2.2), or a torchtune TrainJob: the
    plugins that use the GPUs per node as a number. It flags a resource whose name
    contains `gpu` but that the device-plugin catalogue knows is a share of a GPU, not a
    count (HAMi's `nvidia.com/gpumem`, `nvidia.com/gpucores`, Intel's
    `gpu.intel.com/millicores`), and several names containing `gpu` with different
    quantities.

    ## Why is this bad?
    The controller takes the GPUs per node from a resource whose name contains `gpu`,
    the first it meets in a Go map, in random order. A memory size or a core percentage
    then becomes the GPU count: a wrong number of MPI slots, XGBoost workers, Flux GPUs
    or torchtune devices.

    ## When it stays silent
    On torch runtimes (other than torchtune TrainJobs) and JAX: they only ask whether
    there is a GPU, and every quantity here is one. On names the catalogue does not know
    (add them with config `device-resources`), and on several `gpu` names of equal
    quantity, which give the same count whichever is read. On a TrainJob whose runtime is
    unknown. On XGBoost, Flux and torchtune when no job carries the trainer label: the
    plugin writes the count into the trainer's container, and there is none.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: mpi-vgpu
    spec:
      mlPolicy:
        mpi:
          numProcPerNode: 1
      template:
        spec:
          replicatedJobs:
            - name: launcher
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: trainer
                spec:
                  template:
                    spec:
                      containers:
                        - name: node
                          image: mpioperator/mpi-pi:openmpi
                          resources:
                            limits:
                              nvidia.com/gpu: 1
                              nvidia.com/gpumem: 8192
            - name: node
              template:
                spec:
                  template:
                    spec:
                      containers:
                        - name: node
                          image: mpioperator/mpi-pi:openmpi
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: mpi-vgpu
    spec:
      mlPolicy:
        mpi:
          numProcPerNode: 1
      template:
        spec:
          replicatedJobs:
            - name: launcher
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: trainer
                spec:
                  template:
                    spec:
                      containers:
                        - name: node
                          image: mpioperator/mpi-pi:openmpi
                          resources:
                            limits:
                              nvidia.com/gpu: 1
            - name: node
              template:
                spec:
                  template:
                    spec:
                      containers:
                        - name: node
                          image: mpioperator/mpi-pi:openmpi
    ```
    """
    render = rendered(manifest, ctx)
    runtime = render.runtime
    if runtime is None:
        return
    use = render.framework
    if use == "torch" and manifest.kind == "TrainJob" and is_torchtune(manifest, runtime):
        use = "torchtune"
    resources, at = render.sized_by
    # On a TrainJob, only its own `resourcesPerNode`: the runtime's resources are
    # reported on the runtime.
    if use in IN_TRAINER_CONTAINER and render.trainer is None:
        return
    if use in USES and at.manifest is manifest and at.note is None:
        yield from _problems(resources, at.path, USES[use], ctx.device_resources)

def _problems(
    resources: Any, path: KeyPath, sizes: str, extra: Mapping[str, str]
) -> Iterator[Problem]:
    named = devices.gpu_named(resources)
    requested = mapping(mapping(resources).get("requests"))
    part = "requests" if any(name in requested for name in named) else "limits"
    shares = [name for name in named if devices.kind(str(name), extra) == "share"]
    quantities = {str(quantity) for quantity in named.values()}
    if len(named) > 1 and len(quantities) > 1:
        listed = ", ".join(f"`{name}: {quantity}`" for name, quantity in named.items())
        yield Problem(
            (*path, part, shares[0] if shares else list(named)[1]),
            f"the controller reads the GPUs per node from one of {listed} (every name "
            f"containing `gpu`), in random order, and uses it as {sizes}",
        )
    elif shares:
        yield Problem(
            (*path, part, shares[0]),
            f"`{shares[0]}` is a share of a GPU, not a GPU count, but its name contains "
            f"`gpu`: the controller reads it as the GPUs per node and uses it as {sizes}",
        )
