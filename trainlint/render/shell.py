"""How a POSIX shell reads a script: its lines, their words and operators, the heredocs they
start, and the programs that run another command (`env`, `exec`, `tini --`, `timeout`).

One reader for everything that looks into a container's script, so that a comment, a quote
and a continued line are the same to all of it. The script is scanned once, as the shell
reads it: a line ends at a newline outside quotes, a backslash before a newline joins two
lines, a `#` starts a comment only where it starts a word (not in `${HOST##*-}` or `$#`),
and the body of each `<<` heredoc is taken out from the lines after it. Each line is then
split into words with `shlex` (quote removal, `;`/`&&`/`|` as their own tokens), which on
its own would cut a word at any `#` and split `${VAR}` where `{` is punctuation.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from typing import NamedTuple

SHELLS = frozenset({"sh", "bash", "dash", "ash", "zsh", "ksh"})
#: A word that sets a shell variable (`RANK=0`).
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)
#: A heredoc's operator and end word (`<<EOF`, `<<-'EOF'`, `<< "EOF"`, `<<\EOF`), where an
#: unquoted `<<` (not `<<<`, a here-string) starts.
_HEREDOC = re.compile(r"<<(-?)[ \t]*(?:'([^']+)'|\"([^\"]+)\"|\\?([A-Za-z_][A-Za-z0-9_]*))")
#: A shell's long options that take the next word as their value (in a cluster, each `o`
#: or `O` takes one: `-euo pipefail`).
_VALUED = frozenset({"--rcfile", "--init-file"})


class Line(NamedTuple):
    """A line of a script as the shell reads it (continued lines joined, a quote that
    spans lines kept whole)."""

    #: Its words (quotes removed) and operators (`;`, `&&`, `|`, `(`...), its comment cut
    #: and its heredoc operators taken out.
    tokens: list[str]
    #: The heredocs it starts: how many of its tokens come before each `<<`, and its body.
    heredocs: tuple[tuple[int, str], ...] = ()


class Script(NamedTuple):
    """A script as the shell reads it."""

    lines: list[Line]
    #: Whether it was read to its end: not where a quote is never closed, where the shell
    #: stops with a syntax error (what came before has run).
    complete: bool
    #: Where in its text the shell expands nothing (comments, single quotes, the bodies of
    #: heredocs whose end word is quoted), as (start, end) offsets.
    literal: tuple[tuple[int, int], ...]


def lines(text: str) -> tuple[list[Line], bool]:
    """The lines of a script, and whether it was read to its end."""
    read = scan(text)
    return read.lines, read.complete


def scan(text: str) -> Script:
    """A script read as the shell reads it."""
    reader = _Reader(text)
    read: list[Line] = []
    while reader.at < len(text):
        line = reader.line()
        if line is None:
            return Script(read, False, tuple(reader.literal))
        if line.tokens or line.heredocs:
            read.append(line)
    return Script(read, True, tuple(reader.literal))


#: What a word holds up to its next quote, escape, blank or operator.
_PLAIN = re.compile(r"[^ \t\r\n;&|()<'\"\\]+")
_IN_DOUBLE = re.compile(r'[^"\\]+')
#: Characters a run of makes one operator (`;;`, `&&`, `||`, `|&`, `()`, `((`).
_OPERATOR = re.compile(r"[;&|()]+")
#: What a backslash escapes in double quotes (before anything else it stays).
_ESCAPED = frozenset('$`"\\\n')


class _Reader:
    """A script read from its start, a line at a time."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0
        self.literal: list[tuple[int, int]] = []

    def line(self) -> Line | None:
        """The next line; None where a quote is never closed."""
        text = self.text
        tokens: list[str] = []
        pending: list[tuple[int, str, bool, bool]] = []  # heredocs: at, end, tabs, quoted
        while self.at < len(text):
            char = text[self.at]
            if char == "\n":
                self.at += 1
                break
            if char in " \t\r" or text.startswith("\\\n", self.at):
                self.at += 1 if char != "\\" else 2
            elif char == "#":
                end = text.find("\n", self.at)
                end = len(text) if end < 0 else end
                self.literal.append((self.at, end))
                self.at = end
            elif (operator := _OPERATOR.match(text, self.at)) is not None:
                tokens.append(operator[0])
                self.at = operator.end()
            elif (heredoc := _HEREDOC.match(text, self.at)) is not None:
                self.at += 3 if heredoc[1] else 2
                self.at += len(text[self.at:]) - len(text[self.at:].lstrip(" \t"))
                word = self.word()
                if word is None:
                    return None
                pending.append((len(tokens), word[0], bool(heredoc[1]), word[1]))
            else:
                word = self.word()
                if word is None:
                    return None
                tokens.append(word[0])
        return Line(_descriptors(tokens), tuple(self.body(*heredoc) for heredoc in pending))

    def word(self) -> tuple[str, bool] | None:
        """The word that starts where the reading is, quotes removed, and whether any of it
        is quoted; None where a quote is never closed."""
        text = self.text
        parts: list[str] = []
        quoted = False
        at = self.at
        while at < len(text):
            plain = _PLAIN.match(text, at)
            if plain is not None:
                parts.append(plain[0])
                at = plain.end()
                continue
            char = text[at]
            if char == "'":
                end = text.find("'", at + 1)
                if end < 0:
                    return None
                self.literal.append((at + 1, end))
                parts.append(text[at + 1:end])
                at, quoted = end + 1, True
            elif char == '"':
                closed = self._double(at + 1, parts)
                if closed is None:
                    return None
                at, quoted = closed, True
            elif char == "\\":
                if text[at + 1:at + 2] != "\n":  # a backslash before a newline joins lines
                    parts.append(text[at + 1:at + 2])
                    quoted = True
                at += 2
            elif char == "<" and _HEREDOC.match(text, at) is None:
                parts.append("<<<" if text.startswith("<<<", at) else "<")
                at += len(parts[-1])
            else:
                break  # a blank, a newline, an operator, a heredoc
        self.at = at
        return "".join(parts), quoted

    def _double(self, at: int, parts: list[str]) -> int | None:
        """Where a double-quoted string that starts at `at` ends, its text put in `parts`;
        None where it never does."""
        text = self.text
        while at < len(text):
            run = _IN_DOUBLE.match(text, at)
            if run is not None:
                parts.append(run[0])
                at = run.end()
            elif text[at] == '"':
                return at + 1
            else:  # a backslash
                following = text[at + 1:at + 2]
                if following not in _ESCAPED:
                    parts.append("\\")
                elif following != "\n":
                    parts.append(following)
                at += 2 if following in _ESCAPED else 1
        return None

    def body(self, at: int, end: str, tabs: bool, quoted: bool) -> tuple[int, str]:
        """The body of a heredoc, from the line where the reading is up to its end word
        (the rest of the script where none comes), with how many tokens come before its
        operator."""
        text = self.text
        taken: list[str] = []
        start = self.at
        while self.at < len(text):
            newline = text.find("\n", self.at)
            line = text[self.at:] if newline < 0 else text[self.at:newline]
            self.at = len(text) if newline < 0 else newline + 1
            if (line.lstrip("\t") if tabs else line).strip() == end:
                break
            taken.append(line)
        if quoted:
            self.literal.append((start, self.at))
        return at, "\n".join(taken)


def _descriptors(raw: list[str]) -> list[str]:
    """A line's tokens with a redirection to a descriptor as one word (`2>&1`, `&>log`):
    its `&` is no operator."""
    tokens: list[str] = []
    skip = False
    for index, token in enumerate(raw):
        if skip:
            skip = False
        elif token == "&" and tokens and tokens[-1][-1:] in (">", "<"):
            tokens[-1] += "&" + (raw[index + 1] if index + 1 < len(raw) else "")
            skip = True
        elif token == "&" and index + 1 < len(raw) and raw[index + 1][:1] == ">":
            tokens.append("&" + raw[index + 1])
            skip = True
        else:
            tokens.append(token)
    return tokens


def heredoc_end(line: str) -> tuple[str, bool] | None:
    """The word that ends a heredoc started at the start of `line`, and whether the tabs
    before it are stripped (`<<-`); None where no heredoc starts there."""
    found = _HEREDOC.match(line)
    return None if found is None else (found[2] or found[3] or found[4], bool(found[1]))


class _Wrapper(NamedTuple):
    #: Its options that take the next word as their value.
    valued: frozenset[str]
    #: How many operands come before the command it runs (`timeout 1h`).
    operands: int = 0


#: Programs that run a command given after their own options and operands.
_WRAPPERS: dict[str, _Wrapper] = {
    "exec": _Wrapper(frozenset({"-a"})),
    "command": _Wrapper(frozenset()),
    "nohup": _Wrapper(frozenset()),
    "env": _Wrapper(frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"})),
    "tini": _Wrapper(frozenset({"-p", "-e"})),
    "dumb-init": _Wrapper(frozenset({"-r", "--rewrite"})),
    "stdbuf": _Wrapper(frozenset({"-i", "-o", "-e"})),
    "nice": _Wrapper(frozenset({"-n", "--adjustment"})),
    "setsid": _Wrapper(frozenset()),
    "timeout": _Wrapper(frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),
}


def unwrapped(words: Sequence[str]) -> tuple[int, tuple[str, ...]] | None:
    """Where the command that runs is among a command's words, past `NAME=value` words and
    the programs that run another (`exec`, `nohup`, `env -u X`, `tini --`, `timeout 1h`),
    with the names of those programs; None where none runs (`command -v` only looks one
    up)."""
    at = 0
    passed: list[str] = []
    while at < len(words):
        name = posixpath.basename(words[at])
        if ASSIGNMENT.fullmatch(words[at]):
            at += 1
            continue
        wrapper = _WRAPPERS.get(name)
        if wrapper is None:
            break
        if name == "command" and words[at + 1:at + 2] in (["-v"], ["-V"]):
            return None
        passed.append(name)
        at += 1
        while at < len(words) and (words[at].startswith("-") or (
                name == "env" and ASSIGNMENT.fullmatch(words[at]))):
            at += 2 if words[at] in wrapper.valued else 1
            if words[at - 1] == "--":
                break
        at += wrapper.operands
    return min(at, len(words)), tuple(passed)


def shell_operand(words: Sequence[str], at: int) -> int | None:
    """Where the script is among `words`, `words[at]` a shell: the first operand after its
    options, when one of their clusters holds `-c`; None for a shell given a file."""
    given = False
    at += 1
    while at < len(words) and words[at][:1] in ("-", "+") and words[at] != "-":
        word = words[at]
        if word == "--":
            at += 1
            break
        cluster = "" if word.startswith("--") else word[1:]
        at += 1 + (1 if word in _VALUED else cluster.count("o") + cluster.count("O"))
        given = given or "c" in cluster
    return at if given and at < len(words) else None
