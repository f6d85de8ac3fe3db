"""trainlint's release: what `--version` prints and what tells cached results apart."""

from __future__ import annotations

import functools
import os

from trainlint.digest import blake2b

__version__ = "0.1.0"


@functools.cache
def build_fingerprint() -> str:
    """What identifies this trainlint: its version and the state of its source files, of
    the runtimes it bundles and of the schemas and CRD rules it ships compiled (whose
    verdicts the cache keeps), found in one walk that skips `__pycache__` (every run
    pays for it once, ~1 ms: a configured run asked three times, for the kept
    configurations and the cache's files), each file's size and time one line of one
    text digested once (a path made and digested per file cost a third more)."""
    package = os.path.dirname(__file__)  # noqa: PTH120 - strings, as below
    lines = [__version__]
    for root, folders, files in os.walk(package):
        folders[:] = [folder for folder in folders if folder != "__pycache__"]
        relative = root[len(package) :]
        for name in files:
            if name.endswith((".py", ".yaml", ".json", ".pickle")):
                stat = os.stat(f"{root}/{name}")  # noqa: PTH116 - strings, as above
                lines.append(f"{relative}/{name}:{stat.st_size}:{stat.st_mtime_ns}")
    lines.sort()
    return blake2b("\n".join(lines).encode(), digest_size=8).hexdigest()
