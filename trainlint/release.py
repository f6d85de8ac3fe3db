"""The Trainer releases trainlint knows, and how configuration and messages spell them."""

from __future__ import annotations

import re

TrainerVersion = tuple[int, int]

#: Releases of Kubeflow Trainer whose API trainlint knows, oldest first.
RELEASES: tuple[TrainerVersion, ...] = ((2, 0), (2, 1), (2, 2), (2, 3))

NEWEST = RELEASES[-1]


def parse_version(text: str) -> TrainerVersion:
    """`2.3`, `v2.3` or `v2.3.0` → (2, 3); ValueError for a release trainlint does not know."""
    match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?", text.strip())
    version = (int(match.group(1)), int(match.group(2))) if match else None
    if version not in RELEASES:
        known = ", ".join(f"{major}.{minor}" for major, minor in RELEASES)
        raise ValueError(f"unknown Trainer release {text!r} (known: {known})")
    return version


def format_version(version: TrainerVersion) -> str:
    return f"v{version[0]}.{version[1]}"
