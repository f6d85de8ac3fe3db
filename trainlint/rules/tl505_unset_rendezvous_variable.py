from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, mappings
from trainlint.engine.context import Context
from trainlint.problem import Problem, Related, Severity
from trainlint.render import Container
from trainlint.render.expansion import references
from trainlint.render.script import shell_script
from trainlint.render.trainer import rendered
from trainlint.render.tree import Origin
from trainlint.rule import rule

#: The variables the Training Operator v1 gave every replica of a PyTorchJob, which no
#: Trainer release sets, each with what the torch plugin sets in their place.
OPERATOR_V1 = {
    "MASTER_ADDR": ("PET_MASTER_ADDR",),
    "MASTER_PORT": ("PET_MASTER_PORT",),
    "WORLD_SIZE": ("PET_NNODES", "PET_NPROC_PER_NODE"),
    "RANK": ("PET_NODE_RANK",),
}


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
        if not container.body.get("envFrom"):
            yield from _unset(job, container)


def _unset(job: Manifest, container: Container) -> Iterator[Problem]:
    """A finding per key of the container's command and args that refers to a variable of
    `OPERATOR_V1` the container does not have (each name once a key)."""
    script = shell_script(container)
    for key in ("command", "args"):
        for text, origin in container.strings(key):
            names = dict.fromkeys(name for name in references(text)
                                  if name in OPERATOR_V1 and name not in container.env)
            for name in names:
                instead = [f"`{other}`" for other in OPERATOR_V1[name] if other in container.env]
                hint = (f" (the Training Operator v1 set it; Trainer sets "
                        f"{' and '.join(instead)} instead)" if instead else "")
                outcome = (
                    f"the shell runs `{name}` as a command, which fails, and leaves the word "
                    "empty" if script is not None and script[1] == origin
                    else f"the program reads the text `$({name})`"
                )
                message = (
                    f"`$({name})` in the {key} of {container.noun} "
                    f"`{container.name}` refers to a variable it does not have: Kubernetes "
                    f"passes it on as written, and {outcome}{hint}"
                )
                yield from _at(job, origin, message, f"the runtime's {key} item")


def _set_after(job: Manifest, container: Container) -> Iterator[Problem]:
    """A finding per variable whose value refers to one a framework plugin injects only
    after it (`MASTER_ADDR: $(PET_MASTER_ADDR)` in `spec.trainer.env`): Kubernetes expands
    a value from the variables before it, and the plugin appends its own after those the
    objects set."""
    defined: set[str] = set()
    for index, item in mappings(container.body.get("env")):
        value, name = item.get("value"), item.get("name")
        for referred in dict.fromkeys(references(value) if isinstance(value, str) else ()):
            later = container.env.get(referred)
            if referred in defined or later is None or later[0] < index:
                continue
            injected = container.origin("env", later[0])
            if injected.note is None:
                continue  # set by an object: where it lands beside this one is the merge's
            yield from _at(job, container.origin("env", index, "value"), (
                f"`$({referred})` in the value of `{name}` ({container.noun} "
                f"`{container.name}`) refers to a variable set only after it ({injected.note}, "
                f"after the variables the objects set): Kubernetes expands a value from the "
                f"variables before it, so `{name}` is the text `$({referred})`"),
                "the runtime's variable")
        if isinstance(name, str):
            defined.add(name)


def _at(job: Manifest, origin: Origin, message: str, what: str) -> Iterator[Problem]:
    """The finding on the TrainJob: at the key, where the TrainJob wrote it, else at its
    `runtimeRef`, with the runtime's key beside it."""
    if origin.manifest is job:
        yield Problem(origin.path, message)
    elif origin.manifest is not None:
        yield Problem(("spec", "runtimeRef"), message,
                      related=(Related(origin.manifest, origin.path, what),))
