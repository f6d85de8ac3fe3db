"""Positions and edits in a document as the language client counts them.

trainlint reports 1-based lines and columns as libyaml marks them: columns in code points,
lines ended by any YAML line break. A client counts lines ended by `\\n`, `\\r\\n` or `\\r`
only, and characters in the position encoding agreed at initialisation (UTF-16 unless the
client offers another). This module needs no protocol library.
"""

from __future__ import annotations

import difflib
import re
from bisect import bisect_right
from itertools import pairwise

from trainlint.document import Span

#: Line breaks as a client counts them, and as YAML 1.1 does (NEL, LS and PS too).
_CLIENT_BREAK = re.compile(r"\r\n|[\r\n]")
_YAML_BREAK = re.compile(r"\r\n|[\r\n\x85\u2028\u2029]")
_YAML_ONLY_BREAKS = ("\x85", "\u2028", "\u2029")
UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"
#: (line, character) as the protocol counts them: 0-based, in the client's units.
Position = tuple[int, int]


class Text:
    """One document's text, to turn trainlint's positions into a client's and back."""

    def __init__(self, text: str, encoding: str = UTF16) -> None:
        self.text = text
        self.encoding = encoding
        self._starts = _line_starts(text, _CLIENT_BREAK)
        self._yaml_starts = (
            _line_starts(text, _YAML_BREAK)
            if any(extra in text for extra in _YAML_ONLY_BREAKS) else self._starts
        )

    def point(self, line: int, column: int) -> Position:
        """Where a 1-based line and column as trainlint reports them are, as the client
        counts. A column past the end of its line stays past it, as the CLI reports it
        (the protocol lets a client read it as the line's end), and so does a line past
        the end of the text (libyaml puts the end of a text with no final line break
        there)."""
        starts = self._yaml_starts
        if line > len(starts):
            return len(self._starts) - 1 + line - len(starts), max(column, 1) - 1
        index = max(line, 1) - 1
        end = starts[index + 1] if index + 1 < len(starts) else len(self.text)
        end = starts[index] + len(self.text[starts[index] : end].rstrip("\r\n\x85\u2028\u2029"))
        wanted = starts[index] + max(column, 1) - 1
        client_line, character = self.position(min(wanted, end))
        return client_line, character + max(0, wanted - end)

    def position(self, offset: int) -> Position:
        """Where an offset in the text is, as the client counts."""
        line = bisect_right(self._starts, offset) - 1
        return line, self.units(self.text[self._starts[line] : offset])

    def span(self, span: Span) -> tuple[Position, Position]:
        """Where a finding's span lies, as the client counts."""
        return self.point(span.line, span.column), self.point(span.end_line, span.end_column)

    def line_end(self, line: int) -> Position:
        """The position of the end of a 0-based client line, before its line break."""
        starts = self._starts
        end = starts[line + 1] if line + 1 < len(starts) else len(self.text)
        body = self.text[starts[line] : end].rstrip("\r\n")
        return line, self.units(body)

    def units(self, part: str) -> int:
        """The length of `part` in the client's units."""
        if part.isascii() or self.encoding == UTF32:
            return len(part)
        if self.encoding == UTF8:
            return len(part.encode())
        return len(part) + sum(ord(character) > 0xFFFF for character in part)

    def edits(self, new: str) -> list[tuple[Position, Position, str]]:
        """The line replacements that turn this text into `new`, in order: each replaces
        whole lines, so applying them gives `new` exactly."""
        old_lines, new_lines = _lines(self.text), _lines(new)
        offsets = [0]
        for line in old_lines:
            offsets.append(offsets[-1] + len(line))
        found = []
        matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
        for tag, low, high, new_low, new_high in matcher.get_opcodes():
            if tag != "equal":
                start, end = self.position(offsets[low]), self.position(offsets[high])
                found.append((start, end, "".join(new_lines[new_low:new_high])))
        return found


def _line_starts(text: str, breaks: re.Pattern[str]) -> list[int]:
    return [0, *(found.end() for found in breaks.finditer(text))]


def _lines(text: str) -> list[str]:
    """The client's lines of `text`, each with its line break."""
    starts = _line_starts(text, _CLIENT_BREAK)
    return [text[start:end] for start, end in pairwise([*starts, len(text)]) if end > start]
