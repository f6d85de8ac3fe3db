"""End-to-end speed of `trainlint check` against the bare C-parse rate of the same bytes.

    python3 benchmarks/check.py [--runs 5] [--quick] [--baseline OTHER/bin/trainlint]

Prints a table: medians of `--runs` rounds, documents per second, and each rate as a share
of the floor measured in the same rounds (libyaml composing every document with
line/column marks, in-process, no rules, the cycle collector off). Start-up and peak RSS
are measured on real subprocesses. The cost of rendering the JobSets (`trainlint.render`)
is measured in-process in the same rounds; `--baseline` runs another build's console
script (main's, before a change) in the same rounds too, and prints the ratio.
"""

from __future__ import annotations

import argparse
import compileall
import gc
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import DEFAULT_DIR, SHARED, write_files, write_shared, write_stream

#: The console script installed beside this interpreter, as users run it; a version
#: manager's shim on PATH would add its own start-up to every figure.
_BESIDE = Path(sys.executable).with_name("trainlint")
TRAINLINT = str(_BESIDE) if _BESIDE.exists() else shutil.which("trainlint") or "trainlint"


def median_seconds(action: Callable[[], object], runs: int) -> float:
    return medians({"action": action}, runs)["action"]


def medians(actions: dict[str, Callable[[], object]], runs: int) -> dict[str, float]:
    """The median time of each action over `runs` rounds, each round running every action
    once: a machine that slows down or speeds up mid-benchmark moves the floor and the
    figures compared with it alike."""
    times: dict[str, list[float]] = {name: [] for name in actions}
    for _ in range(runs):
        for name, action in actions.items():
            started = time.perf_counter()
            action()
            times[name].append(time.perf_counter() - started)
    return {name: statistics.median(spent) for name, spent in times.items()}


def compose_floor(paths: Sequence[Path]) -> int:
    """Compose every document of every file with libyaml: the floor no checker beats.

    The cycle collector is off, as in trainlint: its passes over the nodes just composed
    are no part of parsing, and would make the floor about a seventh slower."""
    count = 0
    gc.disable()
    try:
        for path in paths:
            for _ in yaml.compose_all(path.read_bytes(), Loader=yaml.CSafeLoader):
                count += 1
    finally:
        gc.enable()
    return count


def compose_halves(paths: Sequence[Path]) -> None:
    """The floor on two processes at once, each composing half the files: what two cores
    of this machine give work that shares nothing (the ceiling of `--jobs 2`)."""
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            compose_floor(paths[1::2])
            status = 0
        finally:
            os._exit(status)
    compose_floor(paths[::2])
    _, status = os.waitpid(pid, 0)
    if status != 0:
        raise SystemExit("the floor's second process failed: its half was not composed")


def run(arguments: Sequence[str], program: str = TRAINLINT) -> int:
    """Run trainlint (or another build of it, `program`); return its peak RSS in KiB."""
    return finish(start(arguments, program), arguments)


def run_side_by_side(commands: Sequence[Sequence[str]]) -> None:
    """Run trainlint with each of `commands` at once."""
    for process, arguments in [(start(arguments), arguments) for arguments in commands]:
        finish(process, arguments)


def start(arguments: Sequence[str], program: str = TRAINLINT) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [program, *arguments], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )


def finish(process: subprocess.Popen[bytes], arguments: Sequence[str]) -> int:
    """Wait for a run; its peak RSS in KiB (exit 0 or 1 with nothing on stderr both mean it
    checked: a Python that cannot import trainlint also exits 1)."""
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    message = process.stderr.read().decode() if process.stderr else ""
    # A half of the files misses runtimes the other half defines: the run says so, once.
    message = "".join(line for line in message.splitlines(keepends=True)
                      if "not checked against their runtime" not in line)
    if process.returncode not in (0, 1) or message:
        raise SystemExit(f"trainlint {' '.join(arguments)} failed: {message}")
    return usage.ru_maxrss


def run_writing_cache(caches: Path, jobs: str, folder: Path) -> int:
    """A cold run that writes its cache, into a folder no run used before."""
    caches.mkdir(parents=True, exist_ok=True)
    fresh = tempfile.mkdtemp(dir=caches)
    return run(["check", "--jobs", jobs, "--cache-dir", fresh, str(folder)])


def render_all(paths: Sequence[Path]) -> tuple[int, Callable[[], None]]:
    """The number of renders a check of `paths` needs (every TrainJob on its runtime, every
    runtime alone), and an action that makes them all, in this process, from files read
    beforehand: the cost of rendering by itself."""
    from trainlint.engine.index import Index
    from trainlint.kinds import RUNTIME_KINDS, object_kind
    from trainlint.loader import load_bytes
    from trainlint.render.build import render

    manifests = [manifest for path in paths for manifest in load_bytes(
        path.read_bytes(), str(path)).manifests]
    index = Index(manifests)
    pairs = [
        (manifest, index.runtime_for(manifest)) if object_kind(manifest) == "TrainJob"
        else (None, manifest)
        for manifest in manifests if object_kind(manifest) in {"TrainJob", *RUNTIME_KINDS}
    ]

    def action() -> None:
        gc.disable()
        try:
            for job, runtime in pairs:
                render(job, runtime, (2, 3))
        finally:
            gc.enable()

    return len(pairs), action


def print_rendering(
    seconds: dict[str, float], renders: int, documents: int, floor: float,
    cold: Sequence[str], baseline: str | None,
) -> None:
    """What rendering costs, and this build against a baseline build, measured in the
    same rounds as the rest (`floor`: the floor's documents per second)."""
    spent = seconds["render"]
    print(f"  rendering its {renders:,} JobSets, in-process: {spent * 1000:.0f} ms, "
          f"{spent / renders * 1e6:.0f} us each, {spent / seconds['cold 1']:.0%} of the "
          "--jobs 1 run")
    if baseline:
        print(row("  baseline build, cold --jobs 1", seconds["baseline"], documents, floor,
                  run(cold, baseline)))
        print(f"  this build takes {seconds['cold 1'] / seconds['baseline']:.2f}x the "
              "baseline's time (same rounds)")


def row(label: str, seconds: float, documents: int, floor: float, rss: int | None = None) -> str:
    """One line: median time, documents per second, and that rate as a share of the floor's."""
    rate = documents / seconds
    memory = f"{rss / 1024:8.0f} MB" if rss is not None else " " * 11
    return f"{label:<44} {seconds * 1000:9.0f} ms {rate:9.0f} docs/s {rate / floor:7.0%}  {memory}"


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="1,000 files only")
    parser.add_argument(
        "--baseline", metavar="TRAINLINT",
        help="another build's console script (a checkout of main, say): its cold --jobs 1 "
        "run is measured in the same rounds, and compared",
    )
    return parser.parse_args()


def main() -> None:
    args = arguments()
    # An install compiles the package to bytecode; an editable checkout may never have.
    compileall.compile_dir(Path(__file__).resolve().parent.parent / "trainlint", quiet=1)
    corpus = DEFAULT_DIR
    sizes = [1_000] if args.quick else [1_000, 10_000]
    for size in sizes:
        if not (corpus / f"files-{size}").exists():
            write_files(corpus / f"files-{size}", size)
    stream = corpus / "stream-10000.yaml"
    if not stream.exists():
        write_stream(stream, 10_000)
    one = corpus / "files-1000" / "000" / "manifest-00000.yaml"
    for count in SHARED:
        if not (corpus / f"shared-{count}").exists():
            write_shared(corpus / f"shared-{count}", count)

    print(f"{'what':<44} {'median':>12} {'rate':>16} {'of floor':>8}  {'peak RSS':>11}")
    for size in sizes:
        folder = corpus / f"files-{size}"
        paths = sorted(folder.rglob("*.yaml"))
        documents = compose_floor(paths)
        cold = {jobs: ["check", "--no-cache", "--jobs", jobs, str(folder)] for jobs in ("1", "2")}
        # Not a valid check (each half misses the other's objects): what two independent
        # one-core runs give on this machine.
        folders = sorted(str(path) for path in folder.iterdir())
        halves = [["check", "--no-cache", "--jobs", "1", *half]
                  for half in (folders[::2], folders[1::2])]
        warm = ["check", "--jobs", "1", "--cache-dir", str(corpus / ".cache"), str(folder)]
        run(warm)
        # The default: a cold run writes the cache (CI from a clean clone), a warm one reads it.
        caches = corpus / ".cold-caches"
        renders, rendering = render_all(paths)
        baseline = {"baseline": partial(run, cold["1"], args.baseline)} if args.baseline else {}
        seconds = medians(
            {
                **baseline,
                "render": rendering,
                "floor": partial(compose_floor, paths),
                "floor halves": partial(compose_halves, paths),
                "halves": partial(run_side_by_side, halves),
                **{f"cold {jobs}": partial(run, command) for jobs, command in cold.items()},
                **{f"writing {jobs}": partial(run_writing_cache, caches, jobs, folder)
                   for jobs in ("1", "2")},
                "warm": partial(run, warm),
            },
            args.runs,
        )
        shutil.rmtree(caches, ignore_errors=True)
        floor_rate = documents / seconds["floor"]
        print(row(f"C compose floor, {size:,} files", seconds["floor"], documents, floor_rate))
        for jobs, command in cold.items():
            print(row(f"trainlint check --jobs {jobs}, cold, {size:,} files",
                      seconds[f"cold {jobs}"], documents, floor_rate, run(command)))
        for jobs in ("1", "2"):
            print(row(f"  --jobs {jobs}, cold, writing the cache", seconds[f"writing {jobs}"],
                      documents, floor_rate))
        print(row(f"trainlint check, warm cache, {size:,} files", seconds["warm"], documents,
                  floor_rate, run(warm)))
        print(row("  C compose floor, two processes, half each", seconds["floor halves"],
                  documents, floor_rate))
        print(row("  two --jobs 1 runs side by side, half each", seconds["halves"], documents,
                  floor_rate))
        print_rendering(seconds, renders, documents, floor_rate, cold["1"], args.baseline)
        print(f"  two cores give the floor {seconds['floor'] / seconds['floor halves']:.2f}x, "
              f"two independent halves {seconds['cold 1'] / seconds['halves']:.2f}x --jobs 1")
        print(f"  --jobs 2 is {seconds['cold 1'] / seconds['cold 2']:.2f}x --jobs 1; a warm run "
              f"takes {seconds['warm'] / seconds['writing 1']:.0%} of the same command's cold "
              f"run, {seconds['warm'] / seconds['cold 1']:.0%} of a cold run with --no-cache")

    documents = compose_floor([stream])
    command = ["check", "--no-cache", "--jobs", "1", str(stream)]
    seconds = medians(
        {"floor": partial(compose_floor, [stream]), "check": partial(run, command)}, args.runs
    )
    floor_rate = documents / seconds["floor"]
    print(row("C compose floor, one 10,000-document file", seconds["floor"], documents,
              floor_rate))
    print(row("trainlint check, one 10,000-document file", seconds["check"], documents,
              floor_rate, run(command)))

    # Linear, a run over twice the TrainJobs takes twice as long, less start-up.
    shared = {f"{count:,}": ["check", "--no-cache", "--jobs", "1", str(corpus / f"shared-{count}")]
              for count in SHARED}
    seconds = medians({users: partial(run, command) for users, command in shared.items()},
                      args.runs)
    for users, spent in seconds.items():
        print(f"{f'one runtime shared by {users} TrainJobs':<44} {spent * 1000:9.0f} ms")
    (small, fewer), (large, more) = seconds.items()
    print(f"  {large} TrainJobs take {more / fewer:.2f}x the time of {small}")

    for label, command in (("trainlint --version", ["--version"]),
                           ("trainlint check one.yaml", ["check", "--no-cache", str(one)])):
        spent = median_seconds(partial(run, command), max(args.runs, 20))
        print(f"{label:<44} {spent * 1000:9.0f} ms (median of {max(args.runs, 20)})")


if __name__ == "__main__":
    main()
