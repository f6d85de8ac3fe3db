"""Suppressions: `# trainlint: disable=...` comments and the `trainlint.dev/ignore` annotation.

Each code a suppression names is one `Entry`, marked used when it silences a finding, so
`unheeded` can tell the suppression rules the ones that silence nothing (TL090) or name
no rule (TL091).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container
from dataclasses import dataclass
from typing import NamedTuple

from trainlint.document import KeyPath, Manifest, Source, Span, mapping
from trainlint.problem import Fix
from trainlint.rule import Listed, did_you_mean_rule, find_rule

#: The object annotation the CLI and the webhook honour: `"TL301,TL402=reason"`.
ANNOTATION = "trainlint.dev/ignore"
ANNOTATION_PATH: KeyPath = ("metadata", "annotations", ANNOTATION)
DIRECTIVES = ("disable", "disable-file")
#: A YAML comment (`#` opening the line or after a blank) addressed to trainlint.
_COMMENT = re.compile(r"(?:^|(?<=\s))#\s*trainlint:\s*(?P<body>.*)$")
#: `disable=CODE[,CODE...] [-- reason]`; a further `# comment` may follow.
_DIRECTIVE = re.compile(
    r"(?P<name>[a-z-]+)\s*=\s*(?P<codes>[^#]*?)\s*(?:--\s*(?P<reason>[^#]*?))?\s*(?:#.*)?$"
)
_SELECTOR = re.compile(r"[^\s,]+")
#: Whether a (0-based line, column) of a text lies inside a value (`values_of`).
InValue = Callable[[int, int], bool]


def values_of(text: str) -> InValue:
    """Which places of `text` are inside a scalar, as YAML's parser reads it: a `#` there
    is the value's text (a shell comment in a block scalar, `"a # b"`), not a comment. The
    header line of a block scalar (`key: |  # note`) takes comments. Where the parser
    cannot read a document, it goes on at the next one (`---`); the rest of that document
    counts as outside, as before any value was known."""
    import yaml

    spans: dict[int, list[tuple[int, int, int, int]]] = {}
    lines = text.splitlines(keepends=True)
    offset = 0
    while offset < len(lines):
        try:
            for event in yaml.parse("".join(lines[offset:]), Loader=yaml.CSafeLoader):
                start, end = event.start_mark, event.end_mark
                if isinstance(event, yaml.ScalarEvent) and start and end:
                    top, bottom = start.line + offset, end.line + offset
                    span = (top, start.column, bottom, end.column)
                    first = top + 1 if event.style in ("|", ">") else top
                    for line in range(first, bottom + 1):
                        spans.setdefault(line, []).append(span)
            break
        except yaml.MarkedYAMLError as error:
            failed = offset + (error.problem_mark.line if error.problem_mark else 0)
            offset = next((number for number in range(max(failed, offset + 1), len(lines))
                           if lines[number].startswith(("---", "..."))), len(lines))
        except yaml.YAMLError:
            break

    def inside(line: int, column: int) -> bool:
        return any((line, column) >= (top, left) and (line, column) < (bottom, right)
                   for top, left, bottom, right in spans.get(line, ()))

    return inside


def _comment(line: str, index: int, in_value: InValue) -> re.Match[str] | None:
    """The first suppression comment on `line` (at `index`) that is a YAML comment."""
    at = 0
    while (match := _COMMENT.search(line, at)) is not None:
        if not in_value(index, match.start()):
            return match
        at = match.start() + 1
    return None


@dataclass(eq=False)
class Entry:
    """One code named by one suppression, and where it is written."""

    selector: str
    #: The rule named, None when no rule has that code or name.
    rule: Listed | None
    span: Span
    source: Source
    #: `line` (the findings starting on `target`), `file`, or `object` (of `manifest`).
    scope: str
    target: int = 0
    manifest: Manifest | None = None
    #: Key path of the annotation (empty for comments).
    path: KeyPath = ()
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


class Invalid(NamedTuple):
    """A suppression that cannot work: a comment that addresses trainlint but cannot be
    read, or a code or name of no rule."""

    span: Span
    message: str
    source: Source
    #: Key path of the annotation (empty for comments).
    path: KeyPath = ()
    #: Never an object's: what a finding of it is on.
    manifest: None = None


def comment_entries(source: Source) -> tuple[list[Entry], list[Invalid]]:
    """The suppression comments of a file, and the ones written wrong."""
    entries: list[Entry] = []
    invalid: list[Invalid] = []
    if "trainlint:" not in source.text:
        return entries, invalid
    lines = source.text.splitlines()
    in_value = values_of(source.text)
    for number, line in enumerate(lines, start=source.lines + 1):
        match = _comment(line, number - source.lines - 1, in_value)
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
                    source,
                )
            )
            continue
        scope = "file" if directive["name"] == "disable-file" else "line"
        own_line = not line[: match.start()].strip()
        target = (_next_code_line(lines, number - source.lines) + source.lines if own_line
                  else number)
        start = body_at + directive.start("codes")
        found = list(_SELECTOR.finditer(directive["codes"]))
        if not found:
            end = start + 1
            invalid.append(
                Invalid(Span(number, start + 1, number, end + 1), "names no rule", source)
            )
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
    for part in annotation_parts(value):
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


def annotation_parts(value: str) -> list[str]:
    """The `CODE[=reason]` parts of an annotation's value. A reason may hold commas: a
    piece after one whose code would hold a blank (`TL402=grace, see ticket=42`) goes on
    the reason before it, since no code or name has one."""
    parts: list[str] = []
    for piece in value.split(","):
        selector = piece.partition("=")[0].strip()
        if parts and "=" in parts[-1] and (" " in selector or "\t" in selector):
            parts[-1] += "," + piece
        else:
            parts.append(piece)
    return parts


def unheeded(
    entries: list[Entry], invalid: list[Invalid], enabled: Container[str]
) -> list[Entry | Invalid]:
    """What the suppression rules report of a file once its findings are settled: the
    entries that silenced nothing (TL090's), and the suppressions that cannot work (TL091's:
    `invalid`, and the entries that name no rule). An entry of a rule that did not run is
    left alone (it may well silence something where the rule is enabled), and so is one
    of the suppression rules themselves."""
    found: list[Entry | Invalid] = []
    for entry in entries:
        if entry.used:
            continue
        if entry.rule is None:
            message = (
                f"suppression names `{entry.selector}`, which is no rule's code or name"
                f"{did_you_mean_rule(entry.selector, exact=True)}: it silences nothing "
                "(see `trainlint rules`)"
            )
            found.append(Invalid(entry.span, message, entry.source, entry.path))
        elif entry.rule.code in enabled and not about_suppressions(entry.rule):
            found.append(entry)
    return [*found, *invalid]


def about_suppressions(rule: Listed) -> bool:
    """Whether a rule reports suppressions (TL090, TL091) rather than what they silence."""
    return not rule.kinds and rule.load().reports in (Entry, Invalid)


def _next_code_line(lines: list[str], number: int) -> int:
    """The line a comment standing on its own applies to: the next one that is not a comment."""
    for following in range(number, len(lines)):
        text = lines[following].strip()
        if text and not text.startswith("#"):
            return following + 1
    return number


# --- removing what silences nothing (TL090's fix) ---


def removal(entry: Entry) -> Fix:
    """The safe fix of an unused entry: its code taken out of the comment or annotation,
    and the comment or annotation removed once it names nothing."""
    if entry.scope == "object":
        return Fix(f"remove `{entry.selector}` from the `{ANNOTATION}` annotation",
                   lambda node: _drop_from_annotation(node, entry.selector))
    line, selector = entry.span.line, entry.selector
    return Fix(f"remove `{selector}` from the suppression comment", None,
               rewrite=lambda text: without_code(text, line, selector))


def without_code(text: str, line: int, selector: str) -> str:
    """`text` with `selector` taken out of the suppression comment on `line`; the whole
    comment goes when it names nothing else, and its line too when it stood alone."""
    lines = text.splitlines(keepends=True)
    if not 0 < line <= len(lines):
        raise LookupError(line)
    body, ending = _split_ending(lines[line - 1])
    match = _comment(body, line - 1, values_of(text))
    directive = _DIRECTIVE.match(match["body"]) if match else None
    if match is None or directive is None:
        raise LookupError(line)
    codes = _SELECTOR.findall(directive["codes"])
    if selector not in codes:
        raise LookupError(selector)
    codes.remove(selector)
    if codes:
        start = match.start("body") + directive.start("codes")
        end = match.start("body") + directive.end("codes")
        lines[line - 1] = f"{body[:start]}{','.join(codes)}{body[end:]}{ending}"
    elif body[: match.start()].strip():
        lines[line - 1] = body[: match.start()].rstrip() + ending
    else:
        del lines[line - 1]
    changed = "".join(lines)
    if not same_data(text, changed):
        raise LookupError(line)  # never a change of what the file says
    return changed


def _drop_from_annotation(node: object, selector: str) -> None:
    from trainlint import roundtrip

    annotations = roundtrip.at(node, ANNOTATION_PATH[:-1])
    parts = annotation_parts(str(annotations.get(ANNOTATION, "")))
    kept = [part for part in parts if part.partition("=")[0].strip() != selector]
    if len(kept) == len(parts):
        raise roundtrip.Stale(ANNOTATION_PATH)
    if any(part.strip() for part in kept):
        annotations[ANNOTATION] = ",".join(kept).strip(" ,")
        return
    del annotations[ANNOTATION]
    if not annotations:
        del roundtrip.at(node, ANNOTATION_PATH[:-2])["annotations"]


# --- writing suppressions (the language server's "disable" actions) ---


def disable_on_line(text: str, line: int, code: str, given: InValue | None = None) -> str:
    """`text` with `code` silenced on `line` (1-based): added to the line's `disable=`
    comment, or to an own-line one just above that applies to it, else written at the
    line's end, or on a line of its own above where the line's end lies inside a value
    (a quoted string that goes on); `text` as it is where both lie inside one. Where each
    goes is checked by parsing the result, unless the values are `given` (those of
    `text`, or of a text it differs from only below `line`): then the caller compares the
    data once all its comments are written (`same_data`)."""
    lines = text.splitlines(keepends=True)
    index = line - 1
    if not 0 <= index < len(lines):
        return text
    verify = given is None
    in_value = given or values_of(text)
    above = _own_line_above(lines, index, in_value)
    for at in (index, above):
        if at is None:
            continue
        body, ending = _split_ending(lines[at])
        extended = _with_code(body, at, in_value, code, "disable")
        if extended is not None:
            return "".join([*lines[:at], extended + ending, *lines[at + 1 :]])
    comment = f"# trainlint: disable={code}"
    body, ending = _split_ending(lines[index])
    at_end = "".join([*lines[:index], f"{body}  {comment}{ending}", *lines[index + 1 :]])
    if same_data(text, at_end) if verify else not in_value(index, len(body)):
        return at_end
    marker = body.startswith(("---", "..."))  # a document's first line: no indentation
    indent = "" if marker else body[: len(body) - len(body.lstrip(" -"))].replace("-", " ")
    newline = ending or _newline(text)
    own_line = "".join([*lines[:index], f"{indent}{comment}{newline}", *lines[index:]])
    if same_data(text, own_line) if verify else not in_value(index, 0):
        return own_line
    return text  # no place outside the values


def disable_in_file(text: str, code: str) -> str:
    """`text` with `code` silenced in the whole file: added to its `disable-file=` comment,
    else written as the first line."""
    lines = text.splitlines(keepends=True)
    in_value = values_of(text)
    for index, line in enumerate(lines):
        body, ending = _split_ending(line)
        extended = _with_code(body, index, in_value, code, "disable-file")
        if extended is not None:
            lines[index] = extended + ending
            return "".join(lines)
    return f"# trainlint: disable-file={code}{_newline(text)}{text}"


def _with_code(
    line: str, index: int, in_value: InValue, code: str, directive: str
) -> str | None:
    """The line (at `index`) with `code` added to its suppression comment of `directive`,
    None when it has none."""
    match = _comment(line, index, in_value)
    if match is None:
        return None
    found = _DIRECTIVE.match(match["body"])
    if found is None or found["name"] != directive:
        return None
    end = match.start("body") + found.end("codes")
    separator = "," if found["codes"] else ""
    return f"{line[:end]}{separator}{code}{line[end:]}"


def _own_line_above(lines: list[str], index: int, in_value: InValue) -> int | None:
    """The comment line right above `index` that holds a suppression for it, if any."""
    above = index - 1
    while above >= 0 and lines[above].strip().startswith("#"):
        found = _comment(lines[above], above, in_value)
        if found is not None and not lines[above][: found.start()].strip():
            return above
        above -= 1
    return None


def same_data(text: str, changed: str) -> bool:
    """Whether both texts parse to the same YAML events (comments are none), judged
    without building anything: aliases are not expanded."""
    before = _events(text)
    return before is not None and before == _events(changed)


def _events(text: str) -> list[tuple[object, ...]] | None:
    import yaml

    try:
        return [
            (type(event), getattr(event, "anchor", None), getattr(event, "tag", None),
             getattr(event, "value", None))
            for event in yaml.parse(text, Loader=yaml.CSafeLoader)
        ]
    except yaml.YAMLError:
        return None


def _split_ending(line: str) -> tuple[str, str]:
    body = line.rstrip("\r\n")
    return body, line[len(body) :]


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"
