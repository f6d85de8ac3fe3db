"""Findings, notes of facts and suppressions as plain JSON values: to cross a process
boundary, or to be kept between runs.

A packed finding names the object it lands on by its position among its file's objects,
never by identity (a note by its place in the run), so it can be unpacked against the
inputs of another process or of a later run. A fix travels as its title and safety, and
its text edits once worked out (`Fix.edits`): its edit works only on the objects it was
found on, so fixing always happens where the finding was made.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from trainlint.document import Manifest, Source, Span, StandIn
from trainlint.engine.index import CONTEXT
from trainlint.engine.settle import Suppressions
from trainlint.finding import Finding, Note, ObjectRef
from trainlint.problem import Fix, Severity, TextEdit
from trainlint.rule import find_rule
from trainlint.suppression import Entry, Invalid

#: code, severity, message, help, span, path, object, fix, manifest: a list, not a
#: mapping, so a cache of 15,000 findings does not spell each key 15,000 times. The file
#: is the one of the input the finding was made on; the rule's name, and its help unless
#: the finding has its own, are left to `Texts`: every finding of a rule repeats them.
Packed = list[Any]
#: The name and help of rules, by code.
Texts = Mapping[str, Sequence[str | None]]


def texts(codes: Iterable[str]) -> dict[str, list[str | None]]:
    """The name and help of the rules with these codes that exist (as listed: no rule is
    imported)."""
    from trainlint.rule import listed_rules

    rules = listed_rules()
    return {code: [rules[code].name, rules[code].remediation] for code in codes if code in rules}


def pack(finding: Finding, number: int | None, known: Texts) -> Packed:
    """`finding` as JSON values; `number` is its object's position in its file, if any."""
    ref = finding.object
    return [
        finding.code, finding.severity.value, finding.message,
        None if finding.remediation == known[finding.code][1] else finding.remediation,
        list(finding.span), list(finding.path), None if ref is None else _packed_ref(ref),
        None if finding.fix is None else _packed_fix(finding.fix),
        number,
    ]


def unpack(
    packed: Packed, source: Source, manifests: Sequence[Manifest] | Mapping[int, Manifest],
    known: Texts, before: int = 0,
) -> Finding:
    """The finding again, on `source` and (by position, after `before` objects of the file
    that a slice of it does not hold) one of its `manifests`, where at hand."""
    code, severity, message, help_text, span, path, ref, fix, number = packed
    name, default_help = known[code]
    manifest = None
    if number is not None:
        number += before
        if isinstance(manifests, Mapping):
            manifest = manifests.get(number)
        elif number < len(manifests):
            manifest = manifests[number]
    return Finding(
        code, str(name), _SEVERITIES[severity], message,
        default_help if help_text is None else help_text, source, Span(*span),
        tuple(path), None if ref is None else _object(*ref),
        None if fix is None else _unpacked_fix(*fix), manifest,
    )


_SEVERITIES = {severity.value: severity for severity in Severity}


def _packed_ref(ref: ObjectRef) -> list[str | None]:
    return [ref.api_version, ref.kind, ref.name, ref.namespace]


# Findings on one object, or with one repair, share them: a warm run unpacks thousands.
@lru_cache(maxsize=4096)
def _object(api_version: str, kind: str, name: str, namespace: str | None) -> ObjectRef:
    return ObjectRef(api_version, kind, name, namespace)


@lru_cache(maxsize=4096)
def _fix(title: str, safe: bool) -> Fix:
    return Fix(title, _applied_where_found, safe)


def _packed_fix(fix: Fix) -> list[Any]:
    """Title and safety, and the text edits (row, column, end row, end column, content)
    once worked out."""
    if fix.edits is None:
        return [fix.title, fix.safe]
    return [fix.title, fix.safe, [list(edit) for edit in fix.edits]]


def _unpacked_fix(title: str, safe: object, edits: list[list[Any]] | None = None) -> Fix:
    if edits is None:
        return _fix(title, bool(safe))
    return _fix(title, bool(safe))._replace(edits=tuple(
        TextEdit(int(row), int(column), int(end_row), int(end_column), str(content))
        for row, column, end_row, end_column, content in edits
    ))


def numbers(inputs: Any) -> dict[int, int]:
    """Each manifest's position in its file, by identity."""
    return {
        id(manifest): number
        for item in inputs
        for number, manifest in enumerate(item.manifests)
    }


def _applied_where_found(_: object) -> None:
    """A fix's edit works on the objects it was found on; fixing runs where they are."""
    raise RuntimeError("this fix was found in another process or run: fix in one process")


def pack_note(note: Note) -> Packed:
    """A note as JSON values: its object is named by its place in the run (`Note.order`),
    its file by the input it was made on."""
    return [
        note.code, note.value, list(note.path), list(note.span), _packed_ref(note.object),
        list(note.order), note.checked, None if note.fix is None else _packed_fix(note.fix),
    ]


def unpack_note(
    packed: Packed, position: int, placed: Callable[[tuple[int, int]], Manifest | None],
    source: Source,
) -> Note:
    """The note again, of the input at `position` (where its file is in this run) or of
    the context; `placed` finds its object by its place (None: not at hand), on whose file
    it is, else on `source`."""
    code, value, path, span, ref, order, checked, fix = packed
    place = (int(order[0]) if order[0] == CONTEXT else position, int(order[1]))
    manifest = placed(place)
    return Note(
        code, value, tuple(path), Span(*span), source if manifest is None else manifest.source,
        _object(*ref), place, bool(checked), None if fix is None else _unpacked_fix(*fix),
        manifest,
    )


def renumbered(packed: Packed, before: int) -> Packed:
    """A packed note of a slice, its object numbered after the `before` objects of the
    file that come before the slice."""
    *head, order, checked, fix = packed
    if order[0] == CONTEXT:
        return packed
    return [*head, [order[0], order[1] + before], checked, fix]


def pack_suppressions(suppressions: Suppressions, number: Mapping[int, int]) -> Packed:
    """A file's suppressions as JSON values ([] when it has none); `number` gives its
    objects' positions in the file, by identity. An object's entry names its object by
    position, document and key path in the document (`stand_in`)."""
    if not suppressions.entries and not suppressions.invalid:
        return []
    return [
        [[entry.selector, list(entry.span), entry.scope, entry.target,
          None if entry.manifest is None else [
              number[id(entry.manifest)], entry.manifest.document, list(entry.manifest.base)],
          list(entry.path), entry.reason, entry.used] for entry in suppressions.entries],
        [[list(item.span), item.message, list(item.path)] for item in suppressions.invalid],
    ]


def unpack_suppressions(
    packed: Packed, source: Source, manifests: Sequence[Manifest] | dict[int, Manifest],
    before: int = 0,
) -> Suppressions:
    """A file's suppressions again, on `source` and (by position, after `before` objects
    that a slice of the file does not hold) its `manifests`; where these are not at hand
    (a file served from the cache, or read in slices), on stand-ins added to them."""
    if not packed:
        return Suppressions([], [])
    entries, invalid = packed
    found = []
    for selector, span, scope, target, place, path, reason, used in entries:
        manifest = None
        if place is not None:
            number, document, base = place
            number += before
            manifest = (manifests.setdefault(number, StandIn.made({}, source, document,
                                                                   tuple(base)))
                        if isinstance(manifests, dict) else manifests[number])
        found.append(Entry(selector, find_rule(selector), Span(*span), source, scope, target,
                           manifest, tuple(path), reason, bool(used)))
    return Suppressions(
        found,
        [Invalid(Span(*span), message, source, tuple(path)) for span, message, path in invalid],
    )
