"""Settling a file's findings: its own rules only, its severities, its suppressions.

Findings land only on the input checked, so each file settles alone, in any process: first
the findings of its objects' own checks (where they were made), then those the rules'
cross-object passes made on it (once every object's facts are known), and last what the
suppression rules say of its suppressions, once nothing more can use one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace

from trainlint import suppression
from trainlint.config.settings import Settings
from trainlint.document import ENTRY, Manifest, Source
from trainlint.finding import Finding
from trainlint.rule import reported


class Suppressions:
    """The suppressions of one file, each marked used once it silences a finding."""

    def __init__(
        self, entries: list[suppression.Entry], invalid: list[suppression.Invalid]
    ) -> None:
        self.entries = entries
        self.invalid = invalid

    @classmethod
    def of(cls, settings: Settings, source: Source, manifests: list[Manifest]) -> Suppressions:
        entries, invalid = suppression.comment_entries(source)
        _unread(entries, manifests)
        if settings.annotation_exemptions:
            for manifest in manifests:
                entries.extend(suppression.annotation_entries(manifest))
        return cls(entries, invalid)

    def settle(self, settings: Settings, raw: Iterable[Finding]) -> list[Finding]:
        """The findings of `raw` the file shows: its rules only, not silenced, severities
        set."""
        enabled = settings.enabled
        return [
            _severity(settings, finding) for finding in raw
            if finding.code in enabled
            and not _silence(self.entries, finding.code, finding.span.line, finding.manifest)
        ]

    def unheeded(self, settings: Settings) -> list[Finding]:
        """What the suppression rules report of the file's suppressions once all its
        findings are settled (`suppression.unheeded`): only a file-wide or same-line
        comment can silence them."""
        comments = [entry for entry in self.entries if entry.scope != "object"]
        return [
            _severity(settings, finding)
            for finding in _of_suppressions(settings, self.entries, self.invalid)
            if not _silence(comments, finding.code, finding.span.line, None)
        ]


def _unread(entries: list[suppression.Entry], manifests: list[Manifest]) -> None:
    """Count as used the line comments on lines of no object the rules read (a document
    the loader never reached, after a broken one): whether they silence anything cannot
    be told, and TL090 would call them unused (they still silence what lands there, as
    TL001 on a broken line)."""
    lines = [entry for entry in entries if entry.scope == "line"]
    if not lines:
        return  # nearly every file
    ranges = [(min(spans[0::ENTRY]) + 1, max(spans[2::ENTRY]) + 1)
              for spans in (manifest.spans for manifest in manifests) if spans]
    for entry in lines:
        if not any(first <= entry.target <= last for first, last in ranges):
            entry.used = True


def settle(
    settings: Settings, source: Source, raw: list[Finding], manifests: list[Manifest]
) -> list[Finding]:
    """The findings a file shows when nothing but `raw` lands on it: its rules only,
    severities set, suppressions applied, plus what the suppression rules report of its
    suppressions."""
    suppressions = Suppressions.of(settings, source, manifests)
    return [*suppressions.settle(settings, raw), *suppressions.unheeded(settings)]


def _of_suppressions(
    settings: Settings, entries: list[suppression.Entry], invalid: list[suppression.Invalid]
) -> Iterator[Finding]:
    """The findings of the enabled rules that report suppressions."""
    for item in suppression.unheeded(entries, invalid, settings.enabled):
        rule = settings.rules_reporting.get(type(item))
        if rule is None:
            continue
        for problem in reported(rule, item):
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
