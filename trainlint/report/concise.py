"""One line per finding: `file:line:col: CODE [severity] message [name]`."""

from __future__ import annotations

from trainlint.finding import Finding
from trainlint.report import Report, summary


def headline(finding: Finding, marker: str = "") -> str:
    span = finding.span
    return (
        f"{finding.file}:{span.line}:{span.column}: {finding.code} [{finding.severity.value}] "
        f"{marker}{finding.message} [{finding.name}]"
    )


def render(report: Report) -> str:
    lines = [headline(finding, report.marker(finding)) for finding in report.findings]
    return "\n".join([*lines, summary(report.findings, report)]) + "\n"
