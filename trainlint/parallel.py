"""Checking on several cores: inputs are read, then checked, in forked worker processes.

The rules are pure functions of an input and the run's shared index, so once every input
is read the parent builds the `Run` and forks: each worker inherits it as it is (no copy
is sent) and returns only its findings, packed (`trainlint.packed`). Findings land only on
the input checked, so workers settle them too (suppressions, severities); the parent puts
them in order, and the output is the same as with one process.

The parent is one of the `jobs`: it reads and checks the first share of the inputs while
`jobs - 1` workers do the rest, so only their shares are copied back to it. They hand
them back through files: a parent busy with its own share would leave them waiting on a
pipe.
"""

from __future__ import annotations

import os
import pickle
import signal
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from trainlint.engine import Finding, Run
from trainlint.packed import Packed, numbers, pack, texts, unpack
from trainlint.rule import all_rules

#: Below this many inputs, starting workers costs more than it saves.
MIN_INPUTS = 200
#: The parent's share against a worker's: workers also pickle what they made, and the
#: parent unpickles it only once its own share is done (measured best on 10,000 files:
#: 1.25 left the workers idle at the end, 1.05 the parent).
PARENT_WEIGHT = 1.15

T = TypeVar("T")
R = TypeVar("R")


def available_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def worth_it(jobs: int, inputs: int) -> bool:
    return jobs > 1 and inputs >= MIN_INPUTS and hasattr(os, "fork")


def read_all(names: Sequence[str], read: Callable[[str], R], jobs: int) -> list[R]:
    """`read` every name, in order, on `jobs` processes."""
    if not worth_it(jobs, len(names)):
        return [read(name) for name in names]
    mine, theirs = _spread(names, jobs, read, read)
    return mine + theirs


def lint_all(run: Run, jobs: int) -> list[Finding]:
    """`run`'s findings, its inputs checked and settled on `jobs` processes."""
    settled = settle_all(run, range(len(run.inputs)), jobs)
    findings = [finding for found, _ in settled.values() for finding in found]
    return sorted(findings, key=Finding.sort_key)


def settle_all(
    run: Run, positions: Sequence[int], jobs: int, *, packed: bool = False
) -> dict[int, tuple[list[Finding], list[Packed]]]:
    """The findings of the inputs at `positions` (in that order), checked and settled on
    `jobs` processes, each with the same findings packed: always for the inputs workers
    checked (they come packed), for all of them with `packed` (the cache keeps them)."""
    spread = worth_it(jobs, len(positions))
    places = numbers(run.inputs) if packed or spread else {}
    known = texts(all_rules()) if packed or spread else {}

    def settle(position: int) -> list[Finding]:
        return run.settle_input(position, run.check(position))

    def pack_all(found: list[Finding]) -> list[Packed]:
        return [
            pack(
                finding, None if finding.manifest is None else places[id(finding.manifest)], known
            )
            for finding in found
        ]

    def here(position: int) -> tuple[list[Finding], list[Packed]]:
        found = settle(position)
        return found, pack_all(found) if packed else []

    def there(position: int) -> tuple[list[Packed], dict[str, str] | None]:
        return pack_all(settle(position)), run.dependencies.get(position)

    if not spread:
        return {position: here(position) for position in positions}
    mine, theirs = _spread(positions, jobs, here, there)
    settled = dict(zip(positions, mine, strict=False))
    for position, (found, dependencies) in zip(positions[len(mine) :], theirs, strict=True):
        if dependencies is not None:
            run.dependencies[position] = dependencies
        item = run.inputs[position]
        unpacked = [unpack(fields, item.source, item.manifests, known) for fields in found]
        settled[position] = unpacked, found
    return settled


def _spread(
    items: Sequence[T], jobs: int, here: Callable[[T], R], there: Callable[[T], Any]
) -> tuple[list[R], list[Any]]:
    """`here` over the parent's share of `items` and `there` over the workers' shares, in
    forked processes: both results, in the order of `items`."""
    cut = round(len(items) * PARENT_WEIGHT / (PARENT_WEIGHT + jobs - 1))
    rest = items[cut:]
    shares = [rest[index :: jobs - 1] for index in range(jobs - 1)]
    workers: dict[int, Path] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="trainlint-") as folder:
            for index, share in enumerate(shares):
                path = Path(folder) / f"{index}.pickle"
                workers[_start(share, there, path)] = path
            mine = [here(item) for item in items[:cut]]
            done = [_collect(pid, workers.pop(pid)) for pid in list(workers)]
    except OSError:  # no temporary folder, or no room in it: this process does it all
        return [here(item) for item in items], []
    finally:
        for pid in workers:  # the parent failed first: its workers' results are not wanted
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    theirs = [done[index % (jobs - 1)][index // (jobs - 1)] for index in range(len(rest))]
    return mine, theirs


def _start(share: Sequence[Any], there: Callable[[Any], Any], path: Path) -> int:
    """Fork a worker that runs `there` over `share` and writes the results (or the
    exception that stopped it) to `path`; its process id."""
    pid = os.fork()
    if pid:
        return pid
    status = 1
    try:
        try:
            results: object = [there(item) for item in share]
        except Exception as error:  # raised again in the parent
            results = error
        path.write_bytes(pickle.dumps(results, pickle.HIGHEST_PROTOCOL))
        status = 0
    finally:
        os._exit(status)  # never back into the parent's code: no cleanup, no flushing


def _collect(pid: int, path: Path) -> list[Any]:
    """A worker's results, once it ended (written by that worker of this run, never an
    outside file)."""
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise OSError(f"a worker could not hand back its results (wait status {status})")
    results: list[Any] | Exception = pickle.loads(path.read_bytes())
    if isinstance(results, Exception):
        raise results
    return results
