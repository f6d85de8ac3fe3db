"""trainlint: find the silent failures of Kubeflow Trainer manifests before they run.

The public API is imported lazily, so `trainlint --version` stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trainlint.version import __version__

__all__ = ["Finding", "Settings", "__version__", "lint", "load"]

if TYPE_CHECKING:
    from trainlint.config.settings import Settings
    from trainlint.engine.run import lint
    from trainlint.finding import Finding
    from trainlint.loader import load

_EXPORTS = {
    "lint": "trainlint.engine.run", "Finding": "trainlint.finding",
    "Settings": "trainlint.config.settings", "load": "trainlint.loader",
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'trainlint' has no attribute {name!r}")
