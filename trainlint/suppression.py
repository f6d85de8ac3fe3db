"""Suppressions: `# trainlint: disable=...` comments and the `trainlint.dev/ignore` annotation.

Each code a suppression names is one `Entry`, marked used when it silences a finding, so
the engine can report the ones that silence nothing (TL090) or name no rule (TL091).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from trainlint.document import Manifest, Path, Source, Span, mapping
from trainlint.rule import Rule, find_rule

#: The object annotation the CLI and the webhook honour: `"TL301,TL402=reason"`.
ANNOTATION = "trainlint.dev/ignore"
ANNOTATION_PATH: Path = ("metadata", "annotations", ANNOTATION)
DIRECTIVES = ("disable", "disable-file")
#: A YAML comment (`#` opening the line or after a blank) addressed to trainlint.
_COMMENT = re.compile(r"(?:^|(?<=\s))#\s*trainlint:\s*(?P<body>.*)$")
#: `disable=CODE[,CODE...] [-- reason]`; a further `# comment` may follow.
_DIRECTIVE = re.compile(
    r"(?P<name>[a-z-]+)\s*=\s*(?P<codes>[^#]*?)\s*(?:--\s*(?P<reason>[^#]*?))?\s*(?:#.*)?$"
)
_SELECTOR = re.compile(r"[^\s,]+")


@dataclass(eq=False)
class Entry:
    """One code named by one suppression, and where it is written."""

    selector: str
    #: The rule named, None when no rule has that code or name.
    rule: Rule | None
    span: Span
    source: Source
    #: `line` (the findings starting on `target`), `file`, or `object` (of `manifest`).
    scope: str
    target: int = 0
    manifest: Manifest | None = None
    #: Key path of the annotation (empty for comments).
    path: Path = ()
    reason: str | None = None
    used: bool = False

    def covers(self, code: str, line: int, manifest: Manifest | None) -> bool:
        if self.rule is None or self.rule.code != code:
            return False
        if self.scope == "line":
            return line == self.target
        if self.scope == "object":
            return manifest is self.manifest
        return True


@dataclass(frozen=True, slots=True)
class Invalid:
    """A comment that addresses trainlint but cannot be read."""

    span: Span
    message: str


def comment_entries(source: Source) -> tuple[list[Entry], list[Invalid]]:
    """The suppression comments of a file, and the ones written wrong."""
    entries: list[Entry] = []
    invalid: list[Invalid] = []
    if "trainlint:" not in source.text:
        return entries, invalid
    lines = source.text.splitlines()
    for number, line in enumerate(lines, start=1):
        match = _COMMENT.search(line)
        if match is None:
            continue
        body_at = match.start("body")
        directive = _DIRECTIVE.match(match["body"])
        if directive is None or directive["name"] not in DIRECTIVES:
            invalid.append(
                Invalid(
                    Span(number, match.start() + 1, number, len(line) + 1),
                    "cannot read this suppression: write "
                    "`# trainlint: disable=CODE` or `# trainlint: disable-file=CODE`",
                )
            )
            continue
        scope = "file" if directive["name"] == "disable-file" else "line"
        own_line = not line[: match.start()].strip()
        target = _next_code_line(lines, number) if own_line else number
        start = body_at + directive.start("codes")
        found = list(_SELECTOR.finditer(directive["codes"]))
        if not found:
            end = start + 1
            invalid.append(Invalid(Span(number, start + 1, number, end + 1), "names no rule"))
        for selector in found:
            entries.append(
                Entry(
                    selector[0], find_rule(selector[0]),
                    Span(number, start + selector.start() + 1, number, start + selector.end() + 1),
                    source, scope, target, reason=directive["reason"] or None,
                )
            )
    return entries, invalid


def annotation_entries(manifest: Manifest) -> list[Entry]:
    """The entries of an object's `trainlint.dev/ignore` annotation: `CODE[=reason],...`."""
    value = mapping(mapping(manifest.body.get("metadata")).get("annotations")).get(ANNOTATION)
    if not isinstance(value, str):
        return []
    span = manifest.span(ANNOTATION_PATH)
    entries = []
    for part in value.split(","):
        selector, _, reason = part.partition("=")
        if selector.strip():
            entries.append(
                Entry(
                    selector.strip(), find_rule(selector.strip()), span, manifest.source,
                    "object", manifest=manifest, path=ANNOTATION_PATH,
                    reason=reason.strip() or None,
                )
            )
    return entries


def _next_code_line(lines: list[str], number: int) -> int:
    """The line a comment standing on its own applies to: the next one that is not a comment."""
    for following in range(number, len(lines)):
        text = lines[following].strip()
        if text and not text.startswith("#"):
            return following + 1
    return number

