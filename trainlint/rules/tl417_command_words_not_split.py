from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterator
from typing import Any

from trainlint import roundtrip
from trainlint.document import KeyPath, Manifest
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Edit, Fix, Problem, Severity
from trainlint.render import Container, script
from trainlint.render.trainer import rendered
from trainlint.render.tree import Origin
from trainlint.rule import rule


@rule(
    "TL417", "command-words-not-split",
    kinds=TRAINER_KINDS, severity=Severity.ERROR,
    remediation=(
        "Write each word of the command as an item of its own: `command: [torchrun, "
        "train.py]`, or run a shell: `command: [sh, -c, \"torchrun train.py\"]`."
    ),
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Renders the JobSet the controller builds (see `trainlint render`) and flags every
    container whose `command` starts with an item holding a space, such as
    `command: ["torchrun train.py"]` or `spec.trainer.command: [tune run]`, and an item
    of `command` or `args` that holds a long option and its value, such as
    `--config llama3_2/1B_full.yaml`, given with no shell to a Python program or to a
    launcher that passes its words on as they are (`torchrun`, `tune`, `accelerate`,
    `llamafactory-cli`).

    ## Why is this bad?
    Kubernetes runs `command` without a shell: its first item is the executable's name,
    spaces and all. No image has an executable named `torchrun train.py`, so the
    container fails to start (`exec: "torchrun train.py": executable file not found in
    $PATH`), and the Job retries the pod until its `backoffLimit` is spent. In the same
    way, `--config llama3_2/1B_full.yaml` reaches the program as one argument: argparse
    takes an argument with a space for a positional one, so `--config` is never set and
    the run stops on a usage error (`tune run` before Trainer's fix in kubeflow/trainer#2669),
    or goes on without the option. Nothing rejects the manifest: the TrainJob is
    accepted and fails minutes later.

    ## When it stays silent
    On a first item whose first word is a path (`/opt/my tools/run`: folders may have
    spaces in their names); on other spaces in later items (arguments may hold spaces),
    on `--name=a value`, and on an option and its value in one item that follows an
    option of its own (`--launcher_args "--x y"` passes words on as one value); when a
    shell reads the words (`sh -c`, a shell the launcher starts, the image's entrypoint
    when the container has no `command`), or a program other than Python and those
    launchers gets them (`deepspeed` and `mpirun` may start it through ssh, whose shell
    splits them); on a TrainJob when the command is the runtime's (reported there), and
    when the TrainJob's runtime is not among the checked files.

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
        image: ghcr.io/acme/sft:1.4
        command: [torchrun train.py, --epochs, "3"]
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
        image: ghcr.io/acme/sft:1.4
        command: [torchrun, train.py, --epochs, "3"]
    ```
    """
    render = rendered(manifest, ctx)
    if not render.complete:
        return
    for container in render.every_container():
        command = container.body.get("command")
        if not isinstance(command, list) or not command:
            continue
        first = command[0]
        if not isinstance(first, str) or not _one_word_too_many(first):
            continue
        origin = container.origin("command", 0)
        if origin.manifest is not manifest or origin.note is not None:
            continue  # the runtime's, reported there; or the controller's
        yield Problem(
            origin.path,
            f"the command of {container.noun} `{container.name}` of job `{container.job.name}` "
            f"starts with `{first.strip()}` as one item: Kubernetes runs no shell, so it "
            f"looks for an executable named `{first.strip()}`, finds none, and the "
            "container fails to start while the Job retries it until its backoffLimit",
            fix=_split(origin.path, first),
        )
    for container in render.every_container():
        for text, origin, program in _joined_options(container):
            if origin.manifest is not manifest or origin.note is not None:
                continue  # the runtime's, reported there
            option = text.split()[0]
            yield Problem(
                origin.path,
                f"`{text.strip()}` in the {origin.path[-2]} of {container.noun} "
                f"`{container.name}` of job `{container.job.name}` is an option and its "
                f"value in one item: Kubernetes runs no shell, so `{program}` gets them as one "
                f"argument and `{option}` is never set (argparse takes an argument with a "
                "space for a positional one)",
                fix=_split(origin.path, text),
            )


#: A long option and its value in one item (`--config llama3_2/1B_full.yaml`).
_JOINED_OPTION = re.compile(r"--[A-Za-z][\w.-]*[ \t]+\S")


def _joined_options(container: Container) -> Iterator[tuple[str, Origin, str]]:
    """The items of a container's words that join a long option and its value, given to
    a program with no shell between (`script.unshelled`), each with its origin and the
    program; not one after an option that may take it as its value."""
    given = script.unshelled(container)
    if given is None:
        return
    previous = given.program
    for text, origin in given.items:
        if _JOINED_OPTION.match(text) and not (previous[:1] == "-" and "=" not in previous):
            yield text, origin, posixpath.basename(given.program)
        previous = text


def _one_word_too_many(item: str) -> bool:
    """Whether an executable's name holds a space that no path explains: a first word
    with a `/` or `\\` is a path, whose folders may have spaces in their names."""
    words = item.split()
    return len(words) > 1 and not any(mark in words[0] for mark in "/\\")


def _split(path: KeyPath, item: str) -> Fix | None:
    """The item split into words as a shell would; none when it does not parse as one
    (an unclosed quote), or would change what a word says (a `$`, a glob, a pipe)."""
    try:
        words = shlex.split(item)
    except ValueError:
        return None
    if not words or any(character in item for character in "$`*?[|&;<>()\\"):
        return None
    shown = ", ".join(f"`{word}`" for word in words)
    # Unsafe: the container runs something it never ran before, however clearly meant.
    return Fix(f"split `{item.strip()}` into {shown}", _replace(path, item, words), safe=False)


def _replace(path: KeyPath, item: str, words: list[str]) -> Edit:
    def edit(document: Any) -> None:
        sequence = roundtrip.at(document, path[:-1])
        index = int(path[-1])
        if not isinstance(sequence, list) or sequence[index] != item:
            raise roundtrip.Stale(path)
        # As a list's: the round-trip list would keep the item's quotes on the first word.
        # Its comment stays with its index, and `insert` moves the comments after it.
        list.__setitem__(sequence, index, words[0])
        for offset, word in enumerate(words[1:], start=1):
            sequence.insert(index + offset, word)

    return edit
