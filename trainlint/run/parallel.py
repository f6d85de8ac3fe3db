"""Work on several cores: items shared out to forked worker processes (`share_out`).

The parent is one of the `jobs`. The items are cut into chunks, the first large (few
hand-offs), the last small (every process ends at about the same time), and every process
takes the next chunk from one queue: a process that meets long files or slow objects just
takes fewer. Workers append each chunk's results to a file of their own, and the parent
takes in what they finished between its own chunks: a parent busy with its share would
leave them waiting on a pipe, and taking it all in at the end would leave them idle.

What is shared out: checking files where they are read (`trainlint.run.check`); reading
the files of a run whose objects are all read first (`read_all`: `--base`, standard
input), a few long ones cut into pieces of whole documents (`trainlint.loader.Spread`);
and checking such a run (`lint_all`), whose workers inherit it as it is (no copy is sent)
and send back their inputs' findings, notes and suppressions, packed
(`trainlint.run.packed`), for the parent to finish (`Run.finish`).
"""

from __future__ import annotations

import os
import pickle
import struct
from collections.abc import Callable, Iterator, Sequence
from typing import IO, TYPE_CHECKING, Any, NamedTuple, TypeVar

from trainlint.engine.run import Amend, Run
from trainlint.engine.settle import Suppressions
from trainlint.finding import Finding, Note, in_order
from trainlint.problem import Severity
from trainlint.rule import all_rules, listed_rules
from trainlint.run.packed import (
    Packed,
    numbers,
    pack,
    pack_note,
    pack_suppressions,
    texts,
    unpack,
    unpack_note,
    unpack_suppressions,
)

if TYPE_CHECKING:
    from trainlint.loader import Spread

#: Below this many inputs, starting workers costs more than it saves.
MIN_INPUTS = 200
#: A chunk holds this share of the inputs not yet handed out, divided by the processes.
GUIDE = 4
#: The fewest inputs in a chunk: each costs a hand-off and a record.
MIN_CHUNK = 4
#: The queue holds every chunk's number before any worker starts, in one write to a pipe:
#: 2 bytes each, at most 500 bytes, which POSIX lets any pipe take at once.
MAX_CHUNKS = 250

T = TypeVar("T")
R = TypeVar("R")
K = TypeVar("K")
_NUMBER = struct.Struct("H")
_LENGTH = struct.Struct("Q")


def available_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def worth_it(jobs: int, inputs: int) -> bool:
    return jobs > 1 and inputs >= MIN_INPUTS and hasattr(os, "fork")


def read_all(
    names: Sequence[str], read: Callable[[str, Spread | None], R], jobs: int
) -> list[R]:
    """`read` every name, in order, on `jobs` processes (the parent imports the rules
    while the workers start reading: checking needs them next). Too few names to spread,
    they are read one after the other, and `read` parses each long one in pieces on every
    process (its second argument, when there is more than one)."""
    if not worth_it(jobs, len(names)):
        spread = _Pieces(jobs) if jobs > 1 and hasattr(os, "fork") else None
        return [read(name, spread) for name in names]

    def whole(name: str) -> R:
        return read(name, None)

    return share_out(names, jobs, whole, whole, _same, meanwhile=all_rules)


#: A text shorter than this is parsed whole. In pieces on two processes, a file is parsed
#: at 0.7x the speed up to 128 KB (forking, the worker's results to unpickle), 1.14x at
#: 256 KB, 1.49x at 512 KB and 1.5-1.8x from 1 MB to 12 MB; with no second core free, at
#: 0.6-0.9x up to 4 MB (benchmarks/split.py, a quiet round and a busy one).
SPLIT_CHARACTERS = 512 * 1024
#: The characters of a piece. One costs 15 us to set libyaml up for, and the processes
#: take at least four at a time (`MIN_CHUNK`): a file of 512 KB is eight chunks.
PIECE = 16 * 1024


class _Pieces:
    """Parses the pieces of a long text on `jobs` processes (a `trainlint.loader.Spread`)."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs

    def pieces(self, characters: int) -> int:
        return 1 if characters < SPLIT_CHARACTERS else characters // PIECE

    def __call__(self, work: Callable[[T], R], items: Sequence[T]) -> list[R]:
        return share_out(items, self.jobs, work, work, _same, meanwhile=all_rules)


def _same(_: object, result: R) -> R:
    """A worker's result as the parent's: the same."""
    return result


def lint_all(run: Run, jobs: int, amend: Amend | None = None) -> list[Finding]:
    """`run`'s findings, its inputs checked and settled on `jobs` processes (a run whose
    objects are all read first: `--base`, standard input; others check files where they
    are read, `trainlint.run.check`)."""
    settled = settle_all(run, range(len(run.inputs)), jobs, amend)
    notes = [note for checked in settled.values() for note in checked.notes]
    added = run.finish({position: (checked.found, checked.suppressions)
                        for position, checked in settled.items()}, notes, amend)
    return in_order([*checked.found, *added[position]] for position, checked in settled.items())


class Settled(NamedTuple):
    """An input checked and settled (`Run.settle_input`), and the notes of its facts."""

    found: list[Finding]
    suppressions: Suppressions
    notes: list[Note]


def settle_all(
    run: Run, positions: Sequence[int], jobs: int, amend: Amend | None = None
) -> dict[int, Settled]:
    """The inputs at `positions`, checked and settled on `jobs` processes, with what
    `amend` adds to their findings (and to their notes' fixes), worked out where they
    were found. Workers inherit the run and send back what they found, packed."""
    places = numbers(run.inputs)
    known = texts(listed_rules())

    def here(position: int) -> Settled:
        found, suppressions = run.settle_input(position, run.check(position))
        notes = run.notes[position]
        if amend is not None:
            found, notes = amend(found), amended_notes(notes, amend)
        return Settled(found, suppressions, notes)

    def there(position: int) -> tuple[list[Packed], Packed, list[Packed]]:
        found, suppressions, notes = here(position)
        return ([pack(finding, None if finding.manifest is None else places[id(finding.manifest)],
                      known) for finding in found],
                pack_suppressions(suppressions, places), [pack_note(note) for note in notes])

    def receive(position: int, result: tuple[list[Packed], Packed, list[Packed]]) -> Settled:
        found, suppressions, notes = result
        item = run.inputs[position]
        return Settled(
            [unpack(fields, item.source, item.manifests, known) for fields in found],
            unpack_suppressions(suppressions, item.source, item.manifests),
            [unpack_note(note, position, run.placed, item.source) for note in notes],
        )

    if not worth_it(jobs, len(positions)):
        return {position: here(position) for position in positions}
    return dict(zip(positions, share_out(positions, jobs, here, there, receive), strict=True))


def amended_notes(notes: list[Note], amend: Amend) -> list[Note]:
    """The notes with their fixes' edits worked out (`amend`), here, where the objects
    they edit are: a finding the cross-object pass makes of a note carries its fix."""
    fixed = [note for note in notes if note.fix is not None and note.fix.edits is None]
    if not fixed:
        return notes
    found = amend([Finding(note.code, "", Severity.ERROR, "", None, note.source, note.span,
                           note.path, note.object, note.fix, note.manifest)
                   for note in fixed])
    fixes = {id(note): finding.fix for note, finding in zip(fixed, found, strict=True)}
    return [note._replace(fix=fixes[id(note)]) if id(note) in fixes else note
            for note in notes]


def share_out(
    items: Sequence[T], jobs: int, here: Callable[[T], R], there: Callable[[T], Any],
    receive: Callable[[T, Any], R], meanwhile: Callable[[], object] | None = None,
) -> list[R]:
    """`here` over the chunks of `items` the parent takes, `there` over those the workers
    take, in forked processes (`receive` turns a worker's result into the parent's kind):
    every result, in the order of `items`. The parent first runs `meanwhile`, once the
    workers have started."""
    import signal  # only a run on several processes needs it (its enums cost start-up)

    chunks = _chunks(len(items), jobs)
    try:
        outboxes = [_Outbox() for _ in range(jobs - 1)]  # before the forks: both sides use them
        queue = _queue(len(chunks))
    except OSError:  # no temporary file or pipe to spare: this process does it all
        return [here(item) for item in items]
    done: dict[int, list[R]] = {}
    workers: dict[int, _Outbox] = {}

    def take(outbox: _Outbox) -> None:
        for number, results in outbox.take():
            if number is None:
                raise results  # what stopped the worker
            done[number] = [
                receive(items[index], result)
                for index, result in zip(chunks[number], results, strict=True)
            ]

    try:
        for outbox in outboxes:
            workers[_start(queue, chunks, items, there, outbox)] = outbox
        if meanwhile is not None:
            meanwhile()
        for number in _claims(queue):
            done[number] = [here(items[index]) for index in chunks[number]]
            for outbox in workers.values():
                take(outbox)
        for pid in list(workers):
            os.waitpid(pid, 0)  # however it ended, what it delivered counts
            take(workers.pop(pid))
    finally:
        for pid in workers:  # the parent stopped first: its workers' results are not wanted
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        os.close(queue)
        for outbox in outboxes:
            outbox.close()
    for number, chunk in enumerate(chunks):
        if number not in done:  # its worker died on the way (out of memory...)
            done[number] = [here(items[index]) for index in chunk]
    return [result for number in range(len(chunks)) for result in done[number]]


def _chunks(count: int, jobs: int) -> list[range]:
    """Consecutive ranges covering `count` items, each holding `1 / (GUIDE * jobs)` of
    those still left, and at most `MAX_CHUNKS` of them."""
    least = max(MIN_CHUNK, -(-count // (MAX_CHUNKS // 2)))
    chunks = []
    start = 0
    while start < count:
        stop = min(count, start + max(least, (count - start) // (GUIDE * jobs)))
        chunks.append(range(start, stop))
        start = stop
    return chunks


def _queue(chunks: int) -> int:
    """A pipe holding every chunk's number, closed for writing: the end to read from."""
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, b"".join(_NUMBER.pack(number) for number in range(chunks)))
    except OSError:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)
    return read_end


def _claims(queue: int) -> Iterator[int]:
    """The numbers of the chunks this process takes, until none is left: a pipe hands
    each one out to a single reader."""
    while number := os.read(queue, _NUMBER.size):
        yield _NUMBER.unpack(number)[0]


class _Outbox:
    """A worker's results, chunk by chunk, in an unnamed temporary file: the worker
    appends, the parent reads every record complete so far."""

    def __init__(self) -> None:
        import tempfile  # only a run on several processes needs it

        # Closed by `close`, once the worker is done with it.
        self.file: IO[bytes] = tempfile.TemporaryFile(prefix="trainlint-")  # noqa: SIM115
        self.taken = 0

    def put(self, record: object) -> None:
        data = pickle.dumps(record, pickle.HIGHEST_PROTOCOL)
        # The length first: a reader that finds fewer bytes than it announces comes back.
        for part in (_LENGTH.pack(len(data)), data):
            view = memoryview(part)
            while view:
                view = view[os.write(self.file.fileno(), view) :]

    def take(self) -> Iterator[tuple[int | None, Any]]:
        while True:
            length = os.pread(self.file.fileno(), _LENGTH.size, self.taken)
            if len(length) < _LENGTH.size:
                return
            (size,) = _LENGTH.unpack(length)
            data = os.pread(self.file.fileno(), size, self.taken + _LENGTH.size)
            if len(data) < size:
                return  # still being written
            self.taken += _LENGTH.size + size
            yield pickle.loads(data)

    def close(self) -> None:
        self.file.close()


def _start(
    queue: int, chunks: list[range], items: Sequence[Any], there: Callable[[Any], Any],
    outbox: _Outbox,
) -> int:
    """Fork a worker that runs `there` over the chunks it takes from `queue` and puts each
    chunk's results (or the exception that stopped it) in `outbox`; its process id."""
    pid = os.fork()
    if pid:
        return pid
    status = 1
    try:
        for number in _claims(queue):
            try:
                results = [there(items[index]) for index in chunks[number]]
            except Exception as error:  # raised again in the parent
                outbox.put((None, error))
                break
            outbox.put((number, results))
        status = 0  # a record it could not write ends it with 1: the parent does the rest
    finally:
        os._exit(status)  # never back into the parent's code: no cleanup, no flushing
