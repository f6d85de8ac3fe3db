"""One line per finding: `file:line:col: CODE [severity] message [name]`."""

from __future__ import annotations

from collections.abc import Iterator

from trainlint.finding import Finding
from trainlint.report import Report, file_name, shown, summary


def headline(finding: Finding, marker: str = "") -> str:
    span = finding.span
    return shown(
        f"{file_name(finding.file)}:{span.line}:{span.column}: {finding.code} "
        f"[{finding.severity.value}] {marker}{finding.message} [{finding.name}]"
    )


def render(report: Report) -> str:
    return "".join(chunks(report))


def chunks(report: Report) -> Iterator[str]:
    """The report a line at a time: a long stream's is tens of megabytes, which need
    never be held at once."""
    for finding in report.findings:
        yield headline(finding, report.marker(finding)) + "\n"
    yield summary(report.findings, report) + "\n"
