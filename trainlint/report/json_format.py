"""A JSON array of findings: the public interface CI scripts parse."""

from __future__ import annotations

import json
from typing import Any

from trainlint.document import dotted
from trainlint.finding import Finding
from trainlint.report import Report, file_name


def as_dict(finding: Finding, applicable: bool = False) -> dict[str, Any]:
    span = finding.span
    ref = finding.object
    title = finding.remediation or (finding.fix.title if finding.fix else None)
    repair: dict[str, Any] | None = None if title is None else {
        "title": title, "applicable": applicable,
    }
    if repair is not None and finding.fix is not None:
        repair["applicability"] = "safe" if finding.fix.safe else "unsafe"
        repair["edits"] = [
            {
                "content": edit.content,
                "location": {"row": edit.row, "column": edit.column},
                "end_location": {"row": edit.end_row, "column": edit.end_column},
            }
            for edit in finding.fix.edits or ()
        ]
    return {
        "code": finding.code,
        "name": finding.name,
        "severity": finding.severity.value,
        "message": finding.message,
        "file": file_name(finding.file),
        "line": span.line,
        "column": span.column,
        "end_line": span.end_line,
        "end_column": span.end_column,
        "path": dotted(finding.path),
        "object": None if ref is None else {
            "apiVersion": ref.api_version, "kind": ref.kind,
            "name": ref.name, "namespace": ref.namespace,
        },
        "fix": repair,
    }


def with_edits(report: Report) -> list[Finding]:
    """The report's findings, each fix with its edits: a run that gives JSON works them
    out where it checks each file (`fix.with_edits`); a run that fixes, here."""
    from trainlint.fix import with_edits

    return with_edits(report.findings)


def render(report: Report) -> str:
    return json.dumps(
        [as_dict(finding, report.can_fix(finding)) for finding in with_edits(report)], indent=2
    ) + "\n"
