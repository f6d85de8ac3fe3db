"""What parsing one file in pieces on two processes gives, against parsing it whole.

    python3 benchmarks/split.py [--runs 7]

The files are the first documents of the benchmark's multi-document file (`check.py`),
from 64 KB to all of it (12 MB). Each is parsed with the cycle collector off, as a run
parses, in a child process of its own: whole (`trainlint.loader.load`), and in pieces on
two processes (`trainlint.run.parallel`'s spread, its workers forked); then the whole
file in pieces of several sizes. Medians of `--runs` rounds, wall time and CPU time (the
workers' included): below the size where the pieces win, a file is parsed whole
(`parallel.SPLIT_CHARACTERS`); the size of a piece is `parallel.PIECE`.
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import DEFAULT_DIR, write_stream

from trainlint import loader
from trainlint.rule import all_rules
from trainlint.run import parallel

#: The sizes of the files measured, in KB.
SIZES = (64, 128, 256, 512, 1024, 4096)
#: The sizes of the pieces the whole file is measured in, in KB.
PIECES = (4, 16, 64, 256)


class _Pieces(parallel._Pieces):
    """The run's spread, with pieces of a size given and no threshold."""

    def __init__(self, jobs: int, piece: int) -> None:
        super().__init__(jobs)
        self.piece = piece

    def pieces(self, characters: int) -> int:
        return max(1, characters // self.piece)


def measure(stream: Path, size: int, piece: int | None) -> tuple[float, float, float]:
    """Wall seconds, and CPU seconds of the process and of its worker, of parsing the
    documents of the first `size` characters of `stream` (whole, or in pieces of `piece`
    characters on two processes), in a child forked for it: a run forks its workers while
    it is small, and this process grows with what it measured."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            os.close(read_end)
            gc.disable()
            text = prefix(stream.read_text(), size)
            spread = None if piece is None else _Pieces(2, piece)
            before = [_cpu(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
            started = time.perf_counter()
            loader.load(text, "f.yaml", spread=spread)
            wall = time.perf_counter() - started
            own, worker = (_cpu(who) - was for who, was in zip(
                (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN), before, strict=True))
            os.write(write_end, f"{wall} {own} {worker}".encode())
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end) as told:
        wall, own, worker = map(float, told.read().split())
    os.waitpid(pid, 0)
    return wall, own, worker


def _cpu(who: int) -> float:
    used = resource.getrusage(who)
    return used.ru_utime + used.ru_stime


def medians(
    actions: dict[str, Callable[[], tuple[float, ...]]], runs: int
) -> dict[str, tuple[float, ...]]:
    """The median of each figure of each action, every round running each once."""
    spent: dict[str, list[tuple[float, ...]]] = {name: [] for name in actions}
    for _ in range(runs):
        for name, action in actions.items():
            spent[name].append(action())
    return {name: tuple(map(statistics.median, zip(*figures, strict=True)))
            for name, figures in spent.items()}


def prefix(text: str, size: int) -> str:
    """The documents of `text` that fit in `size` characters (the first one at least)."""
    end = text.rfind("\n---\n", 0, size)
    return text if end < 0 or size >= len(text) else text[: end + 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    stream = DEFAULT_DIR / "stream-10000.yaml"
    if not stream.exists():
        write_stream(stream, 10_000)
    size = stream.stat().st_size
    sizes = [kb * 1024 for kb in SIZES] + [size]
    all_rules()  # imported while the workers parse, as in a run: not measured
    actions: dict[str, Callable[[], tuple[float, ...]]] = {}
    for measured in sizes:
        actions[f"whole {measured}"] = partial(measure, stream, measured, None)
        actions[f"pieces {measured}"] = partial(measure, stream, measured, parallel.PIECE)
    for piece in PIECES:
        actions[f"piece {piece}"] = partial(measure, stream, size, piece * 1024)
    spent = medians(actions, args.runs)
    print(f"parsing one file, whole and in pieces of {parallel.PIECE // 1024} KB on two "
          f"processes (median of {args.runs} rounds, ms; CPU: the parent's + the worker's):")
    for measured in sizes:
        whole, pieces = spent[f"whole {measured}"], spent[f"pieces {measured}"]
        print(f"  {measured // 1024:>6} KB: whole {whole[0] * 1000:7.1f} "
              f"({whole[1] * 1000:6.1f} CPU), in pieces {pieces[0] * 1000:7.1f} "
              f"({pieces[1] * 1000:6.1f} + {pieces[2] * 1000:6.1f} CPU): "
              f"{whole[0] / pieces[0]:.2f}x the speed, {whole[1] / pieces[1]:.2f}x in the "
              "parent's CPU")
    whole = spent[f"whole {size}"]
    print(f"the whole file ({size // 1024:,} KB) in pieces of:")
    for piece in PIECES:
        wall, own, worker = spent[f"piece {piece}"]
        print(f"  {piece:>4} KB: {wall * 1000:7.1f} ms ({own * 1000:6.1f} + {worker * 1000:6.1f} "
              f"CPU): {whole[0] / wall:.2f}x whole")


if __name__ == "__main__":
    main()
