"""What a trainer's command line sets: its words, and the settings it passes to the trainer.

A container's `command` and `args` are a list of words, but a word is often a whole shell
script (`bash -c "..."`) that writes a config file with a heredoc, changes folder and runs
a Python program given inline. Each part is read with a real parser: the shell's lines and
words as `shell` reads them (quotes, comments, heredocs), `ast` for inline Python,
YAML/JSON for the configs a heredoc writes; a script with a quote never closed is read up
to where the shell stops. A heredoc that becomes a `.py` file is a
program too: written by `cat > train.py`, or read into a variable that `printf` then
writes, as the Kubeflow SDK runs a training function (`read -r -d '' SCRIPT << EOM`,
`printf "%s" "$SCRIPT" > "train.py"`, `torchrun "train.py"`).

A setting is a key and the value it is given, by a flag (`--output_dir /x`,
`--output_dir=/x`), an override (`output_dir=/x`), a keyword argument in inline Python
(`TrainingArguments(output_dir="/x")`) or a key of a config written in the script
(`output_dir: out`, relative to the folder the script `cd`s to). What reads the settings
decides what a key means.
"""

from __future__ import annotations

import ast
import base64
import itertools
import json
import posixpath
import re
from collections.abc import Iterator, Sequence
from functools import cache, lru_cache
from typing import Any, NamedTuple

from trainlint.document import sequence, string
from trainlint.memo import PerValue
from trainlint.render import Container, shell
from trainlint.render.shell import ASSIGNMENT, SHELLS
from trainlint.render.tree import Origin

#: Python interpreters: their `-c` word, or a heredoc fed to `python -`, is a program.
PYTHONS = re.compile(r"(?:.*/)?python(?:3(?:\.\d+)?)?")
#: Reserved words that open a compound command where a command starts, and those that
#: close one.
_OPENS = shell.OPENS | {"case"}
_CLOSES = shell.CLOSES | {"esac"}
#: Shell builtins whose `NAME=value` words set shell variables, not a program's settings.
_BUILTINS = frozenset({"export", "declare", "local", "readonly", "typeset", "set", "unset"})
#: Config files a heredoc writes that are read as the trainer's settings.
_CONFIG_SUFFIXES = (".yaml", ".yml", ".json")


class Setting(NamedTuple):
    key: str
    #: The value as given: a string from the shell, a Python or YAML literal otherwise;
    #: None for a bare flag (`--overwrite_output_dir`).
    value: Any
    #: How it was given, for messages: `flag --save_steps`, "`save_steps=` in its program"...
    origin: str
    at: Origin
    #: The folder the script had changed to when the setting was given, if it did.
    cwd: str | None = None

    def in_program(self) -> bool:
        """Whether a call in a Python program gives it (`TrainingArguments(save_steps=5)`)."""
        return self.origin.startswith(f"`{self.key}=` in ")

    def path(self) -> str | None:
        """The value as an absolute path (a relative one joined to `cwd`), if a string."""
        if not isinstance(self.value, str) or not self.value:
            return None
        joined = posixpath.join(self.cwd or "", self.value)
        return posixpath.normpath(joined) if joined.startswith("/") else None


class Script(NamedTuple):
    """What the command line of a trainer sets, in the order it is written."""

    settings: tuple[Setting, ...]
    #: The words of every simple command, in order (an inline Python program is one word).
    words: tuple[tuple[str, Origin], ...]
    #: The command and args as written, heredocs and inline programs included, then the
    #: programs of the mounted files it names.
    texts: tuple[str, ...] = ()
    #: The inline Python programs an interpreter runs as its own command (`python -c`,
    #: `python - <<PY`, a `.py` file a heredoc writes that `python FILE` then runs), and
    #: the programs of mounted files a command names (`torchrun /scripts/train.py`).
    programs: tuple[tuple[str, Origin], ...] = ()

    def get(self, key: str) -> Setting | None:
        """The last setting of `key`: a later flag wins, as in most argument parsers, and a
        flag may spell it with dashes (`--save-steps`: Hugging Face's parser takes both)."""
        dashed = key.replace("_", "-")
        return next((setting for setting in reversed(self.settings) if setting.key == key or (
            setting.key == dashed and setting.origin.startswith("flag "))), None)

    def runs(self, program: re.Pattern[str]) -> bool:
        """Whether any command word is `program` (a pattern of the whole word)."""
        return any(program.fullmatch(word) for word, _ in self.words)


#: The script of each container of a render.
_SCRIPTS: PerValue[Script] = PerValue("script")


def read(container: Container) -> Script:
    """The script of a rendered container's command and args, with the programs of the
    files its ConfigMap mounts show (worked out once per container and render)."""
    return _SCRIPTS.get(
        container.job.render,
        lambda: read_items(
            [*container.strings("command"), *container.strings("args")],
            tuple(sorted((path, text) for path, text in container.files.items()
                         if path.endswith(".py"))),
            string(container.body.get("workingDir")) or None,
        ),
        container.path,
    )


def its_program(path: str | None) -> str:
    """How a message names a container's program: by its mounted file, if one holds it."""
    return f"its program `{path}`" if path else "its program"


def program_file(container: Container, program: str) -> str | None:
    """The mounted file that alone holds a program the container runs, to name it where
    a finding rests on it (the command names only the file)."""
    paths = [path for path, text in container.files.items() if text == program]
    return paths[0] if len(paths) == 1 else None


#: A setting before it is placed: key, value, origin, folder.
Found = tuple[str, Any, str, str | None]


#: The Python programs of the files a container's mounts show, by absolute path.
Files = tuple[tuple[str, str], ...]


def read_items(
    items: list[tuple[str, Origin]], files: Files = (), workdir: str | None = None
) -> Script:
    """The script of command and args items, each with its origin; `files` the programs
    its mounts show, `workdir` the folder a relative path starts from."""
    texts = tuple(text for text, _ in items)
    found, words, programs, named = _read_texts(texts, files, workdir)
    return Script(
        tuple(Setting(key, value, origin, items[position][1], cwd)
              for position, (key, value, origin, cwd) in found),
        tuple((word, items[position][1]) for position, word in words),
        (*texts, *named),
        tuple((code, items[position][1]) for position, code in programs),
    )


@lru_cache(maxsize=2048)
def _read_texts(texts: tuple[str, ...], files: Files, workdir: str | None) -> tuple[
    tuple[tuple[int, Found], ...], tuple[tuple[int, str], ...], tuple[tuple[int, str], ...],
    tuple[str, ...],
]:
    """The settings, words and inline programs of command and args texts, each with the
    place of the item it is in, and the programs of the mounted files they name:
    remembered by the texts alone, since a runtime's command recurs in the render of
    every TrainJob that uses it (only the origins differ): `read_items` takes 3.5 us a
    container instead of 12 on the benchmark corpus."""
    settings: list[tuple[int, Found]] = []
    words: list[tuple[int, str]] = []
    programs: list[tuple[int, str]] = []
    mounted = dict(files)
    # The program texts of `python -c` (`-uc`, `-u -c`), by place, with their interpreter's.
    code = {place: at for at, text in enumerate(texts) if PYTHONS.fullmatch(text)
            and (place := program_text(texts, at)) is not None}
    for position, text in enumerate(texts):
        if position in code:
            found: tuple[Found, ...] = tuple(_python(text, None))
            words.append((position, text))
            if code[position] == 0:  # the interpreter is the command
                programs.append((position, text))
        elif any(space in text for space in " \n\t"):
            found, script_words, script_programs = _shell(text, files, workdir)
            words.extend((position, word) for word in script_words)
            programs.extend((position, code) for code in script_programs)
        else:
            following = texts[position + 1] if position + 1 < len(texts) else None
            found = tuple(_word_setting(text, following, None))
            words.append((position, text))
        settings.extend((position, setting) for setting in found)
    # The program the command runs, of a mounted file: its literals outrank the flags.
    # (A `python -c` program is no file's name.)
    ran = _mounted_program(["" if position in code else text for position, text
                            in enumerate(texts)], workdir, mounted) if mounted else None
    if ran is not None:
        script, path, program = ran
        settings.extend((script, setting) for setting in _python(program, None, path))
        programs.append((script, program))
    run = {found for _, found in programs}
    named = tuple(dict.fromkeys(code for code in mounted.values() if code in run))
    return tuple(settings), tuple(words), tuple(programs), named


def _mounted_program(
    words: Sequence[str], cwd: str | None, mounted: dict[str, str]
) -> tuple[int, str, str] | None:
    """Where the first `.py` word of a command is (one after it is an argument, not what
    runs), with the mounted file it names (`/scripts/train.py`, or `train.py` in the
    folder the command runs in) and its program, if the mounts show it."""
    at = next((at for at, word in enumerate(words) if word.endswith(".py")), None)
    if at is None or not mounted:
        return None
    path = posixpath.normpath(posixpath.join(cwd or "", words[at]))
    program = mounted.get(path)
    return None if program is None else (at, path, program)


@lru_cache(maxsize=2048)
def _shell(
    text: str, files: Files = (), workdir: str | None = None
) -> tuple[tuple[Found, ...], tuple[str, ...], tuple[str, ...]]:
    """The settings, words and inline Python programs of a shell script, and the programs
    of the mounted `files` its commands name (remembered: a runtime's script recurs in
    every TrainJob that uses it)."""
    mounted = dict(files)
    settings: list[Found] = []
    words: list[str] = []
    programs: list[str] = []
    cwd: str | None = None
    #: The heredocs `read` put in shell variables, by name; the programs written to files.
    held: dict[str, str] = {}
    written: dict[str, str] = {}
    read, _ = shell.lines(text)  # what comes before a quote never closed runs
    depth = 0  # of the compound commands open (`if`, a loop, a function's body)
    for line in read:
        if depth == 0 and line.tokens[:1] == ["exit"] and not any(
                isinstance(token, shell.Operator) for token in line.tokens):
            break  # the script ends here: what follows never runs
        depth = max(depth + _nesting(line.tokens), 0)
        heredocs = iter(line.heredocs)  # in the order of their commands
        heredoc = next(heredocs, None)
        before: list[str] = []  # the command before this one on the line
        for given, first, after in shell.commands(line.tokens):
            fed = before if first and line.tokens[first - 1] == "|" else None  # piped to it
            words.extend(given)
            body: str | None = None
            while heredoc is not None and heredoc[0] <= after:  # the first of this command's
                if body is None and heredoc[0] >= first:
                    body = heredoc[1]
                heredoc = next(heredocs, None)
            if given[:1] == ["cd"] and len(given) == 2:
                cwd = posixpath.normpath(posixpath.join(cwd or "", given[1]))
                if not cwd.startswith("/"):
                    cwd = None  # relative to a folder trainlint does not know
                continue
            command = _run(given)
            settings.extend(_command_settings(command, cwd))
            programs.extend(_programs_run(command, body, written, cwd))
            ran = _mounted_program(command, cwd or workdir, mounted)
            if ran is not None:
                settings.extend(_python(ran[2], cwd, ran[1]))
                programs.append(ran[2])
            if body is not None:
                if _reads_whole(command):
                    held[command[-1]] = body
                settings.extend(_heredoc_settings(command, body, cwd))
                written.update(_program_file(_written_file(command), body, cwd))
            else:
                program = _program_written(command, held) if held and command[:1] in (
                    ["printf"], ["echo"]) else _decoded(command, fed)
                if program is not None:
                    settings.extend(_python(program, cwd))
                    written.update(_program_file(_redirected(command), program, cwd))
            before = command
    return tuple(settings), tuple(words), tuple(programs)


def _program_file(target: str | None, program: str, cwd: str | None) -> dict[str, str]:
    """The `.py` file a command writes, by its path, with the program it holds."""
    if target is None or not target.endswith(".py"):
        return {}
    return {posixpath.join(cwd or "", target): program}


def _programs_run(
    command: list[str], body: str | None, written: dict[str, str], cwd: str | None
) -> Iterator[str]:
    """The inline program a simple command runs with a Python interpreter as the command:
    its `-c` word, the heredoc fed to `-`, or a file a heredoc wrote before (`python -u
    train.py`)."""
    if not command or not PYTHONS.fullmatch(command[0]):
        return
    operands = [word for word in command[1:] if word[:1] != "-" or word == "-"]
    code = program_text(command, 0)
    if code is not None and code < len(command):
        yield command[code]
    elif body is not None and operands[:1] in ([], ["-"]):
        yield body
    elif operands and posixpath.join(cwd or "", operands[0]) in written:
        yield written[posixpath.join(cwd or "", operands[0])]


#: Launchers that pass their words on to the program as they are, with no shell between
#: (`deepspeed` and `mpirun` may start it through ssh, whose shell splits and expands them).
NO_SHELL_LAUNCHERS = frozenset({"torchrun", "accelerate", "tune", "llamafactory-cli"})


class Unshelled(NamedTuple):
    """A program a container runs with no shell that could read its words, and the words
    it is given as they are written: each item's text and origin."""

    program: str
    items: list[tuple[str, Origin]]


def unshelled(container: Container) -> Unshelled | None:
    """What a Python program, or a launcher that starts one (`NO_SHELL_LAUNCHERS`), gets
    after its name, with no shell between (also behind `env` or `tini --`); a `python -c`
    program is no word. None where a shell may read them: the image's entrypoint (no
    `command`), a shell the command starts (`torchrun --no-python bash -c ...`)."""
    items = [*container.strings("command"), *container.strings("args")]
    given = container.body.get("command")
    if not isinstance(given, list) or not given or len(items) != len(given) + len(
            sequence(container.body.get("args"))):
        return None  # the image's entrypoint, or an item that is no string
    words = [text for text, _ in items]
    found = shell.unwrapped(words)
    if found is None or found[0] >= len(words):
        return None
    at = found[0]
    program = posixpath.basename(words[at])
    if not (PYTHONS.fullmatch(program) or program in NO_SHELL_LAUNCHERS) or any(
            posixpath.basename(word) in SHELLS for word in words[at + 1:]):
        return None
    code = program_text(words, at) if PYTHONS.fullmatch(program) else None
    return Unshelled(words[at], [items[position] for position in range(at + 1, len(words))
                                 if position != code])


def shell_script(container: Container) -> tuple[str, Origin] | None:
    """The script a container's shell runs, with its origin: the first operand of a shell
    given `-c` in an option cluster (`sh -c`, `bash -ec`, `bash -euo pipefail -c`), also
    when started by a program that runs a command (`env`, `tini --`, `timeout 1h`)."""
    given_words = [*container.strings("command"), *container.strings("args")]
    words = [word for word, _ in given_words]
    found = shell.unwrapped(words)
    if found is None or found[0] >= len(words) or posixpath.basename(words[found[0]]) not in SHELLS:
        return None
    script = shell.shell_operand(words, found[0])
    return None if script is None else given_words[script]


def _nesting(tokens: list[str]) -> int:
    """How many compound commands a line opens (`if`, `while ... do`, `{`, `(`) less how
    many it closes (`fi`, `done`, `}`, `)`)."""
    change = 0
    starts = True  # whether a command starts at the token
    for token in tokens:
        if isinstance(token, shell.Operator):
            change += token.count("(") - token.count(")")
            starts = True
            continue
        if starts:
            change += (token in _OPENS) - (token in _CLOSES)
        starts = token in shell.STARTS
    return change


def program_text(words: Sequence[str], at: int) -> int | None:
    """Where the program text given to the interpreter at `at` with `-c` is, also in an
    option cluster (`python3 -uc CODE`); None where it runs a file or a module (whose
    own `-c` is an argument)."""
    position = at + 1
    while position < len(words) and words[position].startswith("-") and words[position] != "-":
        option = words[position]
        if option.startswith("--"):
            position += 1
            continue
        cluster = option[1:]
        for index, letter in enumerate(cluster):
            if letter == "c":
                return position + 1 if index == len(cluster) - 1 else None
            if letter in "mWX":  # takes the rest of the cluster or the next word
                return None if letter == "m" else program_text(
                    words, position + (1 if index == len(cluster) - 1 else 0))
        position += 1
    return None


def _run(command: list[str]) -> list[str]:
    """The words of the program a simple command runs, past `NAME=value` words (shell
    variables, not settings) and the programs that run another (`exec`, `env`,
    `timeout 1h`); none where it runs none."""
    found = shell.unwrapped(command)
    return [] if found is None else command[found[0]:]


def _command_settings(command: list[str], cwd: str | None) -> Iterator[Found]:
    """The settings of the program of a simple command: flags and overrides, or the
    program of `python -c`."""
    if command[:1] and command[0] in _BUILTINS:
        return
    code = program_text(command, 0) if command and PYTHONS.fullmatch(command[0]) else None
    if code is not None and code < len(command):
        yield from _python(command[code], cwd)
    else:
        yield from _word_settings(command, cwd)


def _heredoc_settings(command: list[str], body: str, cwd: str | None) -> Iterator[Found]:
    """What a heredoc feeds: a Python program (`python - <<PY`, `cat > train.py <<PY`), or a
    config file the command writes (`cat > cfg.yaml <<EOF`, `tee cfg.yaml`), read as the
    trainer's."""
    target = _written_file(command)
    if (command and PYTHONS.fullmatch(command[0]) and command[1:2] in ([], ["-"])) or (
            target is not None and target.endswith(".py")):
        yield from _python(body, cwd)
        return
    if target is None or not target.endswith(_CONFIG_SUFFIXES):
        return
    data = _config(body, target)
    if isinstance(data, dict):
        name = posixpath.basename(target)
        for key, value in data.items():
            if isinstance(key, str):
                yield key, value, f"`{key}` in its config `{name}`", cwd


def _written_file(command: list[str]) -> str | None:
    """The file `cat > FILE` or `tee FILE` writes."""
    if command[:1] == ["tee"]:
        files = [word for word in command[1:] if not word.startswith("-")]
        return files[0] if files else None
    return _redirected(command) if command[:1] == ["cat"] else None


def _redirected(command: list[str]) -> str | None:
    """The file a command's output goes to (shlex keeps `>file` as one word)."""
    for index, word in enumerate(command):
        if word in (">", ">|") and index + 1 < len(command):
            return command[index + 1]
        if word.startswith(">") and len(word) > 1:
            return word.lstrip(">|")
    return None


def _reads_whole(command: list[str]) -> bool:
    """Whether a command is `read -d '' NAME` (`-rd ''`...): the whole heredoc into a
    variable (without `-d ''`, `read` takes its first line only)."""
    return command[:1] == ["read"] and len(command) > 2 and any(
        flag.startswith("-") and flag.endswith("d") and delimiter == ""
        for flag, delimiter in itertools.pairwise(command[1:-1]))


def _program_written(command: list[str], held: dict[str, str]) -> str | None:
    """The heredoc a `printf` or `echo` writes to a `.py` file from the variable that
    holds it (`printf "%s" "$SCRIPT" > "train.py"`), if it does."""
    target = _redirected(command)
    if target is None or not target.endswith(".py"):
        return None
    for word in command[1:]:
        name = word[2:-1] if word.startswith("${") and word.endswith("}") else word[1:]
        if word.startswith("$") and name in held:
            return held[name]
    return None


def _decoded(command: list[str], fed: list[str] | None) -> str | None:
    """The program `base64 -d > train.py` writes from the text `echo` or `printf` pipes to
    it (`echo aW1w... | base64 -d > /tmp/train.py`: a program shipped in the command)."""
    if command[:1] != ["base64"] or not {"-d", "--decode", "-D"} & set(command) or (
            fed is None or fed[:1] not in (["echo"], ["printf"])):
        return None
    text = [word for word in fed[1:] if not word.startswith("-")][-1:]
    try:
        return base64.b64decode("".join(text), validate=True).decode() if text else None
    except (ValueError, UnicodeDecodeError):
        return None


def _config(body: str, name: str) -> Any:
    """A config file's data, or None when it does not parse (a template, say), nests
    deeper than the parsers go, or reaches a list or mapping twice (`_tree`)."""
    import yaml

    try:
        data = json.loads(body) if name.endswith(".json") else yaml.load(
            body, Loader=yaml.CSafeLoader)
    except (ValueError, yaml.YAMLError, RecursionError):
        return None
    return data if _tree(data) else None


def _tree(data: Any) -> bool:
    """Whether parsed data reaches no list or mapping twice. YAML aliases share them, and
    a few lines of aliases nesting aliases (a "billion laughs") make a value of billions
    of items for whatever reads it whole (`str` of a setting's value)."""
    seen: set[int] = set()
    todo = [data]
    while todo:
        item = todo.pop()
        if isinstance(item, dict | list):
            if id(item) in seen:
                return False
            seen.add(id(item))
            todo.extend(item.values() if isinstance(item, dict) else item)
    return True


def _word_settings(words: list[str], cwd: str | None) -> Iterator[Found]:
    """The settings of a command's words after the program."""
    for index in range(1, len(words)):
        following = words[index + 1] if index + 1 < len(words) else None
        yield from _word_setting(words[index], following, cwd)


def _word_setting(word: str, following: str | None, cwd: str | None) -> Iterator[Found]:
    """A flag (`--key value`, `--key=value`, a bare `--key`) or an override (`key=value`)."""
    if word.startswith("--") and len(word) > 2:
        name, equals, value = word[2:].partition("=")
        if equals:
            yield name, value, f"flag --{name}", cwd
        else:
            given = following if following is not None and not following.startswith("-") else None
            yield name, given, f"flag --{name}", cwd
    elif not word.startswith("-") and _OVERRIDE.fullmatch(word):
        name, _, value = word.partition("=")
        yield name, value, f"arg {name}", cwd


_OVERRIDE = re.compile(r"[A-Za-z_][\w.]*=.*", re.DOTALL)


@lru_cache(maxsize=16)
def syntax(code: str) -> ast.Module | None:
    """A Python program's syntax tree; None when it does not parse, nor when it nests
    deeper than Python's parser goes (which says so with a MemoryError or a
    RecursionError). Kept for the few programs last read: the settings, the variables
    and the launchers of one program are read close together, from one parse where
    each took its own (the three reads of a 4,000-line program: 0.27 s, 0.35 s before)."""
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


@lru_cache(maxsize=1024)
def _python_keywords(code: str) -> tuple[tuple[str, Any], ...]:
    """The literal keyword arguments of every call in a Python program (`output_dir="/x"`);
    nothing when it does not parse (`syntax`)."""
    tree = syntax(code)
    if tree is None:
        return ()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg is None:
                    continue
                try:
                    value = ast.literal_eval(keyword.value)
                except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                    continue
                found.append((keyword.arg, value))
    return tuple(found)


def _python(code: str, cwd: str | None, path: str | None = None) -> Iterator[Found]:
    """The keyword settings of a program, said to be in the mounted file `path` where a
    command names one (the evidence a finding gives)."""
    where = its_program(path)
    for key, value in _python_keywords(code):
        yield key, value, f"`{key}=` in {where}", cwd


def truth(setting: Setting) -> bool | None:
    """A setting as a boolean: a bare flag is true; `true`/`false` (any case), `1`/`0` and
    Python or YAML booleans are read as such; anything else is unknown."""
    value = setting.value
    if value is None and setting.origin.startswith("flag "):
        return True
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    return {"true": True, "1": True, "false": False, "0": False}.get(text)


def written_by(found: Script, key: str, manifest: object) -> Setting | None:
    """The last setting of `key` that `manifest` wrote (a TrainJob reports only its own)."""
    setting = found.get(key)
    return setting if setting is not None and setting.at.manifest is manifest else None


_HOSTFILE = re.compile(r"(?:^|\s)--?(?:hostfile|machinefile)[ =]+([^\s;&|]+)")
_HOSTFILE_FLAG = re.compile(r"--?(?:hostfile|machinefile)")


def hostfile(found: Script) -> str | None:
    """The hostfile the command passes `mpirun` (`-hostfile F`, `--hostfile=F`, `--hostfile`
    then `F`), even from inside a variable (`MPIARGS="-np 2 -hostfile /tmp/hosts"`)."""
    words = [word for word, _ in found.words]
    for index, word in enumerate(words):
        match = _HOSTFILE.search(word)
        if match:
            return match[1].strip("\"'")
        if _HOSTFILE_FLAG.fullmatch(word) and index + 1 < len(words):
            return words[index + 1]
    return None


# --- what the command line says about a torch rendezvous ---

_TORCHRUN = re.compile(r"(?:.*/)?torchrun")
_TORCH_LAUNCHERS = frozenset({"torch.distributed.run", "torch.distributed.launch"})


def flag(found: Script, *names: str) -> Setting | None:
    """The last flag of any of `names` (`master_addr` also matches `--master-addr`)."""
    wanted = {name.replace("-", "_") for name in names}
    return next(
        (
            setting for setting in reversed(found.settings)
            if setting.origin.startswith("flag ") and setting.key.replace("-", "_") in wanted
        ),
        None,
    )


def torchrun(found: Script) -> tuple[str, Origin] | None:
    """The word by which the command starts torch's launcher (`torchrun`, or the module
    of `python -m torch.distributed.run`), with where it was written."""
    words = found.words
    for index, (word, at) in enumerate(words):
        if _TORCHRUN.fullmatch(word):
            return word, at
        if word == "-m" and index + 1 < len(words) and words[index + 1][0] in _TORCH_LAUNCHERS:
            return words[index + 1]
    return None


#: What torchrun sets for each worker it starts (from the plugin's `PET_*` variables).
TORCHRUN_SETS = frozenset({
    "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "GROUP_WORLD_SIZE",
    "ROLE_RANK", "ROLE_WORLD_SIZE", "ROLE_NAME", "MASTER_ADDR", "MASTER_PORT",
    "TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS",
})


def runs_torchrun(found: Script) -> bool:
    """Whether the command starts torch's launcher (`torchrun`)."""
    return torchrun(found) is not None


def own_rendezvous(found: Script) -> Setting | None:
    """The flag by which torchrun is given its own rendezvous host (`--master_addr`,
    `--rdzv_endpoint`, or `--standalone`, which rendezvouses on localhost): it then does
    not read the `PET_MASTER_ADDR` the plugin injects."""
    if not runs_torchrun(found):
        return None
    return flag(found, "master_addr", "rdzv_endpoint", "standalone")


def static_rendezvous(found: Script) -> bool:
    """Whether the command runs torchrun with the static rendezvous (its default), which a
    restarted rank cannot rejoin; `--rdzv_backend c10d` (or etcd) re-forms the group."""
    if not runs_torchrun(found):
        return False
    backend = flag(found, "rdzv_backend")
    return backend is None or str(backend.value).lower() == "static"


#: What shows a trainer resuming from what its output directory holds: Hugging Face's
#: `get_last_checkpoint` or a `resume_from_checkpoint` that is not off, or a `--resume` flag.
_RESUMES = re.compile(
    r"get_last_checkpoint|resume_from_checkpoint(?!\s*[=:]\s*(?:False|false|None|null)\b)"
    r"|--resume\b|--auto[-_]resume\b"
)


def _reads(variable: str) -> re.Pattern[str]:
    """A program reading a variable's value: Python's `os.environ["NAME"]`,
    `environ.get("NAME")`, `getenv("NAME")`; a shell's `$NAME`, `${NAME}`; Kubernetes'
    `$(NAME)` (a name in a comment is no read)."""
    return re.compile(
        rf"""(?:environ(?:\.get)?\s*[\[(]\s*|getenv\s*\(\s*)["']{variable}["'][\])]?"""
        rf"|\$\{{?{variable}\b|\$\({variable}\)"
    )


@cache
def _xgboost_patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """An XGBoost worker's rank read, the workers the tracker waits for read, and what
    shows a command starting workers of its own in a pod (one per GPU), each with a rank
    it works out: processes, forks, pools, executors and threads, Ray and Dask, a shell's
    background jobs or `xargs -P`, the launchers that start a process per device, the
    GPUs split by hand. Compiled when an XGBoost command is first read (0.8 ms, on every
    run that imported them)."""
    own = re.compile(
        r"multiprocessing|\bProcess\(|Pool|Executor|Thread|\bfork\b|\bspawn|subprocess"
        r"|os\.system|\bpopen|\bparallel\b|(?:^|[^a-z])ray\b|\bdask|LOCAL_RANK|local_rank"
        r"|CUDA_VISIBLE_DEVICES|\bmpirun\b|\btorchrun\b|torch\.distributed\.(?:run|launch)"
        r"|\baccelerate\s+launch|\bdeepspeed\b|(?<![&>|])&(?![&>])|\bxargs\b[^\n]*\s-P",
        re.IGNORECASE,
    )
    return _reads("DMLC_TASK_ID"), _reads("DMLC_NUM_WORKER"), own


#: A line that is a comment of a shell or of Python: what it names is not run.
_COMMENT_LINE = re.compile(r"^[ \t]*#[^\n]*$", re.MULTILINE)


def task_rank(found: Script) -> str | None:
    """What in the command takes `DMLC_TASK_ID` as the rank of the pod's one XGBoost
    worker, with the tracker waiting for `DMLC_NUM_WORKER`: both are read (not in a
    comment line), and no workers of the command's own are started."""
    task_rank_read, workers_read, own_workers = _xgboost_patterns()
    texts = [_COMMENT_LINE.sub("", text) for text in found.texts]
    if any(own_workers.search(text) for text in texts):
        return None
    if not any(workers_read.search(text) for text in texts):
        return None
    return next((match[0] for text in texts if (match := task_rank_read.search(text))), None)


def resumes(found: Script) -> str | None:
    """What in the command shows the trainer resumes from an existing checkpoint."""
    return _first_match(found, _RESUMES)


def _first_match(found: Script, pattern: re.Pattern[str]) -> str | None:
    """The first text of the command as written that `pattern` finds, if any."""
    for text in found.texts:
        match = pattern.search(text)
        if match:
            return match[0]
    return None


# --- what an inline Python program needs of its environment ---


class Need(NamedTuple):
    """A variable an inline Python program fails without, with the read as written and
    the error the program stops with when the variable is unset."""

    name: str
    text: str
    error: str


#: The variables torch's `env://` rendezvous reads, in its order (`rank=` and
#: `world_size=` spare the first two).
_ENV_RENDEZVOUS = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
#: What changes a program's environment by names not written where they are given.
_ENVIRON_CHANGES = frozenset({"update", "putenv", "clear", "pop", "popitem", "__setitem__"})


@lru_cache(maxsize=1024)
def environ_needs(code: str) -> tuple[Need, ...]:
    """The variables a Python program cannot run without, in the order written: read by
    subscript (`os.environ["RANK"]`: KeyError), converted without a default
    (`int(os.getenv("RANK"))`: TypeError), or read by torch's `env://` rendezvous
    (`dist.init_process_group("nccl")`: ValueError). Not one read in a `try` that
    handles errors, under a test of the environment (`if os.getenv(...)`), in a function
    the program never names, nor a variable it tests for (`"RANK" in os.environ`) or
    sets; none at all when it changes its environment by names not written
    (`os.environ.update(...)`, `|=`, `setdefault` of a name computed, `load_dotenv()`),
    or does not parse."""
    tree = syntax(code)
    if tree is None:
        return ()
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    spared: set[str] = set()
    found: list[tuple[ast.expr, str, str]] = []
    for node in ast.walk(tree):
        test = _test_of(node)
        if test is not None and _reads_environ(test):  # `if "RANK" not in os.environ: exit()`
            spared.update(filter(None, map(_constant, ast.walk(test))))
        if isinstance(node, ast.AugAssign) and _environ(node.target):
            return ()  # `os.environ |= {...}`
        if isinstance(node, ast.Compare) and _environ(node.comparators[-1]):
            spared.add(_constant(node.left) or "")
        elif isinstance(node, ast.Subscript) and _environ(node.value):
            key = _constant(node.slice)
            if key is None and not isinstance(node.ctx, ast.Load):
                return ()
            if key is not None:
                if isinstance(node.ctx, ast.Load):
                    found.append((node, key, f"KeyError: '{key}'"))
                else:
                    spared.add(key)
        elif isinstance(node, ast.Call):
            needs = _call_needs(node, spared)
            if needs is None:
                return ()
            found.extend(needs)
    named = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)} | {
        node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    found.sort(key=lambda item: (item[0].lineno, item[0].col_offset))
    lines = code.encode().splitlines(keepends=True)  # once: a segment of each read re-split
    return tuple(                                      # the program (a minute for 4,000)
        Need(key, " ".join((_segment(lines, node) or key).split()), error)
        for node, key, error in found
        if key not in spared and not _guarded(node, parents, named)
    )


def _segment(lines: list[bytes], node: ast.expr) -> str | None:
    """The text of a node, from the program's lines (its offsets count UTF-8 bytes)."""
    if node.end_lineno is None or node.end_col_offset is None or node.lineno > len(lines):
        return None
    if node.lineno == node.end_lineno:
        return lines[node.lineno - 1][node.col_offset:node.end_col_offset].decode(
            errors="replace")
    first = lines[node.lineno - 1][node.col_offset:]
    last = lines[node.end_lineno - 1][:node.end_col_offset]
    return b"".join([first, *lines[node.lineno:node.end_lineno - 1], last]).decode(
        errors="replace")


def _test_of(node: ast.AST) -> ast.AST | None:
    """What decides whether a statement's body runs: an `if` or `while` test, the subject
    of a `match`."""
    return node.subject if isinstance(node, ast.Match) else getattr(node, "test", None)


def _call_needs(call: ast.Call, spared: set[str]) -> list[tuple[ast.expr, str, str]] | None:
    """What a call needs of the environment, with the error it raises without it; None
    when it changes the environment by names not written. What it sets goes to `spared`
    (`os.environ.setdefault("RANK", "0")`)."""
    called = _called(call)
    of_environ = _environ(getattr(call.func, "value", None))
    if called in ("putenv", "load_dotenv") or (called in _ENVIRON_CHANGES and of_environ):
        return None
    if called == "setdefault" and of_environ:
        key = _constant(call.args[0] if call.args else None)
        if key is None:
            return None  # names not written (`for k, v in ...: os.environ.setdefault(k, v)`)
        spared.add(key)
    elif called in ("int", "float") and len(call.args) == 1:
        key = _read_without_default(call.args[0])
        if key is not None:
            return [(call, key, f"TypeError: {called}() argument must be ..., not 'NoneType'")]
    elif called == "init_process_group":
        return [(call, key, (
            "ValueError: Error initializing torch.distributed using env:// rendezvous: "
            f"environment variable {key} expected, but not set"))
            for key in _env_rendezvous(call)]
    return []


def _constant(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _called(call: ast.Call) -> str | None:
    """The name a call is made by (`getenv` of `os.getenv(...)`)."""
    return last_name(call.func)


def last_name(node: ast.AST) -> str | None:
    """The last name of a dotted name (`getenv` of `os.getenv`, `SIGTERM` of
    `signal.SIGTERM`)."""
    return node.id if isinstance(node, ast.Name) else (
        node.attr if isinstance(node, ast.Attribute) else None)


def _environ(node: ast.AST | None) -> bool:
    """Whether an expression is the environment (`os.environ`, `environ`)."""
    return (isinstance(node, ast.Name) and node.id == "environ") or (
        isinstance(node, ast.Attribute) and node.attr == "environ")


def _environ_get(call: ast.Call, arguments: int) -> bool:
    """Whether a call is `os.getenv(...)` or `os.environ.get(...)` with `arguments`
    positional arguments and no keyword."""
    if len(call.args) != arguments or call.keywords:
        return False
    called = _called(call)
    return called == "getenv" or (called == "get" and _environ(getattr(call.func, "value", None)))


def _read_without_default(node: ast.expr) -> str | None:
    """The variable `os.getenv("NAME")` or `os.environ.get("NAME")` reads, given no
    default (it is then None when unset)."""
    if isinstance(node, ast.Call) and _environ_get(node, 1):
        return _constant(node.args[0])
    return None


@lru_cache(maxsize=256)
def environ_defaults(code: str) -> tuple[tuple[str, str], ...]:
    """The variables a Python program reads with a literal string default, and the
    default (`os.environ.get("CKPT_DIR", "/mnt/ckpt")`, `os.getenv("OUT", "/out")`): what
    it uses when the container does not set them."""
    tree = syntax(code)
    if tree is None:
        return ()
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _environ_get(node, 2):
            name, default = _constant(node.args[0]), _constant(node.args[1])
            if name is not None and default is not None:
                found.setdefault(name, default)
    return tuple(found.items())


def _env_rendezvous(call: ast.Call) -> tuple[str, ...]:
    """What `init_process_group(...)` reads from the environment: torch's `env://`
    rendezvous, its default, reads `RANK` and `WORLD_SIZE` (unless given) and
    `MASTER_ADDR` and `MASTER_PORT`. Nothing when it is given a `store`, another
    `init_method`, or arguments not written (`**kwargs`, an `init_method` by position)."""
    keywords = {keyword.arg: keyword.value for keyword in call.keywords}
    if None in keywords or "store" in keywords or len(call.args) > 1:
        return ()
    method = keywords.get("init_method")
    if method is not None and not (_constant(method) or "").startswith("env://"):
        return ()
    query = (_constant(method) or "").partition("?")[2]
    return tuple(
        name for name in _ENV_RENDEZVOUS
        if name.lower() not in keywords and f"{name.lower()}=" not in query
    )


def _guarded(node: ast.AST, parents: dict[ast.AST, ast.AST], named: set[str]) -> bool:
    """Whether a read may not run, or not fail the program: in a `try` that handles
    errors or under `contextlib.suppress`, under or beside a test that reads the
    environment (`if "WORLD_SIZE" in os.environ:`, `match os.getenv("RANK"):`,
    `os.getenv("RANK") and ...`), or in a function the program never names (a method
    `__init__`: its class)."""
    child, parent = node, parents.get(node)
    while parent is not None:
        if isinstance(parent, ast.Try | ast.TryStar) and parent.handlers and child in parent.body:
            return True
        if isinstance(parent, ast.With) and any(
                isinstance(item.context_expr, ast.Call) and _called(item.context_expr)
                == "suppress" for item in parent.items):
            return True  # `with contextlib.suppress(KeyError):`
        test = _test_of(parent)
        tests = [test] if test is not None and child is not test else []
        if isinstance(parent, ast.BoolOp):
            tests = [value for value in parent.values if value is not child]
        if any(_reads_environ(part) for part in tests):
            return True
        if isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef):
            owner = parents.get(parent)
            dunder = parent.name.startswith("__") and isinstance(owner, ast.ClassDef)
            if (owner.name if dunder and isinstance(owner, ast.ClassDef)
                    else parent.name) not in named:
                return True
        child, parent = parent, parents.get(parent)
    return False


def _reads_environ(node: ast.AST) -> bool:
    return any(_environ(part) or (isinstance(part, ast.Call) and _called(part) == "getenv")
               for part in ast.walk(node))


#: Programs that start others in processes of their own, each maybe with variables of its
#: own (the launchers of torch, Hugging Face, DeepSpeed, MPI, Slurm, Ray...), and what
#: makes a shell's variables unknown (`source`, `eval`).
_LAUNCHERS = frozenset({
    "torchrun", "accelerate", "deepspeed", "mpirun", "mpiexec", "orterun", "prterun",
    "srun", "jsrun", "aprun", "horovodrun", "llamafactory-cli", "lmf", "tune", "composer",
    "torchx", "colossalai", "lightning", "fabric", "ray", "parallel", "xargs",
    "source", ".", "eval",
})


@cache
def _launching_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The modules that start processes (or launch a program), and the calls that do:
    compiled when a command with a Python program is first read (0.5 ms, on every start
    otherwise)."""
    modules = re.compile(
        r"(?:torch\.distributed\.(?:run|launch|launcher|elastic)|torch\.multiprocessing"
        r"|multiprocessing|subprocess|concurrent|accelerate|deepspeed|ray|lightning"
        r"|pytorch_lightning|horovod|ignite|submitit|dask|mpi4py)(?:\..*)?"
    )
    calls = re.compile(
        r"Popen|system|spawn\w*|exec[lv]p?e?|fork|start_processes|elastic_launch|launch_agent"
        r"|notebook_launcher|debug_launcher|Process|Pool|\w*Executor"
    )
    return modules, calls


def launcher(found: Script) -> str | None:
    """What in the command may start its Python programs in processes of their own, or
    give them variables trainlint does not see: a launcher among the shell's words (or
    the module `python -m` runs, `source`, `eval`), or a module that starts processes or a
    call that does in one of its programs (`subprocess`, `mp.spawn`, `os.execvp`)."""
    modules = _launching_patterns()[0]
    previous = ""
    for word, _ in found.words:
        if posixpath.basename(word) in _LAUNCHERS or (" " not in word and modules.fullmatch(word)):
            return word
        if previous in _BUILTINS and word.startswith("$"):
            return previous  # `export $(cat vars.env)`: names not written
        previous = word
    for code, _ in found.programs:
        named = _launching(code)
        if named is not None:
            return named
    return None


@lru_cache(maxsize=1024)
def _launching(code: str) -> str | None:
    """The module a program imports, or the call it makes, that starts processes."""
    tree = syntax(code)
    if tree is None:
        return None
    launching, calls = _launching_patterns()
    for node in ast.walk(tree):
        modules = [alias.name for alias in node.names] if isinstance(node, ast.Import) else (
            [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        match = next((module for module in modules if launching.fullmatch(module)), None)
        if match is not None:
            return match
        if isinstance(node, ast.Call):
            called = _called(node)
            if called is not None and calls.fullmatch(called):
                return called
    return None


#: A word that is an environment variable's name alone (upper case, as they are written).
_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")


def assigned(found: Script) -> frozenset[str]:
    """The variables the command's shell sets (`export RANK=0`, `RANK=$i python ...`), or
    names as a word of its own (`read RANK`, `export RANK`, `for RANK in ...`, `printf -v
    RANK`): the script has them in hand, from where trainlint does not follow."""
    return frozenset(word.partition("=")[0] for word, _ in found.words
                     if ASSIGNMENT.fullmatch(word) or _NAME.fullmatch(word))
