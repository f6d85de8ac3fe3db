"""What hostile input costs `trainlint check`: time, CPU and peak RSS of real runs, each
beside a run on one ordinary manifest in the same round (the baseline).

    python3 benchmarks/hostile.py [--runs 3]

The inputs: a 20 MB flow sequence of 10 M items, a 100 MB file of ordinary manifests, a
named pipe and a link to `/dev/zero` in the checked folder, and `--diff` on a file whose
other document is a 12-level alias bomb. Each run is stopped after `TIMEOUT` seconds (a
hang shows as `timeout`). Everything is written to a temporary folder, removed at the end,
by a process of its own: a run's peak RSS counts what the process that started it held.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check import TRAINLINT
from corpus import ROOT, documents

#: Seconds a run may take before it is stopped.
TIMEOUT = 120


class Outcome(NamedTuple):
    seconds: float
    cpu: float
    #: Peak resident memory, in MB.
    rss: float
    #: The exit status, or None when the run was stopped.
    status: int | None


def run(arguments: list[str], cwd: Path) -> Outcome:
    """One `trainlint check` in a real process, with what the kernel counted of it."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [TRAINLINT, "check", "--isolated", "--no-cache", *arguments], cwd=cwd,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() - started > TIMEOUT:
            process.kill()
            _, status, usage = os.wait4(process.pid, 0)
            status = -1
            break
        time.sleep(0.01)
    seconds = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status) if status != -1 else None
    return Outcome(seconds, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, code)


def bomb(levels: int) -> str:
    rows = ["l0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
    rows += [f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 10)}]" for n in range(1, levels)]
    return "\n".join(rows) + "\n"


def write_inputs(folder: Path) -> None:
    (folder / "flow.yaml").write_text("[" + "0," * 10_000_000 + "0]\n")
    stream = "---\n".join(documents(10_000))
    with (folder / "large.yaml").open("w") as large:
        while large.tell() < 100_000_000:
            large.write(stream + "\n---\n")
    special = folder / "special"
    special.mkdir()
    os.mkfifo(special / "pipe.yaml")
    (special / "zero.yaml").symlink_to("/dev/zero")
    shutil.copyfile(next(iter(sorted((ROOT / "examples").rglob("*.yaml")))), special / "a.yaml")
    bombed = folder / "bombed.yaml"
    bombed.write_text(
        (ROOT / "fixtures" / "fix" / "finetune.yaml").read_text() + "---\n" + bomb(12)
    )


def cases(folder: Path) -> dict[str, Callable[[], Outcome]]:
    """How each input is checked."""
    ordinary = next(iter(sorted((ROOT / "examples").rglob("*.yaml"))))
    return {
        "one ordinary manifest (baseline)": lambda: run([str(ordinary)], folder),
        "20 MB flow sequence of 10 M items": lambda: run(["flow.yaml"], folder),
        f"{(folder / 'large.yaml').stat().st_size / 1e6:.0f} MB file of manifests":
            lambda: run(["large.yaml"], folder),
        "a FIFO and a link to /dev/zero in the folder": lambda: run(["special"], folder),
        "--diff beside a 12-level alias bomb": lambda: run(["--diff", "bombed.yaml"], folder),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--write", type=Path, help=argparse.SUPPRESS)  # the inputs, to DIR
    args = parser.parse_args()
    if args.write:
        write_inputs(args.write)
        return
    folder = Path(tempfile.mkdtemp(prefix="trainlint-hostile-"))
    try:
        subprocess.run([sys.executable, __file__, "--write", str(folder)], check=True)
        checks = cases(folder)
        results: dict[str, list[Outcome]] = {name: [] for name in checks}
        for _ in range(args.runs):  # each round runs every case once
            for name, action in checks.items():
                results[name].append(action())
        baseline = statistics.median(outcome.seconds for outcome in results[next(iter(checks))])
        print(f"{'input':<46} {'median':>9} {'×base':>6} {'CPU':>8} {'peak RSS':>9}  exit")
        for name, outcomes in results.items():
            seconds = statistics.median(outcome.seconds for outcome in outcomes)
            cpu = statistics.median(outcome.cpu for outcome in outcomes)
            rss = max(outcome.rss for outcome in outcomes)
            statuses = {outcome.status for outcome in outcomes}
            shown = ",".join("timeout" if code is None else str(code) for code in statuses)
            print(f"{name:<46} {seconds:8.2f}s {seconds / baseline:5.1f}x {cpu:7.2f}s "
                  f"{rss:6.0f} MB  {shown}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
