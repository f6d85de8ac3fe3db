from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig, is_count, mapping
from trainlint.engine.context import Context
from trainlint.problem import Problem, Severity
from trainlint.render.trainer import framework
from trainlint.rule import rule

TORCH_WORDS = ("auto", "cpu", "gpu")


@rule(
    "TL211", "invalid-num-proc-per-node", kinds={"TrainJob"}, severity=Severity.ERROR,
    remediation="Give `spec.trainer.numProcPerNode` a value the runtime's framework accepts.",
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Checks `spec.trainer.numProcPerNode` against the framework of the runtime: on
    v2.0–v2.1 a torch runtime takes an integer or `auto`, `cpu`, `gpu`, and an MPI runtime
    only an integer; on v2.2–v2.3 a Flux runtime needs at least 1.

    ## Why is this bad?
    The Trainer webhook denies the TrainJob: "must have an int value or [auto cpu gpu]",
    "must have an int value for MPI TrainJob" or "must be greater than or equal to 1 for
    Flux TrainJob".

    ## When it stays silent
    When the TrainJob sets no `numProcPerNode`, or its runtime is not among the checked
    files.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: flux-distributed
    spec:
      mlPolicy:
        flux: {}
      template:
        spec:
          replicatedJobs: []
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: lammps-run-1
    spec:
      runtimeRef:
        name: flux-distributed
      trainer:
        numProcPerNode: 0
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: flux-distributed
    spec:
      mlPolicy:
        flux: {}
      template:
        spec:
          replicatedJobs: []
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: lammps-run-1
    spec:
      runtimeRef:
        name: flux-distributed
      trainer:
        numProcPerNode: 4
    ```
    """
    runtime = ctx.runtime_for(job)
    trainer = mapping(dig(job.body, "spec", "trainer"))
    if runtime is None or "numProcPerNode" not in trainer:
        return
    value = trainer["numProcPerNode"]
    shown = f'"{value}"' if isinstance(value, str) else str(value)
    policy = framework(runtime)
    found = _denial(policy, value, ctx.trainer_version)
    if found is not None:
        denial, wanted = found
        yield Problem(
            ("spec", "trainer", "numProcPerNode"),
            f"`numProcPerNode: {shown}` on {policy} runtime {runtime.describe()}: the Trainer "
            f'webhook denies the TrainJob ("{denial}"); use {wanted}',
        )


def _denial(policy: str | None, value: object, version: tuple[int, int]) -> tuple[str, str] | None:
    """(the webhook's detail, what to use instead) when the framework refuses `value`."""
    is_int = is_count(value)
    if version <= (2, 1) and policy == "torch" and isinstance(value, str):
        if value not in TORCH_WORDS:
            return "must have an int value or [auto cpu gpu]", "an integer, `auto`, `cpu` or `gpu`"
    elif version <= (2, 1) and policy == "mpi" and not is_int:
        return "must have an int value for MPI TrainJob", "an integer"
    elif version >= (2, 2) and policy == "flux" and isinstance(value, int) and value < 1:
        return "must be greater than or equal to 1 for Flux TrainJob", "1 or more"
    return None
