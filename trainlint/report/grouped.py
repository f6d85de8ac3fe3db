"""Findings grouped under their file: `  line:col CODE [severity] message [name]`."""

from __future__ import annotations

from itertools import groupby

from trainlint.report import Report, file_name, paint, shown, summary


def render(report: Report) -> str:
    color = report.color
    blocks = []
    for file, findings in groupby(report.findings, key=lambda finding: finding.file):
        lines = [paint(f"{shown(file_name(file))}:", "file", color=color)]
        for finding in findings:
            span = finding.span
            where = paint(f"{span.line}:{span.column}", "location", color=color)
            code = paint(finding.code, finding.severity.value, color=color)
            lines.append(
                f"  {where} {code} [{finding.severity.value}] {report.marker(finding)}"
                f"{shown(finding.message)} [{finding.name}]"
            )
        blocks.append("\n".join(lines))
    return "\n\n".join([*blocks, summary(report.findings, report)]) + "\n"
