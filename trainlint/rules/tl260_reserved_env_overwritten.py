from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig, mapping
from trainlint.engine.context import Context
from trainlint.problem import Problem, Severity
from trainlint.release import TrainerVersion
from trainlint.render.trainer import framework, rendered
from trainlint.render.tree import Origin
from trainlint.rule import rule

#: Variables each framework plugin writes over `spec.trainer.env`.
RESERVED = {
    "torch": frozenset(
        {"PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT"}
    ),
    "mpi": frozenset({
        "OMPI_MCA_orte_default_hostfile", "OMPI_MCA_plm_rsh_args",
        "OMPI_MCA_orte_keep_fqdn_hostnames", "OMPI_MCA_orte_set_default_slots",
    }),
    "jax": frozenset({"JAX_NUM_PROCESSES", "JAX_PROCESS_ID", "JAX_COORDINATOR_ADDRESS"}),
}


def _unchecked(plugin: str, version: TrainerVersion, trainer: dict[str, object]) -> str | None:
    """Why the webhook lets a reserved name through, or None when it denies it."""
    if plugin == "torch" and version <= (2, 1) and "numProcPerNode" not in trainer:
        return "up to v2.1 the webhook checks these names only when `numProcPerNode` is set"
    if plugin == "mpi" and version < (2, 3):
        return "the webhook checks these names only from v2.3"
    if plugin == "jax":
        return "the JAX plugin does not check them"
    return None


@rule(
    "TL260", "reserved-env-overwritten",
    kinds={"TrainJob"}, severity=Severity.ERROR,
    remediation="Remove the variable: the framework plugin sets it for every node.",
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags `spec.trainer.env` entries that the runtime's framework plugin sets itself,
    where the webhook lets them through: torch `PET_*` up to v2.1 without
    `numProcPerNode`, MPI `OMPI_MCA_*` before v2.3, JAX `JAX_*` always. (Where the webhook
    denies them, the admission-parity rules report it.)

    ## Why is this bad?
    The plugin sets its values from `numNodes`, the GPUs, the rendezvous host and the
    hostfile it mounts, and then the controller applies the TrainJob's env over them: the
    value written here wins (see `trainlint render`). When it is not what the plugin
    computed, the nodes disagree with what the controller set up: a wrong node count or
    rank hangs the rendezvous, another master address or port is never reached, another
    hostfile lists no workers.

    ## When it stays silent
    Where the webhook denies the variables (TL212), on variables the plugin does not
    set, when the value written is the one the plugin sets, and when the runtime is not
    among the checked files.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: jax-distributed
    spec:
      mlPolicy:
        jax: {}
      template:
        spec:
          replicatedJobs:
            - name: node
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: trainer
                spec:
                  template:
                    spec:
                      containers:
                        - name: node
                          image: nvcr.io/nvidia/jax:25.04-py3
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: run
    spec:
      runtimeRef:
        name: jax-distributed
      trainer:
        env:
          - name: JAX_COORDINATOR_ADDRESS
            value: head:1234
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: run
    spec:
      runtimeRef:
        name: jax-distributed
      trainer:
        env:
          - name: XLA_PYTHON_CLIENT_MEM_FRACTION
            value: "0.9"
    ```
    """
    runtime = ctx.runtime_for(job)
    plugin = framework(runtime) if runtime is not None else None
    trainer = mapping(dig(job.body, "spec", "trainer"))
    if plugin not in RESERVED:
        return
    why = _unchecked(plugin, ctx.trainer_version, trainer)
    if why is None:
        return
    render = rendered(job, ctx)
    for path, injected, origin in render.replaced:
        name = str(injected.get("name"))
        written = render.origin(path)
        if name not in RESERVED[plugin] or written.manifest is not job:
            continue
        value = dig(render.jobset, *path, "value")
        cause = Origin(origin.manifest, origin.path).describe() if origin.manifest else ""
        yield Problem(
            (*written.path, "name"),
            f"`{name}: {value}` replaces the `{_shown(injected)}` the {plugin} plugin sets"
            f"{f' from {cause}' if cause else ''}: the controller applies the TrainJob's env "
            f"last ({why}), so {CONSEQUENCES.get(name, _MISMATCH)}",
        )


_MISMATCH = "the nodes no longer match what the controller set up"
#: What a node count, rank or address of one's own does to the run.
CONSEQUENCES = {
    "PET_NNODES": "torchrun waits for another number of nodes than the job runs, and the "
    "rendezvous hangs or leaves nodes out",
    "JAX_NUM_PROCESSES": "JAX waits for another number of processes than the job runs, and "
    "the start hangs",
    "PET_NODE_RANK": "every node claims the same rank, and the rendezvous fails",
    "JAX_PROCESS_ID": "every node claims the same process id, and the start fails",
    "PET_MASTER_ADDR": "the nodes look for the master where none listens",
    "PET_MASTER_PORT": "the nodes look for the master on a port it does not open (the "
    "controller exposes 29500)",
    "JAX_COORDINATOR_ADDRESS": "the nodes look for the coordinator where none listens",
    "PET_NPROC_PER_NODE": "torchrun starts another number of processes per node than the "
    "plugin counted",
    "OMPI_MCA_orte_default_hostfile": "mpirun reads another hostfile than the one the plugin "
    "mounts at /etc/mpi/hostfile, which lists the workers",
}


def _shown(variable: dict[str, object]) -> str:
    value = variable.get("value")
    if value is None:
        return "valueFrom: its completion index"
    return str(value)
