from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from typing import NamedTuple

from trainlint.document import Manifest
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render.script import shell_script
from trainlint.render.shell import heredoc_end
from trainlint.render.trainer import rendered
from trainlint.rule import rule

#: A backslash, then blanks to the end of the line, maybe a comment after them: it escapes
#: a blank, and the line ends the command. (A carriage return is a blank here: a file with
#: Windows line ends holds one before each line break.)
_BROKEN = re.compile(r"\\[ \t\r]+(?:#.*)?")


@rule(
    "TL418", "broken-line-continuation",
    kinds=TRAINER_KINDS, severity=Severity.ERROR,
    remediation="Remove what follows the `\\` on that line: spaces, tabs and comments.",
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Renders the JobSet the controller builds (see `trainlint render`) and reads the script
    of every container that runs a shell (`sh -c`, `bash -ec`, `env bash -o pipefail -c`)
    as the shell reads it: it flags a line that
    ends in `\\` followed by spaces, tabs or a comment, and a comment line in a command
    continued from the line before (an option commented out), when the next line goes on
    with options (`--nproc_per_node=8`).

    ## Why is this bad?
    A backslash continues a line only when the line break follows it at once. With a
    blank after it, it escapes the blank: the command ends at that line (with a word made
    of a space among its arguments), and the next line runs as a command of its own
    (`--rdzv_id=...: command not found`). A comment in a continued command runs to the end
    of its line, backslash included, and ends the command the same way. The blank is
    invisible in an editor, and in a YAML block nothing strips it. The container fails on
    every node after the pods were scheduled and the image pulled.

    ## When it stays silent
    On lines whose next line does not start with an option; on a backslash inside quotes
    or a comment, and on the bodies of heredocs (text, or another program's); on a
    TrainJob when the script is the runtime's (reported there), and when the TrainJob's
    runtime is not among the checked files.

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
    for container in render.every_container():
        found = shell_script(container)
        if found is None or found[1].manifest is not manifest:
            continue  # no shell; or the runtime's script, reported there
        for number, line, following, comment in _broken(found[0]):
            what = (f"is a comment in a command the line before continues "
                    f"(`{_shown(line)}`): the comment ends the command"
                    if comment else
                    f"ends in `\\` and blanks (`{_shown(line)}`): the backslash escapes "
                    "a blank, not the line break, so the command ends there")
            yield Problem(found[1].path, (
                f"line {number} of the script of {container.noun} `{container.name}` {what} and "
                f"the next line (`{_shown(following)}`) runs as a command of its own, "
                "which fails"))


def _broken(script: str) -> Iterator[tuple[int, str, str, bool]]:
    """(number, line (up to its backslash), next line, whether the line is a comment) of
    each line that ends a command by mistake, when the next line goes on with options: an
    escaped blank at its end outside quotes, comments and heredoc bodies; or a comment in
    a command the line before continues (an option commented out), which ends it."""
    lines = script.split("\n")
    quote: str | None = None  # the quote still open where a line starts
    ending: tuple[str, bool] | None = None  # of the heredoc being read
    continued = False  # whether the line before ends in a backslash that continues it
    for number, (line, following) in enumerate(itertools.pairwise(lines), start=1):
        if ending is not None:
            word, tabs = ending
            if (line.lstrip("\t") if tabs else line).rstrip("\r") == word:
                ending = None
            continued = False
            continue
        options = following.lstrip().startswith("-")
        if continued and quote is None and line.lstrip().startswith("#") and options:
            yield number, line, following, True
        scanned = _scan(line, quote)
        quote, ending, continued = scanned.quote, scanned.heredoc, scanned.continues
        if scanned.broken is not None and options:
            yield number, line[:scanned.broken + 1], following, False


class _Scanned(NamedTuple):
    """A line as the shell reads it."""

    #: The quote still open at its end.
    quote: str | None
    #: Where its backslash is, if it ends in an escaped blank (and maybe a comment).
    broken: int | None
    #: The end word of a heredoc it starts, and whether tabs before it are stripped.
    heredoc: tuple[str, bool] | None
    #: Whether it ends in a backslash that continues it on the next line.
    continues: bool


def _scan(line: str, quote: str | None) -> _Scanned:
    """A line read as the shell reads it, from inside `quote` (if one is open)."""
    heredoc = None
    at = 0
    while at < len(line):
        character = line[at]
        if quote is not None:  # `\` escapes only in double quotes
            at += 2 if character == "\\" and quote == '"' else 1
            quote = None if character == quote else quote
            continue
        if character in "'\"":
            quote = character
        elif character == "\\":
            if _BROKEN.fullmatch(line, at):
                return _Scanned(None, at, heredoc, False)
            if at == len(line) - 1:
                return _Scanned(None, None, heredoc, True)
            at += 1
        elif character == "#" and (at == 0 or line[at - 1] in " \t"):
            break  # a comment
        elif line.startswith("<<<", at):
            at += 2  # a here-string: its word is on this line
        elif line.startswith("<<", at):
            heredoc = heredoc_end(line[at:]) or heredoc
            at += 1
        at += 1
    return _Scanned(quote, None, heredoc, False)


def _shown(line: str) -> str:
    """A line of the script for a message: its last 40 characters."""
    words = line.strip()
    return words if len(words) <= 40 else f"…{words[-40:]}"
