"""What each speed trick of a run buys, measured with and without it in the same rounds.

    python3 benchmarks/tricks.py [--runs 7] [--files 3000]

The figures quoted beside the tricks come from here, on the corpus of `check.py`:
- the loader's resolver hooks (`trainlint.loader._Loader`: C callables for the composer's
  per-node callbacks) and its memo of plain scalars' tags, composing the files;
- the cache's files joined from entries encoded where their files were checked
  (`trainlint.run.cache.Cache.save`), against encoding the whole in the parent;
- the cycle collector off during a check (`trainlint.run.process.collector_off`),
  linting the files in-process with it on and off.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check import medians
from corpus import DEFAULT_DIR, write_files

from trainlint import loader
from trainlint.engine.run import lint
from trainlint.run.cache import _json


class _StockHooks(loader._Resolver):
    """The tag memo, with PyYAML's own path-resolver hooks."""


class _NoTagMemo(yaml.CSafeLoader):
    """The hooks, with PyYAML's own resolution of every scalar's tag."""

    descend_resolver = loader._Loader.descend_resolver  # type: ignore[assignment]
    ascend_resolver = loader._Loader.ascend_resolver  # type: ignore[assignment]


def compose(texts: list[str], kind: type[Any]) -> None:
    for text in texts:
        for _ in yaml.compose_all(text, Loader=kind):
            pass


def checked(texts: list[tuple[str, str]], collector: bool) -> None:
    (gc.enable if collector else gc.disable)()
    try:
        lint([loader.load(text, name) for name, text in texts])
    finally:
        gc.enable()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--files", type=int, default=3000)
    args = parser.parse_args()
    folder = DEFAULT_DIR / "files-10000"
    if not folder.exists():
        write_files(folder, 10_000)
    paths = sorted(folder.rglob("*.yaml"))[: args.files]
    texts = [path.read_text() for path in paths]

    gc.disable()
    seconds = medians({
        "stock": lambda: compose(texts, yaml.CSafeLoader),
        "tag memo only": lambda: compose(texts, _StockHooks),
        "hooks only": lambda: compose(texts, _NoTagMemo),
        "trainlint": lambda: compose(texts, loader._Loader),
    }, args.runs)
    gc.enable()
    print(f"composing {len(paths):,} files:")
    for name, spent in seconds.items():
        print(f"  {name:<14} {spent * 1000:8.0f} ms  {spent / seconds['stock']:.2f} of stock")

    entries = {str(path): {"settled": [[text[:80]] * 3], "content": str(hash(text))}
               for path, text in zip(paths, texts, strict=True)}
    parts = [f"{_json(name)}:{_json(entry)}" for name, entry in entries.items()]
    seconds = medians({
        "encode in the parent": lambda: _json({"files": entries}),
        "join encoded entries": lambda: '{"files":{' + ",".join(parts) + "}}",
    }, args.runs)
    json.loads('{"files":{' + ",".join(parts) + "}}")  # the joined text is JSON
    print(f"a cache file of {len(parts):,} entries:")
    for name, spent in seconds.items():
        print(f"  {name:<22} {spent * 1000:8.1f} ms")

    named = [(str(path), text) for path, text in zip(paths, texts, strict=True)]
    seconds = medians({
        "collector on": lambda: checked(named, collector=True),
        "collector off": lambda: checked(named, collector=False),
    }, max(3, args.runs // 2))
    print(f"checking {len(paths):,} files in-process:")
    for name, spent in seconds.items():
        print(f"  {name:<14} {spent * 1000:8.0f} ms  "
              f"{spent / seconds['collector on']:.2f} of the collector on")


if __name__ == "__main__":
    main()
