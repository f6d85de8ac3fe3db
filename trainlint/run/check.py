"""Checking files where they are read: each process reads, checks and lets go of its files,
and sends back only what the cache keeps of each (`trainlint.run.cache`): its findings,
the notes of its facts, its suppressions, what it provides to the index and what its
rules looked up. No document crosses processes, and none outlives its check.

A process checks a file with the objects it knows of: the context, the files the cache
still holds, and the files it has read so far, each known by its stand-in (what look-ups
read of it) and fetched from its file when a look-up needs it whole (the last few files
read are kept parsed). Once every file is checked, the parent judges each file's look-ups
against the whole run's index, as it judges a cached entry: a file whose look-ups find
the same objects there stands; the others are checked again with every object of the
run to look up (`Index` with stand-ins). In a repository whose TrainJobs come after
their runtimes, nearly every file stands; where they come first, their files are read
twice.

A long file is read in slices of whole documents (`trainlint.loader.slices`), which any
process takes like files: memory holds a slice at a time, never the file. Its
suppressions are the whole file's, so the parent settles the findings of its slices.
"""

from __future__ import annotations

import itertools
import marshal
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple

from trainlint.config.settings import Settings
from trainlint.digest import blake2b
from trainlint.document import Fragment, Loaded, Manifest, Source, StandIn, stand_in_body
from trainlint.engine.index import Index, identify
from trainlint.engine.run import Amend, Run, finish
from trainlint.engine.settle import Suppressions
from trainlint.files import MAX_FILE_BYTES, read_bytes
from trainlint.finding import Finding, in_order
from trainlint.kinds import object_kind
from trainlint.rule import listed_rules
from trainlint.run import cache as stored
from trainlint.run.packed import (
    Packed,
    Texts,
    numbers,
    pack,
    pack_note,
    pack_suppressions,
    renumbered,
    texts,
    unpack,
    unpack_note,
    unpack_suppressions,
)
from trainlint.run.parallel import MIN_INPUTS, amended_notes, share_out, worth_it

if TYPE_CHECKING:  # a run served from the cache parses nothing: it imports no parser
    from trainlint.loader import Slice, Sliced

#: What checking a unit gives, as JSON values: for a whole file, its cache entry
#: (`trainlint.run.cache`); for a slice, the same with its findings not yet settled.
Result = dict[str, Any]


class Unit(NamedTuple):
    """What one process checks at a time: a file, or a slice of a long one."""

    #: Its file's place among the files checked.
    position: int
    name: str
    #: The slice (None: the whole file), what the scan of its file found, and how many
    #: documents the scan counted in the slice.
    piece: Slice | None = None
    sliced: Sliced | None = None
    documents: int = 0
    #: Where it is in the run: its file's place, then where in the file it starts.
    key: tuple[int, int] = (0, 0)


class Outcome(NamedTuple):
    findings: list[Finding]
    #: The names of the files checked, in order.
    files: list[str]
    #: How many files were checked (0: every finding came from the cache).
    checked: int
    #: The inputs' objects, and their fragments and templates (`Loaded.fragments`).
    objects: int
    fragments: list[tuple[str, Fragment]]
    #: The runtimes found nowhere, with how many TrainJobs name each (`Run.unchecked`).
    unchecked: dict[str, int]


def check(
    names: Sequence[str],
    settings_of: Callable[[str], Settings],
    jobs: int,
    cache: stored.Cache | None = None,
    context: Sequence[str] = (),
    cluster: Sequence[Manifest] = (),
    *, amend: Amend | None = None,
) -> Outcome:
    """Every finding of the files `names`, checked on `jobs` processes, from the `cache`
    where it still holds; the files `context` (and the objects `cluster`) are read for
    their objects only. With `amend`, the fixes' text edits are worked out (`amend`), and
    only entries that hold them are used."""
    every = [*names, *context]
    stats = {name: stored.stat(name) for name in every}
    keys = stored.settings_keys(names, settings_of, context, edits=amend is not None)
    known: dict[str, str] = {}
    if cache is not None:
        known = stored.known_contents(every, stats, cache)
        if not cluster and len(known) == len(every):  # every file may be served from the cache
            served = stored.served(names, context, known, keys, cache, settings_of, amend)
            if served is not None:
                return Outcome(*served)
    run = _Run(names, settings_of, jobs, cache, amend, (stats, keys, known))
    run.read_context(context, cluster)
    return run.check()


#: The most units kept parsed by a process after their batch, for the look-ups of the
#: next ones.
KEPT = 16
#: And at most about this many characters of their text (a slice of a long file is many
#: times a file's).
KEPT_CHARACTERS = 256 * 1024
#: The bytes of a batch of units, read whole before any is checked: an object that looks
#: up one further on in the batch finds it; at most, on one process.
BATCH_BYTES = 1024 * 1024
#: On several processes, about this many batches each (for processes to end together),
#: and batches of at least `MIN_BATCH_BYTES`.
BATCHES_PER_PROCESS = 32
MIN_BATCH_BYTES = 64 * 1024
#: What a batch reads beyond its units (at least one unit): what most references that
#: reach past a batch's end find.
PEEK_BYTES = 16 * 1024
#: What a unit found is compressed from this many bytes marshalled (`_sealed`).
SEALED_BYTES = 4096
#: Units of this many bytes in all are worth checking on several processes, however few
#: they are (the slices of one long file).
SPREAD_BYTES = 2 * 1024 * 1024


class Shelf:
    """What this process read lately, and the way back to any object of the run: a
    stand-in's file (or slice) is parsed again when a look-up needs the whole object. The
    units of the batch being checked are all held, and the last few read after it."""

    def __init__(self, sliced: Mapping[str, Sliced]) -> None:
        self._sliced = sliced
        self._held: dict[tuple[str, int], Loaded] = {}
        self._kept: OrderedDict[tuple[str, int], Loaded] = OrderedDict()
        self._characters = 0  # of the text of those kept

    def hold(self, name: str, start: int, loaded: Loaded) -> None:
        """Hold a unit of the batch being checked."""
        self._held[name, start] = loaded

    def release(self) -> None:
        """The batch is checked: keep only the last few of its units."""
        for key, loaded in self._held.items():
            self.keep(key, loaded)
        self._held.clear()

    def keep(self, key: tuple[str, int], loaded: Loaded) -> None:
        if key in self._kept:
            self._kept.move_to_end(key)
            return
        self._kept[key] = loaded
        self._characters += len(loaded.source.text)
        while len(self._kept) > KEPT or (
                len(self._kept) > 1 and self._characters > KEPT_CHARACTERS):
            self._characters -= len(self._kept.popitem(last=False)[1].source.text)

    def fetch(self, stand_in: StandIn) -> Manifest | None:
        name = stand_in.source.name
        sliced = self._sliced.get(name)
        unit = Unit(0, name) if sliced is None else _slice_holding(sliced, name, stand_in.document)
        key = (name, unit.key[1])
        loaded = self._held.get(key) or self._kept.get(key)
        if loaded is None:
            try:
                loaded = _read(unit)[0]
            except OSError:
                return None
        self.keep(key, loaded)
        return next((manifest for manifest in loaded.manifests
                     if manifest.document == stand_in.document and manifest.base == stand_in.base),
                    None)


def _slice_holding(sliced: Sliced, name: str, document: int) -> Unit:
    """The unit of the slice that holds a document."""
    from bisect import bisect_right  # a long file's only: not imported by most runs

    number = max(0, bisect_right([piece.documents for piece in sliced.slices], document) - 1)
    return _slice_units(0, name, sliced, number)[0]


def _slice_units(position: int, name: str, sliced: Sliced, number: int | None = None) -> list[Unit]:
    """The units of a file's slices (or of its slice `number` alone), each with how many
    documents the scan counted in it."""
    pieces = sliced.slices
    numbers = range(len(pieces)) if number is None else [number]
    return [Unit(position, name, pieces[at], sliced,
                 (pieces[at + 1].documents if at + 1 < len(pieces) else sliced.documents)
                 - pieces[at].documents, (position, pieces[at].start))
            for at in numbers]


def _read(unit: Unit) -> tuple[Loaded, str | None, bool]:
    """A unit read and parsed, its file's digest, and whether it stopped (a slice that
    must be read with its whole file); OSError for a slice that cannot be read."""
    from trainlint.loader import load_bytes, load_slice, unreadable

    if unit.piece is not None:
        assert unit.sliced is not None
        loaded, stopped = load_slice(unit.name, unit.piece, unit.documents, unit.sliced.bom)
        return loaded, unit.sliced.digest, stopped
    try:
        data = read_bytes(unit.name)
    except OSError as error:
        return unreadable(unit.name, error), None, False
    return load_bytes(data, unit.name), stored.digest(data), False


class _Read(NamedTuple):
    """A unit read: its objects, its file's digest, whether it stopped, and what it
    provides to the index."""

    loaded: Loaded
    digest: str | None
    stopped: bool
    provides: list[Any] | None


class Batch(NamedTuple):
    """Units checked together, and those right after them, read too (`peek`): an object
    that looks up one further on finds it (a runtime its claim, in the file after it).
    What this process peeked and checks next is not read twice."""

    units: list[Unit]
    peek: list[Unit]


class _Checker:
    """Checks batches of units in one process, with the objects its run's index knows,
    and packs what each unit gives (`Result`). A batch is read whole, and what it peeks
    at, before any of it is checked; with `indexing`, what each unit provides is added
    to the index once read."""

    def __init__(
        self, run: Run, shelf: Shelf, known: Texts, amend: Amend | None, *, indexing: bool,
        providing: bool = True,
    ) -> None:
        self.run = run
        self.shelf = shelf
        self.known = known
        self.amend = amend
        self.indexing = indexing
        #: Whether each unit's result says what it provides to the index.
        self.providing = providing
        #: The units read and not yet checked: those the last batch peeked at.
        self.peeked: dict[tuple[int, int], _Read] = {}

    def __call__(self, batch: Batch) -> list[Result]:
        read = {unit.key: self.peeked.get(unit.key) or self._read(unit)
                for unit in [*batch.units, *batch.peek]}
        self.peeked = {unit.key: read[unit.key] for unit in batch.peek}
        for unit in [*batch.units, *batch.peek]:
            self.shelf.hold(unit.name, unit.key[1], read[unit.key].loaded)
        try:
            return [self._check(unit, read[unit.key]) for unit in batch.units]
        finally:
            self.shelf.release()

    def _read(self, unit: Unit) -> _Read:
        """A unit read, what it provides indexed (with `indexing`)."""
        loaded, digest, stopped = _read(unit)
        provides = []
        source = Source(unit.name, "")  # the stand-ins' file, shared and text-less
        for manifest in loaded.manifests:
            if object_kind(manifest) in stored.INDEXED_KINDS:
                if self.providing:
                    provides.append(stored.provided(manifest, identify(digest or "", manifest)))
                if self.indexing:  # the stand-in and what it provides share the body
                    body = provides[-1][0] if self.providing else stand_in_body(manifest)
                    self.run.index.add(StandIn.made(body, source, manifest.document,
                                                    manifest.base), content=digest or "")
        return _Read(loaded, digest, stopped, provides if self.providing else None)

    def _check(self, unit: Unit, read: _Read) -> Result:
        loaded, digest, stopped, provides = read
        run = self.run
        position = run.add(loaded)
        raw = run.check(position)
        notes = run.notes[position]
        result: Result = {
            "objects": len(loaded.manifests),
            "fragments": [fragment.packed() for fragment in loaded.fragments],
            "unchecked": run.missing.get(position, {}),
            "provides": provides,
            "dependencies": run.dependencies.get(position, {}),
        }
        if unit.piece is None:
            found, suppressions = run.settle_input(position, raw)
            if self.amend is not None:
                found, notes = self.amend(found), amended_notes(notes, self.amend)
            result["content"] = digest
        else:
            found = raw
            suppressions = Suppressions.of(
                run.plan_for(loaded.source).settings, loaded.source, loaded.manifests)
            result["stopped"] = stopped
        places = numbers([loaded]) if found or suppressions.entries else {}
        result["settled"] = _sealed([_packed(finding, places, self.known) for finding in found])
        result["suppressions"] = pack_suppressions(suppressions, places)
        result["notes"] = _sealed([pack_note(note) for note in notes])
        run.forget(position)
        return result


def _sealed(values: list[Packed]) -> bytes | list[Packed]:
    """Packed findings or notes as the run keeps them until every unit is checked: one
    string of bytes (`marshal`), compressed where it is long (`zlib` at its fastest: a
    compression costs about 20 µs, however little it holds), not many small lists. On
    the 10,000-document file, what its units found takes 5.1 MB marshalled, 0.75 MB
    compressed (24 ms to compress); the lists took about four times the first. (None
    found: nothing.)"""
    if not values:
        return []
    sealed = marshal.dumps(values)
    if len(sealed) <= SEALED_BYTES:
        return b"m" + sealed
    import zlib  # imported only where it compresses: 0.3-0.6 ms of a pre-commit run

    return zlib.compress(sealed, 1)


def _opened(result: Result) -> Result:
    """A unit's result with its findings and notes as lists again (`_sealed`)."""
    for key in ("settled", "notes"):
        sealed = result[key]
        if isinstance(sealed, bytes):
            if sealed[:1] == b"m":
                result[key] = marshal.loads(memoryview(sealed)[1:])
            else:
                import zlib

                result[key] = marshal.loads(zlib.decompress(sealed))
    return result


def _packed(finding: Finding, places: Mapping[int, int], known: Texts) -> Packed:
    return pack(finding, None if finding.manifest is None else places[id(finding.manifest)],
                known)


class _Run:
    """One run of `check`: its files, what the cache holds of them, and the rounds that
    check them."""

    def __init__(
        self, names: Sequence[str], settings_of: Callable[[str], Settings], jobs: int,
        cache: stored.Cache | None, amend: Amend | None,
        identities: tuple[dict[str, list[int] | None], dict[str, str], dict[str, str]],
    ) -> None:
        self.names = list(names)
        self.settings_of = settings_of
        self.jobs = jobs
        self.cache = cache
        self.amend = amend
        self.stats, self.keys, self.known = identities
        #: The context's objects, with what identifies each across runs; its files' names
        #: and the entries the cache keeps of them.
        self.context: list[tuple[Manifest, str]] = []
        self.context_names: list[str] = []
        self.context_entries: dict[str, stored.CachedFile] = {}
        self.texts = texts(listed_rules())
        #: The long files, cut into slices (once per run: the units of both rounds and
        #: every process's shelf use these).
        self.sliced: dict[str, Sliced] = {}
        #: The long files a slice stopped in, read whole from then on (`stale`): cut
        #: again, they would stop again, and their slices after the stop be dropped.
        self.whole: set[str] = set()
        #: What the whole files checked on several processes gave, worked out as it came
        #: in (`take_in`), by unit key: their results settled, and the stand-ins of what
        #: each provides to the index in the first round.
        self.taken: dict[tuple[int, int], stored.Settled] = {}
        self.made: dict[tuple[int, int], list[tuple[StandIn, str]]] = {}

    def read_context(self, names: Sequence[str], cluster: Sequence[Manifest]) -> None:
        """The context's files (read here, whole: the rules of runtimes ask for their
        TrainJobs' facts) and the cluster's objects."""
        self.context_names = list(names)
        for name in names:
            loaded, digest, _ = _read(Unit(0, name))
            for manifest in loaded.manifests:
                self.context.append((manifest, identify(digest or "", manifest)))
            if digest is not None:
                self.context_entries[name] = stored.context_entry(digest, self.stats[name], loaded)
        self.context.extend((manifest, f"cluster/{number}")
                            for number, manifest in enumerate(cluster))

    def check(self) -> Outcome:
        cached = self.cached()
        units = self.units([position for position in range(len(self.names))
                            if position not in cached])
        if self.cache is not None and units:
            self.cache.recall_verdicts()
            self.cache.recall_definitions()
        results = self.checked(units, cached)
        checked = len({position for position, _ in results})
        if self.cache is not None and results:
            self.cache.save_verdicts()
            self.cache.save_definitions()
        return self.outcome(cached, results, checked)

    def checked(
        self, units: list[Unit], cached: dict[int, tuple[stored.CachedFile, stored.Settled]],
        *, lasting: bool = True,
    ) -> dict[tuple[int, int], Result]:
        """What each unit gives, checked in two rounds; the files whose cache entries no
        longer hold are dropped from `cached` and checked too. (The index, and the shelves
        of both rounds, go with this method's frame.)

        With no cache to keep what was looked up, what a process finds by key it finds for
        good (`Index.lasting`): another object of that key is the run's only where two
        inputs share the key, which the whole run's index tells (`Index.collisions`: the
        units that found an object of such a key are checked again). One process that
        reads every file in the run's order makes that index as it goes, and keeps nothing
        to make it again with (what files provide). Where a slice stops short, what comes
        after it is none of the run, and may have been found: the run is checked again
        without that."""
        shelf = Shelf(self.sliced)
        in_order = not cached and self.processes(units) == 1
        lasting = lasting and self.cache is None
        first = self.checker(self.index(shelf, self.provided(cached, {})), shelf, indexing=True,
                             providing=not (lasting and in_order))
        first.run.index.lasting = lasting
        first.run.index.marking = lasting and not in_order
        results = {unit.key: result
                   for unit, result in zip(units, self.spread(units, first), strict=True)}
        stopped = any(result.get("stopped") for result in results.values())
        if lasting and stopped:
            del first, results
            return self.checked(units, cached, lasting=False)
        if in_order and not stopped:
            index = first.run.index
            index.complete()
            del first
        else:
            del first  # its index goes before the whole run's is made
            shelf = Shelf(self.sliced)
            index = self.index(shelf, self.provided(cached, results))
        if self.cache is None:  # what only the cache keeps of each unit
            for result in results.values():
                result["provides"] = None
        files, keys = self.stale(cached, results, index)
        if self.cache is None:
            for result in results.values():
                result["dependencies"] = None
        for position in files:
            cached.pop(position, None)
        for key in [key for key in results if key in keys or key[0] in files]:
            del results[key]
            self.taken.pop(key, None)
        by_key = {unit.key: unit for unit in units}
        again = sorted([*self.units(files), *(by_key[key] for key in keys)],
                       key=lambda unit: unit.key)
        second = self.checker(index, shelf, indexing=False)
        results.update((unit.key, result) for unit, result in
                       zip(again, self.spread(again, second), strict=True))
        return results

    def cached(self) -> dict[int, tuple[stored.CachedFile, stored.Settled]]:
        """The cache's entries of the files whose bytes and settings are unchanged, and
        that this build can read, each with its findings unpacked (the cache's rule texts:
        a finding whose rule it does not name is checked again)."""
        found: dict[int, tuple[stored.CachedFile, stored.Settled]] = {}
        if self.cache is None:
            return found
        for position, name in enumerate(self.names):
            entry = self.cache.lookup(name, self.known[name], self.keys[name]) \
                if name in self.known else None
            if entry is not None and stored.provides_read(entry["provides"]):
                settled = stored.unpacked(entry, position, Source(name), self.cache.texts)
                if settled is not None:
                    found[position] = entry, settled
        return found

    def units(self, positions: Sequence[int]) -> list[Unit]:
        """The units of the files at `positions`: a long one in slices (never where the
        fixes' edits are worked out: they need the whole file's objects)."""
        from trainlint.loader import SLICED_BYTES, slices

        found: list[Unit] = []
        for position in positions:
            name = self.names[position]
            size = (self.stats[name] or [0])[0]
            if (name not in self.sliced and name not in self.whole and size > SLICED_BYTES
                    and self.amend is None):
                try:
                    cut = slices(name, blake2b(digest_size=16))
                except OSError:
                    cut = None
                if cut is not None:
                    self.sliced[name] = cut
            if name in self.sliced:
                found.extend(_slice_units(position, name, self.sliced[name]))
            else:
                found.append(Unit(position, name, key=(position, 0)))
        return found

    def index(self, shelf: Shelf, provided: Iterable[tuple[StandIn, str]]) -> Index:
        """An index of the context and of the stand-ins `provided` (with what identifies
        each, in the run's order), which `shelf` fetches."""
        index = Index([], [manifest for manifest, _ in self.context], fetch=shelf.fetch)
        for manifest, identity in self.context:
            index.digests[id(manifest)] = identity
        for stand_in, identity in provided:
            index.add(stand_in, identity)
        return index

    def provided(
        self, cached: Mapping[int, tuple[stored.CachedFile, stored.Settled]],
        results: Mapping[tuple[int, int], Result],
    ) -> list[tuple[StandIn, str]]:
        """The stand-ins of what each file provides to the index, in the run's order: by
        file, then slice (those `take_in` made already, then let go)."""
        found = [((position, 0), entry["provides"]) for position, (entry, _) in cached.items()]
        stopped: dict[int, int] = {}  # where a file's first slice that stopped starts
        for (position, start), result in results.items():
            if result.get("stopped"):
                stopped[position] = min(start, stopped.get(position, start))
        found += [(key, result["provides"]) for key, result in results.items()
                  if key[1] <= stopped.get(key[0], key[1])]  # libyaml reads no further
        made = self.made
        self.made = {}
        return [pair for key, provides in sorted(found)
                for pair in made.get(key) or stored.stand_ins(self.names[key[0]], provides)]

    def checker(
        self, index: Index, shelf: Shelf, *, indexing: bool, providing: bool = True
    ) -> _Checker:
        run = Run([], settings_for=lambda source: self.settings_of(source.name), index=index)
        return _Checker(run, shelf, self.texts, self.amend, indexing=indexing,
                        providing=providing)

    def processes(self, units: list[Unit]) -> int:
        """How many processes check `units`."""
        many = len(units) if sum(map(self.size, units)) < SPREAD_BYTES else MIN_INPUTS
        return self.jobs if worth_it(self.jobs, many) else 1

    def spread(self, units: list[Unit], checker: _Checker) -> list[Result]:
        """What each unit gives, checked in batches (`BATCH_BYTES`) on the run's processes."""
        sizes = [self.size(unit) for unit in units]
        jobs = self.processes(units)
        most = BATCH_BYTES if jobs == 1 else max(
            MIN_BATCH_BYTES, min(BATCH_BYTES, sum(sizes) // (jobs * BATCHES_PER_PROCESS)))
        starts: list[int] = []
        filled = 0
        for number, size in enumerate(sizes):
            if not starts or filled + size > most:
                starts.append(number)
                filled = 0
            filled += size
        batches = []
        for start, end in itertools.pairwise([*starts, len(units)]):
            peek = end
            while peek < len(units) and (peek == end or sum(sizes[end:peek + 1]) <= PEEK_BYTES):
                peek += 1
            batches.append(Batch(units[start:end], units[end:peek]))
        if jobs == 1:
            done = [checker(batch) for batch in batches]
        else:
            take_in = partial(self.take_in, indexing=checker.indexing)
            done = share_out(batches, jobs, lambda batch: take_in(batch, checker(batch)),
                             checker, take_in)
        return [result for results in done for result in results]

    def take_in(self, batch: Batch, results: list[Result], *, indexing: bool) -> list[Result]:
        """A batch's results, each whole file's settled now (`settled`), and, on the
        round that is `indexing`, the stand-ins of what it provides made (`provided`).
        On several processes the parent does this between its own batches, and takes
        fewer of them for it: done after the last batch, it was a tail no other process
        shared (0.2 s in 10,000 files, 5 % of a run on two). Its price is memory: what
        the parent checks and what it took in are held at once (peak RSS 74 MB to 89 MB
        there). A long file's slices are left for the end (`joined`, `provided`): made
        early, the stand-ins of a 42,000-document file added 4 MB to its peak (116 to
        120 MB, the edge of its target) for 2 % of its time."""
        for unit, result in zip(batch.units, results, strict=True):
            if unit.piece is not None:
                continue  # a long file's slices, settled together (`joined`)
            self.taken[unit.key] = self.settled(unit.key[0], _opened(result))
            if indexing and result["provides"] is not None:
                self.made[unit.key] = stored.stand_ins(unit.name, result["provides"])
        return results

    def size(self, unit: Unit) -> int:
        """A unit's bytes."""
        if unit.piece is not None:
            return unit.piece.end - unit.piece.start
        return (self.stats[unit.name] or [0])[0]

    def stale(
        self, cached: Mapping[int, tuple[stored.CachedFile, stored.Settled]],
        results: Mapping[tuple[int, int], Result], index: Index,
    ) -> tuple[list[int], set[tuple[int, int]]]:
        """What to check again: the files whose cache entry looked up what finds other
        objects in the whole run's index, and those whose slices must be read whole; the
        units just checked whose look-ups find other objects there."""
        files = {position for position, (entry, _) in cached.items()
                 if not stored.still_holds(entry, index)}
        keys = set()
        for key, result in results.items():
            name = self.names[key[0]]
            if result.get("stopped") and (self.stats[name] or [0])[0] <= MAX_FILE_BYTES:
                self.sliced.pop(name, None)  # read whole from now on
                self.whole.add(name)
                files.add(key[0])
            elif not stored.still_holds(result, index):
                keys.add(key)
        return sorted(files), {key for key in keys if key[0] not in files}

    def outcome(
        self, cached: Mapping[int, tuple[stored.CachedFile, stored.Settled]],
        results: dict[tuple[int, int], Result], checked: int,
    ) -> Outcome:
        """The findings of every file, and the cache saved."""
        entries = {position: entry for position, (entry, _) in cached.items()}
        settled = {position: found for position, (_, found) in cached.items()}
        by_file: dict[int, list[tuple[int, Result]]] = {}
        for (position, start), result in sorted(results.items()):
            by_file.setdefault(position, []).append((start, result))
        results.clear()  # each result is let go once taken in (`joined`)
        for position, parts in by_file.items():
            name = self.names[position]
            if name in self.sliced:
                entries[position], settled[position] = self.joined(position, parts)
                continue
            entry = entries[position] = _opened(parts[0][1])
            taken = self.taken.pop((position, 0), None)
            settled[position] = self.settled(position, entry) if taken is None else taken
        settled = dict(sorted(settled.items()))
        notes = [note for checked_ in settled.values() for note in checked_.notes]
        added = finish({position: (self.settings_of(self.names[position]), found.suppressions)
                        for position, found in settled.items()}, notes, self.amend)
        findings = in_order([*found.found, *added[position]] for position, found in settled.items())
        if self.cache is not None:
            self.save(entries, added, findings)
        return Outcome(
            findings, self.names, checked,
            sum(int(entry["objects"]) for entry in entries.values()),
            [(self.names[position], Fragment.unpacked(numbers))
             for position, entry in sorted(entries.items()) for numbers in entry["fragments"]],
            stored.summed(entry["unchecked"] for entry in entries.values()),
        )

    def settled(self, position: int, entry: Result) -> stored.Settled:
        """A whole file's result, as settled."""
        name = self.names[position]
        unpacked = stored.unpacked(entry, position, Source(name), self.texts)
        assert unpacked is not None, f"an entry made by this run cannot be read: {name}"
        return unpacked

    def joined(
        self, position: int, parts: list[tuple[int, Result]]
    ) -> tuple[Result, stored.Settled]:
        """The entry of a long file from its slices' results (in order), and the file
        settled: their findings settled with the whole file's suppressions, objects
        numbered over the whole file. Where a slice stopped (in a file too large to read
        whole), the slices after it are dropped: libyaml would not have read past it. Each
        slice's result is let go once taken in."""
        name = self.names[position]
        source = Source(name)
        objects: dict[int, Manifest] = {}
        raw: dict[tuple[object, ...], Finding] = {}
        entries: list[Any] = []
        invalid: list[Any] = []
        notes: list[Packed] = []
        joined: Result = {"content": self.sliced[name].digest, "objects": 0, "fragments": [],
                          "unchecked": {}, "provides": [], "dependencies": {}}
        while parts:
            result = _opened(parts.pop(0)[1])
            before = joined["objects"]
            suppressions = unpack_suppressions(result["suppressions"], source, objects, before)
            entries += suppressions.entries
            invalid += suppressions.invalid
            for fields in result["settled"]:
                finding = unpack(fields, source, objects, self.texts, before)
                raw.setdefault((finding.code, finding.span, finding.message), finding)
            notes += [renumbered(note, before) for note in result["notes"]]
            joined["objects"] += result["objects"]
            joined["fragments"] += result["fragments"]
            joined["unchecked"] = stored.summed([joined["unchecked"], result["unchecked"]])
            if self.cache is not None:  # what only the cache keeps
                joined["provides"] += result["provides"]
                joined["dependencies"].update(result["dependencies"])
            if result["stopped"]:
                break
        suppressions = Suppressions(entries, invalid)
        found = suppressions.settle(self.settings_of(name), raw.values())
        del raw
        places = {id(manifest): number for number, manifest in objects.items()}
        joined["notes"] = notes
        joined["suppressions"] = pack_suppressions(suppressions, places)
        joined["settled"] = [_packed(finding, places, self.texts) for finding in found] \
            if self.cache is not None else []
        placed = stored.placed_in(objects)
        return joined, stored.Settled(
            found, suppressions, [unpack_note(note, position, placed, source) for note in notes])

    def save(
        self, entries: Mapping[int, stored.CachedFile], added: Mapping[int, list[Finding]],
        findings: list[Finding],
    ) -> None:
        """Keep each file's entry and what the run added to it."""
        assert self.cache is not None
        encoded = []
        contents = dict(self.known)
        for position, entry in sorted(entries.items()):
            name = self.names[position]
            if entry.get("content") is None:
                continue  # a file that cannot be read is read again next time
            contents[name] = entry["content"]
            encoded.append(stored.encoded(
                name, {**entry, "stat": self.stats[name], "settings": self.keys[name]}))
        for name, entry in self.context_entries.items():
            contents[name] = entry["content"]
            encoded.append(stored.encoded(name, entry))
        extra = {self.names[position]: [pack(finding, None, self.texts) for finding in more]
                 for position, more in added.items() if more}
        self.cache.save(stored.run_key([*self.names, *self.context_names], contents, self.keys),
                        encoded, {finding.code for finding in findings}, extra)
