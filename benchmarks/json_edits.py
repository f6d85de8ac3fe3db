"""`--output-format json` (which works out every fix's text edits) against `concise` on
the same files, cold (`--no-cache`) and warm (a cache the same format just wrote), and on
one file holding `--documents` documents (cold).

    python3 benchmarks/json_edits.py [--files 1000] [--documents 1000] [--runs 3]

Prints the median seconds of each and the ratio of json to concise, measured in the same
rounds on real subprocesses.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check import TRAINLINT, medians
from corpus import write_files, write_stream


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--documents", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="trainlint-json-") as scratch:
        folder = Path(scratch) / "files"
        write_files(folder, options.files)
        stream = write_stream(Path(scratch) / "stream.yaml", options.documents)

        def run(fmt: str, *extra: str, inputs: Path = folder) -> None:
            subprocess.run(
                [TRAINLINT, "check", "--output-format", fmt, *extra, str(inputs)],
                stdout=subprocess.DEVNULL, check=False,
            )

        actions: dict[str, Callable[[], object]] = {}
        for fmt in ("concise", "json"):
            cache = str(Path(scratch) / f"cache-{fmt}")
            run(fmt, "--cache-dir", cache)  # the warm runs find what this one wrote
            actions[f"{fmt} cold"] = partial(run, fmt, "--no-cache")
            actions[f"{fmt} warm"] = partial(run, fmt, "--cache-dir", cache)
            actions[f"{fmt} one file"] = partial(run, fmt, "--no-cache", inputs=stream)
        times = medians(actions, options.runs)
    for name, seconds in times.items():
        print(f"{name:16} {seconds:6.2f} s")
    print(f"(one file: {options.documents:,} documents in one file; the others: "
          f"{options.files:,} files)")
    for state in ("cold", "warm", "one file"):
        ratio = times[f"json {state}"] / times[f"concise {state}"]
        print(f"json / concise, {state}: {ratio:.2f}x")


if __name__ == "__main__":
    main()
