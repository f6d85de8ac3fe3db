"""Compare the distributions installed in this environment with the lock.

    python3 .ci/versions.py LOCK           print those not at their locked version
    python3 .ci/versions.py --exact LOCK   and fail if there is any

The newest and lowest jobs print the list, so that a red job names the releases that
differ from the lock; the locked job fails on it, since then the README's install fetched
something the lock lacks: the lock no longer satisfies pyproject.toml.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import re
import sys
from pathlib import Path

#: Installed by venv itself, or the project: not in the lock.
UNLOCKED = {"pip", "setuptools", "trainlint"}


def canonical(name: str) -> str:
    """A distribution name as PEP 503 compares them: `ruamel.yaml` → `ruamel-yaml`."""
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(lock: Path) -> dict[str, str]:
    """The `name==version` lines of a requirements file."""
    text = lock.read_text(encoding="utf-8")
    return {
        canonical(match[1]): match[2]
        for match in re.finditer(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)", text, re.M)
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lock", type=Path)
    parser.add_argument("--exact", action="store_true", help="fail on any difference")
    arguments = parser.parse_args()
    locked = pins(arguments.lock)
    installed = {
        canonical(distribution.metadata["Name"]): distribution.version
        for distribution in importlib.metadata.distributions()
    }
    differ = [
        f"{name} {version} (locked: {locked.get(name, 'not in the lock')})"
        for name, version in sorted(installed.items())
        if name not in UNLOCKED and locked.get(name) != version
    ]
    if not differ:
        print(f"every installed distribution is at its version in {arguments.lock}")
        return 0
    print(f"not as in {arguments.lock}:\n  " + "\n  ".join(differ))
    if arguments.exact:
        print(
            f"{arguments.lock} no longer satisfies pyproject.toml: refresh it with "
            "`bash .ci/run --lock`",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
