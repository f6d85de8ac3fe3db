"""Whether a container's command never exits, as its words show it.

A pod of a Job succeeds only once every one of its regular containers has exited: a
container that runs forever keeps its Job from completing. This module says when a
command clearly runs forever: a program that waits for nothing (`sleep infinity`, `tail
-f FILE`), a well-known server started in the foreground (`python -m http.server`,
`tensorboard --logdir`, `sshd -D`...), a shell loop with no way out (`while true` with no
`break` or `exit`), or a server put in the background and waited for (`server &` then
`wait`, or `wait $!` where it was the last put there). Anything less plain (a program of
the image, a loop under a condition, an `if`, a function, a subshell) is not judged:
nothing is said.

A shell script (`sh -c "..."`) is read as the shell reads it (`shell`), at its top level
only: its lines and their words, then and-or lists (`a && b || c`) of pipelines (`a | b`),
ended by `;`, a newline or `&` (in the background). A command after `||` runs only when
the one before it fails, and an `exit` or `exec` ends the script where it is reached: what
follows is not judged.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import NamedTuple

from trainlint.document import sequence
from trainlint.render import Container
from trainlint.render.script import PYTHONS
from trainlint.render.shell import (
    CLOSES,
    OPENS,
    SHELLS,
    STARTS,
    Operator,
    lines,
    shell_operand,
    unwrapped,
)
from trainlint.render.tree import Origin

__all__ = ["Endless", "never_exits"]


class Endless(NamedTuple):
    """What in a command runs forever: the words that show it, as a phrase with its
    backquotes (`` `sleep infinity` ``), what they do (`which never ends`), and where the
    command or script was written."""

    shown: str
    what: str
    at: tuple[Origin, ...]


#: (shown, what) before the place is known.
_Found = tuple[str, str]
#: What says whether a program, given its words after it, runs forever.
_Check = Callable[[str, list[str]], "_Found | None"]

_FOREVER = "which never ends"
_SERVER = "a server that runs in the foreground until it is stopped"

#: Options after which a program prints something and ends (`--help-all`, `--version_tb`).
_HELP = re.compile(r"-h|-V|-help|--help\S*|--version\S*|--inspect|--generate-config"
                   r"|--show-config\S*")


def never_exits(container: Container) -> Endless | None:
    """What shows that a container's command never exits, if its words show it: nothing
    for a container without a `command` of its own (the image's entrypoint runs, which is
    not seen)."""
    command = container.strings("command")
    items = [*command, *container.strings("args")]
    if not command or len(items) != len(
            [*sequence(container.body.get("command")), *sequence(container.body.get("args"))]):
        return None  # the image's entrypoint, or an item that is no string
    words = tuple(word for word, _ in items)
    found = _words_endless(words)
    if found is None:
        return None
    position, (shown, what) = found
    at = (items[position][1],) if position >= 0 else tuple(origin for _, origin in items)
    return Endless(shown, what, at)


@lru_cache(maxsize=1024)
def _words_endless(words: tuple[str, ...]) -> tuple[int, _Found] | None:
    """What in a container's words runs forever, with the item it is in (-1: the words
    together)."""
    command = _unwrapped(list(words))
    if command is None or not command:
        return None
    start = len(words) - len(command)
    if posixpath.basename(command[0]) in SHELLS:
        position = shell_operand(command, 0)
        if position is None:
            return None
        errexit = any(_ERREXIT.fullmatch(word) for word in command[1:position])
        found = _script_endless(command[position], errexit)
        return None if found is None else (start + position, found)
    simple = _command_endless(command)
    return None if simple is None else (-1, simple)


def _unwrapped(command: list[str]) -> list[str] | None:
    """The command that runs, past `NAME=value` words and the programs that run another
    (`exec`, `nohup`, `env`, `tini --`...); None under `timeout`, which ends it."""
    found = unwrapped(command)
    return None if found is None or "timeout" in found[1] else command[found[0]:]


def _command_endless(words: list[str]) -> _Found | None:
    """Whether a simple command (its wrappers taken off) runs forever, and what shows it."""
    command = _unwrapped(_without_redirections(words))
    if not command or any(_HELP.fullmatch(word) for word in command[1:]):
        return None
    program = posixpath.basename(command[0])
    rest = command[1:]
    if PYTHONS.fullmatch(program):
        return _python_module(command[0], rest)
    check = _PROGRAMS.get(program)
    return None if check is None else check(command[0], rest)


_REDIRECTION = re.compile(r"(?:\d*|&)(?:>>?|<<?<?|>\||<>)(.*)", re.DOTALL)


def _without_redirections(words: list[str]) -> list[str]:
    """A simple command's words without its redirections (`> log`, `2>&1`, `&>/dev/null`)."""
    kept: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        match = _REDIRECTION.fullmatch(word)
        if match is None:
            kept.append(word)
        else:
            skip = not match[1]  # the file is the next word
    return kept


def _operands(words: list[str]) -> list[str]:
    return [word for word in words if not word.startswith("-")]


def _sleep(program: str, rest: list[str]) -> _Found | None:
    """`sleep infinity` (GNU and BusyBox read `inf` and `infinity`, in any case)."""
    endless = next((word for word in rest if word.lower() in ("inf", "infinity")), None)
    return None if endless is None else (f"`{program} {endless}`", _FOREVER)


_FOLLOW = re.compile(r"-[fFqvz]*[fF][fFqvz]*|--follow(?:=\w+)?")


def _tail(program: str, rest: list[str]) -> _Found | None:
    """`tail -f FILE` (or `-F`, `--follow`): it waits for more lines until it is killed,
    unless `--pid` ends it with a process."""
    if any(word.startswith("--pid") for word in rest):
        return None
    follow = next((word for word in rest if _FOLLOW.fullmatch(word)), None)
    files = [word for index, word in enumerate(rest) if not word.startswith("-") and not (
        index and rest[index - 1] in ("-n", "-c", "-s", "--lines", "--bytes",
                                      "--sleep-interval", "--max-unchanged-stats"))]
    if follow is None or not files:
        return None
    return f"`{program} {follow} {files[0]}`", "which follows the file until it is killed"


def _python_module(program: str, rest: list[str]) -> _Found | None:
    """`python -m MODULE ...` of a module that serves forever (`http.server`), or runs one
    of the servers known by their program (`python -m uvicorn app:app`)."""
    at = 0
    while at < len(rest) and rest[at] != "-m" and not _MODULE_CLUSTER.fullmatch(rest[at]):
        word = rest[at]
        if not _PYTHON_OPTIONS.fullmatch(word):
            return None  # a file, `-c`, or what is not known
        at += 2 if word in ("-W", "-X") else 1
    if at + 1 >= len(rest):
        return None
    module, arguments = rest[at + 1], rest[at + 2:]
    shown = f"{program} {rest[at]} {module}"
    if module in ("http.server", "SimpleHTTPServer", "vllm.entrypoints.openai.api_server"):
        return f"`{shown}`", _SERVER
    name = _MODULES.get(module)
    check = _PROGRAMS.get(name or "")
    found = None if check is None or name is None else check(name, arguments)
    if found is None or name is None:
        return None
    return f"`{shown}{found[0][1 + len(name):]}", found[1]


#: Python's options that take no value (a cluster of them), and those that take one.
_PYTHON_OPTIONS = re.compile(r"-[bBdEiIOqsSuvxRP]+|-[WX]")
_MODULE_CLUSTER = re.compile(r"-[bBdEiIOqsSuvxRP]+m")


def _tensorboard(program: str, rest: list[str]) -> _Found | None:
    """`tensorboard --logdir DIR` serves the logs until it is stopped (`tensorboard dev`
    uploads them, and ends)."""
    if _operands(rest)[:1] == ["dev"]:
        return None
    logdir = next((word.partition("=")[0] for word in rest
                   if word.partition("=")[0] in ("--logdir", "--logdir_spec")), None)
    return None if logdir is None else (f"`{program} {logdir}`", _SERVER)


#: What `jupyter lab`, `jupyter notebook` or `jupyter server` do besides serving, and end.
_JUPYTER_TASKS = frozenset({
    "build", "clean", "path", "paths", "workspace", "workspaces", "extension", "list", "stop",
    "password", "licenses", "check", "labextension", "serverextension", "nbextension",
})


def _jupyter(program: str, rest: list[str]) -> _Found | None:
    """`jupyter lab`, `jupyter notebook`, `jupyter server` (or `jupyter-lab`...)."""
    name = posixpath.basename(program)
    served = name.partition("-")[2]
    operands = _operands(rest)
    if not served:
        if not operands or operands[0] not in ("lab", "notebook", "server", "nbclassic"):
            return None
        served, operands = operands[0], operands[1:]
        shown = f"`{program} {served}`"
    else:
        shown = f"`{program}`"
    if served not in ("lab", "notebook", "server", "nbclassic") or (
            operands and operands[0] in _JUPYTER_TASKS):
        return None
    return shown, _SERVER


def _subcommand(*names: str) -> _Check:
    """A program that serves with one of these subcommands (`mlflow server`, `vllm serve`)."""
    def check(program: str, rest: list[str]) -> _Found | None:
        operands = _operands(rest)
        if operands[:1] and operands[0] in names:
            return f"`{program} {operands[0]}`", _SERVER
        return None
    return check


def _nginx(program: str, rest: list[str]) -> _Found | None:
    """`nginx -g "daemon off;"` keeps nginx in the foreground (`-s`, `-t` signal or test,
    and end)."""
    if any(re.fullmatch(r"-[a-zA-Z]*[sStTvV][a-zA-Z]*", word) for word in rest):
        return None  # `-t`, `-tq`, `-s reload`, `-V`
    for index, word in enumerate(rest[:-1]):
        if word == "-g" and re.search(r"\bdaemon\s+off\b", rest[index + 1]):
            return f'`{program} -g "{rest[index + 1]}"`', _SERVER
    return None


def _redis(program: str, rest: list[str]) -> _Found | None:
    """`redis-server` stays in the foreground unless told to daemonize, by a flag or by a
    config file (its first operand), which is not read."""
    if (rest and not rest[0].startswith("-")) or any(
            word in ("-v", "--test-memory", "--check-system") for word in rest):
        return None
    for index, word in enumerate(rest):
        if word == "--daemonize" and rest[index + 1:index + 2] != ["no"]:
            return None
    return f"`{program}`", _SERVER


def _always(program: str, rest: list[str]) -> _Found | None:
    """A server that has no way to leave the foreground (`tritonserver`)."""
    return f"`{program}`", _SERVER


def _served_app(program: str, rest: list[str]) -> _Found | None:
    """`uvicorn APP` (with no app it prints its usage, and ends)."""
    return (f"`{program}`", _SERVER) if _operands(rest) else None


def _gunicorn(program: str, rest: list[str]) -> _Found | None:
    """`gunicorn APP`, unless `--daemon` or a config file (which may set `daemon`)."""
    if any(word.partition("=")[0] in ("-D", "--daemon", "-c", "--config", "--check-config",
                                       "--print-config", "-v") for word in rest):
        return None
    return f"`{program}`", _SERVER


#: sshd's options that take a value (OpenSSH): the rest of a cluster after one is its value.
_SSHD_VALUED = frozenset("bcCEfghkoOpu")


def _sshd(program: str, rest: list[str]) -> _Found | None:
    """`sshd -D` stays in the foreground (without `-D` it forks a daemon, and the command
    ends); `-t`, `-T` and `-i` test or serve one connection, and end."""
    shown: str | None = None
    at = 0
    while at < len(rest):
        word = rest[at]
        at += 1
        if not word.startswith("-") or word.startswith("--"):
            continue
        for position, letter in enumerate(word[1:]):
            if letter in "tTiG":
                return None
            if letter == "D":
                shown = shown or word
            if letter in _SSHD_VALUED:
                at += position == len(word) - 2  # its value is the next word
                break
    return None if shown is None else (f"`{program} {shown}`", _SERVER)


def _ray(program: str, rest: list[str]) -> _Found | None:
    """`ray start --block` blocks until its processes are stopped."""
    if _operands(rest)[:1] == ["start"] and "--block" in rest:
        return f"`{program} start --block`", "which blocks until it is stopped"
    return None


_PROGRAMS: dict[str, _Check] = {
    "sleep": _sleep,
    "tail": _tail,
    "tensorboard": _tensorboard,
    "jupyter": _jupyter,
    "jupyter-lab": _jupyter,
    "jupyter-notebook": _jupyter,
    "jupyter-server": _jupyter,
    "mlflow": _subcommand("server", "ui"),
    "nginx": _nginx,
    "redis-server": _redis,
    "vllm": _subcommand("serve"),
    "tritonserver": _always,
    "uvicorn": _served_app,
    "gunicorn": _gunicorn,
    "sshd": _sshd,
    "ray": _ray,
}
#: The modules `python -m` runs those programs by.
_MODULES = {
    "tensorboard.main": "tensorboard", "tensorboard": "tensorboard", "uvicorn": "uvicorn",
    "gunicorn": "gunicorn", "mlflow": "mlflow", "jupyter": "jupyter", "jupyterlab": "jupyter-lab",
    "notebook": "jupyter-notebook", "vllm.entrypoints.cli.main": "vllm",
}


# --- a shell script ---

#: Operators that end a simple command.
_AND_OR = frozenset({"&&", "||"})
_PIPES = frozenset({"|", "|&"})
_ENDS = frozenset({";", "\n", "&", ";;", ";&", ";;&"})
_OPERATORS = _AND_OR | _PIPES | _ENDS
#: A duration `sleep` takes, and succeeds after (`sleep $X` fails where X is unset).
_DURATION = re.compile(r"\d+(?:\.\d+)?[smhd]?|infinity")
#: Commands that end the loop or the script from its body, but not from a subshell there.
_LEAVES = frozenset({"exit", "return", "exec", "logout"})
#: Commands that may end it from anywhere: a signal (`kill $$`), code read as the shell's.
_MAY_END = frozenset({"kill", "pkill", "killall", "eval", "source", "."})
#: Programs at the end of a pipeline that read what comes in until it ends.
_PASSES = frozenset({"tee", "cat", "ts", "logger"})


class _Loop(NamedTuple):
    keyword: str
    condition: list[str]
    body: list[str]


class _Other(NamedTuple):
    """A compound command not judged (`if`, `for`, `case`, a subshell, a group)."""

    keyword: str


_Element = list[str] | _Loop | _Other


@lru_cache(maxsize=1024)
def _script_endless(text: str, errexit: bool = False) -> _Found | None:
    """What in a shell script runs forever, at its top level, on the path where each
    command succeeds, but for a command after a test (`[ ... ] && sleep infinity` runs
    as `if` would, which is not judged). `errexit`: the shell was started with `-e`."""
    tokens = _tokens(text)
    if tokens is None:
        return None
    functions = {tokens[index - 1] for index, token in enumerate(tokens)
                 if token == "()" and index} | {
        tokens[index + 1] for index, token in enumerate(tokens[:-1]) if token == "function"}
    waited: _Found | None = None  # the first endless command put in the background
    last: _Found | None = None  # what the last one put there runs, if endless (`$!`)
    leaves = "exit" in tokens or "exec" in tokens
    for lists, ending in _top_level(tokens):
        background = ending == "&"
        elements = [element for _, pipeline in lists for element in pipeline]
        # What follows may not run: an `if` or a group that may end the script, an `exit`
        # on a condition (`test -f x || exit 0`), a `false` under `set -e`.
        ends = (leaves and any(isinstance(element, _Other) for element in elements)) or (
            not background and (any(_ends_script(element) for element in elements) or (
                errexit and elements == [["false"]])))
        for pipeline, command in _judged(lists):
            found = _pipeline_endless(pipeline, functions, errexit)
            if found is not None and not background:
                return found
            if background:
                waited, last = waited or found, found
                continue
            if _ends_script(command):
                return None  # the script ends here, or becomes another program
            if command[:1] == ["set"] and any(_ERREXIT.fullmatch(word) for word in command[1:]):
                errexit = True
            if command[:1] and command[0] in _STOPS:
                waited = last = None  # `kill $SERVER`, `disown`: not waited for
            awaited = waited if command == ["wait"] else last if command == ["wait", "$!"] else None
            if awaited is not None:
                return f"{awaited[0]} in the background, then `{' '.join(command)}`", (
                    "which waits for it forever")
        if ends:
            return None
    return None


def _ends_script(element: _Element) -> bool:
    """Whether a command ends the script where it runs: `exit`, or `exec` given a command
    (the script becomes that program)."""
    words = _without_redirections(element) if isinstance(element, list) else []
    return words[:1] == ["exit"] or (words[:1] == ["exec"] and len(words) > 1)


def _judged(
    lists: list[tuple[str | None, list[_Element]]],
) -> Iterator[tuple[list[_Element], list[str]]]:
    """The pipelines of an and-or list that run where each command succeeds, each with its
    words when it is one simple command: not one after `||`, which runs only when what
    comes before fails, nor any after a test, which runs on a condition."""
    for operator, pipeline in lists:
        first = pipeline[0] if len(pipeline) == 1 else None
        command = _without_redirections(first) if isinstance(first, list) else []
        if command[:1] in _TESTS:
            return
        if operator != "||":
            yield pipeline, command


#: Commands whose success is a condition (`[ "$KEEP" = true ] && sleep infinity`).
_TESTS = (["["], ["[["], ["test"], ["false"], ["!"])
#: What stops a background process, or leaves it out of a bare `wait`.
_STOPS = frozenset({"kill", "pkill", "killall", "disown"})
#: `set -e` (alone or in a cluster, `set -euo pipefail`) or `set -o errexit`.
_ERREXIT = re.compile(r"-[a-zA-Z]*e[a-zA-Z]*|errexit")
#: What a loop's body may run under `set -e` and still never end: commands that do not fail.
_SURE = frozenset({"sleep", "echo", "printf", ":", "true", "date", "wait"})


def _tokens(text: str) -> list[str] | None:
    """The words and operators of a script, a newline ending each of its lines; None
    where the shell would stop on a syntax error (what the words are is unknown)."""
    read, complete = lines(text)
    if not complete:
        return None
    tokens: list[str] = []
    for line in read:
        # A word that reads as an operator (`--sep ';'`) is kept escaped, as it was written.
        tokens.extend(token if isinstance(token, Operator) or not (
            token in _OPERATORS or _parentheses(token)) else "\\" + token
            for token in line.tokens)
        if line.tokens and line.tokens[-1] not in _AND_OR | _PIPES:
            tokens.append("\n")
    return tokens


def _top_level(tokens: list[str]) -> Iterator[tuple[list[tuple[str | None, list[_Element]]], str]]:
    """The and-or lists at the top level of a script, each as its pipelines with the
    operator before each, and the operator that ends it (`&` in the background)."""
    at = 0
    while at < len(tokens):
        if tokens[at] in _ENDS:
            at += 1
            continue
        lists: list[tuple[str | None, list[_Element]]] = []
        operator: str | None = None
        while at < len(tokens):
            pipeline: list[_Element] = []
            while at < len(tokens):
                element, at = _element(tokens, at)
                pipeline.append(element)
                if at < len(tokens) and tokens[at] in _PIPES:
                    at += 1
                    continue
                break
            lists.append((operator, pipeline))
            if at < len(tokens) and tokens[at] in _AND_OR:
                operator = tokens[at]
                at += 1
                while at < len(tokens) and tokens[at] == "\n":
                    at += 1
                continue
            break
        ending = tokens[at] if at < len(tokens) else "\n"
        at += 1
        yield lists, ending


def _element(tokens: list[str], at: int) -> tuple[_Element, int]:
    """The command that starts at `at` (a simple command's words, or a compound
    command), and where what follows it starts."""
    token = tokens[at]
    if token in ("while", "until"):
        end = _closing(tokens, at)
        body_at = next((index for index in range(at + 1, end)
                        if tokens[index] == "do" and tokens[index - 1] in (";", "\n")), end)
        condition = [word for word in tokens[at + 1:body_at] if word not in (";", "\n")]
        element: _Element = _Loop(token, condition, tokens[body_at + 1:end])
        at = end + 1
    elif token in OPENS or token == "case" or _parentheses(token) or token == "function" or (
            at + 1 < len(tokens) and tokens[at + 1] == "()"):
        if token == "function" or tokens[at + 1:at + 2] == ["()"]:
            at += 2 if token == "function" else 1  # a function: its body follows
            while at < len(tokens) and tokens[at] in ("()", "\n"):
                at += 1
            if at >= len(tokens):
                return _Other("function"), at
        end = _closing(tokens, at)
        element, at = _Other(tokens[at]), end + 1
    else:
        words = []
        while at < len(tokens) and tokens[at] not in _OPERATORS and not _parentheses(tokens[at]):
            words.append(tokens[at])
            at += 1
        return words, at
    while at < len(tokens) and tokens[at] not in _OPERATORS:  # redirections
        at += 1
    return element, at


def _parentheses(token: str) -> bool:
    """Whether a token is parentheses only (`(`, `)`, `()`, `((`): a subshell, a function
    or arithmetic, never a word."""
    return bool(token) and not token.strip("()")


def _closing(tokens: list[str], at: int) -> int:
    """Where the compound command opened at `at` closes (the end, if it never does). The
    parentheses of a `case`'s patterns are not counted."""
    depth = cases = 0
    starts = True
    for index in range(at, len(tokens)):
        token = tokens[index]
        parentheses = _parentheses(token)
        if parentheses and not cases:
            depth += token.count("(") - token.count(")")
        elif starts and token == "case":
            depth, cases = depth + 1, cases + 1
        elif token == "esac" and cases:
            depth, cases = depth - 1, cases - 1
        elif starts and token in OPENS:
            depth += 1
        elif starts and token in CLOSES:
            depth -= 1
        if depth <= 0:
            return index
        starts = parentheses or token in _OPERATORS or token in STARTS
    return len(tokens)


def _pipeline_endless(
    pipeline: list[_Element], functions: set[str], errexit: bool
) -> _Found | None:
    """What runs forever in a pipeline: one of its commands, when those after it only pass
    on what comes in until it ends (`server 2>&1 | tee log`)."""
    for index, element in enumerate(pipeline):
        found = _element_endless(element, functions, errexit)
        if found is None:
            continue
        after = pipeline[index + 1:]
        if all(isinstance(item, list) and item and posixpath.basename(item[0]) in _PASSES
               for item in after):
            return found
    return None


def _element_endless(element: _Element, functions: set[str], errexit: bool) -> _Found | None:
    """A command that runs forever; a loop, when nothing in its body leaves it (under
    `set -e`, when its body runs only commands that cannot fail)."""
    if isinstance(element, list):  # a function of the script's may take a program's name
        return _command_endless(element) if element and element[0] not in functions else None
    if not isinstance(element, _Loop):
        return None
    forever = ["true"] if element.keyword == "while" else ["false"]
    if element.keyword == "while" and (element.condition == [":"] or (
            element.condition[:1] == ["sleep"] and len(element.condition) == 2
            and _DURATION.fullmatch(element.condition[1]))):
        forever = element.condition  # `sleep 300` succeeds every time
    if element.condition != forever:
        return None
    commands = list(_body_commands(element.body))
    if any(word in functions for word in element.body) or any(
            _leaves(command) for command in commands):
        return None
    if errexit and any(command.words[0] not in _SURE for command in commands):
        return None  # a command of the body that fails ends the script
    return (f"`{element.keyword} {' '.join(forever)}`",
            "a loop with no `break` or `exit` in its body")


class _InBody(NamedTuple):
    """A command of a loop's body: its first words, whether a subshell runs it, and in how
    many loops of the body it stands."""

    words: list[str]
    subshell: bool
    loops: int


def _body_commands(body: list[str]) -> Iterator[_InBody]:
    """The commands of a loop's body (a subshell or arithmetic counts as one: `(` or
    `((`), with where each stands."""
    subshells = loops = 0
    starts = True  # whether a command starts at the word
    for index, word in enumerate(body):
        if _parentheses(word) or isinstance(word, Operator):  # `(`, `((`, `);`, `&&`...
            if starts and word.startswith("("):
                yield _InBody([word], subshells > 0, loops)
            subshells = max(subshells + word.count("(") - word.count(")"), 0)
            starts = True
            continue
        if starts and word not in _OPERATORS and word not in STARTS:
            yield _InBody(body[index:index + 2], subshells > 0, loops)
        if starts and word in ("do", "done"):
            loops = max(loops + (1 if word == "do" else -1), 0)
        starts = word in _OPERATORS or word in STARTS


def _leaves(command: _InBody) -> bool:
    """Whether a command of a loop's body may end the loop or the script: `exit` (not in a
    subshell, which it alone ends), `break` with a count beyond the loops it stands in
    (`break` in an inner loop leaves that one), `kill`, `eval`."""
    word, count = command.words[0], command.words[1:]
    if word in _MAY_END:
        return True
    if command.subshell:
        return False
    if word == "break":
        levels = count[0] if count and count[0] not in _OPERATORS else "1"
        return not levels.isdigit() or int(levels) > command.loops
    return word in _LEAVES
