"""Output formats: one module each, imported only when chosen."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Protocol

from trainlint.engine import Finding

#: Format name → module under `trainlint.report`.
FORMATS = {"full": "full", "concise": "concise", "json": "json_format"}


class Renderer(Protocol):
    def __call__(self, findings: Sequence[Finding], *, color: bool) -> str: ...


def renderer(name: str) -> Renderer:
    module = importlib.import_module(f"{__name__}.{FORMATS[name]}")
    render: Renderer = module.render
    return render


def summary(findings: Sequence[Finding]) -> str:
    """`Found 3 problems (2 errors, 1 warning).` or `All checks passed.`"""
    if not findings:
        return "All checks passed."
    errors = sum(finding.severity == "error" for finding in findings)
    warnings = len(findings) - errors
    parts = [f"{count} {word}{'s' if count != 1 else ''}"
             for count, word in ((errors, "error"), (warnings, "warning")) if count]
    noun = "problem" if len(findings) == 1 else "problems"
    return f"Found {len(findings)} {noun} ({', '.join(parts)})."
