"""A deterministic benchmark corpus made from `examples/`: many files, or one big file.

Each document is an example object renamed (`-<n>`) and padded with a varying number of
env vars, so sizes and names vary the way a real monorepo's do (~1-4 KB per document).
"""

from __future__ import annotations

import argparse
import random
import tempfile
from collections.abc import Iterator
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
#: Outside the checkout: a repository's `.gitignore` must not hide the corpus from the run.
DEFAULT_DIR = Path(tempfile.gettempdir()) / "trainlint-benchmark-corpus"
_DUMPER = yaml.CSafeDumper
_LOADER = yaml.CSafeLoader


def _templates() -> list[dict[str, object]]:
    return [
        document
        for path in sorted((ROOT / "examples").rglob("*.yaml"))
        for document in yaml.safe_load_all(path.read_text())
        if isinstance(document, dict)
    ]


def documents(count: int, seed: int = 2026) -> Iterator[str]:
    """`count` YAML documents, the same for the same seed."""
    rng = random.Random(seed)
    templates = _templates()
    for number in range(count):
        template = templates[number % len(templates)]
        document = yaml.load(yaml.dump(template, Dumper=_DUMPER), Loader=_LOADER)
        metadata = document["metadata"]
        metadata["name"] = f"{metadata['name']}-{number}"
        metadata["namespace"] = f"team-{number % 17}"
        if document["kind"] == "TrainJob":
            document["spec"]["runtimeRef"]["name"] += f"-{number - number % len(templates)}"
            env = document["spec"].setdefault("trainer", {}).setdefault("env", [])
            env.extend({"name": f"VAR_{i}", "value": "x" * rng.randint(4, 40)}
                       for i in range(rng.randint(10, 60)))
        yield yaml.dump(document, Dumper=_DUMPER, sort_keys=False)


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--files", type=int, nargs="*", default=[1_000, 10_000])
    parser.add_argument("--stream", type=int, default=10_000)
    args = parser.parse_args()
    for count in args.files:
        write_files(args.out / f"files-{count}", count)
    write_stream(args.out / f"stream-{args.stream}.yaml", args.stream)
    print(f"corpus written to {args.out}")


if __name__ == "__main__":
    main()
