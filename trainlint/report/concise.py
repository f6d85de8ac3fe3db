"""One line per finding: `file:line:col: CODE [severity] message [name]`."""

from __future__ import annotations

from collections.abc import Sequence

from trainlint.engine import Finding
from trainlint.report import summary


def headline(finding: Finding) -> str:
    span = finding.span
    return (
        f"{finding.file}:{span.line}:{span.column}: {finding.code} [{finding.severity.value}] "
        f"{finding.message} [{finding.name}]"
    )


def render(findings: Sequence[Finding], *, color: bool) -> str:
    lines = [headline(finding) for finding in findings]
    return "\n".join([*lines, summary(findings)]) + "\n"
