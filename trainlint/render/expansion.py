"""What Kubernetes expands in a container's values: `$(NAME)` references.

The kubelet expands a reference in `command`, `args` and an env variable's `value` from
the container's own variables (those of `envFrom`, then those of `env`; a value only
from the ones before it, a command or an argument from all of them) and the Service
links of the namespace; a reference it cannot resolve stays as written. The image's
environment (`PATH`, `HOME`) is never among them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

from trainlint.document import dig, mappings
from trainlint.render import Container, shell
from trainlint.render.script import shell_script
from trainlint.render.tree import Origin

#: The names of the variables Kubernetes gives a pod for each Service of its namespace
#: (`<NAME>_SERVICE_HOST`, `<NAME>_SERVICE_PORT[_<PORT>]`, `<NAME>_PORT[_<n>_<PROTO>[_...]]`):
#: which Services exist is not known here.
SERVICE_LINK = re.compile(
    r"[A-Z0-9_]+_(?:SERVICE_HOST|SERVICE_PORT(?:_[A-Z0-9_]+)?"
    r"|PORT(?:_\d+_(?:TCP|UDP|SCTP)(?:_PROTO|_PORT|_ADDR)?)?)"
)
#: The variable the Job controller gives every container of an Indexed Job's pods (the
#: completion mode JobSet sets by default).
COMPLETION_INDEX = "JOB_COMPLETION_INDEX"
#: The variables the Training Operator v1 gave every replica of a PyTorchJob, which no
#: Trainer release sets, each with what the torch plugin sets in their place.
OPERATOR_V1 = {
    "MASTER_ADDR": ("PET_MASTER_ADDR",),
    "MASTER_PORT": ("PET_MASTER_PORT",),
    "WORLD_SIZE": ("PET_NNODES", "PET_NPROC_PER_NODE"),
    "RANK": ("PET_NODE_RANK",),
}


def references(text: str) -> Iterator[str]:
    """The names of the `$(NAME)` references in `text`, as Kubernetes' expansion reads
    them (`$$` writes a `$`; a `$(` never closed is text)."""
    for _, name in _placed_references(text):
        yield name


def _placed_references(text: str) -> Iterator[tuple[int, str]]:
    """Each `$(NAME)` reference in `text`, with where it starts."""
    at = text.find("$")
    while at != -1:
        following = text[at + 1:at + 2]
        if following == "(":
            end = text.find(")", at + 2)
            if end == -1:
                return
            yield at, text[at + 2:end]
            at = end
        elif following == "$":
            at += 1
        at = text.find("$", at + 1)


class Unset(NamedTuple):
    """A reference in a container's command or args to a variable it does not have."""

    #: `command` or `args`.
    key: str
    name: str
    origin: Origin
    #: Whether the text is the script of the container's shell (`sh -c`), which then runs
    #: the name as a command.
    in_script: bool


def unset_in_command(container: Container) -> Iterator[Unset]:
    """Each reference of the container's command and args to a variable it does not have
    (each name once a key; none from a container that takes variables from `envFrom`,
    whose names are not known here), but where the container's shell takes it as text
    (a comment, single quotes, a heredoc with a quoted end word): there it is another
    program's syntax (`awk '{print $(NF)}'`, a Makefile's `$(CC)`), passed on as meant."""
    if container.body.get("envFrom"):
        return
    indexed = dig(container.job.body, "template", "spec", "completionMode") == "Indexed"
    script: tuple[str, Origin] | None = None
    for key in ("command", "args"):
        for text, origin in container.strings(key):
            literal: tuple[tuple[int, int], ...] | None = None
            seen: set[str] = set()
            for at, name in _placed_references(text):
                if name in seen or name in container.env or (
                        indexed and name == COMPLETION_INDEX):
                    continue
                script = script or shell_script(container)  # read only for a finding
                in_script = script is not None and script[1] == origin
                if in_script:
                    literal = shell.scan(text).literal if literal is None else literal
                    if any(start <= at < end for start, end in literal):
                        continue
                seen.add(name)
                yield Unset(key, name, origin, in_script)


class UnsetInValue(NamedTuple):
    """A reference in a variable's value to one the container does not set before it."""

    #: The variable's place in the container's `env`, and its name (as written).
    at: int
    name: object
    referred: str
    #: Where in `env` the container sets `referred` after it, or None: nowhere.
    later: int | None


def unset_in_values(container: Container) -> Iterator[UnsetInValue]:
    """Each reference in a variable's value to a variable the container does not set
    before it (each name once a value), `envFrom` or not: Kubernetes expands a value only
    from the variables before it."""
    defined: set[str] = set()
    for index, item in mappings(container.body.get("env")):
        value, name = item.get("value"), item.get("name")
        if isinstance(value, str) and "$(" in value:
            for referred in dict.fromkeys(references(value)):
                if referred not in defined:
                    found = container.env.get(referred)
                    later = found[0] if found is not None and found[0] > index else None
                    yield UnsetInValue(index, name, referred, later)
        if isinstance(name, str):
            defined.add(name)
