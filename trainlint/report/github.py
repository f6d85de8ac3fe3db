"""GitHub Actions workflow commands: each finding becomes an annotation on the diff."""

from __future__ import annotations

from trainlint.report import Report, file_name, shown


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(shown(text)).replace(":", "%3A").replace(",", "%2C")


def render(report: Report) -> str:
    lines = []
    for finding in report.findings:
        span = finding.span
        properties = ",".join(
            f"{key}={_property(str(value))}"
            for key, value in (
                ("file", file_name(finding.file)), ("line", span.line), ("col", span.column),
                ("endLine", span.end_line), ("endColumn", span.end_column),
                ("title", f"trainlint {finding.code} ({finding.name})"),
            )
        )
        remediation = finding.remediation
        message = shown(finding.message) + (f"\nhelp: {shown(remediation)}" if remediation else "")
        lines.append(f"::{finding.severity.value} {properties}::{_data(message)}\n")
    return "".join(lines)
