from __future__ import annotations

import re
from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render import Container
from trainlint.render.expansion import OPERATOR_V1, SERVICE_LINK, unset_in_command, unset_in_values
from trainlint.render.trainer import rendered
from trainlint.render.tree import on_trainjob
from trainlint.rule import rule

#: What a variable's name in a command looks like: in capitals. `$(hostname)` is a command
#: substitution of a shell, as meant, and a shell may run behind any program (`mpirun
#: bash -c`, `su -c`), not only where trainlint sees one.
_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")
#: Variables common admission webhooks append to every container of a pod before the
#: kubelet expands its command: Amazon EKS's pod identity and IAM roles for service
#: accounts (`AWS_REGION`, `AWS_ROLE_ARN`...), Azure's workload identity (`AZURE_CLIENT_ID`...).
#: Whether the cluster runs one is not known here.
_WEBHOOK_GIVEN = ("AWS_", "AZURE_")


@rule(
    "TL267", "unresolved-env-reference",
    kinds=TRAINER_KINDS, severity=Severity.WARNING,
    remediation=(
        "Define the variable earlier in the container's `env`, write the value in full, or "
        "build it in the container's shell script (`${PATH}`), where the image's "
        "variables exist."
    ),
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Renders the JobSet the controller builds (see `trainlint render`) and flags a
    `$(NAME)` reference in the `value` of a container's variable when the container sets
    no variable of that name before it: none in `env` above it, no `envFrom`, and a name
    no Service link could have (`<NAME>_SERVICE_HOST`, `<NAME>_PORT`...). On a TrainJob,
    it flags as well a reference in a container's `command` or `args` to a variable the
    container does not have at all, once the TrainJob's variables and those the Trainer
    injects are in it (`--nnodes=$(TRAINER_NNODES)`).

    ## Why is this bad?
    Kubernetes expands a variable's value only from the variables set before it in the
    container (and from the namespace's Service links), never from the image's
    environment, and leaves a reference it cannot resolve as written. So
    `PATH: /opt/venv/bin:$(PATH)` replaces the image's `PATH` with text that holds
    `$(PATH)`, and the image's commands are no longer found; `LD_LIBRARY_PATH:
    /usr/local/nvidia/lib64:$(LD_LIBRARY_PATH)` drops the image's libraries; and
    `MASTER_ADDR: $(JOB_NAME)-node-0-0.$(JOB_NAME)` names no host, since neither Kubernetes
    nor the Trainer sets `JOB_NAME`. A command or an argument is expanded from all the
    container's variables, with the same rule for the others: `--nnodes=$(TRAINER_NNODES)`
    gives torchrun that text; in a shell's script the shell then runs the name as a
    command, which fails, and leaves the word empty. The pods start and the program fails,
    or reads the wrong value, with nothing in the events.

    ## When it stays silent
    When the variable is set before, in the same container; when the container takes
    variables from `envFrom` (their names are not known here); on `$$(NAME)`, which writes
    the text on purpose; on names of Service links; on a reference to a variable a
    framework plugin sets after it, and on the Training Operator v1's `MASTER_ADDR`,
    `MASTER_PORT`, `WORLD_SIZE` and `RANK` in a command (TL505 says so, on the TrainJob);
    on `JOB_COMPLETION_INDEX`, which the Job controller gives the pods of an Indexed Job,
    and in a command on `AWS_*` and `AZURE_*`, which the cloud's identity webhooks give
    every container (in a value they come too late: they are appended);
    in a command, on a name not in capitals (`$(hostname)`: a shell's command substitution,
    as meant, wherever a shell runs it), and in a shell's script where the shell expands
    nothing (a comment, single quotes, a heredoc whose end word is quoted): the text goes
    on to another program as written, in whose syntax it is meant (`awk '{print $(NF)}'`,
    a Makefile's `$(CC)`). On a TrainJob, the runtime's values are reported on the
    runtime; a TrainJob's variable whose name the runtime sets takes that variable's place
    in the list, the others go after the runtime's, as the controller merges them. A
    runtime's command and args are judged on its TrainJobs, each of which may set the
    variable in `spec.trainer.env`.

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
        env:
          - name: LD_LIBRARY_PATH
            value: /opt/nccl/lib:$(LD_LIBRARY_PATH)
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
        env:
          - name: LD_LIBRARY_PATH
            value: /opt/nccl/lib:/usr/local/nvidia/lib64:/usr/local/cuda/lib64
    ```
    """
    render = rendered(manifest, ctx)
    if not render.complete:
        return
    for container in render.every_container():
        if not container.name:
            continue  # a container without a name is refused (TL009)
        if not container.body.get("envFrom"):
            yield from _unresolved(manifest, container)
        if manifest.kind == "TrainJob":
            yield from _unset_in_command(manifest, container)


def _unset_in_command(job: Manifest, container: Container) -> Iterator[Problem]:
    """A finding per key of the container's command and args that refers to a variable it
    does not have, but those TL505 reports and those Kubernetes may give it."""
    for unset in unset_in_command(container):
        name = unset.name
        if (name in OPERATOR_V1 or SERVICE_LINK.fullmatch(name) or not _NAME.fullmatch(name)
                or name.startswith(_WEBHOOK_GIVEN)):
            continue
        outcome = (f"the shell runs `{name}` as a command, which fails, and leaves the word "
                   "empty" if unset.in_script else f"the program gets the text `$({name})`")
        yield from on_trainjob(job, unset.origin, (
            f"`$({name})` in the {unset.key} of {_shown(container)} refers to a variable it "
            f"does not have: Kubernetes passes it on as written, and {outcome}"),
            f"the runtime's {unset.key} item")


def _shown(container: Container) -> str:
    """`container `node` of job `launcher``: jobs often name their containers alike."""
    return f"{container.noun} `{container.name}` of job `{container.job.name}`"


def _unresolved(manifest: Manifest, container: Container) -> Iterator[Problem]:
    """A finding per reference, in a value `manifest` wrote, to a variable the container
    does not set before it (each name once a value)."""
    for unset in unset_in_values(container):
        name, referred = unset.name, unset.referred
        if not isinstance(name, str) or not referred or SERVICE_LINK.fullmatch(referred):
            continue  # an item without a name is refused (TL009)
        origin = container.origin("env", unset.at, "value")
        if origin.manifest is not manifest:
            continue
        if unset.later is not None:
            if container.origin("env", unset.later).note is not None:
                continue  # a plugin's variable, appended after the objects': TL505's
            why = f"sets `{referred}` only after it"
        elif referred == name:
            why = f"sets no `{referred}` before it"
        else:
            why = f"does not set `{referred}`"
        yield Problem(origin.path, (
            f"`$({referred})` in the value of `{name}` ({_shown(container)}) is never "
            f"expanded: the container {why}, and Kubernetes expands a value only from the "
            f"variables set before it (never from the image's), so `{name}` holds the "
            f"text `$({referred})`"))
