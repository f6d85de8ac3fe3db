"""A deterministic benchmark corpus made from `examples/`: many files, or one big file.

The corpus is a series of copies of every example. Each copy's objects get its own
namespace and its own suffix (`-<copy>-<example>`), so its TrainJob finds its runtime and
its volumes find their claims, as in a real monorepo: the rules that merge a TrainJob
over its runtime and look claims up do their whole work. TrainJobs are padded with a
varying number of env vars, so sizes vary the way a real monorepo's do (~1-4 KB per
document).
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import random
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent


def _fingerprint() -> str:
    """What the corpus is made from: this generator and the examples."""
    digest = hashlib.blake2b(Path(__file__).read_bytes(), digest_size=6)
    for path in sorted((ROOT / "examples").rglob("*.yaml")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


#: Outside the checkout (a repository's `.gitignore` must not hide the corpus from the run),
#: and named after what it is made from: a corpus left by another version is not reused.
DEFAULT_DIR = Path(tempfile.gettempdir()) / f"trainlint-benchmark-corpus-{_fingerprint()}"
_DUMPER = yaml.CSafeDumper
#: Namespaces the copies are spread over.
NAMESPACES = 17
#: How many TrainJobs share one runtime in the corpora that measure how a run scales.
SHARED = (1_000, 2_000)


def _templates() -> list[tuple[int, dict[str, Any]]]:
    """Every object of the examples, with the number of the example it belongs to."""
    folders = sorted({path.parent for path in (ROOT / "examples").rglob("*.yaml")})
    return [
        (example, document)
        for example, folder in enumerate(folders)
        for path in sorted(folder.glob("*.yaml"))
        for document in yaml.safe_load_all(path.read_text())
        if isinstance(document, dict)
    ]


def documents(count: int, seed: int = 2026) -> Iterator[str]:
    """`count` YAML documents, the same for the same seed."""
    rng = random.Random(seed)
    templates = _templates()
    examples = templates[-1][0] + 1
    for number in range(count):
        example, template = templates[number % len(templates)]
        copy_number = number // len(templates)
        document = _renamed(template, f"-{copy_number}-{example}")
        document["metadata"]["namespace"] = (
            f"team-{(copy_number * examples + example) % NAMESPACES}"
        )
        if document["kind"] == "TrainJob":
            env = document["spec"].setdefault("trainer", {}).setdefault("env", [])
            env.extend({"name": f"VAR_{i}", "value": "x" * rng.randint(4, 40)}
                       for i in range(rng.randint(10, 60)))
        yield yaml.dump(document, Dumper=_DUMPER, sort_keys=False)


def _renamed(template: dict[str, Any], suffix: str) -> dict[str, Any]:
    """A copy of the object with `suffix` on its name and on the names of the objects it
    refers to (its runtime, its claims)."""

    def renamed(value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {item: renamed(inner, item) for item, inner in sorted(value.items())}
        if isinstance(value, list):
            return [renamed(item) for item in value]
        return f"{value}{suffix}" if key == "claimName" else value

    document: dict[str, Any] = renamed(template)
    document["metadata"]["name"] += suffix
    reference = document.get("spec", {}).get("runtimeRef")
    if reference is not None:
        reference["name"] += suffix
    return document


def write_files(folder: Path, count: int) -> list[Path]:
    """One document per file, spread over sub-folders of 100."""
    paths = []
    for number, text in enumerate(documents(count)):
        path = folder / f"{number // 100:03d}" / f"manifest-{number:05d}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        paths.append(path)
    return paths


def write_stream(path: Path, count: int) -> Path:
    """Every document in one multi-document file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("---\n".join(documents(count)))
    return path


def write_shared(folder: Path, count: int) -> list[Path]:
    """The last example's runtime and claims, and `count` TrainJobs that all use that
    runtime, one per file, each checkpointing to a directory of its own: a monorepo's
    usual shape, where comparing every TrainJob with every other would show."""
    templates = _templates()
    last = templates[-1][0]
    objects = [document for example, document in templates if example == last]
    shared = [document for document in objects if document["kind"] != "TrainJob"]
    [job] = [document for document in objects if document["kind"] == "TrainJob"]
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / "shared.yaml"]
    paths[0].write_text(yaml.dump_all(shared, Dumper=_DUMPER, sort_keys=False))
    for number in range(count):
        user = copy.deepcopy(job)
        user["metadata"]["name"] += f"-{number}"
        for variable in user["spec"]["trainer"]["env"]:
            if "CHECKPOINT" in variable["name"]:
                variable["value"] += f"-{number}"
        paths.append(folder / f"trainjob-{number:05d}.yaml")
        paths[-1].write_text(yaml.dump(user, Dumper=_DUMPER, sort_keys=False))
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--files", type=int, nargs="*", default=[1_000, 10_000])
    parser.add_argument("--stream", type=int, default=10_000)
    args = parser.parse_args()
    for count in args.files:
        write_files(args.out / f"files-{count}", count)
    write_stream(args.out / f"stream-{args.stream}.yaml", args.stream)
    for count in SHARED:
        write_shared(args.out / f"shared-{count}", count)
    print(f"corpus written to {args.out}")


if __name__ == "__main__":
    main()
