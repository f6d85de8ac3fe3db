from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine.context import Context
from trainlint.problem import Problem, Severity
from trainlint.render import Container
from trainlint.render.expansion import OPERATOR_V1, unset_in_command, unset_in_values
from trainlint.render.trainer import rendered
from trainlint.render.tree import on_trainjob
from trainlint.rule import rule


@rule(
    "TL505", "unset-rendezvous-variable",
    kinds={"TrainJob"}, severity=Severity.WARNING,
    remediation=(
        "Use the variables the framework plugin sets in the trainer's container "
        "(`$(PET_MASTER_ADDR)`, `$(PET_MASTER_PORT)`, `$(PET_NODE_RANK)`, `$(PET_NNODES)`), "
        "or define the variable in the container's `env`."
    ),
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Renders the JobSet the controller builds for the TrainJob (see `trainlint render`) and
    flags a `$(MASTER_ADDR)`, `$(MASTER_PORT)`, `$(WORLD_SIZE)` or `$(RANK)` reference in
    the command or args of a container whose variables do not include that name, and a
    variable whose value refers to one a framework plugin injects
    (`MASTER_ADDR: $(PET_MASTER_ADDR)` in `spec.trainer.env`): the plugin appends its own
    after the variables the runtime and the TrainJob set, and a value is expanded only
    from the variables before it, so the alias holds the text.

    ## Why is this bad?
    Kubernetes expands `$(NAME)` in a container's command and args from the container's
    own variables, and leaves a reference to a variable it does not have as written. The
    Training Operator v1 set these four for every PyTorchJob replica; no Trainer release
    does (its torch plugin sets `PET_MASTER_ADDR`, `PET_MASTER_PORT`, `PET_NODE_RANK`,
    `PET_NNODES` and `PET_NPROC_PER_NODE`, in the trainer's container only). The program
    gets the literal text: `--rdzv-endpoint=$(MASTER_ADDR):$(MASTER_PORT)` is no address,
    and torchrun fails on every node, after the pods were scheduled and the image pulled.
    In a shell's script (`sh -c`), the shell then runs `MASTER_ADDR` as a command, which
    does not exist, and the word is left empty. (A Service named `master` in the namespace
    would give the pods a `MASTER_PORT` of its own, `tcp://<address>:<port>`: no port
    either.)

    ## When it stays silent
    When the container sets the variable (`env`, in the runtime or the TrainJob), or takes
    variables from `envFrom` (their names are not known here); on `$$(NAME)`, which writes
    the text on purpose; when the runtime is not among the checked files, or does not
    label its trainer job (TL201: the TrainJob's command and args are dropped). On
    runtimes: each TrainJob may set the variable in `spec.trainer.env`.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft
    spec:
      runtimeRef:
        name: torch-distributed
      trainer:
        numNodes: 2
        command: [torchrun]
        args:
          - --nnodes=2
          - --rdzv-backend=c10d
          - --rdzv-endpoint=$(MASTER_ADDR):$(MASTER_PORT)
          - train.py
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft
    spec:
      runtimeRef:
        name: torch-distributed
      trainer:
        numNodes: 2
        command: [torchrun]
        args:
          - --nnodes=2
          - --rdzv-backend=c10d
          - --rdzv-endpoint=$(PET_MASTER_ADDR):$(PET_MASTER_PORT)
          - train.py
    ```
    """
    runtime = ctx.runtime_for(job)
    render = rendered(job, ctx)
    if runtime is None or not render.complete:
        return
    for container in render.every_container():
        yield from _set_after(job, container)
        yield from _unset(job, container)


def _unset(job: Manifest, container: Container) -> Iterator[Problem]:
    """A finding per key of the container's command and args that refers to a variable of
    `OPERATOR_V1` the container does not have (each name once a key)."""
    for unset in unset_in_command(container):
        if unset.name not in OPERATOR_V1:
            continue
        instead = [f"`{other}`" for other in OPERATOR_V1[unset.name] if other in container.env]
        hint = (f" (the Training Operator v1 set it; Trainer sets "
                f"{' and '.join(instead)} instead)" if instead else "")
        outcome = (
            f"the shell runs `{unset.name}` as a command, which fails, and leaves the word "
            "empty" if unset.in_script else f"the program reads the text `$({unset.name})`"
        )
        message = (
            f"`$({unset.name})` in the {unset.key} of {container.noun} `{container.name}` "
            f"refers to a variable it does not have: Kubernetes passes it on as written, and "
            f"{outcome}{hint}"
        )
        yield from on_trainjob(job, unset.origin, message, f"the runtime's {unset.key} item")


def _set_after(job: Manifest, container: Container) -> Iterator[Problem]:
    """A finding per variable whose value refers to one a framework plugin injects only
    after it (`MASTER_ADDR: $(PET_MASTER_ADDR)` in `spec.trainer.env`): Kubernetes expands
    a value from the variables before it, and the plugin appends its own after those the
    objects set."""
    for unset in unset_in_values(container):
        if unset.later is None:
            continue
        injected = container.origin("env", unset.later)
        if injected.note is None:
            continue  # set by an object: where it lands beside this one is the merge's
        name, referred = unset.name, unset.referred
        yield from on_trainjob(job, container.origin("env", unset.at, "value"), (
            f"`$({referred})` in the value of `{name}` ({container.noun} "
            f"`{container.name}`) refers to a variable set only after it ({injected.note}, "
            f"after the variables the objects set): Kubernetes expands a value from the "
            f"variables before it, so `{name}` is the text `$({referred})`"),
            "the runtime's variable")
