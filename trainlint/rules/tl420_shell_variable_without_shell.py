from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from typing import Any

from trainlint import roundtrip
from trainlint.document import KeyPath, Manifest
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Fix, Problem, Severity, listed
from trainlint.render import Container, script
from trainlint.render.trainer import rendered
from trainlint.render.tree import on_checked
from trainlint.rule import rule

#: A shell's reference to a variable, `$NAME` or `${NAME}` (not Kubernetes' `$(NAME)`, nor
#: the `$` Kubernetes writes for `$$`).
_REFERENCE = re.compile(
    r"(?<!\$)\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?::?[-=+?][^}]*)?\}|([A-Za-z_][A-Za-z0-9_]*))")


@rule(
    "TL420", "shell-variable-without-shell",
    kinds=TRAINER_KINDS, severity=Severity.ERROR,
    remediation=(
        "Write the reference as Kubernetes expands it, `$(NAME)`, or run the command in a "
        "shell: `command: [sh, -c, \"torchrun --node-rank $NAME train.py\"]`."
    ),
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Renders the JobSet the controller builds (see `trainlint render`) and flags a shell
    reference to a variable, `$NAME` or `${NAME}`, in the `command` or `args` of a
    container that runs Python or a launcher that starts it (`torchrun`, `accelerate`,
    `tune`, `llamafactory-cli`) with no shell, when the container has a variable of that
    name: one of its `env`, the TrainJob's, or one the framework plugin sets
    (`PET_NODE_RANK`, `PET_MASTER_ADDR`...).

    ## Why is this bad?
    Kubernetes runs `command` and `args` without a shell and expands only its own form of
    reference, `$(NAME)`. A word written as for a shell reaches the program as the text
    `$PET_NODE_RANK`: torchrun stops at once (`invalid int value: '$PET_NODE_RANK'`), a
    path becomes a folder named `$CKPT_DIR`, and an address names no host. Every pod
    fails the same way, or the run writes where nothing reads, after the pods were
    scheduled and the image pulled.

    ## When it stays silent
    When a shell runs the command (`sh -c`, also behind `env` or `tini --`, or started
    by the launcher: `torchrun --no-python bash -c`), whose script expands the reference
    as meant; on a program other than Python and those launchers
    (another one may expand words itself, or start the program through a shell:
    `mpirun`, `deepspeed`, `srun`); on the program text of `python -c` (`-uc` too); on a name the
    container has no variable of (`$HOME` may be the image's, which is not seen); on
    `$(NAME)` (see TL267) and `$$NAME`, which writes the text on purpose; on a container
    with no `command` of its own (the image's entrypoint may be a shell); and on a
    TrainJob whose runtime is not among the checked files.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: pretrain
    spec:
      runtimeRef:
        name: torch-distributed
      trainer:
        numNodes: 2
        command:
          - torchrun
          - --nnodes=2
          - --node-rank
          - $PET_NODE_RANK
          - --rdzv-endpoint
          - $PET_MASTER_ADDR:29400
          - train.py
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: pretrain
    spec:
      runtimeRef:
        name: torch-distributed
      trainer:
        numNodes: 2
        command:
          - torchrun
          - --nnodes=2
          - --node-rank
          - $(PET_NODE_RANK)
          - --rdzv-endpoint
          - $(PET_MASTER_ADDR):29400
          - train.py
    ```
    """
    render = rendered(manifest, ctx)
    if not render.complete:
        return
    for container in render.every_container():
        for item, text, origin, names in _unexpanded(container):
            shown = listed([f"`{name}`" for name in names])
            expanded = listed([f"`{_REFERENCE.sub(_kubernetes, name)}`" for name in names])
            program = posixpath.basename(item)
            message = (
                f"{shown} in the {origin.path[-2]} of {container.noun} `{container.name}` of "
                f"job `{container.job.name}` is written for a shell, and no shell runs "
                f"`{program}`: Kubernetes expands only {expanded}, so `{program}` gets the "
                f"text {shown}, not the value")
            if origin.manifest is manifest and origin.note is None:
                yield Problem(origin.path, message, fix=_expanded_fix(origin.path, text, names))
            else:
                yield from on_checked(manifest, render.job, (origin,), message,
                                      "the runtime's command")


def _unexpanded(container: Container) -> Iterator[tuple[str, str, Any, list[str]]]:
    """Each item of a container's command and args after the program that holds shell
    references to its variables: the program, the item, its origin and the references."""
    given = script.unshelled(container)
    if given is None:
        return
    for text, origin in given.items:
        names = [match[0] for match in _REFERENCE.finditer(text)
                 if (match[1] or match[2]) in container.env]
        if names:
            yield given.program, text, origin, list(dict.fromkeys(names))


def _expanded_fix(path: KeyPath, text: str, names: list[str]) -> Fix:
    """The references found written as Kubernetes expands them. Unsafe: the program is
    given values it never got."""
    fixed = _REFERENCE.sub(
        lambda match: _kubernetes(match) if match[0] in names else match[0], text)

    def edit(document: Any) -> None:
        sequence = roundtrip.at(document, path[:-1])
        index = int(path[-1])
        if not isinstance(sequence, list) or sequence[index] != text:
            raise roundtrip.Stale(path)
        sequence[index] = fixed

    return Fix(f"write `{fixed}`", edit, safe=False)


def _kubernetes(match: re.Match[str]) -> str:
    """A shell's reference as Kubernetes writes it: `$(NAME)`."""
    return f"$({match[1] or match[2]})"
