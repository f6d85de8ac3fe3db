from __future__ import annotations

import itertools
import posixpath
import re
from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render import CONTAINER_NOUNS, Container
from trainlint.render.script import heredoc_end
from trainlint.render.trainer import rendered
from trainlint.render.tree import Origin
from trainlint.rule import rule

#: Shells whose `-c` word is a script.
SHELLS = frozenset({"sh", "bash", "dash", "ash", "zsh", "ksh"})
#: A shell's options that end in `c`: the next word is the script (`-c`, `-ec`, `-lc`).
_SCRIPT_OPTION = re.compile(r"-[a-z]*c")
#: A line that ends in an odd run of backslashes, then blanks (and maybe a comment): the
#: last backslash escapes a blank, and the line ends the command.
_BROKEN = re.compile(r"(?<!\\)(?:\\\\)*\\[ \t]+(?:#.*)?$")


@rule(
    "TL418", "broken-line-continuation",
    kinds=TRAINER_KINDS, severity=Severity.ERROR,
    remediation="Remove what follows the `\\` on that line: spaces, tabs and comments.",
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Renders the JobSet the controller builds (see `trainlint render`) and reads the script
    of every container that runs a shell (`sh -c`, `bash -c`...): it flags a line that
    ends in `\\` followed by spaces, tabs or a comment, when the next line goes on with
    options (`--nproc_per_node=8`).

    ## Why is this bad?
    A backslash continues a line only when the line break follows it at once. With a
    blank after it, it escapes the blank: the command ends at that line (with a word made
    of a space among its arguments), and the next line runs as a command of its own
    (`--rdzv_id=...: command not found`). The blank is invisible in an editor, and in a
    YAML block nothing strips it. The container fails on every node after the pods were
    scheduled and the image pulled.

    ## When it stays silent
    On lines whose next line does not start with an option; on the bodies of heredocs
    (text another program reads); on a TrainJob when the script is the runtime's (reported
    there), and when the TrainJob's runtime is not among the checked files.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: fsdp
    spec:
      runtimeRef:
        name: torch-distributed
      trainer:
        command:
          - bash
          - -c
          - |
            torchrun --nnodes=2 \\  # two nodes
              --nproc_per_node=8 train.py
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: fsdp
    spec:
      runtimeRef:
        name: torch-distributed
      trainer:
        command:
          - bash
          - -c
          - |
            # two nodes
            torchrun --nnodes=2 \\
              --nproc_per_node=8 train.py
    ```
    """
    render = rendered(manifest, ctx)
    if not render.complete:
        return
    for kind, noun in CONTAINER_NOUNS.items():
        for container in render.containers(kind):
            found = _script(container)
            if found is None or found[1].manifest is not manifest:
                continue  # no shell; or the runtime's script, reported there
            for number, line, following in _broken(found[0]):
                yield Problem(found[1].path, (
                    f"line {number} of the script of {noun} `{container.name}` ends in `\\` "
                    f"and blanks (`{_shown(line)}`): the backslash escapes a blank, not the "
                    f"line break, so the command ends there and the next line "
                    f"(`{_shown(following)}`) runs as a command of its own, which fails"))


def _script(container: Container) -> tuple[str, Origin] | None:
    """The script a container's shell runs (`sh -c SCRIPT`), with its origin."""
    words = [*container.strings("command"), *container.strings("args")]
    if not words or posixpath.basename(words[0][0]) not in SHELLS:
        return None
    for (word, _), script in itertools.pairwise(words[1:]):
        if _SCRIPT_OPTION.fullmatch(word):
            return script
        if not word.startswith("-"):
            return None
    return None


def _broken(script: str) -> Iterator[tuple[int, str, str]]:
    """(number, line, next line) of each line that ends a command by mistake: an escaped
    blank at its end, and options on the next line. Heredoc bodies are skipped."""
    lines = script.split("\n")
    ending: tuple[str, bool] | None = None  # of the heredoc being read
    for number, (line, following) in enumerate(itertools.pairwise(lines), start=1):
        if ending is not None:
            word, tabs = ending
            if (line.lstrip("\t") if tabs else line).strip() == word:
                ending = None
            continue
        ending = heredoc_end(line)
        if ending is None and _BROKEN.search(line) and following.lstrip().startswith("-"):
            yield number, line, following


def _shown(line: str) -> str:
    """A line of the script for a message: its words up to an escaped blank, the last 40
    characters of them."""
    words = line.strip()
    found = _BROKEN.search(words)
    if found is not None:  # the backslashes, and none of the blanks or comment after them
        words = f"{words[:found.start()].rstrip()} {found[0].split(maxsplit=1)[0]}"
    return words if len(words) <= 40 else f"…{words[-40:]}"
