"""SARIF 2.1.0, as GitHub code scanning reads it: exact regions, relative URIs under
`%SRCROOT%`, rule help, and fingerprints that do not depend on line numbers."""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import quote

from trainlint import __version__
from trainlint.finding import Finding
from trainlint.report import Report, fingerprints
from trainlint.rule import Rule, all_rules

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def uri(file: str) -> str:
    """A file as a URI relative to the working folder (the repository root in CI), its
    name's bytes percent-encoded (those of a name that is not UTF-8 too)."""
    path = PurePath(file)
    if path.is_absolute():
        try:
            path = path.relative_to(Path.cwd())
        except ValueError:
            return path.as_uri()
    return quote(os.fsencode(path.as_posix()))


def _rule(rule: Rule, site: str) -> dict[str, Any]:
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary + "."},
        "fullDescription": {"text": rule.description},
        "help": {"text": rule.remediation or rule.description, "markdown": rule.doc},
        "helpUri": rule.docs_url_on(site),
        "defaultConfiguration": {"level": rule.severity.value},
        "properties": {"tags": ["kubeflow-trainer"]},
    }


def _result(finding: Finding, index: int, fingerprint: str) -> dict[str, Any]:
    span = finding.span
    return {
        "ruleId": finding.code,
        "ruleIndex": index,
        "level": finding.severity.value,
        "message": {"text": finding.message + (
            f" (help: {finding.remediation})" if finding.remediation else ""
        )},
        "locations": [{
            "physicalLocation": {
                "artifactLocation": {"uri": uri(finding.file), "uriBaseId": "%SRCROOT%"},
                "region": {
                    "startLine": span.line, "startColumn": span.column,
                    "endLine": span.end_line, "endColumn": span.end_column,
                },
            },
        }],
        "partialFingerprints": {"trainlint/v1": fingerprint},
    }


def render(report: Report) -> str:
    # Only the rules that have results: the file does not change when rules are added.
    codes = sorted({finding.code for finding in report.findings})
    registry = all_rules()
    index = {code: position for position, code in enumerate(codes)}
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {
                "driver": {
                    "name": "trainlint", "version": __version__, "informationUri": report.site,
                    "rules": [_rule(registry[code], report.site) for code in codes],
                },
            },
            "results": [
                _result(finding, index[finding.code], fingerprint)
                for finding, fingerprint in zip(
                    report.findings, fingerprints(report.findings), strict=True
                )
            ],
            "columnKind": "unicodeCodePoints",
        }],
    }
    return json.dumps(log, indent=2) + "\n"
