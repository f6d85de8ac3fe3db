"""Output formats: one module each, imported only when chosen."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from xml.etree import ElementTree as ET

    from trainlint.finding import Finding, ObjectRef

#: Format name → module under `trainlint.report`.
FORMATS = {
    "full": "full", "concise": "concise", "grouped": "grouped", "json": "json_format",
    "json-lines": "json_lines", "sarif": "sarif", "github": "github", "gitlab": "gitlab",
    "junit": "junit", "checkstyle": "checkstyle", "markdown": "markdown",
    "policy-report": "policy_report",
}


#: One output of a run: a format, and the file it is written to (None: the command's
#: standard output, or `--output-file`).
Output = tuple[str, str | None]


def outputs(text: str) -> list[Output]:
    """`--output-format` read as pylint reads it: formats separated by commas, each
    optionally `FORMAT:PATH` to write that one to a file (`github,sarif:trainlint.sarif`
    prints annotations and writes SARIF from the same findings). ValueError says what is
    wrong, with the format meant when one is misspelt."""
    from trainlint.suggest import did_you_mean

    chosen: list[Output] = []
    for part in (part.strip() for part in text.split(",")):
        name, colon, path = part.partition(":")
        name = name.strip()
        if name not in FORMATS:
            meant = did_you_mean(name, FORMATS)
            raise ValueError(f"unknown format {name!r}{meant} (known: {', '.join(FORMATS)})")
        if colon and not path.strip():
            raise ValueError(f"`{part}`: name the file after the colon, e.g. `{name}:report.out`")
        chosen.append((name, path.strip() or None))
    if sum(path is None for _, path in chosen) > 1:
        raise ValueError(
            "only one format can go to standard output (or --output-file): give the others "
            "a file, e.g. `github,sarif:trainlint.sarif`"
        )
    return chosen


class Report(NamedTuple):
    """What a format renders: the findings, every file that was checked, and the terminal."""

    findings: Sequence[Finding]
    #: Every input checked, clean or not, in the order read (junit and checkstyle list them).
    files: Sequence[str] = ()
    color: bool = False
    #: Whether `--fix` (as configured) would apply a finding's fix; default: safe fixes.
    can_fix: Callable[[Finding], bool] = lambda finding: bool(
        finding.fix is not None and finding.fix.safe
    )
    #: Whether a file's text may be quoted (code frames): not when it lies outside the
    #: folders checked, behind a symbolic link (see `trainlint.files.Tree`).
    quotable: Callable[[str], bool] = lambda file: True
    #: The documentation site rules link to (config `docs-url`; None: the default one).
    docs_url: str | None = None
    #: Every object checked, when known (`audit`): `policy-report` passes the clean ones.
    objects: Sequence[ObjectRef] = ()

    @property
    def site(self) -> str:
        """The documentation site rules link to."""
        from trainlint.config.defaults import DOCS_URL

        return self.docs_url or DOCS_URL

    def marker(self, finding: Finding) -> str:
        """`[*] ` before the message of a finding `--fix` can repair, as ruff marks them."""
        return "[*] " if self.can_fix(finding) else ""


Renderer = Callable[[Report], str]


def renderer(name: str) -> Renderer:
    module = importlib.import_module(f"{__name__}.{FORMATS[name]}")
    render: Renderer = module.render
    return render


def streamer(name: str) -> Callable[[Report], Iterable[str]]:
    """The format's report in pieces to write one after the other: a piece per finding
    where the format writes them so (`chunks`), else the whole report as one."""
    module = importlib.import_module(f"{__name__}.{FORMATS[name]}")
    found: Callable[[Report], Iterable[str]] | None = getattr(module, "chunks", None)
    if found is not None:
        return found
    render: Renderer = module.render
    return lambda report: [render(report)]


def summary(findings: Sequence[Finding], report: Report | None = None) -> str:
    """`Found 3 problems (2 errors, 1 warning).` or `All checks passed.`, and how many
    `--fix` can repair when the report is given."""
    if not findings:
        return "All checks passed."
    fixable = sum(report.can_fix(finding) for finding in findings) if report else 0
    if fixable:
        return f"{summary(findings)}\n[*] {fixable} fixable with `trainlint check --fix`."
    errors = sum(finding.severity == "error" for finding in findings)
    warnings = len(findings) - errors
    parts = [f"{count} {word}{'s' if count != 1 else ''}"
             for count, word in ((errors, "error"), (warnings, "warning")) if count]
    noun = "problem" if len(findings) == 1 else "problems"
    return f"Found {len(findings)} {noun} ({', '.join(parts)})."


def _escapes(*codes: int) -> dict[int, str]:
    """Each character of `codes` → its escape as Python writes it (`\\u202e`, `\\n`)."""
    return {code: chr(code).encode("unicode_escape").decode("ascii") for code in codes}


#: What a reader's screen must not be given raw from a manifest: control characters (but
#: tab) and those that reorder a line (bidirectional overrides, isolates and marks).
_ESCAPES = _escapes(*range(0x09), *range(0x0A, 0x20), *range(0x7F, 0xA0), 0x061C, 0x200E,
                    0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
#: What XML 1.0 cannot hold, not even as a character reference (its `Char` production):
#: the C0 controls but tab, line feed and carriage return, and U+FFFE and U+FFFF.
_NOT_XML = _escapes(*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0xFFFE, 0xFFFF)


def shown(text: str) -> str:
    """`text` with those characters escaped, for the formats people read (on a terminal,
    in a CI's page): a value quoted from a manifest then cannot hide or reorder what a
    finding says, as "Trojan Source" text does. The machine formats (JSON, SARIF, JUnit...)
    keep every character, but those XML cannot hold (`xml`)."""
    return text.translate(_ESCAPES)


def file_name(file: str) -> str:
    """A checked file's name as every format writes it: a byte that is not UTF-8, which
    `os.fsdecode` reads as a lone surrogate that no UTF-8 document can hold, as an escape
    (`bad\\xff.yaml`). SARIF's URIs percent-encode the bytes instead (`sarif.uri`)."""
    return os.fsencode(file).decode("utf-8", "backslashreplace")


def paint(text: str, style: str, *, color: bool) -> str:
    """`text` in an ANSI style when color is on."""
    return f"\x1b[{STYLES[style]}m{text}\x1b[0m" if color else text


STYLES = {
    "error": "1;31", "warning": "1;33", "caret": "1;31", "gutter": "34", "help": "36",
    "file": "1", "location": "2",
}


def fingerprints(findings: Sequence[Finding]) -> list[str]:
    """A stable identity per finding: rule, file, object, key path and message, but no line
    number, so moving a block does not make CI report it as new; repeats are numbered."""
    import hashlib

    from trainlint.document import dotted

    seen: dict[str, int] = {}
    result = []
    for finding in findings:
        ref = finding.object
        parts = [finding.code, file_name(finding.file), dotted(finding.path), finding.message]
        if ref is not None:
            parts += [ref.kind, ref.namespace or "", ref.name]
        digest = hashlib.sha256("\0".join(parts).encode()).hexdigest()
        seen[digest] = seen.get(digest, 0) + 1
        result.append(digest if seen[digest] == 1 else f"{digest}:{seen[digest]}")
    return result


def by_file(report: Report) -> dict[str, list[Finding]]:
    """Every file checked with its findings (none for a clean file), in the order read."""
    files: dict[str, list[Finding]] = {file: [] for file in report.files}
    for finding in report.findings:
        files.setdefault(finding.file, []).append(finding)
    return files


def xml(root: ET.Element) -> str:
    """The document of `root`, a character XML cannot hold (a `\\b` in a key a message
    quotes) written as its escape, `\\x08`: ElementTree writes it raw, and no reader
    parses the document then. Only values hold one, never the markup."""
    from xml.etree import ElementTree

    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(
        root, encoding="unicode"
    ).translate(_NOT_XML) + "\n"
