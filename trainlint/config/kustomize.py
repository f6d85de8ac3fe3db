"""Kustomize patches: files that a kustomization names as patches hold parts of objects,
which kustomize lays over whole ones. Checked alone, a patch of a TrainJob would be
reported as a TrainJob without `runtimeRef`, and a patch of a runtime would stand in for
the runtime in look-ups: a patch is neither checked nor looked up, and the run says so.

A kustomization names its patches relative to its folder (`patches[].path`,
`patchesStrategicMerge[]`, `patchesJson6902[].path`), and kustomize reads no file outside
that folder by default: the kustomizations that may name a file are those of its folder
and of the folders above it, and those among the files checked (for the paths that reach
out with `../`, allowed by `--load-restrictor LoadRestrictionsNone`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

#: The names kustomize reads a kustomization (or a component) from.
KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")


class Patches:
    """Which files the kustomizations of a run name as patches; each kustomization and
    each folder's are read once."""

    def __init__(self) -> None:
        #: Each patch's absolute path → the kustomization that names it, as given.
        self._named: dict[str, str] = {}
        self._read: set[str] = set()
        #: The folders whose kustomization was looked for (absolute).
        self._searched: set[str] = set()
        #: By folder as given: its files that are patches → their kustomization.
        self._by_folder: dict[str, dict[str, str]] = {}

    def read(self, kustomization: str) -> None:
        """Take in the patches of a kustomization file; one that cannot be read or parsed
        names none (kustomize, not trainlint, tells what is wrong with it)."""
        absolute = os.path.abspath(kustomization)  # noqa: PTH100 - strings, as discovery's
        if absolute in self._read:
            return
        self._read.add(absolute)
        self._by_folder.clear()  # a folder's patches may be more now
        try:
            with open(absolute, "rb") as file:  # noqa: PTH123
                text = file.read()
        except OSError:
            return
        folder = os.path.dirname(absolute)  # noqa: PTH120
        for path in _patch_paths(_parsed(text)):
            self._named.setdefault(os.path.normpath(os.path.join(folder, path)), kustomization)  # noqa: PTH118

    def owner(self, name: str) -> str | None:
        """The kustomization that names the file `name` as a patch; None for a file that
        none names."""
        folder, _, file = name.rpartition(os.sep)  # os.path.split takes 6 times as long
        found = self._by_folder.get(folder)
        if found is None:
            found = self._by_folder[folder] = self._in_folder(folder)
        return found.get(file) if found else None

    def _in_folder(self, folder: str) -> dict[str, str]:
        absolute = os.path.abspath(folder or ".")  # noqa: PTH100
        above = absolute
        while above not in self._searched:
            self._searched.add(above)
            for candidate in KUSTOMIZATION_NAMES:
                path = os.path.join(above, candidate)  # noqa: PTH118
                if os.path.isfile(path):  # noqa: PTH113
                    self.read(_shown(path))
                    break  # kustomize reads the first of its names it finds
            parent = os.path.dirname(above)  # noqa: PTH120
            if parent == above:
                break
            above = parent
        return {os.path.basename(path): owner for path, owner in self._named.items()  # noqa: PTH119
                if os.path.dirname(path) == absolute}  # noqa: PTH120


def _shown(path: str) -> str:
    """A path as messages show it: relative to the working folder, unless above it."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def kustomizations(names: Iterable[str]) -> list[str]:
    """The kustomization files among `names`."""
    return [name for name in names if name.endswith(KUSTOMIZATION_NAMES)
            and os.path.basename(name) in KUSTOMIZATION_NAMES]  # noqa: PTH119


def _parsed(text: bytes) -> Any:
    import yaml

    try:
        return yaml.load(text, Loader=yaml.CSafeLoader)
    except (yaml.YAMLError, ValueError):
        return None


def _patch_paths(kustomization: Any) -> list[str]:
    """The files a kustomization names as patches (an inline patch of
    `patchesStrategicMerge` is a string too: as a path it names no file checked)."""
    if not isinstance(kustomization, dict):
        return []
    found = []
    for key in ("patches", "patchesJson6902"):
        for entry in _listed(kustomization.get(key)):
            if isinstance(entry, dict) and isinstance(entry.get("path"), str):
                found.append(entry["path"])
    found += [entry for entry in _listed(kustomization.get("patchesStrategicMerge"))
              if isinstance(entry, str) and "\n" not in entry]
    return found


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
