from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig, mapping, mappings
from trainlint.engine import Context
from trainlint.rule import Problem, Severity, TrainerVersion, rule
from trainlint.trainer import framework

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
    fix="Remove the variable: the framework plugin sets it for every node.",
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags `spec.trainer.env` entries that the runtime's framework plugin sets itself,
    where the webhook lets them through: torch `PET_*` up to v2.1 without
    `numProcPerNode`, MPI `OMPI_MCA_*` before v2.3, JAX `JAX_*` always. (Where the webhook
    denies them, the admission-parity rules report it.)

    ## Why is this bad?
    The plugin upserts its own values after the TrainJob's env, so the value written here
    is silently replaced: the run uses the controller's node count, rank, master address
    or hostfile, not yours.

    ## When it stays silent
    Where the webhook denies the variables (TL212), on variables the plugin does not
    set, and when the runtime is not among the checked files.

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
    for index, variable in mappings(trainer.get("env")):
        if str(variable.get("name")) in RESERVED[plugin]:
            yield Problem(
                ("spec", "trainer", "env", index, "name"),
                f"`{variable['name']}` is set by the {plugin} plugin, which silently overwrites "
                f"this value ({why}): the run uses the controller's value, not this one",
            )
