"""Files that kustomize and Helm build manifests from, which are not manifests as written:
they are neither checked nor looked up, and the run says so.

- A **kustomize patch** holds part of an object, which kustomize lays over a whole one.
  Checked alone, a patch of a TrainJob would be a TrainJob without `runtimeRef`, and a
  patch of a runtime would stand in for the runtime in look-ups. A kustomization names its
  patches relative to its folder (`patches[].path`, `patchesStrategicMerge[]`,
  `patchesJson6902[].path`), and kustomize reads no file outside that folder by default:
  the kustomizations that may name a file are those of its folder and of the folders above
  it, and those among the files checked (for the paths that reach out with `../`, allowed
  by `--load-restrictor LoadRestrictionsNone`).
- A **Helm chart** is no manifest until Helm renders it: its templates are Go templates,
  often no YAML as written, and so are the files they read through `.Files` (rendered with
  `tpl`); its `Chart.yaml` and values files are no objects. Only its `crds/` folder holds
  manifests as written, which Helm applies unrendered. A file belongs to the chart of the
  nearest folder above it that holds a `Chart.yaml`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from trainlint.document import sequence
from trainlint.files import read_bytes

#: The names kustomize reads a kustomization (or a component) from.
KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
#: What makes a folder a Helm chart.
CHART = "Chart.yaml"
#: The files of a chart's own folder that are Helm's, not objects (besides values files).
CHART_FILES = frozenset({CHART, "Chart.lock", "requirements.yaml", "requirements.lock"})
#: Where a chart keeps the manifests Helm applies as written.
CRDS = "crds"


class Built(NamedTuple):
    """Why a file is not checked: `patch` (named by the kustomization `by`), `chart` (a
    file of the chart in the folder `by`), or `helm` (Helm's own file of that chart: its
    `Chart.yaml`, a values file)."""

    what: str
    by: str


class _Folder:
    """What a folder's files may be built from (a plain class: a named tuple costs every
    run 0.07 ms to make)."""

    __slots__ = ("chart", "patches", "top")

    def __init__(self, patches: dict[str, str], chart: str | None, *, top: bool) -> None:
        #: Its files named as patches → their kustomization.
        self.patches = patches
        #: The chart it is part of (None: no chart, or its `crds/`).
        self.chart = chart
        #: Whether it is the chart's own folder.
        self.top = top


class Builders:
    """Which files of a run kustomize and Helm build from; each kustomization and each
    folder's are read once. The files are those on disk, or those `exists` and `read`
    know of (a git revision's: absolute paths)."""

    def __init__(
        self, exists: Callable[[str], bool] = os.path.isfile,
        read: Callable[[str], bytes] | None = None,
    ) -> None:
        self._exists = exists
        self._reader = read or read_bytes  # a FIFO named `kustomization.yaml` is not opened
        #: The patches of each absolute folder: file name → the kustomization naming it.
        self._named: dict[str, dict[str, str]] = {}
        self._read: set[str] = set()
        #: The absolute folders looked at: the kustomization found there (if any) is read;
        #: whether they hold a chart.
        self._charts: dict[str, bool] = {}
        #: By folder as given (None: nothing in it is built from).
        self._by_folder: dict[str, _Folder | None] = {}

    def read(self, kustomization: str) -> None:
        """Take in the patches of a kustomization file; one that cannot be read or parsed
        names none (kustomize, not trainlint, tells what is wrong with it)."""
        absolute = os.path.abspath(kustomization)  # noqa: PTH100 - strings, as discovery's
        if absolute in self._read:
            return
        self._read.add(absolute)
        self._by_folder.clear()  # a folder's patches may be more now
        try:
            text = self._reader(absolute)
        except OSError:
            return
        if b"patches" not in text:  # every key that names patches has it: most parse none
            return
        folder = os.path.dirname(absolute)  # noqa: PTH120
        for path in _patch_paths(_parsed(text)):
            named, _, file = os.path.normpath(os.path.join(folder, path)).rpartition(os.sep)  # noqa: PTH118
            self._named.setdefault(named, {}).setdefault(file, kustomization)

    def read_among(self, names: Iterable[str]) -> None:
        """Take in the kustomizations among the files of a run (which may name patches
        outside their folder, with `../`)."""
        for name in names:
            if is_kustomization(name):
                self.read(name)

    def built(self, name: str) -> Built | None:
        """Why the file `name` is not checked; None for a manifest."""
        folder, _, file = name.rpartition(os.sep)  # os.path.split takes 6 times as long
        try:
            found = self._by_folder[folder]
        except KeyError:
            found = self._by_folder[folder] = self._in_folder(folder)
        if found is None:  # most folders: 10,000 files take 4.5 ms, not 6.5
            return None
        if file in found.patches:
            return Built("patch", found.patches[file])
        if found.chart is None:
            return None
        helms = found.top and (file in CHART_FILES or file.startswith("values"))
        return Built("helm" if helms else "chart", found.chart)

    def _in_folder(self, folder: str) -> _Folder | None:
        absolute = os.path.abspath(folder or ".")  # noqa: PTH100
        chart = None
        above = absolute
        while True:
            if self._holds_chart(above) and chart is None:
                chart = above
            parent = os.path.dirname(above)  # noqa: PTH120
            if parent == above:
                break
            above = parent
        patches = self._named.get(absolute, {})
        crds = os.path.join(chart, CRDS) if chart is not None else ""  # noqa: PTH118
        if chart is None or absolute == crds or absolute.startswith(crds + os.sep):
            return _Folder(patches, None, top=False) if patches else None
        return _Folder(patches, _shown(chart), top=absolute == chart)

    def _holds_chart(self, folder: str) -> bool:
        """Whether `folder` holds a chart; its kustomization, if any, is read."""
        found = self._charts.get(folder)
        if found is None:
            for candidate in KUSTOMIZATION_NAMES:
                path = os.path.join(folder, candidate)  # noqa: PTH118
                if self._exists(path):
                    self.read(_shown(path))
                    break  # kustomize reads the first of its names it finds
            found = self._charts[folder] = self._exists(os.path.join(folder, CHART))  # noqa: PTH118
        return found


def _shown(path: str) -> str:
    """A path as messages show it: relative to the working folder, unless above it."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def is_kustomization(name: str) -> bool:
    return name.endswith(KUSTOMIZATION_NAMES) and (
        os.path.basename(name) in KUSTOMIZATION_NAMES)  # noqa: PTH119


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
        for entry in sequence(kustomization.get(key)):
            if isinstance(entry, dict) and isinstance(entry.get("path"), str):
                found.append(entry["path"])
    found += [entry for entry in sequence(kustomization.get("patchesStrategicMerge"))
              if isinstance(entry, str) and "\n" not in entry]
    return found
