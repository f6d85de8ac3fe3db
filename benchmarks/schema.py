"""What schema validation (TL005-TL011) costs `trainlint check`, on a 1,000-document corpus.

    python3 benchmarks/schema.py [--runs 5] [--documents 1000]

Prints medians of `--runs` interleaved runs of the real command with and without the
schema rules (CPU seconds of the child process: the machine is shared, and CPU time is
far steadier than wall time under contention),
on two corpora: the project's benchmark corpus (`benchmarks/corpus.py`) and, when
`../shared` is present, the upstream v2.3 manifests (runtimes with full pod templates)
repeated to the same size. Then the in-process cost per object of the walk, the one-off
cost of reading kubernetes-validate's definitions, and, for the pod templates, what the
same check costs through a cached jsonschema validator.
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from check import median_seconds as median
from corpus import write_files

from trainlint.config.defaults import DEFAULT_KUBERNETES_VERSION
from trainlint.document import Manifest, dig, mappings
from trainlint.engine.context import Context
from trainlint.engine.index import Index
from trainlint.loader import load
from trainlint.model import check as schema_check
from trainlint.model import k8s

SCHEMA_RULES = "TL005,TL006,TL007,TL008,TL009,TL010,TL011"
TRAINLINT = shutil.which("trainlint") or "trainlint"
UPSTREAM = Path(__file__).resolve().parent.parent.parent / "shared/corpus/trainer/v2.3.0"


def cpu_seconds(folder: Path, *extra: str) -> float:
    """User + system CPU time of one `trainlint check` of `folder`."""
    arguments = [TRAINLINT, "check", "--isolated", "--exit-zero", "--output-format", "concise",
                 *extra, str(folder)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(arguments, check=False, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def compare(folder: Path, runs: int) -> tuple[float, float]:
    """Median CPU seconds without and with the schema rules, runs interleaved."""
    without, with_schema = [], []
    for _ in range(runs):
        without.append(cpu_seconds(folder, "--ignore", SCHEMA_RULES))
        with_schema.append(cpu_seconds(folder))
    return statistics.median(without), statistics.median(with_schema)


def upstream_files(folder: Path, count: int) -> list[Path]:
    documents = [part for path in sorted(UPSTREAM.glob("*.yaml"))
                 for part in path.read_text().split("\n---\n") if "kind:" in part]
    paths = []
    for number in range(count):
        path = folder / f"{number // 100:03d}" / f"upstream-{number:05d}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(documents[number % len(documents)])
        paths.append(path)
    return paths


def manifests(paths: list[Path]) -> list[Manifest]:
    return [manifest for path in paths for manifest in load(path.read_text(), str(path)).manifests]


def walk_cost(objects: list[Manifest], runs: int) -> float:
    """Seconds per object of the schema walk alone (the cache is defeated)."""
    index = Index(())
    context = Context((2, 3), index)

    def walk_all() -> None:
        for manifest in objects:
            index.memo.clear()
            schema_check.issues(manifest, context)

    walk_all()  # definitions read and converted once, as in a run
    return median(walk_all, runs) / len(objects)


def jsonschema_cost(objects: list[Manifest], runs: int) -> tuple[float, float, int]:
    """(our walk, a cached jsonschema validator) per pod template, and how many templates."""
    import jsonschema  # type: ignore[import-untyped]  # no stubs; a kubernetes-validate dependency

    definitions = k8s._definitions(k8s.resolve_version(DEFAULT_KUBERNETES_VERSION))
    name = "io.k8s.api.core.v1.PodTemplateSpec"
    validator = jsonschema.Draft202012Validator({"$defs": definitions,
                                                 "$ref": f"#/$defs/{name}"})
    templates = [dig(job, "template", "spec", "template")
                 for manifest in objects
                 for _, job in mappings(dig(manifest.body, "spec", "template", "spec",
                                            "replicatedJobs"))]
    node = k8s.converter(k8s.resolve_version(DEFAULT_KUBERNETES_VERSION)).definition(
        name, embedded=False)
    walker = schema_check._Walker("Pod", (2, 3), DEFAULT_KUBERNETES_VERSION, [])

    def walk_all() -> None:
        for template in templates:
            walker.walk(template, node, [], core=True)

    ours = median(walk_all, runs)
    theirs = median(lambda: [list(validator.iter_errors(t)) for t in templates], runs)
    return ours / len(templates), theirs / len(templates), len(templates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--documents", type=int, default=1000)
    options = parser.parse_args()
    count, runs = options.documents, options.runs
    with tempfile.TemporaryDirectory() as temporary:
        corpora = {"benchmark corpus": write_files(Path(temporary, "corpus"), count)}
        if UPSTREAM.exists():
            corpora["upstream v2.3 manifests"] = upstream_files(Path(temporary, "up"), count)
        print(f"trainlint check on {count} documents, CPU seconds, median of {runs} runs")
        print(f"{'corpus':<26}{'without schema':>16}{'with schema':>14}{'added':>9}")
        for label, paths in corpora.items():
            folder = paths[0].parent.parent
            without, with_schema = compare(folder, runs)
            added = (with_schema - without) / without
            print(f"{label:<26}{without:>15.2f}s{with_schema:>13.2f}s{added:>9.0%}")
        objects = manifests(corpora[list(corpora)[-1]])
        started = time.perf_counter()
        k8s._definitions.cache_clear()
        k8s.converter.cache_clear()
        k8s._definitions(k8s.resolve_version(DEFAULT_KUBERNETES_VERSION))
        print(f"\nreading kubernetes-validate definitions (once per run): "
              f"{(time.perf_counter() - started) * 1000:.0f} ms")
        print(f"schema walk per object: {walk_cost(objects, runs) * 1e6:.0f} µs")
        ours, theirs, templates = jsonschema_cost(objects, runs)
        print(f"pod template ({templates}): our walk {ours * 1e6:.0f} µs, cached jsonschema "
              f"validator {theirs * 1e6:.0f} µs")


if __name__ == "__main__":
    main()
