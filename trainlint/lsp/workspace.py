"""The workspace as the language server checks it: open documents, the files of the
workspace folders, each file's configuration, and which document depends on which object.

A document is checked alone, with the objects of every other file as context: they
resolve its references (runtimes, PVCs, StorageClasses, the TrainJobs that share a
runtime) but are not reported on, so a document shows the findings `trainlint check` would
report in it. Context comes from `context_objects`: the files of the workspace folders
(open ones as the editor holds them, the others as on disk) and those their configurations
name as `context`, wherever they are and even when `exclude` leaves them unchecked, as
`trainlint check` reads them; the runtimes a release installs stand in for those that no
file defines, as in every run.

Each check records what its rules looked up in the index and the digest of each answer,
as the cache does (`Index.looked_up`); after any file changes, a document whose look-ups
now find other objects is checked again, so editing a runtime refreshes the TrainJobs
that use it and no other document. This module needs no protocol library: all of it runs
on the server's one worker thread.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import stat
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainlint.config.builders import Builders
from trainlint.config.defaults import DOCS_URL
from trainlint.config.files import Resolver, context_files, discover, validate
from trainlint.config.settings import Settings
from trainlint.document import Loaded, Manifest, Source, decode
from trainlint.engine.index import Index, identify
from trainlint.engine.run import Run, lint, unchecked_trainjobs
from trainlint.errors import ConfigError
from trainlint.files import read_bytes
from trainlint.finding import Finding
from trainlint.kinds import object_kind
from trainlint.loader import load
from trainlint.rule import Rule
from trainlint.run.cache import INDEXED_KINDS

log = logging.getLogger("trainlint.lsp")
#: Where a client's settings come from, as messages name them.
INITIALIZATION_OPTIONS = "initializationOptions"
SETTINGS = "workspace/didChangeConfiguration settings"
#: Settings of the server itself, beside the configuration keys.
_SERVER_KEYS = frozenset({"config", "isolated", "debounce"})


@dataclass(frozen=True)
class LspOptions:
    """How the server resolves settings: `trainlint check`'s `--config` and `--isolated`,
    configuration keys set on top of every file's configuration (`trainer-version`...),
    and how long a change waits for the next before it is checked."""

    config_file: str | None = None
    isolated: bool = False
    #: Configuration keys, kebab-case as in a configuration file.
    overrides: Mapping[str, Any] = field(default_factory=dict)
    #: Seconds a change waits for the next one before the document is checked.
    debounce: float = 0.02

    def updated(self, given: object, where: str = INITIALIZATION_OPTIONS) -> LspOptions:
        """These options with those a client sent (`where`: initializationOptions or
        settings; camelCase or kebab-case keys, optionally under `trainlint`); ConfigError
        names a key that is wrong."""
        if not isinstance(given, Mapping):
            return self
        table = given["trainlint"] if isinstance(given.get("trainlint"), Mapping) else given
        keys = {_kebab(str(key)): value for key, value in table.items()}
        server = {key: keys.pop(key) for key in _SERVER_KEYS & keys.keys()}
        validate(keys, where)
        debounce = server.get("debounce", self.debounce * 1000)
        if not isinstance(debounce, int | float) or isinstance(debounce, bool) or debounce < 0:
            raise ConfigError(f"{where}: debounce: milliseconds, 0 or more")
        config = server.get("config", self.config_file)
        if config is not None and not isinstance(config, str):
            raise ConfigError(f"{where}: config: a path")
        return LspOptions(
            config, bool(server.get("isolated", self.isolated)),
            {**self.overrides, **keys}, float(debounce) / 1000,
        )


def _kebab(key: str) -> str:
    """`trainerVersion` → `trainer-version`; kebab-case keys stay as they are."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"-\1", key).lower()


@dataclass
class _File:
    """What one file gives the others: the objects their rules may look up."""

    #: The digest of its text, part of each object's identity.
    content: str
    objects: list[Manifest]


@dataclass
class Checked:
    """The outcome of checking one open document's text."""

    text: str
    version: int | None
    loaded: Loaded
    findings: list[Finding]
    #: What its rules looked up (dependency → digest of the answer); None: not checked.
    dependencies: dict[str, str] | None
    #: Its TrainJobs whose runtime is found nowhere: not checked against it.
    unchecked: list[Manifest] = field(default_factory=list)
    #: The documentation site its findings link to (config `docs-url`).
    docs_url: str = DOCS_URL


class Workspace:
    """Open documents, the files of the workspace folders and their configuration."""

    def __init__(self, options: LspOptions, on_problem: Callable[[str], None]) -> None:
        #: Told of what stops a file from being checked, and of rules that raise.
        self.on_problem = on_problem
        self.options = options
        self.folders: list[Path] = []
        self._resolver: Resolver | None = None
        #: What kustomize and Helm build from (not checked, not looked up), read anew with
        #: the configuration (a kustomization and a `Chart.yaml` are `CONFIG_FILES`).
        self._builders = Builders()
        self._files: dict[str, _File] = {}
        #: Each file's place in the order the command line reads the workspace.
        self._order: dict[str, int] = {}
        #: The names of the files on disk the workspace holds (its folders' and the
        #: context's), as the last walk found them.
        self._on_disk: set[str] = set()
        #: Those of them only named as `context`: outside the folders, or excluded.
        self._context_names: set[str] = set()
        #: The `context` folders and files of the configurations, those that exist.
        self.context_roots: tuple[str, ...] = ()
        #: Open documents: name → their text as read, and its version.
        self._open: dict[str, tuple[Loaded, int | None]] = {}
        self._checked: dict[str, Checked] = {}
        self._index: Index | None = None
        self._context: list[Manifest] | None = None
        self._failures: set[str] = set()

    # --- what the workspace holds ---

    def configure(self, options: LspOptions, folders: Iterable[Path]) -> None:
        """Settings or folders changed: resolve configurations anew and walk the folders
        again; every open document is checked again by `stale`."""
        self.options = options
        self.folders = list(dict.fromkeys(folders))
        self._builders = Builders()
        try:
            self._resolver = Resolver(
                options.config_file, isolated=options.isolated, overrides=dict(options.overrides)
            )
        except ConfigError as error:
            self._resolver = None
            self.on_problem(str(error))
        for checked in self._checked.values():
            checked.dependencies = None
        self.rescan()

    def rescan(self) -> None:
        """Walk the folders and the context again: read new files and drop those gone
        (created or deleted files, a changed `.gitignore`, `exclude` or `context`)."""
        in_order = list(self._walk())
        walked = set(in_order)
        self._builders.read_among(in_order)
        in_order += [name for name in self._walk_context(walked) if name not in walked]
        context = set(in_order) - walked
        names = walked | context
        self._order = {name: number for number, name in enumerate(in_order)}
        self._index = self._context = None
        moved = self._context_names ^ context  # what they give others depends on it
        self._context_names = context
        for name in self._on_disk - names:
            if name not in self._open:
                self._forget(name)
        for name in (names - self._on_disk) | (moved & names):
            if name not in self._open:
                self._read(name)
        for name in moved & self._open.keys():
            self._set(name, self._open[name][0])
        self._on_disk = names

    def reread(self, names: Iterable[str]) -> None:
        """Files changed on disk: read again those of the workspace that are not open."""
        for name in names:
            if name in self._on_disk and name not in self._open:
                self._read(name)

    def open(self, name: str, text: str, version: int | None) -> None:
        """An open document's text, as the editor holds it."""
        held = self._open.get(name)
        if held is not None and held[0].source.text == text:
            self._open[name] = held[0], version
            checked = self.checked(name)
            if checked is not None:  # still true of the same text: edits name its version
                checked.version = version
            return
        loaded = load(text, name)
        self._open[name] = loaded, version
        self._set(name, loaded)

    def close(self, name: str) -> None:
        """A document was closed: the file counts again as it is on disk."""
        self._open.pop(name, None)
        self._checked.pop(name, None)
        if name in self._on_disk:
            self._read(name)
        else:
            self._forget(name)

    def warm_up(self) -> None:
        """Import the rules and read the schemas before the first document arrives, so
        it is checked as fast as the next."""
        text = "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: a}\n"
        lint([load(text, "<warm-up>")], on_rule_error=lambda *_: None)  # told when it matters

    def checked(self, name: str) -> Checked | None:
        """The last check of an open document, when it is of the text the editor holds."""
        found = self._checked.get(name)
        held = self._open.get(name)
        if found is None or held is None or found.loaded is not held[0]:
            return None
        return found

    # --- checking ---

    def check(self, name: str) -> Checked:
        """Check an open document's text with the rest of the workspace as context."""
        loaded, version = self._open[name]
        text = loaded.source.text
        settings = self.settings_for(name)
        if settings is None:
            checked = Checked(text, version, loaded, [], {})
        else:
            checked = Checked(
                text, version, loaded, *self._run(loaded, settings), docs_url=settings.docs_url
            )
        self._checked[name] = checked
        return checked

    def findings_of(self, loaded: Loaded) -> list[Finding]:
        """The findings of a text of an open document (what `--fix` checks between its
        passes), with the same context and settings as the document."""
        settings = self.settings_for(loaded.source.name)
        return [] if settings is None else self._run(loaded, settings)[0]

    def stale(self) -> list[str]:
        """The open documents to check again: never checked, or some look-up of their
        rules would now find other objects."""
        index = self._whole_index()
        found = []
        for name, (loaded, _) in self._open.items():
            checked = self._checked.get(name)
            if (
                checked is None or checked.loaded is not loaded or checked.dependencies is None
                or not index.still_found(checked.dependencies)
            ):
                found.append(name)
        return found

    def settings_for(self, name: str) -> Settings | None:
        """A file's settings; None when its configuration cannot be read (then told) or
        excludes it, or when kustomize or Helm builds from it (`Builders`)."""
        if self._resolver is None:
            return None
        try:
            configuration = self._resolver.for_path(Path(name))
        except ConfigError as error:
            self.on_problem(str(error))
            return None
        if configuration.excluded(name) or self._builders.built(name) is not None:
            return None
        return configuration.settings_for(name)

    def context_objects(self, name: str) -> list[Manifest]:
        """The objects that the rules of `name` may look up besides its own: those of
        every other file of the workspace."""
        if self._context is None:
            self._context = [manifest for file in self._in_order() for manifest in file.objects]
        return [manifest for manifest in self._context if manifest.source.name != name]

    def shown(self, name: str) -> str:
        """A file's name as messages show it: relative to its workspace folder."""
        for folder in self.folders:
            try:
                return Path(name).relative_to(folder).as_posix()
            except ValueError:
                continue
        return name

    def identity(self, manifest: Manifest) -> str:
        """What identifies an object of the workspace in recorded look-ups."""
        return identify(self._files[manifest.source.name].content, manifest)

    def _run(
        self, loaded: Loaded, settings: Settings
    ) -> tuple[list[Finding], dict[str, str], list[Manifest]]:
        """Findings, look-ups and TrainJobs not checked against their runtime (found with
        the look-ups recorded: a runtime that turns up makes the document stale)."""
        name = loaded.source.name
        context = self.context_objects(name)
        run = Run(
            [loaded], settings, contents={name: _digest(loaded.source.text)},
            context=context, on_rule_error=self._rule_failed,
        )
        run.index.digests.update({id(manifest): self.identity(manifest) for manifest in context})
        findings = run.settle([run.check(0)])
        unchecked = list(unchecked_trainjobs(
            ((manifest, settings) for manifest in loaded.manifests), run.index
        ))
        return findings, run.dependencies.get(0, {}), unchecked

    def _rule_failed(self, rule: Rule, manifest: Manifest, error: Exception) -> None:
        message = (
            f"internal error: rule {rule.code} ({rule.name}) failed on {manifest.describe()} "
            f"in {manifest.source.name} ({type(error).__name__}: {error}): its findings "
            "there are skipped; please report this with the file"
        )
        if message not in self._failures:  # not a traceback for every keystroke
            self._failures.add(message)
            log.error("%s", message, exc_info=error)
        self.on_problem(message)

    # --- files ---

    def _walk(self) -> Iterable[str]:
        if self._resolver is None or not self.folders:
            return []
        try:
            return list(discover([str(folder) for folder in self.folders], self._resolver))
        except ConfigError as error:
            self.on_problem(str(error))
            return []

    def _walk_context(self, walked: Iterable[str]) -> list[str]:
        """The files that the configurations of the folders, of their files and of the
        open documents name as `context` (a root that does not exist is told, and the
        others are read)."""
        if self._resolver is None:
            return []
        folders = {str(folder) for folder in self.folders}
        folders.update(os.path.dirname(name) for name in [*walked, *self._open])  # noqa: PTH120
        roots: dict[str, None] = {}
        for folder in sorted(folders):
            try:
                roots.update(dict.fromkeys(self._resolver.for_path(Path(folder)).context))
            except ConfigError as error:
                self.on_problem(str(error))
        found: dict[str, None] = {}  # in the order the command line reads them
        existing = []
        for root in roots:
            try:
                found.update(dict.fromkeys(context_files([root])))
            except ConfigError as error:
                self.on_problem(str(error))
                continue
            existing.append(root)
        self.context_roots = tuple(existing)
        return list(found)

    def _read(self, name: str) -> None:
        """Read a file of the workspace; one that is not a regular file is not read (a FIFO
        would block the server), and it holds nothing, as one that cannot be read."""
        try:
            if not stat.S_ISREG(Path(name).stat().st_mode):
                raise OSError(f"{name} is not a regular file")
            text = decode(read_bytes(name), name)[0]
        except OSError:
            self._forget(name)
            return
        self._set(name, load(text, name))

    def _set(self, name: str, loaded: Loaded) -> None:
        """What a file now holds: only its objects that others may look up are kept, and
        for a file that is not open, not its text (read again if a position is asked)."""
        source = loaded.source if name in self._open else Source(name)
        objects = [
            manifest if source is loaded.source else Manifest(
                manifest.written, source, manifest.document, manifest.base, manifest.spans,
                manifest.first, manifest.written is not manifest.body,
            )
            for manifest in loaded.manifests
            if object_kind(manifest) in INDEXED_KINDS
        ]
        known = self.settings_for(name) is not None or (
            name in self._context_names and self._builders.built(name) is None)
        self._files[name] = _File(_digest(loaded.source.text), objects if known else [])
        self._index = self._context = None

    def _forget(self, name: str) -> None:
        if self._files.pop(name, None) is not None:
            self._index = self._context = None

    def _whole_index(self) -> Index:
        """Every object of the workspace, with its identity: what the look-ups of each
        open document are checked against."""
        if self._index is None:
            objects = [manifest for file in self._in_order() for manifest in file.objects]
            self._index = Index(objects)
            self._index.digests.update({id(item): self.identity(item) for item in objects})
        return self._index


    def _in_order(self) -> list[_File]:
        """The files in the order `trainlint check` reads them (of two objects of one
        name, the first is the one look-ups find), documents not on disk last."""
        last = len(self._order)
        return [self._files[name]
                for name in sorted(self._files, key=lambda name: self._order.get(name, last))]


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode(errors="surrogatepass"), digest_size=16).hexdigest()
