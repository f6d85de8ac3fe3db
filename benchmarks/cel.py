"""What the CRDs' CEL rules (TL010, TL012) cost: per object, and at start-up.

    python3 benchmarks/cel.py [--runs 5] [--documents 1000]

Prints, in the same rounds:
- the in-process cost per object of `violations()` (every CRD rule of the release that
  applies) for a TrainJob as created, the same TrainJob on an update (transition rules
  too), and the v2.3 torch runtime (when `../shared` is present), against the cost of
  loading the object from its text (the floor every check pays);
- the CPU time of `trainlint check` over the benchmark corpus with and without TL010 and
  TL012 (the rest of the rules alike);
- the start-up of `trainlint check one.yaml` (one TrainJob) with and without them: without,
  cel-python is never imported; with, it is imported once the first rule is evaluated;
  and the bare import of cel-python, for scale.
"""

from __future__ import annotations

import argparse
import shutil
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
    violations("TrainJob", (2, 3), changed[0], jobs[0], KUBERNETES)  # cel-python imported once
    times = medians(actions, runs)
    print(f"per object (median of {runs} rounds of {REPEAT} objects, microseconds):")
    for name, seconds in times.items():
        print(f"  {name:<36} {seconds / REPEAT * 1e6:8.0f}")


def unshared(kind: str, body: dict[str, Any]) -> object:
    """The object's violations with no verdict remembered from another object."""
    from trainlint.model import cel

    cel.VERDICTS.clear()
    return violations(kind, (2, 3), body, None, KUBERNETES)


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


def start_up(runs: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        one = Path(folder) / "one.yaml"
        one.write_text(JOB)

        def check(*extra: str) -> object:
            command = [TRAINLINT, "check", "--isolated", "--no-cache", *extra, str(one)]
            return subprocess.run(command, check=False, capture_output=True)

        actions = {
            "check one.yaml, no CEL rules": lambda: check("--ignore", CEL_RULES),
            "check one.yaml": check,
            IMPORT: lambda: subprocess.run([sys.executable, "-c", "import celpy"], check=True),
            NOTHING: lambda: subprocess.run([sys.executable, "-c", "pass"], check=True),
        }
        times = medians(actions, runs)
    print(f"start-up (wall seconds, median of {runs} rounds):")
    for name, seconds in times.items():
        print(f"  {name:<32} {seconds:6.3f}")
    base = times["check one.yaml, no CEL rules"]
    full = times["check one.yaml"]
    print(f"  the CEL rules add {full - base:.3f} s (x{full / base:.2f}); cel-python's import "
          f"alone takes {times[IMPORT] - times[NOTHING]:.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--documents", type=int, default=1000)
    arguments = parser.parse_args()
    started = time.perf_counter()
    per_object(arguments.runs)
    whole_check(arguments.runs, arguments.documents)
    start_up(max(arguments.runs, 15))
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
