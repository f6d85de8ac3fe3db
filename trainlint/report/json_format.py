"""A JSON array of findings: the public interface CI scripts parse."""

from __future__ import annotations

import json
from typing import Any

from trainlint.document import dotted
from trainlint.engine import Finding
from trainlint.report import Report


def as_dict(finding: Finding, applicable: bool = False) -> dict[str, Any]:
    span = finding.span
    ref = finding.object
    title = finding.help or (finding.fix.title if finding.fix else None)
    repair: dict[str, Any] | None = None if title is None else {
        "title": title, "applicable": applicable,
    }
    if repair is not None and finding.fix is not None:
        repair["applicability"] = "safe" if finding.fix.safe else "unsafe"
        repair["edits"] = _edits(finding)
    return {
        "code": finding.code,
        "name": finding.name,
        "severity": finding.severity.value,
        "message": finding.message,
        "file": finding.file,
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


def _edits(finding: Finding) -> list[dict[str, Any]]:
    """The fix's edits as ruff's JSON gives them; [] when it cannot apply to the file."""
    from trainlint.fix import edits_of

    return [
        {
            "content": edit.content,
            "location": {"row": edit.row, "column": edit.column},
            "end_location": {"row": edit.end_row, "column": edit.end_column},
        }
        for edit in edits_of(finding) or ()
    ]


def render(report: Report) -> str:
    return json.dumps(
        [as_dict(finding, report.can_fix(finding)) for finding in report.findings], indent=2
    ) + "\n"
