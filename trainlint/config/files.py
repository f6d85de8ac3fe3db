"""Configuration files, and which files a run reads.

A file's configuration is the nearest `.trainlint.toml`, `.trainlint.yaml` or
`pyproject.toml` with a `[tool.trainlint]` table, walking up from its folder; files are
never merged (as in ruff), and command-line options are a last layer on top. Paths in a
configuration (`exclude`, `per-file-ignores`) are gitignore patterns relative to its folder;
`context` names files and folders relative to it.
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from trainlint.config import kept
from trainlint.config.builders import CHART, KUSTOMIZATION_NAMES
from trainlint.config.defaults import DEFAULT_CACHE_DIR, DEFAULTS
from trainlint.config.settings import Settings
from trainlint.errors import ConfigError
from trainlint.options import RuleOptions
from trainlint.problem import Severity
from trainlint.release import parse_version
from trainlint.rule import did_you_mean_rule, find_rule, listed_rules, matches

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

#: Looked for in each folder, in this order; the first one that configures trainlint wins.
CONFIG_NAMES = (".trainlint.toml", ".trainlint.yaml", "pyproject.toml")
#: Extensions read when walking a folder; files named on the command line are always read.
EXTENSIONS = (".yaml", ".yml", ".json")
#: The files whose change may change which files are checked, and how (a kustomization
#: names files that are patches, a Helm chart holds templates: not objects).
CONFIG_FILES = frozenset({*CONFIG_NAMES, ".gitignore", *KUSTOMIZATION_NAMES, CHART})
DEFAULT = "default"
#: An exclude pattern that is a folder name alone: it matches folders of that name anywhere.
_FOLDER_NAME = re.compile(r"[^/*?\[\]!#\\\s]+/")
COMMAND_LINE = "command line"


class Layer(NamedTuple):
    """The keys of one file (or of the command line) and where they came from."""

    origin: str
    #: The keys it sets, validated, by their kebab-case names (see `trainlint.config.keys`).
    keys: dict[str, Any]
    #: The folder patterns in this layer are relative to.
    root: Path
    #: Where each key is written, for messages (`pyproject.toml: tool.trainlint.`).
    prefix: str = ""

    @property
    def file(self) -> str:
        """The origin as a message about one of its keys names it (the key holds the table)."""
        return self.origin.removesuffix(" [tool.trainlint]")


@dataclass(frozen=True)
class Configuration:
    """The configuration of a set of files: their Settings and how files are selected."""

    path: Path | None
    root: Path
    settings: Settings
    exclude: tuple[str, ...]
    respect_gitignore: bool
    #: Where findings of unchanged files are kept between runs.
    cache_dir: Path
    #: Files and folders whose objects are known but not checked (absolute paths).
    context: tuple[str, ...]
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...]
    #: key → (effective value, where it came from), for `trainlint config`.
    values: dict[str, tuple[Any, str]]
    _per_file: dict[tuple[str, ...], Settings] = field(default_factory=dict, repr=False)

    @cached_property
    def _excludes(self) -> tuple[frozenset[str], GitIgnoreSpec | None]:
        """Plain folder names (`node_modules/`), matched as path parts, and a spec of the
        other patterns: the defaults need no pathspec, whose import costs a sixth of a
        start. With a negation (`!`) every pattern goes to the spec, which knows order."""
        if any(pattern.startswith("!") for pattern in self.exclude):
            return frozenset(), _spec(self.exclude)
        names = {pattern for pattern in self.exclude if _FOLDER_NAME.fullmatch(pattern)}
        others = [pattern for pattern in self.exclude if pattern not in names]
        return frozenset(name[:-1] for name in names), _spec(others)

    @cached_property
    def _ignore_specs(self) -> list[tuple[GitIgnoreSpec, tuple[str, ...]]]:
        specs = []
        for pattern, codes in self.per_file_ignores:
            spec = _spec([pattern])
            if spec is not None:
                specs.append((spec, codes))
        return specs

    def relative(self, path: str | Path) -> str | None:
        """`path` relative to the configuration's folder, None when outside it."""
        return _relative(_absolute_text(path), self.root)

    @property
    def excludes_files(self) -> bool:
        """Whether a pattern may exclude a file of a folder that is not excluded itself
        (folder names alone cannot: a walk skips excluded folders)."""
        return self._excludes[1] is not None

    def excluded(self, path: str | Path, *, folder: bool = False) -> bool:
        relative = self.relative(path)
        if relative is None:
            return False
        names, spec = self._excludes
        folders = relative.split("/") if folder else relative.split("/")[:-1]
        if not names.isdisjoint(folders):
            return True
        return spec is not None and spec.match_file(relative + "/" if folder else relative)

    def settings_for(self, path: str | Path) -> Settings:
        """The settings of one file: `per-file-ignores` added to `ignore`."""
        if not self.per_file_ignores:
            return self.settings
        relative = self.relative(path)
        extra: tuple[str, ...] = ()
        if relative is not None:
            for spec, codes in self._ignore_specs:
                if spec.match_file(relative):
                    extra += codes
        if not extra:
            return self.settings
        if extra not in self._per_file:
            self._per_file[extra] = replace(self.settings, ignore=self.settings.ignore + extra)
        return self._per_file[extra]


def _spec(patterns: Sequence[str]) -> GitIgnoreSpec | None:
    if not patterns:
        return None
    from pathspec import GitIgnoreSpec

    return GitIgnoreSpec.from_lines(patterns)


# --- reading files ---


def read_layer(path: Path, *, keep: bool = False) -> Layer | None:
    """The trainlint keys of a configuration file; None for a pyproject.toml without them.
    `keep`: what they validate to is kept in the cache folder they name (`config.kept`)."""
    shown = _shown(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{shown}: cannot read the configuration: {error}") from None
    prefix = ""
    if path.name == "pyproject.toml" and not re.search(_TOOL_TABLE, text):
        return None  # another project's, maybe a template no TOML reader takes (cookiecutter)
    if path.suffix == ".toml":
        data = _toml(text, shown)
        if path.name == "pyproject.toml":
            table = data.get("tool", {})
            if not isinstance(table, dict) or "trainlint" not in table:
                return None
            data, prefix = table["trainlint"], "tool.trainlint."
    else:
        data = _yaml(text, shown)
    if not isinstance(data, dict):
        raise ConfigError(f"{shown}: {prefix.rstrip('.') or 'the file'} must be a table of keys")
    origin = f"{shown} [tool.trainlint]" if prefix else shown
    named = data.get("cache-dir")
    folder = path.parent / (named if isinstance(named, str) else DEFAULT_CACHE_DIR)
    keys = kept.validated(
        folder if keep else None, f"{path.name}\n{text}", lambda: validate(data, shown, prefix)
    )
    return Layer(origin, keys, path.parent.resolve(), prefix)


#: How a `pyproject.toml` gives trainlint keys: a `[tool.trainlint]` table (or one under
#: it), dotted keys `tool.trainlint.x = `, or `trainlint = ...` and `trainlint.x = ` under
#: `[tool]`. One that names trainlint otherwise (a comment, a dependency) is not read.
#: (A string: `re` compiles it where a `pyproject.toml` is met, 0.3 ms.)
_TOOL_TABLE = (
    r"""(?m)^[ \t]*(?:\[[ \t]*tool[ \t]*\.[ \t]*["']?trainlint|tool[ \t]*\.[ \t]*["']?trainlint"""
    r"""["']?[ \t]*[.=]|["']?trainlint["']?[ \t]*(?:=(?!=)|\.))""")


def validate(data: dict[str, Any], where: str, prefix: str = "") -> dict[str, Any]:
    """The keys `data` sets, validated (kebab-case, only those given); every error names
    `where` and the key, and is raised as ConfigError."""
    if not data:
        return {}  # nothing to validate: no need for pydantic
    from trainlint.config import keys

    return keys.validate(data, where, prefix)


def _toml(text: str, shown: str) -> dict[str, Any]:
    import tomllib

    try:
        return tomllib.loads(text)
    except RecursionError:
        raise ConfigError(f"{shown}: invalid TOML: nested too deeply to read") from None
    except tomllib.TOMLDecodeError as error:
        match = re.search(r"\(at line (\d+), column (\d+)\)", str(error))
        where = f"{shown}:{match[1]}:{match[2]}" if match else shown
        detail = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(error))
        raise ConfigError(f"{where}: invalid TOML: {detail}") from None


def _yaml(text: str, shown: str) -> Any:
    import yaml

    class Loader(yaml.SafeLoader):
        """Refuses a key written twice in one mapping, where YAML loaders keep the last
        value silently (a second `select:` would undo the first)."""

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[object] = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                if isinstance(key, str | int | float | bool) and key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key `{key}`: one of its values would be lost",
                        key_node.start_mark)
                seen.add(key)
            return super().construct_mapping(node, deep)

    try:
        return yaml.load(text, Loader=Loader) or {}
    except RecursionError:
        raise ConfigError(f"{shown}: invalid YAML: nested too deeply to read") from None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        where = f"{shown}:{mark.line + 1}:{mark.column + 1}" if mark else shown
        raise ConfigError(f"{where}: invalid YAML: {error.problem}") from None
    except yaml.YAMLError as error:
        raise ConfigError(f"{shown}: invalid YAML: {error}") from None


def _absolute(path: str | Path) -> Path:
    """An absolute, normalised path; symbolic links are kept, as the user named them."""
    return Path(_absolute_text(path))


def _absolute_text(path: str | Path) -> str:
    """`_absolute` as a string: this runs for every file of a large tree, and string
    operations cost a tenth of Path objects."""
    text = os.fspath(path)
    if not os.path.isabs(text):  # noqa: PTH117
        text = os.path.join(os.getcwd(), text)  # noqa: PTH109, PTH118
    return os.path.normpath(text)


def _relative(path: str, root: Path) -> str | None:
    """`path` (absolute) relative to `root` as a POSIX string, None when outside it."""
    text, prefix = path, str(root)
    if text == prefix:
        return "."
    prefix = prefix.rstrip(os.sep) + os.sep
    return text[len(prefix):].replace(os.sep, "/") if text.startswith(prefix) else None


def _shown(path: Path) -> str:
    """A path as messages show it: relative to the working folder when inside it."""
    try:
        return _absolute(path).relative_to(Path.cwd()).as_posix()
    except ValueError:
        return str(path)


# --- combining layers ---


def resolve(path: Path | None, root: Path, layers: Sequence[Layer]) -> Configuration:
    """Defaults, then each layer: lists that extend (`extend-select`, `ignore`,
    `extend-exclude`, `context`) add up, tables merge by key, every other key is replaced."""
    values: dict[str, tuple[Any, str]] = {
        name: (copy.deepcopy(value), DEFAULT) for name, value in DEFAULTS.items()
    }
    for layer in layers:
        for name, given in layer.keys.items():
            old, origin = values[name]
            origin = layer.origin if origin == DEFAULT else f"{origin}, {layer.origin}"
            if name in {"extend-select", "ignore", "extend-exclude"}:
                values[name] = ([*old, *given], origin)
            elif name == "context":  # each layer's paths are relative to its own folder
                values[name] = ([*old, *(_absolute_text(layer.root / path) for path in given)],
                                origin)
            elif isinstance(given, dict):
                values[name] = ({**old, **given}, origin)
            else:
                values[name] = (given, layer.origin)
    options = {
        code: _options(code, table, layers)
        for code, table in _by_code(values["rules"][0]).items()
    }
    if options:
        from trainlint.config import keys

        values["rules"] = (
            {code: keys.dump_options(option) for code, option in options.items()},
            values["rules"][1],
        )
    value = {name: entry[0] for name, entry in values.items()}
    if not value["select"] and not value["extend-select"]:
        # Most often a list emptied by mistake; judged once the layers are merged, where
        # the command line's `--select` may replace a file's empty one.
        emptied = next(layer for layer in reversed(layers) if "select" in layer.keys)
        raise ConfigError(
            f"{emptied.file}: {emptied.prefix}select: names no rule, and no `extend-select` "
            "adds one: no rule would run (to check no file here, `exclude` it)"
        )
    severities = {}
    for selector, severity in value["severity"].items():
        for code, rule in listed_rules().items():
            if matches(rule, [selector]):
                severities[code] = Severity(severity)
    settings = Settings(
        trainer_version=parse_version(value["trainer-version"]),
        kubernetes_version=value["kubernetes-version"],
        select=(*value["select"], *value["extend-select"]),
        ignore=tuple(value["ignore"]),
        severities=severities,
        rule_options=options,
        fail_on=Severity(value["fail-on"]),
        fixable=tuple(value["fixable"]),
        unfixable=tuple(value["unfixable"]),
        preview=value["preview"],
        device_resources=value["device-resources"],
        bundled_runtimes=value["bundled-runtimes"],
        docs_url=value["docs-url"],
    )
    return Configuration(
        path, root, settings,
        exclude=(*value["exclude"], *value["extend-exclude"]),
        respect_gitignore=value["respect-gitignore"],
        cache_dir=root / value["cache-dir"],
        context=tuple(dict.fromkeys(value["context"])),
        per_file_ignores=tuple(
            (pattern, tuple(codes)) for pattern, codes in value["per-file-ignores"].items()
        ),
        values=values,
    )


def _by_code(tables: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {(getattr(find_rule(key), "code", None) or key): table for key, table in tables.items()}


def _options(code: str, table: dict[str, Any], layers: Sequence[Layer]) -> RuleOptions:
    """A rule's options table, validated against the rule's options."""
    layer = next(layer for layer in reversed(layers) if layer.keys.get("rules"))
    origin = layer.file
    where = f"{origin}: {layer.prefix}rules.{code}"
    found = find_rule(code)
    if found is None:
        raise ConfigError(
            f"{where}: no rule has this code or name{did_you_mean_rule(code, exact=True)} "
            "(see `trainlint rules`)"
        )
    rule = found.load()
    if rule.options is None:
        raise ConfigError(f"{where}: {rule.code} ({rule.name}) takes no options")
    from trainlint.config import keys

    return keys.rule_options(rule, table, origin, f"{layer.prefix}rules.{code}.")


# --- finding each file's configuration ---


class Resolver:
    """Finds the configuration of each folder once, walking up to the nearest file."""

    def __init__(
        self, config: str | None = None, *, isolated: bool = False,
        overrides: dict[str, Any] | None = None, keep: bool = False,
        cache_dir: Path | None = None,
    ) -> None:
        """`keep`: what configurations validate to is kept in cache folders (`config.kept`),
        the command line's keys in its `cache_dir` or the working folder's default one."""
        given = overrides or {}
        folder = cache_dir or Path.cwd() / DEFAULT_CACHE_DIR
        keys = kept.validated(
            folder if keep and given else None, json.dumps(given, sort_keys=True),
            lambda: validate(given, COMMAND_LINE, "--"),
        )
        self._keep = keep
        self._cli = [Layer(COMMAND_LINE, keys, Path.cwd())]
        self._fixed: Configuration | None = None
        if isolated:
            self._fixed = resolve(None, Path.cwd(), self._cli)
        elif config is not None:
            path = Path(config)
            layer = read_layer(path, keep=keep) if path.is_file() else None
            if layer is None:
                raise ConfigError(f"{config}: no trainlint configuration in this file")
            self._fixed = resolve(path, layer.root, [layer, *self._cli])
        self._folders: dict[Path, Configuration] = {}

    def for_path(self, path: Path) -> Configuration:
        """The configuration of a file or folder."""
        if self._fixed is not None:
            return self._fixed
        absolute = _absolute(path)
        folder = absolute if absolute.is_dir() else absolute.parent
        walked = []
        found: Configuration | None = None
        for current in (folder, *folder.parents):
            if current in self._folders:
                found = self._folders[current]
                break
            walked.append(current)
            found = self._read_folder(current)
            if found is not None:
                break
        if found is None:
            found = resolve(None, Path.cwd(), self._cli)
        for current in walked:
            self._folders[current] = found
        return found

    def _read_folder(self, folder: Path) -> Configuration | None:
        for name in CONFIG_NAMES:
            candidate = folder / name
            if candidate.is_file():
                layer = read_layer(candidate, keep=self._keep)
                if layer is not None:
                    return resolve(candidate, folder, [layer, *self._cli])
        return None


def describe(configuration: Configuration) -> str:
    """The effective configuration as TOML, each key followed by where its value came from."""
    source = _shown(configuration.path) if configuration.path else "no configuration file"
    lines = [f"# trainlint configuration from {source}"]
    for key, (value, origin) in configuration.values.items():
        lines.append(f"{key} = {_toml_value(value)}  # {origin}")
    return "\n".join(lines) + "\n"


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        entries = [f"{json.dumps(key)} = {_toml_value(item)}" for key, item in value.items()]
        return "{ " + ", ".join(entries) + " }" if entries else "{}"
    return str(value)


def followed(path: str) -> bool:
    """Whether a change to the file at `path` may change what a run finds, for the
    watches of `check --watch` and the language server: a manifest or a configuration
    file, not one of the cache (wherever `cache-dir` puts it, its folder holds a
    CACHEDIR.TAG)."""
    file = Path(path)
    return (file.name.endswith(EXTENSIONS) or file.name in CONFIG_FILES) and not (
        file.parent / "CACHEDIR.TAG"
    ).exists()


def discover(paths: Sequence[str], resolver: Resolver) -> Iterator[str]:
    """The files to read: named files unless excluded; folders walked for manifest files,
    skipping hidden folders, excluded paths and, unless turned off, what git ignores."""
    for name in paths:
        path = Path(name)
        if name == "-":
            yield name
        elif path.is_dir():
            if not resolver.for_path(path).excluded(path, folder=True):
                yield from _walk(path, resolver)
        elif path.exists():
            if not resolver.for_path(path).excluded(path):
                yield name
        else:
            raise ConfigError(f"{name}: no such file or folder")


def context_files(roots: Sequence[str]) -> Iterator[str]:
    """The files of `context` folders and files (absolute paths), each once. `exclude` says
    what is not checked, not what is unknown: a project may exclude the runtimes it names
    as context. Hidden folders and what git ignores are skipped. ConfigError names a root
    that does not exist."""
    resolver = Resolver(isolated=True)
    for root in roots:
        if not os.path.exists(root):  # noqa: PTH110 - a string from the configuration
            raise ConfigError(f"{root}: no such file or folder (named in `context`)")
    yield from dict.fromkeys(discover(roots, resolver))


def _walk(top: Path, resolver: Resolver) -> Iterator[str]:
    ignores = _GitIgnores()
    for root, folders, files in os.walk(top):
        here = Path(root)
        config = resolver.for_path(here)
        specs = ignores.for_folder(here) if config.respect_gitignore else []
        kept = []
        for folder in sorted(folders):
            path = here / folder
            if not folder.startswith(".") and not resolver.for_path(path).excluded(
                path, folder=True
            ) and not _ignored(specs, path, folder=True):
                kept.append(folder)
        folders[:] = kept
        check = config.excludes_files
        # os.path.normpath(os.path.join(root, file)), normalized once per folder: a file's
        # name holds no separator.
        prefix = os.path.normpath(root)
        prefix = "" if prefix == "." else prefix if prefix.endswith(os.sep) else prefix + os.sep
        for file in sorted(files):
            if not file.endswith(EXTENSIONS):
                continue
            name = prefix + file
            if not (check and config.excluded(name)) and not _ignored(specs, name):
                yield name


class _GitIgnores:
    """The `.gitignore` files that apply to each folder: those of the repository above the
    walk (up to the folder holding `.git`) and those met on the way down."""

    def __init__(self) -> None:
        self._folders: dict[Path, list[tuple[Path, GitIgnoreSpec]]] = {}

    def for_folder(self, folder: Path) -> list[tuple[Path, GitIgnoreSpec]]:
        folder = _absolute(folder)
        if folder not in self._folders:
            above = folder.parent
            inherited = (
                self.for_folder(above)
                if above in self._folders or (_in_repository(folder) and above != folder)
                else []
            )
            own = folder / ".gitignore"
            specs = list(inherited)
            if own.is_file():
                spec = _spec(own.read_text(encoding="utf-8", errors="replace").splitlines())
                if spec is not None:
                    specs.append((folder, spec))
            self._folders[folder] = specs
        return self._folders[folder]


def _in_repository(folder: Path) -> bool:
    """Whether `folder` is inside a git work tree but not its top (whose parent is outside)."""
    return not (folder / ".git").exists() and any(
        (parent / ".git").exists() for parent in folder.parents
    )


def _ignored(
    specs: list[tuple[Path, GitIgnoreSpec]], path: str | Path, *, folder: bool = False
) -> bool:
    """gitignore semantics: the deepest `.gitignore` with a matching pattern decides."""
    if not specs:
        return False
    absolute = _absolute_text(path)
    for base, spec in reversed(specs):
        relative = f"{_relative(absolute, base)}{'/' if folder else ''}"
        result = spec.check_file(relative)
        if result.include is not None:
            return bool(result.include)
    return False
