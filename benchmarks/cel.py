"""What the CRDs' CEL rules (TL010, TL012) cost: per object, and at start-up.

    python3 benchmarks/cel.py [--runs 5] [--documents 1000] [--baseline TRAINLINT]

Prints, in the same rounds:
- the in-process cost per object of `violations()` (every CRD rule of the release that
  applies) for a TrainJob as created, the same TrainJob on an update (transition rules
  too), and the v2.3 torch runtime (when `../shared` is present), against the cost of
  loading the object from its text (the floor every check pays); with no verdict shared,
  also with every rule run by cel-python's interpreter;
- the CPU time of `trainlint check` over the benchmark corpus with and without TL010 and
  TL012 (the rest of the rules alike);
- the start-up of `trainlint check one.yaml` (one TrainJob, CPU time) with and without
  them (cel-python is imported by neither: the rules run on plain values); and the bare
  import of cel-python, for scale.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from check import medians
from corpus import write_files
from schema import cpu_seconds

from trainlint.loader import load
from trainlint.model.validations import violations

CEL_RULES = "TL010,TL012"
IMPORT, NOTHING = "python -c 'import celpy'", "python -c pass"
BASELINE = "check one.yaml, the baseline"
TRAINLINT = shutil.which("trainlint") or "trainlint"
RUNTIME = (Path(__file__).resolve().parent.parent.parent
           / "shared/corpus/trainer/v2.3.0/manifests__base__runtimes__torch_distributed.yaml")
JOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: sft-run-1
  namespace: team-a
spec:
  runtimeRef:
    name: torch-distributed
  initializer:
    dataset:
      storageUri: hf://tatsu-lab/alpaca
  trainer:
    numNodes: 2
    image: ghcr.io/acme/sft:1.4
    command: [torchrun, train.py]
    env:
      - {name: EPOCHS, value: "3"}
      - {name: LR, value: "2e-5"}
    resourcesPerNode:
      limits: {nvidia.com/gpu: 8}
"""
KUBERNETES = (1, 33)
REPEAT = 200


def per_object(runs: int) -> None:
    """Each action checks `REPEAT` objects that differ in name, as a run's objects do: the
    verdicts of shared values (a defaulted `managedBy`, a runtime's policy) are reused,
    names are not; "nothing shared" forgets every verdict before each object."""
    jobs = [load(JOB.replace("sft-run-1", f"sft-run-{number}"), "job.yaml").manifests[0].body
            for number in range(REPEAT)]
    changed = [load(JOB.replace("sft-run-1", f"sft-run-{number}").replace(
        "numNodes: 2", "numNodes: 4"), "job.yaml").manifests[0].body for number in range(REPEAT)]
    actions: dict[str, Callable[[], object]] = {
        "load a TrainJob (floor)": lambda: [load(JOB, "job.yaml") for _ in range(REPEAT)],
        "TrainJob, created": lambda: [
            violations("TrainJob", (2, 3), job, None, KUBERNETES) for job in jobs],
        "TrainJob, created, nothing shared": lambda: [
            unshared("TrainJob", job) for job in jobs],
        "TrainJob, nothing shared, interpreted": lambda: [
            interpreted("TrainJob", job) for job in jobs],
        "TrainJob, updated": lambda: [
            violations("TrainJob", (2, 3), new, old, KUBERNETES)
            for new, old in zip(changed, jobs, strict=True)],
    }
    if RUNTIME.exists():
        text = RUNTIME.read_text()
        runtimes = [load(text.replace("name: torch-distributed", f"name: torch-{number}"),
                         "runtime.yaml").manifests[0].body for number in range(REPEAT)]
        actions["load the runtime (floor)"] = lambda: [
            load(text, "runtime.yaml") for _ in range(REPEAT)]
        actions["runtime, created"] = lambda: [violations(
            "ClusterTrainingRuntime", (2, 3), runtime, None, KUBERNETES) for runtime in runtimes]
        actions["runtime, created, nothing shared"] = lambda: [
            unshared("ClusterTrainingRuntime", runtime) for runtime in runtimes]
        actions["runtime, nothing shared, interpreted"] = lambda: [
            interpreted("ClusterTrainingRuntime", runtime) for runtime in runtimes]
    violations("TrainJob", (2, 3), changed[0], jobs[0], KUBERNETES)  # closures made once
    interpreted("TrainJob", jobs[0])  # cel-python imported once
    times = medians(actions, runs)
    print(f"per object (median of {runs} rounds of {REPEAT} objects, microseconds):")
    for name, seconds in times.items():
        print(f"  {name:<36} {seconds / REPEAT * 1e6:8.0f}")


def unshared(kind: str, body: dict[str, Any]) -> object:
    """The object's violations with no verdict remembered from another object."""
    from trainlint.model import validations

    validations.VERDICTS.clear()
    return violations(kind, (2, 3), body, None, KUBERNETES)


def interpreted(kind: str, body: dict[str, Any]) -> object:
    """`unshared`, each rule left to `trainlint.model.cel` (cel-python's interpreter)
    instead of the closures over plain values."""
    from trainlint.model import plain

    closures = plain.runner
    plain.runner = lambda index: None  # type: ignore[assignment]
    try:
        return unshared(kind, body)
    finally:
        plain.runner = closures


def whole_check(runs: int, documents: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        write_files(Path(folder), documents)
        without, with_cel = [], []
        for _ in range(runs):
            without.append(cpu_seconds(Path(folder), "--no-cache", "--ignore", CEL_RULES))
            with_cel.append(cpu_seconds(Path(folder), "--no-cache"))
    low, high = sorted(without)[runs // 2], sorted(with_cel)[runs // 2]
    print(f"trainlint check of {documents} documents (CPU seconds, median of {runs}):")
    print(f"  without TL010/TL012 {low:6.2f}   with {high:6.2f}   "
          f"(+{(high - low) / documents * 1e3:.2f} ms per document, x{high / low:.2f})")


def start_up(runs: int, baseline: str | None) -> None:
    """CPU seconds of the child processes (the machine is shared: wall time under
    contention says more about the neighbours), median of interleaved rounds. `--ignore`
    is no baseline: options on the command line are validated with pydantic, which a
    plain `check` never imports; `--baseline` names another trainlint (the code before
    the CEL engine, installed apart) to compare with."""
    with tempfile.TemporaryDirectory() as folder:
        one = Path(folder) / "one.yaml"
        one.write_text(JOB)
        arguments = ["check", "--isolated", "--no-cache", str(one)]
        commands = {"check one.yaml": [TRAINLINT, *arguments]}
        if baseline:
            commands[BASELINE] = [baseline, *arguments]
        commands.update({
            IMPORT: [sys.executable, "-c", "import celpy"],
            NOTHING: [sys.executable, "-c", "pass"],
        })
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(runs):
            for name, command in commands.items():
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                subprocess.run(command, check=False, capture_output=True)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                times[name].append(after.ru_utime - before.ru_utime
                                   + after.ru_stime - before.ru_stime)
    median = {name: statistics.median(spent) for name, spent in times.items()}
    print(f"start-up (CPU seconds, median of {runs} rounds):")
    for name, seconds in median.items():
        print(f"  {name:<32} {seconds:6.3f}")
    if baseline:
        base, full = median[BASELINE], median["check one.yaml"]
        print(f"  against the baseline: +{full - base:.3f} s (x{full / base:.2f})")
    print(f"  cel-python's import alone takes {median[IMPORT] - median[NOTHING]:.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--documents", type=int, default=1000)
    parser.add_argument("--baseline", metavar="TRAINLINT",
                        help="another trainlint executable to compare the start-up with")
    arguments = parser.parse_args()
    started = time.perf_counter()
    per_object(arguments.runs)
    whole_check(arguments.runs, arguments.documents)
    start_up(max(arguments.runs, 21), arguments.baseline)
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
