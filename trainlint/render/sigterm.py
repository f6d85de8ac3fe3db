"""Whether a trainer's command does something on SIGTERM before it exits.

The kubelet sends SIGTERM, then SIGKILL once the grace period is over. A command shows it
acts on the first when it installs a handler that does more than log and exit: a shell
`trap` on TERM that runs more than `echo` and `exit` (one that passes the signal on to the
trainer with `kill` counts, and one that exits into an EXIT trap that does more), a Python
`signal.signal(signal.SIGTERM, handler)` whose handler does more than print, log and exit
(sets a flag the loop saves on, saves itself, or is a function the program does not show;
one that exits in a program with `finally` or `atexit`, which then run), or Megatron's
`--exit-signal-handler`, which saves and exits. Programs are read whole, with `ast`, and
scripts with `shell`: a mention of SIGTERM elsewhere (`timeout --signal=SIGTERM`, an
`echo`, `os.kill(pid, signal.SIGTERM)`) installs nothing.
"""

from __future__ import annotations

import ast
import re
import shlex
from collections.abc import Iterator

from trainlint.render import shell
from trainlint.render.script import Script, last_name, syntax

#: Megatron's flag: it saves and exits on SIGTERM.
_FLAG = re.compile(r"--exit[-_]signal[-_]handler")
#: How a trap names the signals it handles.
_TERM = frozenset({"TERM", "SIGTERM", "15"})
_EXIT = frozenset({"EXIT", "0"})
#: Commands of a trap's action that save nothing (deleting scratch files and declaring
#: variables included).
_SHELL_QUIET = frozenset({"echo", "printf", "exit", "true", ":", "logger", "sleep", "return",
                          "rm", "rmdir", "unlink", "local", "declare", "typeset", "readonly"})
#: Calls of a Python handler that save nothing: printing, logging, exiting.
_PYTHON_QUIET = frozenset({"exit", "_exit", "quit", "print", "info", "warning", "warn",
                           "error", "debug", "critical", "exception", "log", "write", "flush"})
#: Handlers that are no function: the default action (the process ends) and ignoring.
_NO_FUNCTION = frozenset({"SIG_DFL", "SIG_IGN"})


def handles_sigterm(found: Script) -> tuple[str, str | None] | None:
    """What shows the trainer acts on SIGTERM, if anything does: the text of the command
    that does, and the Python program that installs the handler, if one does."""
    for text in found.texts:
        flag = _FLAG.search(text)
        if flag is not None:
            return flag[0], None
    for text in found.texts:
        if "TERM" in text or "15" in text:
            trap = _saving_trap(text)
            if trap is not None:
                return trap, None
    for code in _programs(found):
        if _saving_handler(code):
            return "SIGTERM", code
    return None


def _saving_trap(text: str) -> str | None:
    """The trap on TERM of a script that may save, as written again (`trap 'kill -TERM
    $PID' TERM`): one whose action does more than log and exit, or one that exits where
    a trap on EXIT does more."""
    read, complete = shell.lines(text)
    if not complete:
        return None
    traps = list(_traps(read))
    functions = _functions(read)
    on_exit = any(_EXIT & set(signals) and not _action_only_exits(action, functions)
                  for action, signals in traps)
    for action, signals in traps:
        if _TERM & set(signals) and (on_exit or not _action_only_exits(action, functions)):
            return f"trap {shlex.quote(action)} {' '.join(signals)}"
    return None


def _functions(read: list[shell.Line]) -> dict[str, list[list[str]]]:
    """The commands of each function a script defines (`name() { ...; }`, `function name
    { ...; }`), by name: a trap's action is often one."""
    tokens = [token for line in read for token in [*line.tokens, shell.Operator(";")]]
    found: dict[str, list[list[str]]] = {}
    for index, token in enumerate(tokens[:-1]):
        if tokens[index + 1] == "()" and not isinstance(token, shell.Operator):
            name = token
        elif token == "function" and not isinstance(tokens[index + 1], shell.Operator):
            name = tokens[index + 1]
        else:
            continue
        start = next((at for at in range(index + 1, min(index + 4, len(tokens)))
                      if tokens[at] == "{"), None)
        if start is None:
            continue  # a body of another shape (a subshell): not read
        depth, end = 0, start
        for end in range(start, len(tokens)):
            depth += (tokens[end] == "{") - (tokens[end] == "}")
            if depth == 0:
                break
        found[name] = [command for command, _, _ in shell.commands(tokens[start + 1:end])]
    return found


def _traps(read: list[shell.Line]) -> Iterator[tuple[str, list[str]]]:
    """Each `trap ACTION SIGNAL...` command of a script, with its action and signals,
    wherever it stands (`then trap ...`, `{ trap ...; }`)."""
    for line in read:
        for command, _, _ in shell.commands(line.tokens):
            words = command[2:] if command[1:2] == ["--"] else command[1:]
            if command[0] == "trap" and len(words) >= 2:
                yield words[0], words[1:]


def _action_only_exits(action: str, functions: dict[str, list[list[str]]]) -> bool:
    """Whether a trap's action saves nothing: it resets the signal (`-`, ``), or each
    of its commands only logs or exits, or calls a function of the script that only
    does. (A first operand of digits is a signal: all are reset.)"""
    if action == "-" or action.isdigit():
        return True
    read, complete = shell.lines(action)
    if not complete:
        return False
    commands = [command for line in read for command, _, _ in shell.commands(line.tokens)]
    return _only_exit(commands, functions, set())


def _only_exit(
    commands: list[list[str]], functions: dict[str, list[list[str]]], called: set[str]
) -> bool:
    """Whether each command only logs or exits, through the functions it calls (each
    read once: a function that calls itself adds nothing)."""
    for command in commands:
        words = [word for word in command if not shell.ASSIGNMENT.fullmatch(word)]
        if not words or words[0] in _SHELL_QUIET or words[0] in called:
            continue
        if words[0] not in functions:
            return False
        called.add(words[0])
        if not _only_exit(functions[words[0]], functions, called):
            return False
    return True


def _programs(found: Script) -> Iterator[str]:
    """The Python programs of a command that mention SIGTERM: a text that is one (`python
    -c`), a program its script runs or writes with a heredoc."""
    for text in found.texts:
        if "SIGTERM" not in text:
            continue
        if syntax(text) is not None:
            yield text
            continue
        for line in shell.lines(text)[0]:
            yield from (body for _, body in line.heredocs if "SIGTERM" in body)
    yield from (code for code, _ in found.programs if "SIGTERM" in code)


def _saving_handler(code: str) -> bool:
    """Whether a program installs a SIGTERM handler that may save (see the module)."""
    tree = syntax(code)
    if tree is None:
        return False
    functions = {node.name: node for node in ast.walk(tree)
                 if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
    # A loop over the signals (`for s in (signal.SIGTERM, signal.SIGINT):`) names them.
    named = {node.target.id for node in ast.walk(tree) if isinstance(node, ast.For)
             and isinstance(node.target, ast.Name) and _mentions_sigterm(node.iter)}
    cleans_up = any(
        (isinstance(node, ast.Try) and node.finalbody)
        or (isinstance(node, ast.Call) and last_name(node.func) == "register"
            and isinstance(node.func, ast.Attribute) and last_name(node.func.value) == "atexit")
        for node in ast.walk(tree))
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and last_name(node.func) == "signal"
                and len(node.args) == 2):
            continue
        signal = node.args[0]
        if _mentions_sigterm(signal) or (isinstance(signal, ast.Name) and signal.id in named):
            handler = node.args[1]
            if last_name(handler) not in _NO_FUNCTION and (
                    cleans_up or not _handler_only_exits(handler, functions)):
                return True
    return False


def _mentions_sigterm(node: ast.AST) -> bool:
    return any(last_name(item) == "SIGTERM" for item in ast.walk(node)
               if isinstance(item, ast.Attribute | ast.Name))


def _handler_only_exits(
    handler: ast.expr, functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]
) -> bool:
    """Whether a handler only prints, logs and exits: a lambda, or a function the
    program defines; not a function it does not show."""
    if isinstance(handler, ast.Lambda):
        return _expression_only_exits(handler.body)
    name = last_name(handler)
    function = functions.get(name) if name is not None else None
    return function is not None and all(
        _statement_only_exits(statement) for statement in function.body)


def _statement_only_exits(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Pass | ast.Return):
        return True
    if isinstance(statement, ast.Expr):
        return isinstance(statement.value, ast.Constant) or _expression_only_exits(
            statement.value)
    if isinstance(statement, ast.Raise) and statement.exc is not None:
        exception = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
        return last_name(exception) in ("SystemExit", "KeyboardInterrupt")
    return False


def _expression_only_exits(expression: ast.expr) -> bool:
    if isinstance(expression, ast.Tuple | ast.List):
        return all(_expression_only_exits(item) for item in expression.elts)
    if isinstance(expression, ast.BoolOp):
        return all(_expression_only_exits(item) for item in expression.values)
    return isinstance(expression, ast.Call) and last_name(expression.func) in _PYTHON_QUIET
