"""How a run of the command line spends its process: the cycle collector off while it
checks, and an exit that frees nothing. Each buys the share of a run beside it, measured
on the benchmark corpus (`benchmarks/check.py`, `benchmarks/tricks.py`)."""

from __future__ import annotations

import gc
import os
import sys
from typing import NoReturn


def collector_off() -> None:
    """A run allocates a tree of plain containers per document and frees nothing until it
    ends, and what it drops reference counting frees: collecting cycles would only cost
    time (a quarter of the run at the default thresholds; peak memory measured the same
    without it; benchmarks/tricks.py: checking 2,000 files in-process takes 0.79 of the
    time with it off). Forked workers inherit this, so they do not touch the shared
    pages."""
    gc.disable()


def collect_again() -> None:
    """Collect cycles again, the run's objects counted as old: re-enabled with them all
    still young, the collector would first go through every one (a twentieth of a large
    run, spent just before exiting)."""
    gc.freeze()  # every tracked object to the permanent generation...
    gc.unfreeze()  # ...and back, into the oldest one
    gc.enable()


def leave(code: object) -> NoReturn:
    """Exit once the output is flushed, without freeing the run's objects one by one (a
    large run would spend a twentieth of its time on that)."""
    if code is not None and not isinstance(code, int):
        raise SystemExit(code)  # a message: Python prints it
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:
        pass  # the reader went away (`| head`): nothing more can be said to it
    os._exit(code or 0)
