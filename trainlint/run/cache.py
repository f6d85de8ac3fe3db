"""Findings of unchanged files, kept between runs (`--no-cache`, `cache-dir`).

An entry holds, per file, the findings of its objects' own rules (settled: suppressions
and severities applied), its suppressions as they left them, the notes of its objects'
facts, and what its rules looked up in the run's index (`Index.looked_up`: dependency →
digest of the answer, an object being known by its file's digest and its place in the
file). It is reused when the file's bytes, its settings and trainlint itself are
unchanged and every look-up would still find the same objects, so a TrainJob is checked
again when its runtime's file changes. What the rules' cross-object passes make of all
the notes, and what the suppression rules then say, is worked out again in every run
(`Run.finish`), from the notes of the files checked and those kept: a runtime's finding
that depends on its TrainJobs follows them without being checked again. A file whose
size and modification time are unchanged is not even read; when the run is the last one
again, nothing is parsed or checked, and what that run added to each file is kept too.

A run that gives JSON stores each fix's text edits with the findings (`Fix.edits`), and
marks the entry's settings key so (`WITH_EDITS`): such an entry serves any run, one
without edits only the runs that need none.

Context files (`--context`) have entries too, whose objects the index holds and which
hold no findings: a TrainJob is checked again when the runtime in its context changes.

Two files per trainlint build: `findings-*.json` (what a warm run needs) and
`index-*.json` (what validating and reusing single entries needs), each replaced
atomically and stamped with the same generation; anything unreadable, malformed or of
another generation is ignored, never trusted. A third, `verdicts-*.json`, keeps the
verdicts of the CRDs' CEL rules by what decides them (`validations.verdict_key`): a run
that checks an edited file (a pre-commit hook's) imports cel-python, half its start-up,
only for values no run saw before. Saving removes the files of other builds.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from trainlint.config import kept
from trainlint.config.settings import Settings
from trainlint.digest import blake2b
from trainlint.document import Fragment, Loaded, Manifest, Source, StandIn, stand_in_body
from trainlint.engine.index import CONTEXT as CONTEXT_PLACE
from trainlint.engine.index import Index, identify
from trainlint.engine.run import Amend, finish
from trainlint.engine.settle import Suppressions
from trainlint.files import CACHE_MARKERS, may_hold_cache, read_bytes, write_atomically
from trainlint.finding import Finding, Note, in_order
from trainlint.kinds import LOOKED_UP_KINDS, object_kind
from trainlint.run.packed import (
    Packed,
    Texts,
    texts,
    unpack,
    unpack_note,
    unpack_suppressions,
)
from trainlint.version import build_fingerprint

#: The kinds the index holds, whose changes other files' findings may depend on.
INDEXED_KINDS = LOOKED_UP_KINDS | {"TrainJob"}
#: What the cache holds of one file: its digest, findings, objects, look-ups.
CachedFile = dict[str, Any]
#: The keys of an entry, in the findings file and in the index file.
FINDINGS_KEYS = frozenset(
    {"content", "stat", "settings", "settled", "objects", "fragments", "unchecked"}
)
#: The settings key of a context file's entry: never that of an input, so a file checked
#: once and read as context another time has an entry of each kind.
CONTEXT = "context"
#: What only a run that is not the last one again reads: what the entry provides to the
#: index and looked up, and what its file's suppressions and notes were once settled.
INDEX_KEYS = frozenset({"provides", "dependencies", "suppressions", "notes"})
#: Ends the settings key of an entry whose findings' fixes hold their text edits.
WITH_EDITS = "+edits"


class NotACacheFolder(OSError):
    """The cache folder holds someone else's files: nothing is written there."""


class Cache:
    def __init__(self, folder: Path) -> None:
        """Refuses (`NotACacheFolder`) a folder trainlint did not make that holds files
        (`may_hold_cache`): its cache tag, whole, tells a folder trainlint made."""
        if not may_hold_cache(folder):
            raise NotACacheFolder(f"{folder} holds files trainlint did not write")
        build = build_fingerprint()
        self.folder = folder
        self.findings_path = folder / f"findings-{build}.json"
        self.index_path = folder / f"index-{build}.json"
        self.verdicts_path = folder / f"verdicts-{build}-{_cel_engine()}.json"
        self.definitions_path = folder / f"definitions-{build}.json"
        stored = _read_json(self.findings_path)
        self.generation = stored.get("generation")
        #: The key of the run that wrote the cache (see `run_key`).
        self.run = stored.get("run")
        self.entries = _entries(stored.get("files"), FINDINGS_KEYS)
        #: What the run that wrote the cache added to each file once every object's facts
        #: were known (`Run.finish`), for the files it added something to.
        self.added = stored.get("added") if isinstance(stored.get("added"), dict) else {}
        #: The name and help of the rules whose findings the entries hold.
        self.texts = _texts(stored.get("rules"))
        self._index: dict[str, CachedFile] | None = None

    def lookup(self, name: str, content: str, settings: str) -> CachedFile | None:
        """The whole entry of an unchanged file (findings and index parts), or None."""
        entry = self.entries.get(name)
        if entry is None or entry["content"] != content:
            return None
        if entry["settings"] not in (settings, _with_edits(settings)):
            return None
        indexed = self.index().get(name)
        return None if indexed is None else {**entry, **indexed}

    def index(self) -> dict[str, CachedFile]:
        if self._index is None:
            stored = _read_json(self.index_path)
            same = self.generation is not None and stored.get("generation") == self.generation
            self._index = _entries(stored.get("files"), INDEX_KEYS) if same else {}
        return self._index

    def recall_verdicts(self) -> None:
        """Make the CEL verdicts earlier runs saved known to this process (and to the
        workers it forks)."""
        from trainlint.model import validations  # a run served whole needs none

        stored = _read_json(self.verdicts_path).get("verdicts")
        if isinstance(stored, dict):
            validations.VERDICTS.update(
                (key, verdict) for key, verdict in stored.items()
                if isinstance(key, str) and (verdict is None or isinstance(verdict, str))
            )

    def recall_definitions(self) -> None:
        """Make the Kubernetes definitions earlier runs needed known to this process, for
        the schema files they were read from."""
        from trainlint.model import k8s

        stored = _read_json(self.definitions_path).get("versions")
        if not isinstance(stored, dict):
            return
        for version, entry in stored.items():
            if not isinstance(entry, dict) or not isinstance(entry.get("definitions"), dict):
                continue
            if entry.get("source") == k8s.definitions_stamp(version):
                k8s.KNOWN[version] = {name: found for name, found in entry["definitions"].items()
                                      if isinstance(found, dict)}

    def save_definitions(self) -> None:
        """Keep the definitions this process needed, if it read any from a whole file."""
        from trainlint.model import k8s

        if not k8s.READ:
            return
        versions = {}
        for version in {*k8s.KNOWN, *k8s.READ}:
            stamp = k8s.definitions_stamp(version)
            if stamp is not None:
                known = {name: k8s.definition(version, name)
                         for name in {*k8s.KNOWN.get(version, {}), *k8s.READ.get(version, ())}}
                versions[version] = {"source": stamp, "definitions": known}
        with contextlib.suppress(OSError):
            _mark(self.folder)
            write_atomically(self.definitions_path, _json({"versions": versions}))
        k8s.READ.clear()

    def save_verdicts(self) -> None:
        """Keep every verdict this process knows, if it evaluated any (the workers'
        stay with them: a verdict missed costs its evaluation next time, no more)."""
        from trainlint.model import validations

        if not validations.LEARNED:
            return
        with contextlib.suppress(OSError):
            _mark(self.folder)
            write_atomically(self.verdicts_path, _json({"verdicts": validations.VERDICTS}))
        validations.LEARNED.clear()

    def save(
        self, run: str, entries: Sequence[Encoded], codes: set[str],
        added: dict[str, list[Packed]],
    ) -> None:
        """Replace both files, index first; a cache that cannot be written is skipped.
        `entries` are encoded (`_encoded`), `codes` those of every finding they hold or
        the run `added` to a file."""
        generation = _json(_unique())
        rules = _json(texts(sorted(codes)))
        parts = [
            (self.index_path, '"run":null', [entry.index_part for entry in entries]),
            (self.findings_path,
             f'"run":{_json(run)},"rules":{rules},"added":{_json(added)}',
             [entry.findings_part for entry in entries]),
        ]
        try:
            _mark(self.folder)
            for path, head, members in parts:
                # Each entry was encoded where its file was checked (a worker, with
                # --jobs): joining 2,000 takes 1.7 ms, encoding them here 14 ms
                # (benchmarks/tricks.py; 40 ms against 88 for a real cache of 10,000).
                files = ",".join(members)
                write_atomically(path, f'{{"generation":{generation},{head},"files":{{{files}}}}}')
        except OSError:
            return  # nor is anything removed from a folder not written
        ours = {self.findings_path, self.index_path, self.verdicts_path, self.definitions_path,
                kept.path_in(self.folder)}
        for stale in [path for kind in ("findings", "index", "verdicts", "definitions", kept.KIND)
                      for path in self.folder.glob(f"{kind}-*.json")]:
            if stale not in ours:  # another build's: never read again
                with contextlib.suppress(OSError):
                    stale.unlink()


class Encoded(NamedTuple):
    """A file's entry as JSON text: its member of each file's `files`."""

    findings_part: str
    index_part: str


def encoded(name: str, entry: CachedFile) -> Encoded:
    """A file's entry (`FINDINGS_KEYS` and `INDEX_KEYS`) as the two files hold it."""
    member = _json(name)
    findings = {key: entry[key] for key in FINDINGS_KEYS}
    index = {key: entry[key] for key in INDEX_KEYS}
    return Encoded(f"{member}:{_json(findings)}", f"{member}:{_json(index)}")


def context_entry(content: str, stat_: list[int] | None, item: Loaded) -> CachedFile:
    """The entry of a context file: what it provides to the index, nothing checked."""
    return {
        "content": content, "stat": stat_, "settings": CONTEXT, "settled": [],
        "suppressions": [], "notes": [], "objects": len(item.manifests), "fragments": [],
        "unchecked": {}, "dependencies": {},
        "provides": [provided(manifest, identify(content, manifest))
                     for manifest in item.manifests if object_kind(manifest) in INDEXED_KINDS],
    }


def provided(manifest: Manifest, identity: str) -> list[Any]:
    """What an entry says an object provides to the index: its stand-in's body, what
    identifies it, and where it is (its document and its key path there)."""
    return [stand_in_body(manifest), identity, manifest.document, list(manifest.base)]


def stand_ins(name: str, provides: list[Any]) -> list[tuple[StandIn, str]]:
    """The stand-ins of what the objects of file `name` provide (each `provided`), with
    what identifies each, sharing one text-less source."""
    source = Source(name, "")
    return [(StandIn.made(body, source, document, tuple(base)), identity)
            for body, identity, document, base in provides]


def known_contents(
    names: Sequence[str], stats: dict[str, list[int] | None], cache: Cache
) -> dict[str, str]:
    """The digests of the files that have an entry, known before parsing anything."""
    known = {}
    for name in names:
        entry = cache.entries.get(name)
        if entry is None or stats[name] is None:
            continue  # new or unreadable: digested as it is read, if at all
        if entry["stat"] == stats[name]:
            known[name] = entry["content"]  # same size and time: not read again
        else:
            with contextlib.suppress(OSError):
                known[name] = digest(read_bytes(name))
    return known


def settings_keys(
    names: Sequence[str], settings_of: Callable[[str], Settings], context: Sequence[str], *,
    edits: bool,
) -> dict[str, str]:
    """The settings key of each file's entry (`CONTEXT` for the context's)."""
    by_settings: dict[int, str] = {}  # files share a few Settings: digest each once
    found = {}
    for name in names:
        settings = settings_of(name)
        if id(settings) not in by_settings:
            key = _settings_key(settings)
            by_settings[id(settings)] = _with_edits(key) if edits else key
        found[name] = by_settings[id(settings)]
    return {**found, **dict.fromkeys(context, CONTEXT)}


def served(
    names: Sequence[str], context: Sequence[str], known: dict[str, str], keys: dict[str, str],
    cache: Cache, settings_of: Callable[[str], Settings], amend: Amend | None,
) -> tuple[list[Finding], list[str], int, int, list[tuple[str, Fragment]], dict[str, int]] | None:
    """What the run finds (as `Outcome`'s fields), all from the cache, when no file changed
    and every look-up still finds what it found; None otherwise."""
    every = [*names, *context]
    if run_key(every, known, keys) == cache.run:  # the last run again
        outcome = _settled(names, cache.entries, cache.texts, cache.added)
        if outcome is not None:
            return outcome
    cached = {name: cache.lookup(name, known[name], keys[name]) for name in every}
    if all(cached.values()) and _all_hold(names, context, cached):
        return _settled(names, cached, cache.texts, None, settings_of, amend)
    return None


def digest(data: bytes) -> str:
    return blake2b(data, digest_size=16).hexdigest()


def _settled(
    names: Sequence[str], entries: dict[str, Any], known: Texts,
    added: dict[str, Any] | None, settings_of: Callable[[str], Settings] | None = None,
    amend: Amend | None = None,
) -> tuple[list[Finding], list[str], int, int, list[tuple[str, Fragment]], dict[str, int]] | None:
    """The cached findings of the files, their text left to be read only if shown, and
    what else the entries say of the files (None when an entry cannot be read). What
    lands on each file once every object's facts are known is what the run that wrote the
    cache `added`, or else is worked out again from the entries (with `settings_of`)."""
    settled: dict[int, Settled] = {}
    try:
        for position, name in enumerate(names):
            entry = entries[name]
            if added is not None:  # its findings alone: the rest was worked out
                entry = {"settled": entry["settled"], "notes": [], "suppressions": []}
            found = unpacked(entry, position, Source(name), known)
            if found is None:
                return None
            settled[position] = found
        objects = sum(int(entries[name]["objects"]) for name in names)
        fragments = [(name, Fragment.unpacked(numbers))
                     for name in names for numbers in entries[name]["fragments"]]
        unchecked = summed(entries[name]["unchecked"] for name in names)
    except _MALFORMED:
        return None
    if added is not None:
        more = {}
        for position, name in enumerate(names):
            unpacked_ = _findings(added.get(name, []), Source(name), [], known)
            if unpacked_ is None:
                return None
            more[position] = unpacked_
    else:
        assert settings_of is not None
        notes = [note for checked in settled.values() for note in checked.notes]
        more = finish(
            {position: (settings_of(name), settled[position].suppressions)
             for position, name in enumerate(names)}, notes, amend,
        )
    findings = in_order([*checked.found, *more[position]] for position, checked in settled.items())
    return findings, list(names), 0, objects, fragments, unchecked


def summed(counts: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Counts by name, added up (the runtimes found nowhere, of several files)."""
    total: dict[str, int] = {}
    for found in counts:
        for name, count in found.items():
            total[str(name)] = total.get(str(name), 0) + int(count)
    return total


class Settled(NamedTuple):
    """A file's entry as its findings settled, suppressions and notes."""

    found: list[Finding]
    suppressions: Suppressions
    notes: list[Note]


def unpacked(entry: CachedFile, position: int, source: Source, known: Texts) -> Settled | None:
    """A stored entry, of the input at `position`, as settled on `source` (its text left to
    be read only if shown); None when it is not what this build writes. Its objects are
    stand-ins, made for those its suppressions name: an object's suppression then covers
    the cross-object findings on that object only."""
    if not entry["settled"] and not entry["notes"] and not entry["suppressions"]:
        return _NOTHING  # nearly every file
    stand_ins: dict[int, Manifest] = {}
    placed = placed_in(stand_ins)
    try:
        suppressions = unpack_suppressions(entry["suppressions"], source, stand_ins)
        notes = [unpack_note(note, position, placed, source) for note in entry["notes"]]
    except _MALFORMED:
        return None
    found = _findings(entry["settled"], source, stand_ins, known)
    return None if found is None else Settled(found, suppressions, notes)


def placed_in(stand_ins: Mapping[int, Manifest]) -> Callable[[tuple[int, int]], Manifest | None]:
    """Finds a note's object among the stand-ins of its file's objects that suppressions
    name (by their number in the file). A note of the context names its object by its
    place in the context of the run that made it, which may have changed: not at hand."""
    return lambda order: None if order[0] == CONTEXT_PLACE else stand_ins.get(order[1])


#: A file with no finding, note or suppression, as settled.
_NOTHING = Settled([], Suppressions([], []), [])


def _findings(
    packed: list[Packed], source: Source, manifests: Mapping[int, Manifest] | list[Manifest],
    known: Texts,
) -> list[Finding] | None:
    """Stored findings unpacked, or None when they are not what this build writes."""
    try:
        return [unpack(fields, source, manifests, known) for fields in packed]
    except _MALFORMED:
        return None


def _all_hold(
    names: Sequence[str], context: Sequence[str], cached: dict[str, CachedFile | None]
) -> bool:
    """Whether every cached look-up still finds the same objects, judged on stand-ins of
    the indexed objects (inputs first, then context, as a run indexes them): nothing is
    parsed."""
    groups: tuple[list[Manifest], list[Manifest]] = ([], [])
    digests = {}
    try:
        for group, files in zip(groups, (names, context), strict=True):
            for name in files:
                entry = cached[name]
                assert entry is not None
                for manifest, identity in stand_ins(name, entry["provides"]):
                    group.append(manifest)
                    digests[id(manifest)] = identity
        index = Index(*groups)
    except _MALFORMED:
        return False
    index.digests.update(digests)
    return all(still_holds(entry, index) for entry in cached.values() if entry)


def provides_read(provides: object) -> bool:
    """Whether what an entry provides to the index is what this build writes."""
    try:
        for body, identity, document, base in provides:  # type: ignore[attr-defined]
            StandIn.made(body, Source(""), int(document), tuple(base))
            str(identity)
    except _MALFORMED:
        return False
    return True


def still_holds(entry: CachedFile, index: Index) -> bool:
    """Whether every look-up an entry (or a file just checked) made finds what it found
    then in `index`."""
    try:
        return index.still_found(entry["dependencies"])
    except _MALFORMED:
        return False


#: What reading an entry that this build did not write may raise: it is then not used.
_MALFORMED = (AttributeError, IndexError, KeyError, TypeError, ValueError)


def run_key(names: Sequence[str], contents: dict[str, str], keys: dict[str, str]) -> str:
    found = blake2b(digest_size=16)
    for name in names:
        found.update(f"{name}\0{contents.get(name)}\0{keys[name]}\n".encode())
    return found.hexdigest()


def stat(name: str) -> list[int] | None:
    """Size and modification time (None: the file cannot be read, so is never cached)."""
    try:
        status = os.stat(name)  # noqa: PTH116 - one per file: a Path each would cost a tenth
    except OSError:
        return None
    return [status.st_size, status.st_mtime_ns]


def _settings_key(settings: Settings) -> str:
    return blake2b(repr(settings).encode(), digest_size=16).hexdigest()


def _with_edits(key: str) -> str:
    return key if key.endswith(WITH_EDITS) else key + WITH_EDITS


def _read_json(path: Path) -> dict[str, Any]:
    with contextlib.suppress(OSError, ValueError):
        stored = json.loads(read_bytes(path))  # a regular file only: a FIFO would wait
        if isinstance(stored, dict):
            return stored
    return {}


def _mark(folder: Path) -> None:
    """Write the markers that are missing or not whole (a full disk may have cut one
    short before they were written atomically): each run that saves mends them."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in CACHE_MARKERS.items():
        with contextlib.suppress(OSError):
            if read_bytes(folder / name) == text.encode():
                continue
        write_atomically(folder / name, text)


#: Compact, and without the check for cycles: entries are plain data.
_json = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode


def _cel_engine() -> str:
    """What identifies the installed cel-python, whose verdicts the cache keeps: its
    module's place, size and time, found without importing it."""
    import importlib.util

    spec = importlib.util.find_spec("celpy")
    origin = spec.origin if spec is not None else None
    try:
        status = os.stat(origin) if origin else None  # noqa: PTH116 - a string, as above
    except OSError:
        status = None
    stamp = "none" if status is None else f"{origin}:{status.st_size}:{status.st_mtime_ns}"
    return blake2b(stamp.encode(), digest_size=4).hexdigest()


def _unique() -> str:
    return os.urandom(16).hex()


def _texts(stored: object) -> dict[str, list[str | None]]:
    """The well-formed rule texts of a stored table (others are dropped, never trusted)."""
    if not isinstance(stored, dict):
        return {}
    return {
        code: value for code, value in stored.items()
        if isinstance(value, list) and len(value) == 2 and isinstance(value[0], str)
        and (value[1] is None or isinstance(value[1], str))
    }


def _entries(files: object, keys: frozenset[str]) -> dict[str, CachedFile]:
    """The well-formed entries of a stored table (others are dropped, never trusted)."""
    if not isinstance(files, dict):
        return {}
    return {
        name: entry for name, entry in files.items()
        if isinstance(entry, dict) and keys <= entry.keys()
    }
