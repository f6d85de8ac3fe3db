"""Findings as plain JSON values: to cross a process boundary, or to be kept between runs.

A packed finding names the object it lands on by its position among its file's objects,
never by identity, so it can be unpacked against the inputs of another process or of a
later run. A fix travels as its title and safety: its edit works only on the objects it
was found on, so fixing always happens where the finding was made.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from trainlint.document import Loaded, Manifest, Source, Span
from trainlint.engine import Checked, Finding, ObjectRef
from trainlint.rule import Fix, Severity

#: code, name, severity, message, help, file, span, path, object, fix, manifest: a list,
#: not a mapping, so a cache of 15,000 findings does not spell each key 15,000 times.
Packed = list[Any]


def pack(finding: Finding, number: int | None) -> Packed:
    """`finding` as JSON values; `number` is its object's position in its file, if any."""
    ref = finding.object
    return [
        finding.code, finding.name, finding.severity.value, finding.message, finding.help,
        finding.file, list(finding.span), list(finding.path),
        None if ref is None else [ref.api_version, ref.kind, ref.name, ref.namespace],
        None if finding.fix is None else [finding.fix.title, finding.fix.safe],
        number,
    ]


def unpack(packed: Packed, source: Source, manifests: list[Manifest]) -> Finding:
    """The finding again, on `source` and (by position) one of its `manifests`."""
    code, name, severity, message, help_text, _, span, path, ref, fix, number = packed
    return Finding(
        code, name, _SEVERITIES[severity], message, help_text, source, Span(*span),
        tuple(path), None if ref is None else _object(*ref),
        None if fix is None else _fix(fix[0], bool(fix[1])),
        manifests[number] if number is not None and number < len(manifests) else None,
    )


_SEVERITIES = {severity.value: severity for severity in Severity}


# Findings on one object, or with one repair, share them: a warm run unpacks thousands.
@lru_cache(maxsize=4096)
def _object(api_version: str, kind: str, name: str, namespace: str | None) -> ObjectRef:
    return ObjectRef(api_version, kind, name, namespace)


@lru_cache(maxsize=4096)
def _fix(title: str, safe: bool) -> Fix:
    return Fix(title, _applied_where_found, safe)


def unpack_checked(packed: list[Packed], loaded: Mapping[str, Loaded]) -> Checked | None:
    """Packed raw findings back on the run's objects, found by file name (None when a
    file they land on is not in the run)."""
    checked: Checked = []
    for fields in packed:
        item = loaded.get(fields[5])  # the file it lands on
        if item is None:
            return None
        finding = unpack(fields, item.source, item.manifests)
        checked.append((finding, finding.manifest))
    return checked


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
