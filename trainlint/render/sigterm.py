"""Whether a trainer's command does something on SIGTERM before it exits.

The kubelet sends SIGTERM, then SIGKILL once the grace period is over. A command shows it
acts on the first when it installs a handler that does more than log and exit: a shell
`trap` that runs more than `echo` and `exit` (one that passes the signal on to the
trainer with `kill` counts), a Python `signal.signal(signal.SIGTERM, handler)` whose
handler does more than print, log and exit (sets a flag the loop saves on, saves itself,
or is not found in the text), or Megatron's `--exit-signal-handler`, which saves and
exits. A handler that only exits saves nothing, however long the pod is given.
"""

from __future__ import annotations

import ast
import re
import textwrap

from trainlint.render import shell
from trainlint.render.script import Script

#: Where a command may show a handler: Python's signal, a shell's trap, Megatron's flag.
_SIGTERM = re.compile(r"\btrap\b[^\n]*\bTERM\b|SIGTERM|--exit[-_]signal[-_]handler")
#: Commands of a trap's action that save nothing.
_SHELL_QUIET = frozenset({"echo", "printf", "exit", "true", ":", "logger", "sleep", "return"})
#: Calls of a Python handler that save nothing: printing, logging, exiting.
_PYTHON_QUIET = frozenset({"exit", "_exit", "quit", "print", "info", "warning", "warn",
                           "error", "debug", "critical", "exception", "log", "write", "flush"})
#: Handlers that are no function: the default action (the process ends) and ignoring.
_NO_FUNCTION = frozenset({"SIG_DFL", "SIG_IGN"})


def handles_sigterm(found: Script) -> str | None:
    """The text of the command that shows the trainer acts on SIGTERM, if any does."""
    for text in found.texts:
        for match in _SIGTERM.finditer(text):
            shown = match[0]
            if shown.startswith("trap"):
                if not _traps_only_exit(text):
                    return shown
            elif shown.startswith("--") or not _python_handler_only_exits(text, match.start()):
                return shown
    return None


def _traps_only_exit(text: str) -> bool:
    """Whether every `trap` of a script on TERM only logs and exits (or resets the
    signal), so that nothing is saved on it."""
    read, complete = shell.lines(text)
    if not complete:
        return False
    for line in read:
        tokens = line.tokens
        for index, token in enumerate(tokens):
            if token != "trap" or (index and not isinstance(tokens[index - 1], shell.Operator)):
                continue
            words = []
            for word in tokens[index + 1:]:
                if isinstance(word, shell.Operator):
                    break
                words.append(word)
            if len(words) >= 2 and {"TERM", "SIGTERM", "15"} & set(words[1:]) and not (
                    _action_only_exits(words[0])):
                return False
    return True


def _action_only_exits(action: str) -> bool:
    """Whether a trap's action saves nothing: it resets the signal (`-`, ``), or each
    of its commands only logs or exits."""
    read, complete = shell.lines(action)
    if not complete:
        return False
    for line in read:
        command: list[str] = []
        for token in [*line.tokens, shell.Operator(";")]:
            if not isinstance(token, shell.Operator):
                command.append(token)
                continue
            words = [word for word in command if not shell.ASSIGNMENT.fullmatch(word)]
            if words and words[0] not in _SHELL_QUIET:
                return False
            command = []
    return True


def _python_handler_only_exits(text: str, at: int) -> bool:
    """Whether the Python line of `text` at `at` installs no SIGTERM handler that could
    save: it installs none (`os.kill(pid, signal.SIGTERM)`, a comment), or one that only
    prints, logs and exits. A line that is no Python statement on its own may install
    one: it is taken to."""
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    line = text[start:] if end < 0 else text[start:end]
    try:
        tree = ast.parse(line.strip())
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and _called(node.func) == "signal"
                and len(node.args) == 2 and not _handler_only_exits(node.args[1], text)):
            return False
    return True


def _handler_only_exits(handler: ast.expr, text: str) -> bool:
    """Whether a handler only prints, logs and exits: a lambda, or a function the text
    defines (found by its name); not a function the text does not show."""
    if isinstance(handler, ast.Lambda):
        return _expression_only_exits(handler.body)
    name = _called(handler)
    if name in _NO_FUNCTION:
        return True
    if name is None:
        return False
    definition = re.search(rf"^([ \t]*)(?:async\s+)?def\s+{re.escape(name)}\s*\(", text, re.M)
    if definition is None:
        return False
    block = [text[definition.start():].split("\n", 1)[0]]
    for line in text[definition.end():].split("\n")[1:]:
        if line.strip() and len(line) - len(line.lstrip()) <= len(definition[1]):
            break
        block.append(line)
    try:
        tree = ast.parse(textwrap.dedent("\n".join(block)))
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    function = tree.body[0] if tree.body else None
    return isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef) and all(
        _statement_only_exits(statement) for statement in function.body)


def _statement_only_exits(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Pass | ast.Return):
        return True
    if isinstance(statement, ast.Expr):
        return isinstance(statement.value, ast.Constant) or _expression_only_exits(
            statement.value)
    if isinstance(statement, ast.Raise) and statement.exc is not None:
        exception = statement.exc.func if isinstance(statement.exc, ast.Call) else statement.exc
        return _called(exception) in ("SystemExit", "KeyboardInterrupt")
    return False


def _expression_only_exits(expression: ast.expr) -> bool:
    if isinstance(expression, ast.Tuple | ast.List):
        return all(_expression_only_exits(item) for item in expression.elts)
    if isinstance(expression, ast.BoolOp):
        return all(_expression_only_exits(item) for item in expression.values)
    return isinstance(expression, ast.Call) and _called(expression.func) in _PYTHON_QUIET


def _called(node: ast.expr) -> str | None:
    """The last name of a dotted name (`signal` of `signal.signal`, `exit` of `sys.exit`)."""
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None
