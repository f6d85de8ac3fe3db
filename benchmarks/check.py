"""End-to-end speed of `trainlint check` against the bare C-parse rate of the same bytes.

    python3 benchmarks/check.py [--runs 5] [--quick] [--baseline OTHER/bin/trainlint]

Prints a table: medians of `--runs` rounds, documents per second, and each rate as a share
of the floor measured in the same rounds (libyaml composing every document with
line/column marks, in-process, no rules, the cycle collector off). Start-up and peak RSS
are measured on real subprocesses. The cost of rendering the JobSets (`trainlint.render`)
is measured in-process in the same rounds; `--baseline` runs another build's console
script (main's, before a change) in the same rounds too, and prints the ratio.

Last, each figure that issue 24 sets a target for is printed beside its target, met or
not: the share of the floor on one core, what a second core adds, the 42,000-document
file (peak RSS, `--jobs 2` against `--jobs 1`), a warm cache, `check one.yaml`, and
linear growth from 1,000 to 40,000 files (what each document adds, in time and in
memory, the same from 1,000 to 10,000 as from 10,000 to 40,000).
"""

from __future__ import annotations

import argparse
import compileall
import gc
import itertools
import os
import resource
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


def run(arguments: Sequence[str], program: str = TRAINLINT, cwd: Path | None = None) -> None:
    """Run trainlint (or another build of it, `program`), in `cwd` if given."""
    finish(start(arguments, program, cwd), arguments)


#: Runs a command and tells its peak RSS. A process started from this one counts, in its
#: peak, the pages it shared with it up to its exec, and this process grows large once it
#: has parsed a corpus; one started from this small launcher starts small.
_MEASURED = (
    "import os, subprocess, sys\n"
    "child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
    "_, status, usage = os.wait4(child.pid, 0)\n"
    "print(f'{PEAK}{usage.ru_maxrss}', file=sys.stderr)\n"
    "sys.exit(os.waitstatus_to_exitcode(status))\n"
)
PEAK = "peak RSS in KiB: "


def peak_rss(arguments: Sequence[str], program: str = TRAINLINT) -> int:
    """Run trainlint (or another build of it, `program`); its peak RSS in KiB."""
    launcher = [sys.executable, "-c", _MEASURED.replace("{PEAK}", PEAK), program]
    process = subprocess.Popen([*launcher, *arguments], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    _, status, _ = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    told = process.stderr.read().decode() if process.stderr else ""
    peaks = [line for line in told.splitlines() if line.startswith(PEAK)]
    _check(process.returncode, "".join(line for line in told.splitlines(keepends=True)
                                       if not line.startswith(PEAK)), arguments)
    return int(peaks[-1].removeprefix(PEAK))


def run_side_by_side(commands: Sequence[Sequence[str]]) -> None:
    """Run trainlint with each of `commands` at once."""
    for process, arguments in [(start(arguments), arguments) for arguments in commands]:
        finish(process, arguments)


def start(
    arguments: Sequence[str], program: str = TRAINLINT, cwd: Path | None = None
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [program, *arguments], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd
    )


def finish(process: subprocess.Popen[bytes], arguments: Sequence[str]) -> resource.struct_rusage:
    """Wait for a run; what it used (exit 0 or 1 with nothing on stderr both mean it
    checked: a Python that cannot import trainlint also exits 1)."""
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    _check(process.returncode, process.stderr.read().decode() if process.stderr else "",
           arguments)
    return usage


def _check(returncode: int, message: str, arguments: Sequence[str]) -> None:
    # A half of the files misses runtimes the other half defines, one TrainJob alone its
    # own: the run says so, once.
    message = "".join(line for line in message.splitlines(keepends=True)
                      if "not checked against" not in line)
    if returncode not in (0, 1) or message:
        raise SystemExit(f"trainlint {' '.join(arguments)} failed: {message}")


def run_writing_cache(caches: Path, jobs: str, folder: Path) -> None:
    """A cold run that writes its cache, into a folder no run used before."""
    caches.mkdir(parents=True, exist_ok=True)
    fresh = tempfile.mkdtemp(dir=caches)
    run(["check", "--jobs", jobs, "--cache-dir", fresh, str(folder)])


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
                  peak_rss(cold, baseline)))
        print(f"  this build takes {seconds['cold 1'] / seconds['baseline']:.2f}x the "
              "baseline's time (same rounds)")


def row(label: str, seconds: float, documents: int, floor: float, rss: int | None = None) -> str:
    """One line: median time, documents per second, and that rate as a share of the floor's."""
    rate = documents / seconds
    memory = f"{rss / 1024:8.0f} MB" if rss is not None else " " * 11
    return f"{label:<44} {seconds * 1000:9.0f} ms {rate:9.0f} docs/s {rate / floor:7.0%}  {memory}"


#: A project's configuration, for `check one.yaml` as a hook runs it in a configured repository.
CONFIGURED = (
    '[project]\nname = "demo"\n\n[tool.trainlint]\ntrainer-version = "2.3"\nignore = ["TL402"]\n'
)


def start_up(
    one: Path, scratch: Path, runs: int, baseline: str | None,
) -> dict[str, tuple[float, float]]:
    """Median wall and CPU seconds (the child's user + system time) of the commands a
    pre-commit hook pays start-up for, in the same rounds: the interpreter alone,
    `--version`, `check one.yaml` on its first run (`--no-cache`), and as a hook runs it
    on a file just edited (its findings not cached, the values its rules read the same:
    the cache knows their verdicts), with no configuration and in a project whose
    `pyproject.toml` configures trainlint (`CONFIGURED`, run in its folder as a hook
    runs); the last three of the `baseline` build too."""
    commands: dict[str, tuple[list[str], Callable[[], object] | None, Path | None]] = {
        "python -c pass": ([sys.executable, "-c", "pass"], None, None),
        "trainlint --version": ([TRAINLINT, "--version"], None, None),
    }
    for build, program in (("", TRAINLINT), ("baseline: ", baseline)):
        if program is None:
            continue
        edited = scratch / f"{len(commands)}" / "one.yaml"
        edited.parent.mkdir()
        edited.write_bytes(one.read_bytes())
        hook = ["check", "--cache-dir", str(edited.parent / "cache"), str(edited)]
        run(hook, program)  # the run before the edit
        commands[f"{build}trainlint check --no-cache one.yaml"] = (
            [program, "check", "--no-cache", str(one)], None, None)
        commands[f"{build}trainlint check one.yaml, just edited"] = (
            [program, *hook], partial(_append, edited, "# edited\n"), None)
        configured = scratch / f"{len(commands)}" / "one.yaml"
        configured.parent.mkdir()
        configured.write_bytes(one.read_bytes())
        (configured.parent / "pyproject.toml").write_text(CONFIGURED)
        for _ in range(2):  # the first run makes the cache folder, the second keeps the keys
            run(["check", "one.yaml"], program, configured.parent)
        commands[f"{build}trainlint check one.yaml, just edited, configured"] = (
            [program, "check", "one.yaml"], partial(_append, configured, "# edited\n"),
            configured.parent)
    spent: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, (command, before, cwd) in commands.items():
            if before is not None:
                before()
            started = time.perf_counter()
            process = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.PIPE, cwd=cwd)
            usage = finish(process, command)
            spent[name].append((time.perf_counter() - started,
                                usage.ru_utime + usage.ru_stime))
    return {name: (statistics.median(wall for wall, _ in times),
                   statistics.median(cpu for _, cpu in times))
            for name, times in spent.items()}


def _append(path: Path, text: str) -> None:
    with path.open("a") as file:
        file.write(text)


def growth(folders: dict[int, Path], runs: int) -> dict[int, tuple[float, float, int, int]]:
    """For each corpus size: the floor's and `--jobs 1`'s median seconds, its documents
    and its peak RSS in KiB, the sizes measured in the same rounds."""
    paths = {size: sorted(folder.rglob("*.yaml")) for size, folder in folders.items()}
    documents = {size: compose_floor(found) for size, found in paths.items()}
    commands = {size: ["check", "--no-cache", "--jobs", "1", str(folder)]
                for size, folder in folders.items()}
    actions: dict[str, Callable[[], object]] = {}
    for size in folders:
        actions[f"floor {size}"] = partial(compose_floor, paths[size])
        actions[f"check {size}"] = partial(run, commands[size])
    seconds = medians(actions, runs)
    return {size: (seconds[f"floor {size}"], seconds[f"check {size}"], documents[size],
                   peak_rss(commands[size])) for size in folders}


class Targets:
    """Figures beside the targets of issue 24, each met or not."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, str, str, bool]] = []

    def add(self, what: str, figure: str, target: str, met: bool) -> None:
        self.rows.append((what, figure, target, met))

    def print(self) -> None:
        print("\ntargets (issue 24), measured above:")
        width = max(len(what) for what, *_ in self.rows)
        for what, figure, target, met in self.rows:
            print(f"  {what:<{width}}  {figure:>22}  target {target:<12} "
                  f"{'met' if met else 'NOT MET'}")


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
    # An install compiles the package to bytecode; an editable checkout may never have,
    # and with PYTHONDONTWRITEBYTECODE set no run writes it: each run compiles again what
    # changed since (a baseline left so measured 6-12 ms slower in `check one.yaml`).
    compileall.compile_dir(Path(__file__).resolve().parent.parent / "trainlint", quiet=1)
    if args.baseline:
        compile_build(args.baseline)
    sizes = [1_000] if args.quick else [1_000, 10_000]
    grown = [1_000, 4_000] if args.quick else [1_000, 10_000, 40_000]
    # The file holds 42,000 documents (51 MB: read in slices, never whole); the
    # 10,000-document one (12 MB) too, as any file over `trainlint.loader.SLICED_BYTES`.
    streams = [write_corpus(sizes, grown, count)
               for count in ((1_000, 4_200) if args.quick else (10_000, 42_000))]
    targets = Targets()
    # The largest corpora cost a minute a round: three rounds give their median.
    few = min(args.runs, 3)
    print(f"{'what':<44} {'median':>12} {'rate':>16} {'of floor':>8}  {'peak RSS':>11}")
    for size in sizes:
        files_figures(size, args, targets if size == sizes[-1] else None)
    for stream in streams:
        stream_figures(stream, few, targets if stream == streams[-1] else None)
    shared_figures(args.runs)
    growth_figures(grown, few, targets)
    start_up_figures(DEFAULT_DIR / "files-1000" / "000" / "manifest-00002.yaml",  # a TrainJob
                     max(args.runs, 21), args.baseline, targets)
    targets.print()


def compile_build(program: str) -> None:
    """Compile the package of another build's console script, with its own interpreter
    (the script's first line names it)."""
    with Path(program).open("rb") as script:
        interpreter = script.readline().removeprefix(b"#!").strip().decode()
    subprocess.run(
        [interpreter, "-c", "import compileall, os, trainlint; "
         "compileall.compile_dir(os.path.dirname(trainlint.__file__), quiet=1)"],
        check=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""},
    )


def write_corpus(sizes: list[int], grown: list[int], streamed: int) -> Path:
    """Write what is missing of the corpus, in a child process: the parent's heap would
    keep what generating the largest parts took, and every command it starts would count
    those pages in its peak RSS (forked, a child holds them until it runs trainlint).
    Returns the multi-document file."""
    stream = DEFAULT_DIR / f"stream-{streamed}.yaml"
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            _write_missing(sizes, grown, stream)
            status = 0
        finally:
            os._exit(status)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        raise SystemExit("the corpus could not be written")
    return stream


def _write_missing(sizes: list[int], grown: list[int], stream: Path) -> None:
    corpus = DEFAULT_DIR
    for size in {*sizes, *grown}:
        if not (corpus / f"files-{size}").exists():
            write_files(corpus / f"files-{size}", size)
    if not stream.exists():
        write_stream(stream, int(stream.stem.removeprefix("stream-")))
    for count in SHARED:
        if not (corpus / f"shared-{count}").exists():
            write_shared(corpus / f"shared-{count}", count)


def files_figures(size: int, args: argparse.Namespace, targets: Targets | None) -> None:
    """One file per document: one and two cores, writing and reading the cache, against
    the floor on one and two processes."""
    corpus = DEFAULT_DIR
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
                  seconds[f"cold {jobs}"], documents, floor_rate, peak_rss(command)))
    for jobs in ("1", "2"):
        print(row(f"  --jobs {jobs}, cold, writing the cache", seconds[f"writing {jobs}"],
                  documents, floor_rate))
    print(row(f"trainlint check, warm cache, {size:,} files", seconds["warm"], documents,
              floor_rate, peak_rss(warm)))
    print(row("  C compose floor, two processes, half each", seconds["floor halves"],
              documents, floor_rate))
    print(row("  two --jobs 1 runs side by side, half each", seconds["halves"], documents,
              floor_rate))
    print_rendering(seconds, renders, documents, floor_rate, cold["1"], args.baseline)
    second_core = seconds["cold 1"] / seconds["cold 2"]
    warm_share = seconds["warm"] / seconds["writing 1"]
    print(f"  two cores give the floor {seconds['floor'] / seconds['floor halves']:.2f}x, "
          f"two independent halves {seconds['cold 1'] / seconds['halves']:.2f}x --jobs 1")
    print(f"  --jobs 2 is {second_core:.2f}x --jobs 1; a warm run takes {warm_share:.1%} of "
          f"the same command's cold run, {seconds['warm'] / seconds['cold 1']:.1%} of a cold "
          "run with --no-cache")
    if targets is not None:
        share = seconds["floor"] / seconds["cold 1"]
        targets.add(f"--jobs 1, {size:,} files, of the floor", f"{share:.0%}", ">= 60 %",
                    share >= 0.60)
        targets.add(f"--jobs 2 against --jobs 1, {size:,} files", f"{second_core:.3f}x",
                    ">= 1.8x", second_core >= 1.8)
        targets.add(f"warm cache, {size:,} unchanged files", f"{warm_share:.1%} of cold",
                    "<= 5 %", warm_share <= 0.05)


def stream_figures(stream: Path, runs: int, targets: Targets | None) -> None:
    """Every document in one file, on one and two cores (the targets: of that file)."""
    from trainlint.files import MAX_SLICED_BYTES

    size = stream.stat().st_size
    if size > MAX_SLICED_BYTES:  # refused (TL003): nothing to measure
        what = f"refused, {size / 1e6:.0f} MB > {MAX_SLICED_BYTES >> 20} MiB"
        print(f"{f'trainlint check, {stream.name}':<44} {what}")
        if targets is not None:
            targets.add(f"{stream.name}, peak RSS", what, "<= 120 MB", False)
            targets.add(f"{stream.name}, --jobs 2", what, ">= 1.6x", False)
        return
    documents = compose_floor([stream])
    by_jobs = {jobs: ["check", "--no-cache", "--jobs", jobs, str(stream)] for jobs in ("1", "2")}
    seconds = medians({"floor": partial(compose_floor, [stream]),
                       **{jobs: partial(run, command) for jobs, command in by_jobs.items()}},
                      runs)
    floor_rate = documents / seconds["floor"]
    print(row(f"C compose floor, one {documents:,}-document file", seconds["floor"],
              documents, floor_rate))
    peaks = {jobs: peak_rss(command) for jobs, command in by_jobs.items()}
    for jobs in by_jobs:
        print(row(f"trainlint check --jobs {jobs}, one {documents:,}-document file",
                  seconds[jobs], documents, floor_rate, peaks[jobs]))
    peak = max(peaks.values()) / 1024
    gain = seconds["1"] / seconds["2"]
    print(f"  --jobs 2 is {gain:.2f}x --jobs 1 on it; {peak * 1024 / documents:.1f} KB of peak "
          "RSS per document")
    if targets is not None:
        targets.add(f"one {documents:,}-document file, peak RSS", f"{peak:.0f} MB",
                    "<= 120 MB", peak <= 120)
        targets.add(f"one {documents:,}-document file, --jobs 2", f"{gain:.3f}x --jobs 1",
                    ">= 1.6x", gain >= 1.6)


def shared_figures(runs: int) -> None:
    """Linear, a run over twice the TrainJobs takes twice as long, less start-up."""
    shared = {f"{count:,}": ["check", "--no-cache", "--jobs", "1",
                             str(DEFAULT_DIR / f"shared-{count}")] for count in SHARED}
    seconds = medians({users: partial(run, command) for users, command in shared.items()}, runs)
    for users, spent in seconds.items():
        print(f"{f'one runtime shared by {users} TrainJobs':<44} {spent * 1000:9.0f} ms")
    (small, fewer), (large, more) = seconds.items()
    print(f"  {large} TrainJobs take {more / fewer:.2f}x the time of {small}")


def growth_figures(grown: list[int], runs: int, targets: Targets) -> None:
    """Linear in the files: each document adds as much time and memory from the smallest
    corpus to the middle one as from the middle one to the largest (start-up, and what a
    run holds whatever its size, cancel out)."""
    measured = growth({size: DEFAULT_DIR / f"files-{size}" for size in grown}, runs)
    for size, (floor, spent, documents, rss) in measured.items():
        print(row(f"trainlint check --jobs 1, {size:,} files", spent, documents,
                  documents / floor, rss))
    points = [measured[size] for size in grown]
    steps = list(itertools.pairwise(points))[-2:]
    if len(steps) < 2:
        return
    for label, field, unit, name in (("time", 1, 1e6, "us"), ("memory", 3, 1.0, "KB")):
        added = [(after[field] - before[field]) / (after[2] - before[2])
                 for before, after in steps]
        print(f"  each document adds {added[0] * unit:.1f} {name} of {label} from "
              f"{grown[-3]:,} to {grown[-2]:,} files, {added[1] * unit:.1f} {name} from "
              f"{grown[-2]:,} to {grown[-1]:,}")
        apart = abs(added[1] / added[0] - 1) if added[0] > 0 else float("inf")
        targets.add(f"{label} per document, {grown[-3]:,} to {grown[-1]:,} files",
                    f"{apart:.0%} apart", "within 10 %", apart <= 0.10)


def start_up_figures(one: Path, runs: int, baseline: str | None, targets: Targets) -> None:
    with tempfile.TemporaryDirectory(prefix="trainlint-start-up-") as scratch:
        started = start_up(one, Path(scratch), runs, baseline)
    for label, (wall, cpu) in started.items():
        print(f"{label:<44} {wall * 1000:9.0f} ms wall {cpu * 1000:6.0f} ms CPU "
              f"(median of {runs})")
    for label in ("trainlint check one.yaml, just edited", "trainlint check --no-cache one.yaml",
                  "trainlint check one.yaml, just edited, configured"):
        wall, cpu = started[label]
        targets.add(label.removeprefix("trainlint "),
                    f"{wall * 1000:.0f} ms ({cpu * 1000:.0f} CPU)", "<= 100 ms", wall <= 0.100)


if __name__ == "__main__":
    main()
