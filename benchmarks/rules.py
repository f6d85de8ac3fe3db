"""Where checking time goes: each rule's own time, each shared memo's builds, the engine.

    python3 benchmarks/rules.py [--runs 3] [--files 10000] [--top 30]

Checks the corpus of `check.py` in-process on one core (files read first, the cycle
collector off, as in `trainlint check --jobs 1`) and times, with `perf_counter` around
each call, rather than a profiler (which inflates the many small functions):
- every rule's `check` on every object, its generator drained inside the timing;
- every build of a memo (`trainlint.memo`: the render, the schema walk, the CRD rules'
  violations...), named by the memo, and taken out of the time of whichever rule asked
  first, so a rule's own time is what it adds with its shared helpers already worked out;
- the engine's turning of problems into findings (`_from_problem`), and settling
  (severities, suppressions) per input.
"engine" is the rest of the whole check: the loop over objects and rules, the index, and
what the timing itself costs beyond its calibration (so it reads high; with every check
made empty, the engine alone takes about 0.11 s of 10,000 files). A nested memo's wrapper
shows the same way in the memo that asks for it (`render` asking `render (run)`).
Medians of `--runs` rounds, in milliseconds; the whole check's CPU time beside it.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import DEFAULT_DIR, write_files

from trainlint import loader, memo
from trainlint.engine import index, run
from trainlint.engine.context import Context
from trainlint.rule import Rule
from trainlint.run import parallel


class Clock:
    """Own (exclusive) time per name: a timed call's time less that of the timed calls
    it makes."""

    def __init__(self) -> None:
        self.own: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self._inner: list[float] = []
        self._outside = 0.0
        self._outside = self._calibrated()

    def _calibrated(self, count: int = 100_000) -> float:
        """What a timed call costs its caller beyond the time it measures itself: taken
        off the caller's own time, so the timing shows little in the rows that time."""
        def empty() -> None:
            pass

        started = time.perf_counter()
        for _ in range(count):
            self.time("calibration", empty)
        whole = time.perf_counter() - started
        outside = (whole - self.own.pop("calibration")) / count
        self.calls.pop("calibration")
        return outside

    def time(self, name: str, action: Callable[[], Any]) -> Any:
        self._inner.append(0.0)
        started = time.perf_counter()
        try:
            return action()
        finally:
            spent = time.perf_counter() - started
            inner = self._inner.pop()
            self.own[name] += spent - inner
            self.calls[name] += 1
            if self._inner:
                self._inner[-1] += spent + self._outside


def instrument(clock: Clock) -> None:
    """Every rule's check, memo build, finding and settling timed by `clock`."""
    rules_for = run._Plan.rules_for

    def timed_rules(plan: run._Plan, kind: str) -> list[tuple[Rule, Context]]:
        return [(_timed_rule(clock, rule), context) for rule, context in rules_for(plan, kind)]

    run._Plan.rules_for = timed_rules  # type: ignore[method-assign,assignment]

    value_get = memo.PerValue.get

    def timed_value(self: memo.PerValue[Any], value: Any, build: Callable[[], Any],
                    *what: Any) -> Any:
        return value_get(self, value, lambda: clock.time(f"memo {self.name}", build), *what)

    memo.PerValue.get = timed_value  # type: ignore[method-assign]
    per_object = index.Index.per_object

    def timed_object(self: index.Index, name: str, what: Any, of: Any,
                     build: Callable[[], Any]) -> Any:
        return per_object(self, name, what, of, lambda: clock.time(f"memo {name}", build))

    index.Index.per_object = timed_object  # type: ignore[method-assign]
    per_run = index.Index.per_run

    def timed_run(self: index.Index, of: Any, what: Any, build: Callable[[], Any], *,
                  recent: bool = False) -> Any:
        return per_run(self, of, what, lambda: clock.time(f"memo {what[0]} (run)", build),
                       recent=recent)

    index.Index.per_run = timed_run  # type: ignore[method-assign]
    from_problem = run._from_problem
    run._from_problem = lambda *args: clock.time(
        "engine: findings", lambda: from_problem(*args))
    settle_input = run.Run.settle_input
    run.Run.settle_input = lambda self, *args: clock.time(  # type: ignore[method-assign]
        "engine: settle", lambda: settle_input(self, *args))


def _timed_rule(clock: Clock, rule: Rule) -> Rule:
    check = rule.check
    name = f"{rule.code} {rule.name}"

    def timed(*args: Any) -> Iterator[Any]:
        return iter(clock.time(name, lambda: list(check(*args))))

    return rule._replace(check=timed)


def _check(inputs: list[Any]) -> None:
    parallel.lint_all(run.Run(inputs), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--files", type=int, default=10000)
    parser.add_argument("--top", type=int, default=30)
    arguments = parser.parse_args()
    folder = DEFAULT_DIR / f"files-{arguments.files}"
    if not folder.exists():
        write_files(folder, arguments.files)
    paths = sorted(path for path in folder.rglob("*.yaml"))
    clock = Clock()
    instrument(clock)
    rounds: list[dict[str, float]] = []
    wholes: list[float] = []
    for _ in range(arguments.runs):
        inputs = [loader.load_bytes(path.read_bytes(), str(path)) for path in paths]
        clock.own.clear()
        clock.calls.clear()
        gc.disable()
        started = time.process_time()
        try:
            clock.time("engine", partial(_check, inputs))
        finally:
            wholes.append(time.process_time() - started)
            gc.enable()
        rounds.append(dict(clock.own))
    calls = dict(clock.calls)
    names = sorted(rounds[0], key=lambda name: -statistics.median(r[name] for r in rounds))
    total = statistics.median(sum(r.values()) for r in rounds)
    print(f"{len(paths)} files, {arguments.runs} rounds: checking {total * 1e3:.0f} ms timed,"
          f" {statistics.median(wholes) * 1e3:.0f} ms CPU")
    print(f"{'part':58} {'ms':>7} {'share':>6} {'calls':>8} {'us/call':>8}")
    shown = 0.0
    for name in names[: arguments.top]:
        spent = statistics.median(r[name] for r in rounds)
        shown += spent
        print(f"{name[:58]:58} {spent * 1e3:7.1f} {spent / total:6.1%} {calls[name]:8}"
              f" {spent / calls[name] * 1e6:8.1f}")
    rest = len(names) - arguments.top
    if rest > 0:
        print(f"{f'the other {rest}':58} {(total - shown) * 1e3:7.1f}"
              f" {(total - shown) / total:6.1%}")


if __name__ == "__main__":
    main()
