"""The ClusterTrainingRuntimes each Trainer release installs (`torch-distributed`...).

A TrainJob that names a runtime no input defines most often means one of these: the
release installs them with the controller. They are context, never checked, and read only
when a look-up misses, so a run whose runtimes are all among its inputs parses none of
them. `SOURCES.md` beside this module says where each file comes from.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from trainlint.document import Manifest, decode
from trainlint.release import TrainerVersion

FOLDER = Path(__file__).parent


def release_folder(release: TrainerVersion) -> Path:
    """The files of a release: `v2.3.0/` for (2, 3), the first patch of the minor release."""
    return FOLDER / f"v{release[0]}.{release[1]}.0"


def runtime(release: TrainerVersion, name: str) -> Manifest | None:
    """The ClusterTrainingRuntime of this name that the release installs, if any."""
    return runtimes(release).get(name)


@cache
def runtimes(release: TrainerVersion) -> dict[str, Manifest]:
    """Every runtime the release installs, by name, read once per process."""
    from trainlint.loader import load

    folder = release_folder(release)
    found: dict[str, Manifest] = {}
    for path in sorted(folder.rglob("*.yaml")):
        # Named by the file itself: an editor can open what a finding relates to.
        name = str(path)
        text, problems = decode(path.read_bytes(), name)
        for manifest in load(text, name, problems).manifests:
            found.setdefault(manifest.name, manifest)
    return found
