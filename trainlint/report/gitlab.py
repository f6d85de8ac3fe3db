"""GitLab Code Quality report (a JSON array), with fingerprints that survive line moves."""

from __future__ import annotations

import json

from trainlint.report import Report, file_name, fingerprints

#: GitLab's severities are info, minor, major, critical and blocker.
_SEVERITY = {"error": "major", "warning": "minor"}


def render(report: Report) -> str:
    issues = [
        {
            "type": "issue",
            "check_name": finding.code,
            "description": f"{finding.code} {finding.message} [{finding.name}]",
            "severity": _SEVERITY[finding.severity.value],
            "fingerprint": fingerprint,
            "location": {
                "path": file_name(finding.file),
                "positions": {
                    "begin": {"line": finding.span.line, "column": finding.span.column},
                    "end": {"line": finding.span.end_line, "column": finding.span.end_column},
                },
            },
        }
        for finding, fingerprint in zip(
            report.findings, fingerprints(report.findings), strict=True
        )
    ]
    return json.dumps(issues, indent=2) + "\n"
