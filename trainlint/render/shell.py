"""How a POSIX shell reads a script: its lines, their words and operators, the heredocs they
start, and the programs that run another command (`env`, `exec`, `tini --`, `timeout`).

One reader for everything that looks into a container's script, so that a comment, a quote
and a continued line are the same to all of it. The script is scanned once, as bash reads
it: a line ends at a newline outside quotes, a backslash before a newline joins two lines,
a `#` starts a comment only where it starts a word (not in `${HOST##*-}` or `$#`), quotes
(`'...'`, `"..."`, `$'...'`) are removed, an expansion (`$(...)`, `$((...))`, `${...}`,
backquotes, `<(...)`) stays whole in its word whatever it holds, a redirection is a word of
its own (`2>&1`, `>`, then its file), and the body of each `<<` heredoc is taken out from
the lines after it. Operators are `Operator`s, so a quoted `';'` stays a word. Expansions
are not done: a word holds them as written.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Sequence
from typing import NamedTuple

SHELLS = frozenset({"sh", "bash", "dash", "ash", "zsh", "ksh"})
#: A word that sets a shell variable (`RANK=0`).
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)
#: A heredoc's operator and end word (`<<EOF`, `<<-'EOF'`, `<< "EOF"`, `<<\EOF`), where an
#: unquoted `<<` (not `<<<`, a here-string) starts.
_HEREDOC = re.compile(r"<<(-?)[ \t]*(?:'([^']+)'|\"([^\"]+)\"|\\?([A-Za-z_][A-Za-z0-9_]*))")
#: Reserved words a simple command may follow (`then python -c ...`), and with a group's
#: braces, the words after which a command starts.
KEYWORDS = frozenset({"then", "do", "else", "elif", "if", "while", "until", "!", "time"})
BRACES = frozenset({"{", "}"})
STARTS = KEYWORDS | BRACES
#: Reserved words that open a compound command where a command starts, and those that
#: close one (`case` and `esac` aside: their patterns hold parentheses).
OPENS = frozenset({"if", "for", "select", "while", "until", "{"})
CLOSES = frozenset({"fi", "done", "}"})
#: A shell's long options that take the next word as their value (in a cluster, each `o`
#: or `O` takes one: `-euo pipefail`).
_VALUED = frozenset({"--rcfile", "--init-file"})


class Operator(str):
    """A control operator of a line (`;`, `&&`, `|`, `&`, `(`, `;;`...): not a word that
    reads the same (`--sep ';'`)."""

    __slots__ = ()


class Line(NamedTuple):
    """A line of a script as the shell reads it (continued lines joined, a quote that
    spans lines kept whole)."""

    #: Its words (quotes removed) and operators, its comment cut and its heredoc
    #: operators taken out.
    tokens: list[str]
    #: The heredocs it starts: how many of its tokens come before each `<<`, and its body.
    heredocs: tuple[tuple[int, str], ...] = ()


class Script(NamedTuple):
    """A script as the shell reads it."""

    lines: list[Line]
    #: Whether it was read to its end: not where a quote or an expansion is never closed,
    #: where the shell stops with a syntax error (what came before has run).
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


#: What a word holds up to its next quote, escape, expansion, blank, operator or
#: redirection (a carriage return is a character of the word, as bash reads it).
_PLAIN = re.compile(r"[^ \t\n;&|()<>'\"\\$`]+")
_IN_DOUBLE = re.compile(r'[^"\\$`]+')
#: Characters a run of makes one operator (`;;`, `&&`, `||`, `|&`, `()`, `((`).
_OPERATOR = re.compile(r"[;&|()]+")
#: A redirection's operator (its file, if any, is the next word): `&>`, `>&2`, `>>`, `>|`...
_REDIRECT = re.compile(r"&>>?|[<>]&(?:\d+-?|-)?|>>|>\||<>|<<<|>|<")
#: What a backslash escapes in double quotes (before anything else it stays).
_ESCAPED = frozenset('$`"\\\n')
#: What a backslash stands for in `$'...'`.
_ANSI = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "e": "\x1b",
         "a": "\a", "b": "\b", "f": "\f", "v": "\v"}
#: A word that assigns an array (`ARGS=(`): its parentheses are part of it.
_ARRAY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
#: The closing of each expansion: `$(`, `${`, `<(`, `>(` by its bracket, `(` of an array.
_BRACKETS = {"(": ")", "{": "}"}


class _Reader:
    """A script read from its start, a line at a time."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0
        self.literal: list[tuple[int, int]] = []

    def line(self) -> Line | None:
        """The next line; None where a quote or an expansion is never closed."""
        text = self.text
        tokens: list[str] = []
        pending: list[tuple[int, str, bool, bool]] = []  # heredocs: at, end, tabs, quoted
        ended = -1  # where the last word ended (a descriptor's number then joins `>`)
        while self.at < len(text):
            char = text[self.at]
            if char == "\n":
                self.at += 1
                break
            if char in " \t" or text.startswith("\\\n", self.at):
                self.at += 1 if char != "\\" else 2
            elif char == "#":
                end = text.find("\n", self.at)
                end = len(text) if end < 0 else end
                self.literal.append((self.at, end))
                self.at = end
            elif (heredoc := _HEREDOC.match(text, self.at)) is not None:
                self.at += 3 if heredoc[1] else 2
                self.at += len(text[self.at:]) - len(text[self.at:].lstrip(" \t"))
                word = self.word()
                if word is None:
                    return None
                pending.append((len(tokens), word[0], bool(heredoc[1]), word[1]))
            elif text.startswith(("<(", ">("), self.at) or not self._operator(tokens, ended):
                word = self.word()
                if word is None:
                    return None
                tokens.append(word[0])
                ended = self.at
        return Line(tokens, tuple(self.body(*heredoc) for heredoc in pending))

    def _operator(self, tokens: list[str], ended: int) -> bool:
        """Whether a redirection or an operator starts where the reading is; if so, it is
        put in `tokens` (a redirection after a descriptor's number joins it: `2>&1`)."""
        text = self.text
        redirect = _REDIRECT.match(text, self.at)
        if redirect is not None:
            joined = (ended == self.at and tokens and tokens[-1].isdigit()
                      and redirect[0][0] in "<>")  # `&>` takes no descriptor
            tokens[-1:] = [tokens[-1] + redirect[0]] if joined else [*tokens[-1:], redirect[0]]
            self.at = redirect.end()
            return True
        operator = _OPERATOR.match(text, self.at)
        if operator is None:
            return False
        tokens.append(Operator(operator[0]))
        self.at = operator.end()
        return True

    def word(self) -> tuple[str, bool] | None:
        """The word that starts where the reading is, quotes removed, and whether any of it
        is quoted; None where a quote or an expansion is never closed."""
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
            elif char in "$`" or (char in "<>(" and (char == "(" or text[at + 1:at + 2] == "(")):
                if char == "(" and not _ARRAY.fullmatch("".join(parts)):
                    break  # a subshell's, not an array's
                quoted = quoted or text.startswith("$'", at)
                closed = self._expansion(at, parts)
                if closed is None:
                    return None
                at = closed
            else:
                break  # a blank, a newline, an operator, a redirection
        self.at = at
        return "".join(parts), quoted

    def _expansion(self, at: int, parts: list[str]) -> int | None:
        """Where an expansion, a process substitution or an array that starts at `at`
        ends, its text put in `parts` as written (`$'...'` decoded, a lone `$` as is);
        None where it never ends."""
        text = self.text
        if text.startswith("$'", at):
            return self._ansi(at + 2, parts)
        opening = text[at + 1:at + 2] if text[at] in "$<>" else text[at]
        if text[at] == "`":
            end = _backquote_end(text, at + 1, self.literal)
        elif opening in _BRACKETS:
            start = at + 1 if text[at] in "$<>" else at
            end = _closing(text, start, _BRACKETS[opening], self.literal)
        else:
            parts.append("$")
            return at + 1
        if end is None:
            return None
        parts.append(text[at:end])
        return end

    def _ansi(self, at: int, parts: list[str]) -> int | None:
        """Where a `$'...'` string ends, its text decoded into `parts` (nothing in it is
        expanded)."""
        text = self.text
        start = at
        while at < len(text):
            char = text[at]
            if char == "'":
                self.literal.append((start, at))
                return at + 1
            if char == "\\" and at + 1 < len(text):
                parts.append(_ANSI.get(text[at + 1], text[at:at + 2]))
                at += 2
            else:
                parts.append(char)
                at += 1
        return None

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
            elif text.startswith("$'", at):
                parts.append("$")  # no quote in double quotes
                at += 1
            elif text[at] in "$`":
                closed = self._expansion(at, parts)
                if closed is None:
                    return None
                at = closed
            else:  # a backslash
                following = text[at + 1:at + 2]
                if following not in _ESCAPED:
                    parts.append("\\")
                elif following != "\n":
                    parts.append(following)
                at += 2 if following in _ESCAPED else 1
        return None

    def body(self, at: int, end: str, tabs: bool, quoted: bool) -> tuple[int, str]:
        """The body of a heredoc, from the line where the reading is up to the line that is
        its end word alone (its tabs stripped, with `<<-`; the rest of the script where
        none is), with how many tokens come before its operator."""
        text = self.text
        taken: list[str] = []
        start = self.at
        while self.at < len(text):
            newline = text.find("\n", self.at)
            line = text[self.at:] if newline < 0 else text[self.at:newline]
            self.at = len(text) if newline < 0 else newline + 1
            if tabs:
                line = line.lstrip("\t")
            if line == end:
                break
            taken.append(line)
        if quoted:
            self.literal.append((start, self.at))
        return at, "\n".join(taken)


def _closing(
    text: str, at: int, closing: str, literal: list[tuple[int, int]]
) -> int | None:
    """Where the bracket opened at `at` closes (the index after it), with what is nested
    inside (brackets, quotes, `$(...)` in double quotes) skipped and its single-quoted
    parts put in `literal`; None where it never does. A stack, not recursion: `"$(` ten
    thousand times deep is read in one pass."""
    closers = [closing]
    at += 1
    while at < len(text) and closers:
        char, inner = text[at], closers[-1]
        if char == "\\":
            at += 2
            continue
        if inner == '"':  # inside double quotes: only an expansion nests
            if char == '"':
                closers.pop()
            elif text.startswith(("$(", "${"), at):
                closers.append(_BRACKETS[text[at + 1]])
                at += 1
        elif char == "'" and inner == ")":
            end = text.find("'", at + 1)
            if end < 0:
                return None
            literal.append((at + 1, end))
            at = end
        elif char == '"':
            closers.append('"')
        elif char == "(" or (char == "{" and inner == "}"):
            closers.append(_BRACKETS[char])
        elif char == inner:
            closers.pop()
        at += 1
    return None if closers else at


def _backquote_end(text: str, at: int, literal: list[tuple[int, int]]) -> int | None:
    """Where a backquoted command ends (the index after its closing backquote), its
    single-quoted parts put in `literal`."""
    while at < len(text):
        if text[at] == "\\":
            at += 2
        elif text[at] == "'":
            end = text.find("'", at + 1)
            if end < 0:
                return None
            literal.append((at + 1, end))
            at = end + 1
        elif text[at] == "`":
            return at + 1
        else:
            at += 1
    return None


def heredoc_end(line: str) -> tuple[str, bool] | None:
    """The word that ends a heredoc started at the start of `line`, and whether the tabs
    before it are stripped (`<<-`); None where no heredoc starts there."""
    found = _HEREDOC.match(line)
    return None if found is None else (found[2] or found[3] or found[4], bool(found[1]))


def commands(tokens: list[str]) -> Iterator[tuple[list[str], int, int]]:
    """The simple commands of a line's tokens, each with where its tokens start and end
    (its reserved words before it left out: `then`, `do`)."""
    command: list[str] = []
    first = 0
    for index, token in enumerate([*tokens, Operator(";")]):
        if isinstance(token, Operator) or token in BRACES:
            if command:
                yield command, first, index
            command, first = [], index + 1
        elif command or token not in KEYWORDS:
            command.append(token)
        else:
            first = index + 1


class _Wrapper(NamedTuple):
    #: Its options that take the next word as their value.
    valued: frozenset[str]
    #: How many operands come before the command it runs (`timeout 1h`).
    operands: int = 0
    #: The subcommand that runs it (`uv run`, `conda run`): another runs none.
    subcommand: str | None = None


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
    "numactl": _Wrapper(frozenset({
        "-N", "-m", "-C", "-i", "-p", "-P", "--cpunodebind", "--membind", "--physcpubind",
        "--interleave", "--preferred", "--preferred-many"})),
    "taskset": _Wrapper(frozenset(), 1),
    "chrt": _Wrapper(frozenset(), 1),
    "ionice": _Wrapper(frozenset({"-c", "--class", "-n", "--classdata", "-p"})),
    "gosu": _Wrapper(frozenset(), 1),
    "su-exec": _Wrapper(frozenset(), 1),
    "uv": _Wrapper(frozenset({
        "--with", "--with-editable", "--with-requirements", "-p", "--python", "--project",
        "--directory", "--env-file", "--extra", "--group", "--only-group", "--package",
        "--index", "--default-index", "--index-url", "--extra-index-url", "-f",
        "--find-links", "--config-file", "--cache-dir"}), subcommand="run"),
    "conda": _Wrapper(frozenset({"-n", "--name", "-p", "--prefix", "--cwd"}), subcommand="run"),
    "micromamba": _Wrapper(frozenset({"-n", "--name", "-p", "--prefix", "-r"}),
                           subcommand="run"),
    "poetry": _Wrapper(frozenset({"-C", "--directory", "-P", "--project"}), subcommand="run"),
    "pipenv": _Wrapper(frozenset(), subcommand="run"),
}


def unwrapped(words: Sequence[str]) -> tuple[int, tuple[str, ...]] | None:
    """Where the command that runs is among a command's words, past `NAME=value` words and
    the programs that run another (`exec`, `nohup`, `env -u X`, `tini --`, `timeout 1h`,
    `numactl -N 0`, `uv run --frozen`), with the names of those programs; None where none
    runs (`command -v` only looks one up)."""
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
        if wrapper.subcommand is not None:  # past its own options (`uv --project x run`)
            start = at + 1
            while start < len(words) and words[start].startswith("-"):
                start += 2 if words[start] in wrapper.valued else 1
            if words[start:start + 1] != [wrapper.subcommand]:
                break  # `uv pip install`: no command of its own
            at = start
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
