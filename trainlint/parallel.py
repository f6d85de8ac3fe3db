"""Checking on several cores: inputs are read, then checked, in forked worker processes.

The rules are pure functions of an input and the run's shared index, so once every input
is read the parent builds the `Run` and forks: each worker inherits it as it is (no copy
is sent) and returns only its findings, packed (`trainlint.packed`). Settling (suppressions,
severities, order) stays in the parent, so the output is the same as with one process.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from trainlint.document import Loaded
from trainlint.engine import Checked, Finding, Run
from trainlint.packed import Packed, numbers, pack, unpack_checked

if TYPE_CHECKING:
    from multiprocessing.pool import Pool

#: Inputs per task: large enough to amortise a round trip, small enough to balance cores.
CHUNK = 64
#: Below this many inputs, starting workers costs more than it saves.
MIN_INPUTS = 200

#: The state a forked worker inherits (set in the parent just before forking).
_READ: Callable[[str], Loaded] | None = None
_RUN: tuple[Run, dict[int, int]] | None = None


def available_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def worth_it(jobs: int, inputs: int) -> bool:
    return jobs > 1 and inputs >= MIN_INPUTS and hasattr(os, "fork")


def _pool(jobs: int) -> Pool:
    """Forked workers (imported here: most runs never fork, and the import is not free)."""
    import multiprocessing

    return multiprocessing.get_context("fork").Pool(jobs)


def read_all(names: Sequence[str], read: Callable[[str], Loaded], jobs: int) -> list[Loaded]:
    """`read` every name, in order, on `jobs` processes."""
    global _READ  # noqa: PLW0603 - handed to the forked workers
    if not worth_it(jobs, len(names)):
        return [read(name) for name in names]
    _READ = read
    try:
        with _pool(jobs) as pool:
            return pool.map(_read_one, names, chunksize=CHUNK)
    finally:
        _READ = None


def lint_all(run: Run, jobs: int) -> list[Finding]:
    """`run`'s findings, its inputs checked on `jobs` processes."""
    checked = check_all(run, range(len(run.inputs)), jobs)
    return run.settle(checked.values())


def check_all(run: Run, positions: Sequence[int], jobs: int) -> dict[int, Checked]:
    """The raw findings of the inputs at `positions`, checked on `jobs` processes."""
    global _RUN  # noqa: PLW0603 - handed to the forked workers
    if not worth_it(jobs, len(positions)):
        return {position: run.check(position) for position in positions}
    _RUN = run, numbers(run.inputs)
    try:
        with _pool(jobs) as pool:
            results = pool.map(_check_packed, positions, chunksize=CHUNK)
    finally:
        _RUN = None
    loaded = {item.source.name: item for item in run.inputs}
    checked = {}
    for position, (packed, dependencies) in zip(positions, results, strict=True):
        if dependencies is not None:
            run.dependencies[position] = dependencies
        found = unpack_checked(packed, loaded)
        assert found is not None  # every file of the run is in `loaded`
        checked[position] = found
    return checked


def _read_one(name: str) -> Loaded:
    assert _READ is not None
    return _READ(name)


def _check_packed(position: int) -> tuple[list[Packed], dict[str, str] | None]:
    assert _RUN is not None
    run, places = _RUN
    packed = [
        pack(finding, None if manifest is None else places[id(manifest)])
        for finding, manifest in run.check(position)
    ]
    return packed, run.dependencies.get(position)
