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
        "fix": None if title is None else {"title": title, "applicable": applicable},
    }


def render(report: Report) -> str:
    return json.dumps(
        [as_dict(finding, report.can_fix(finding)) for finding in report.findings], indent=2
    ) + "\n"
