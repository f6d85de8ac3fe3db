"""Settling a file's findings: its own rules only, its severities, its suppressions.

Findings land only on the input checked, so each file settles alone, in any process.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from trainlint import suppression
from trainlint.config.settings import Settings
from trainlint.document import Manifest, Path, Source, Span
from trainlint.finding import Finding
from trainlint.problem import Fix
from trainlint.rule import Rule, did_you_mean_rule
from trainlint.suppression import removal


def settle(
    settings: Settings, source: Source, raw: list[Finding], manifests: list[Manifest]
) -> list[Finding]:
    """The findings a file shows: its rules only, severities set, suppressions applied,
    plus the suppressions that silence nothing (TL090) or name no rule (TL091)."""
    enabled = settings.rules_by_code
    entries, invalid = suppression.comment_entries(source)
    if settings.annotation_exemptions:
        for manifest in manifests:
            entries.extend(suppression.annotation_entries(manifest))
    kept = [
        finding for finding in raw
        if finding.code in enabled
        and not _silence(entries, finding.code, finding.span.line, finding.manifest)
    ]
    meta = [
        *(_unused(enabled, entry) for entry in entries if not entry.used),
        *(_meta(enabled, INVALID_SUPPRESSION, item.message, source, item.span, ())
          for item in invalid),
    ]
    # Only a file-wide or same-line comment can silence TL090/TL091 themselves.
    comments = [entry for entry in entries if entry.scope != "object"]
    kept.extend(
        finding for finding in meta
        if finding is not None and not _silence(comments, finding.code, finding.span.line, None)
    )
    return [_severity(settings, finding) for finding in kept]


def _unused(enabled: Mapping[str, Rule], entry: suppression.Entry) -> Finding | None:
    if entry.rule is None:
        message = (
            f"suppression names `{entry.selector}`, which is no rule's code or name"
            f"{did_you_mean_rule(entry.selector)}: it silences nothing "
            "(see `trainlint rules`)"
        )
        return _meta(enabled, INVALID_SUPPRESSION, message, entry.source, entry.span, entry.path)
    if entry.rule.code not in enabled or entry.rule.code in SUPPRESSION_CODES:
        return None  # a rule not run here may well fire where it is enabled
    where = {
        "line": f"on line {entry.target}", "file": "in this file", "object": "on this object",
    }[entry.scope]
    message = (
        f"unused suppression of {entry.rule.code} ({entry.rule.name}): it finds nothing "
        f"{where}, so the suppression would hide a future finding unseen; remove it"
    )
    return _meta(enabled,
        UNUSED_SUPPRESSION, message, entry.source, entry.span, entry.path,
        removal(entry), entry.manifest,
    )


def _meta(
    enabled: Mapping[str, Rule], code: str, message: str, source: Source, span: Span, path: Path,
    fix: Fix | None = None, manifest: Manifest | None = None,
) -> Finding | None:
    rule = enabled.get(code)
    if rule is None:
        return None
    return Finding(
        code, rule.name, rule.severity, message, rule.help, source, span, path, None, fix,
        manifest,
    )


def _severity(settings: Settings, finding: Finding) -> Finding:
    severity = settings.severities.get(finding.code, finding.severity)
    return finding if severity == finding.severity else replace(finding, severity=severity)


#: The codes of the suppression rules (declared in `trainlint.rules`).
UNUSED_SUPPRESSION = "TL090"
INVALID_SUPPRESSION = "TL091"
SUPPRESSION_CODES = frozenset({UNUSED_SUPPRESSION, INVALID_SUPPRESSION})


def _silence(
    entries: list[suppression.Entry], code: str, line: int, manifest: Manifest | None
) -> bool:
    """Whether any entry covers the finding; every entry that does is marked used."""
    silenced = False
    for entry in entries:
        if entry.covers(code, line, manifest):
            entry.used = silenced = True
    return silenced
