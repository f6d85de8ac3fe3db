from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig, mapping, mappings
from trainlint.engine.context import Context
from trainlint.problem import Problem, Severity
from trainlint.render.trainer import framework
from trainlint.rule import rule

#: Variables each framework plugin sets itself, and the first release whose webhook denies them.
RESERVED = {
    "torch": (
        {"PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR",
         "PET_MASTER_PORT"},
        (2, 0),
    ),
    "mpi": (
        {"OMPI_MCA_orte_default_hostfile", "OMPI_MCA_plm_rsh_args",
         "OMPI_MCA_orte_keep_fqdn_hostnames", "OMPI_MCA_orte_set_default_slots"},
        (2, 3),
    ),
    "xgboost": (
        {"DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", "DMLC_TASK_ID", "DMLC_NUM_WORKER"},
        (2, 2),
    ),
}
ENV = ("spec", "trainer", "env")


@rule(
    "TL212", "reserved-trainer-env", kinds={"TrainJob"}, severity=Severity.ERROR,
    remediation=(
        "Remove the variables: the framework plugin sets them from numNodes and numProcPerNode."
    ),
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags variables in `spec.trainer.env` that the runtime's framework plugin sets itself:
    `PET_NNODES`, `PET_NPROC_PER_NODE`, `PET_NODE_RANK`, `PET_MASTER_ADDR`,
    `PET_MASTER_PORT` (torch), the `OMPI_MCA_*` hostfile and ssh settings (MPI), and
    `DMLC_TRACKER_URI`, `DMLC_TRACKER_PORT`, `DMLC_TASK_ID`, `DMLC_NUM_WORKER` (XGBoost),
    where the webhook denies them: torch always from v2.2 and with `numProcPerNode` before,
    MPI from v2.3, XGBoost from v2.2. (Where it lets them through, TL260 reports that the
    controller silently overwrites them.)

    ## Why is this bad?
    The Trainer webhook denies the TrainJob ("must not have reserved envs, invalid envs
    configured: [...]", or "<NAME> is reserved for the XGBoost runtime"): the plugin sets
    these from the node count, rank and rendezvous address it computes.

    ## When it stays silent
    On variables the plugin does not set, on runtimes whose framework sets none, and
    where the webhook lets them through (TL260 reports those); when the runtime is not
    among the checked files.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-distributed
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
        name: torch-distributed
      trainer:
        numNodes: 2
        env:
          - name: PET_NNODES
            value: "2"
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-distributed
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
        name: torch-distributed
      trainer:
        numNodes: 2
    ```
    """
    runtime = ctx.runtime_for(job)
    policy = framework(runtime) if runtime is not None else None
    if policy not in RESERVED:
        return
    names, since = RESERVED[str(policy)]
    found = [
        (index, variable["name"]) for index, variable in mappings(dig(job.body, *ENV))
        if isinstance(variable.get("name"), str) and variable["name"] in names
    ]
    nproc = "numProcPerNode" in mapping(dig(job.body, "spec", "trainer"))
    unchecked = policy == "torch" and ctx.trainer_version <= (2, 1) and not nproc
    if not found or ctx.trainer_version < since or unchecked:
        return  # not denied: TL260 reports the values the controller silently overwrites
    if policy == "xgboost":
        for index, name in found:
            yield Problem(
                (*ENV, index),
                f"`{name}` is set by the XGBoost plugin: the Trainer webhook denies the "
                f'TrainJob ("{name} is reserved for the XGBoost runtime")',
            )
    else:
        listed = " ".join(sorted({name for _, name in found}))
        yield Problem(
            ENV,
            f"`{listed}` in `spec.trainer.env` are set by the {policy} plugin: the Trainer "
            f'webhook denies the TrainJob ("must not have reserved envs, invalid envs '
            f'configured: [{listed}]")',
        )
