"""Findings of unchanged files, kept between runs (`--no-cache`, `cache-dir`).

An entry holds, per file, what checking its objects produced and what its rules looked
up in the run's index (`Index.looked_up`: dependency → digest of the answer). It is
reused when the file's bytes, its settings and trainlint itself are unchanged and every
look-up would still find the same objects, so a TrainJob is checked again when its
runtime changes in another file. When nothing changed at all, no file is even parsed.

The cache is one JSON file per trainlint build, replaced atomically (concurrent runs
each write a whole, valid file); anything unreadable or malformed is ignored.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trainlint
from trainlint.document import Loaded, Manifest, Source, decode, dig
from trainlint.engine import (
    DEPENDENCY_SEPARATOR,
    RUNTIME_KINDS,
    Checked,
    Finding,
    Index,
    Run,
    Settings,
    object_kind,
)
from trainlint.packed import Packed, numbers, pack, unpack, unpack_checked

#: The kinds the index holds, whose changes other files' findings may depend on.
INDEXED_KINDS = RUNTIME_KINDS | {"PersistentVolumeClaim", "StorageClass", "TrainJob"}
Entry = dict[str, Any]


@dataclass
class Outcome:
    findings: list[Finding]
    #: The names of the files checked, in order.
    files: list[str]
    #: How many files were checked again (0: every finding came from the cache).
    checked: int


def build_fingerprint() -> str:
    """What identifies this trainlint: its version and the state of its source files."""
    package = Path(trainlint.__file__).parent
    digest = hashlib.blake2b(trainlint.__version__.encode(), digest_size=8)
    for path in sorted(package.rglob("*.py")):
        stat = path.stat()
        digest.update(f"{path.relative_to(package)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()


class Cache:
    def __init__(self, folder: Path) -> None:
        self.path = folder / f"findings-{build_fingerprint()}.json"
        self.entries: dict[str, Entry] = {}
        with contextlib.suppress(OSError, ValueError):
            entries = json.loads(self.path.read_bytes())
            if isinstance(entries, dict):
                self.entries = {
                    name: entry for name, entry in entries.items() if _well_formed(entry)
                }

    def lookup(self, name: str, content: str, settings: str) -> Entry | None:
        entry = self.entries.get(name)
        if entry and entry["content"] == content and entry["settings"] == settings:
            return entry
        return None

    def save(self, entries: dict[str, Entry]) -> None:
        """Replace the cache file atomically; a cache that cannot be written is skipped."""
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.path.parent, suffix=".tmp")
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as stream:
                    stream.write(json.dumps(entries, separators=(",", ":")))
                Path(temporary).replace(self.path)
            finally:
                Path(temporary).unlink(missing_ok=True)


def check(
    names: Sequence[str],
    read_all: Callable[[Sequence[str]], list[Loaded]],
    settings_of: Callable[[str], Settings],
    check_all: Callable[[Run, Sequence[int]], dict[int, Checked]],
    cache: Cache,
) -> Outcome:
    """Every finding of the files `names`, from the cache where it still holds."""
    data = {name: Path(name).read_bytes() for name in names}
    contents = {name: hashlib.blake2b(data[name], digest_size=16).hexdigest() for name in names}
    keys = {name: _settings_key(settings_of(name)) for name in names}
    cached = {name: cache.lookup(name, contents[name], keys[name]) for name in names}
    if all(cached.values()):
        warm = _all_from_cache(names, data, cached)
        if warm is not None:
            return Outcome(warm, list(names), 0)
    run = Run(read_all(names), settings_for=lambda source: settings_of(source.name), record=True)
    reused: dict[int, Checked] = {}
    loaded = {item.source.name: item for item in run.inputs}
    for position, name in enumerate(names):
        entry = cached[name]
        if entry is not None and _still_holds(entry, run.index):
            checked = unpack_checked(entry["checked"], loaded)
            if checked is not None:
                reused[position] = checked
                run.dependencies[position] = entry["dependencies"]
    fresh = [position for position in range(len(names)) if position not in reused]
    produced = check_all(run, fresh)
    everything = {**reused, **produced}
    findings = run.settle(everything[position] for position in range(len(names)))
    _store(cache, run, names, contents, keys, findings, produced)
    return Outcome(findings, list(names), len(fresh))


def _all_from_cache(
    names: Sequence[str], data: dict[str, bytes], cached: dict[str, Entry | None]
) -> list[Finding] | None:
    """The findings of a run where no file changed, or None when a look-up's answer would
    differ after all (judged on stand-ins of the indexed objects, nothing parsed)."""
    stand_ins = []
    digests = {}
    for name in names:
        entry = cached[name]
        assert entry is not None
        source = Source(name, "")
        for body, digest in entry["provides"]:
            manifest = Manifest(body, source)
            stand_ins.append(manifest)
            digests[id(manifest)] = digest
    index = Index(stand_ins)
    index.digests.update(digests)
    if not all(_still_holds(entry, index) for entry in cached.values() if entry):
        return None
    findings: list[Finding] = []
    for name in names:
        entry = cached[name]
        assert entry is not None
        source = Source(name, decode(data[name], name)[0])
        findings.extend(unpack(packed, source, []) for packed in entry["settled"])
    return sorted(findings, key=Finding.sort_key)


def _still_holds(entry: Entry, index: Index) -> bool:
    return all(
        index.digest(tuple(dependency.split(DEPENDENCY_SEPARATOR))) == digest
        for dependency, digest in entry["dependencies"].items()
    )


def _store(
    cache: Cache, run: Run, names: Sequence[str], contents: dict[str, str],
    keys: dict[str, str], findings: list[Finding], produced: dict[int, Checked],
) -> None:
    places = numbers(run.inputs)
    settled: dict[str, list[Packed]] = {name: [] for name in names}
    for finding in findings:
        place = None if finding.manifest is None else places.get(id(finding.manifest))
        settled.setdefault(finding.file, []).append(pack(finding, place))
    entries = dict(cache.entries)
    for position, name in enumerate(names):
        item = run.inputs[position]
        previous = cache.entries.get(name)
        checked = (
            [pack(finding, None if manifest is None else places[id(manifest)])
             for finding, manifest in produced[position]]
            if position in produced else previous["checked"] if previous else []
        )
        entries[name] = {
            "content": contents[name], "settings": keys[name],
            "provides": [
                [_stand_in(manifest), run.index.object_digest(manifest)]
                for manifest in item.manifests if object_kind(manifest) in INDEXED_KINDS
            ],
            "dependencies": run.dependencies.get(position, {}),
            "checked": checked,
            "settled": settled[name],
        }
    cache.save(entries)


def _stand_in(manifest: Manifest) -> dict[str, Any]:
    """What the index reads of an object: enough to answer every look-up the same way."""
    metadata = {"name": manifest.name, "namespace": manifest.namespace}
    body: dict[str, Any] = {
        "apiVersion": manifest.api_version, "kind": manifest.kind, "metadata": metadata,
    }
    ref = dig(manifest.body, "spec", "runtimeRef")
    if manifest.kind == "TrainJob" and isinstance(ref, dict):
        body["spec"] = {"runtimeRef": ref}
    return body


def _settings_key(settings: Settings) -> str:
    return hashlib.blake2b(repr(settings).encode(), digest_size=16).hexdigest()


def _well_formed(entry: object) -> bool:
    keys = {"content", "settings", "provides", "dependencies", "checked", "settled"}
    return isinstance(entry, dict) and keys <= entry.keys()
