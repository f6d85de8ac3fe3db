"""Configurations validated before, kept by their text in a cache folder.

Validating keys imports pydantic and builds the model of the keys (`config.keys`): about
100 ms, as long as the rest of a pre-commit run on one file. So what a configuration's
text validated to is kept, under this trainlint's build, in a cache folder (the one the
configuration names), and used again while the text and trainlint are unchanged. Only a
folder trainlint made for its cache is used (`trainlint.files.is_cache_folder`): a run
that keeps findings makes it, and reading a configuration never makes one. Only what
validated is kept (an error is found, and told, every time). What is read back is used
if it has the shape of validated keys: the cache folder is trusted as the findings
cache is (a file edited there by hand can change a run; `--no-cache` reads none). A
rule's options table is still validated on every run.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeGuard

from trainlint.config.defaults import DEFAULTS
from trainlint.digest import blake2b
from trainlint.files import is_cache_folder, read_bytes, write_atomically
from trainlint.version import build_fingerprint

#: The newest configurations one folder keeps (each one a few hundred bytes).
MAX_KEPT = 32
#: The name of a build's file in the folder: `config-<build>.json`.
KIND = "config"


def path_in(folder: Path) -> Path:
    """This build's file of validated configurations in `folder`."""
    return folder / f"{KIND}-{build_fingerprint()}.json"


def validated(
    folder: Path | None, text: str, validate: Callable[[], dict[str, Any]]
) -> dict[str, Any]:
    """What `validate` makes of the configuration `text`: kept in `folder` (a cache folder
    trainlint made) from the first run that validates it; `text` is all the keys are read
    from."""
    if folder is None or not is_cache_folder(folder):
        return validate()
    path = path_in(folder)
    key = blake2b(text.encode(), digest_size=16).hexdigest()
    kept = _read(path)
    found = kept.pop(key, None)
    if _is_keys(found):
        return found
    keys = validate()
    kept[key] = keys
    newest = dict(list(kept.items())[-MAX_KEPT:])
    with contextlib.suppress(OSError):
        write_atomically(path, json.dumps(newest))
    return keys


def _read(path: Path) -> dict[str, Any]:
    try:
        stored = json.loads(read_bytes(path))  # a regular file only: a FIFO would wait
    except (OSError, ValueError):
        return {}
    return stored if isinstance(stored, dict) else {}


def _is_keys(value: object) -> TypeGuard[dict[str, Any]]:
    """Whether `value` has the shape of validated keys: known keys, each with a value of
    its default's type."""
    return isinstance(value, dict) and all(
        name in DEFAULTS and isinstance(given, type(DEFAULTS[name]))
        for name, given in value.items()
    )
