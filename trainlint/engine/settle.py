"""Settling a file's findings: its own rules only, its severities, its suppressions.

Findings land only on the input checked, so each file settles alone, in any process.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from trainlint import suppression
from trainlint.config.settings import Settings
from trainlint.document import Manifest, Source
from trainlint.finding import Finding


def settle(
    settings: Settings, source: Source, raw: list[Finding], manifests: list[Manifest]
) -> list[Finding]:
    """The findings a file shows: its rules only, severities set, suppressions applied,
    plus what the suppression rules report of its suppressions (`suppression.unheeded`)."""
    enabled = settings.enabled
    entries, invalid = suppression.comment_entries(source)
    if settings.annotation_exemptions:
        for manifest in manifests:
            entries.extend(suppression.annotation_entries(manifest))
    kept = [
        finding for finding in raw
        if finding.code in enabled
        and not _silence(entries, finding.code, finding.span.line, finding.manifest)
    ]
    # Only a file-wide or same-line comment can silence the suppression rules themselves.
    comments = [entry for entry in entries if entry.scope != "object"]
    kept.extend(
        finding for finding in _of_suppressions(settings, entries, invalid)
        if not _silence(comments, finding.code, finding.span.line, None)
    )
    return [_severity(settings, finding) for finding in kept]


def _of_suppressions(
    settings: Settings, entries: list[suppression.Entry], invalid: list[suppression.Invalid]
) -> Iterator[Finding]:
    """The findings of the enabled rules that report suppressions."""
    for item in suppression.unheeded(entries, invalid, settings.enabled):
        rule = settings.rules_reporting.get(type(item))
        if rule is None:
            continue
        for problem in rule.check(item):
            yield Finding(
                rule.code, rule.name, rule.severity, problem.message,
                problem.remediation or rule.remediation, item.source, item.span,
                problem.path, None, problem.fix, item.manifest,
            )


def _severity(settings: Settings, finding: Finding) -> Finding:
    severity = settings.severities.get(finding.code, finding.severity)
    return finding if severity == finding.severity else replace(finding, severity=severity)


def _silence(
    entries: list[suppression.Entry], code: str, line: int, manifest: Manifest | None
) -> bool:
    """Whether any entry covers the finding; every entry that does is marked used."""
    silenced = False
    for entry in entries:
        if entry.covers(code, line, manifest):
            entry.used = silenced = True
    return silenced
