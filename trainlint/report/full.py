"""Each finding with the lines around it and a caret under the key at fault."""

from __future__ import annotations

from collections.abc import Sequence

from trainlint.engine import Finding
from trainlint.report import summary
from trainlint.report.concise import headline

CONTEXT_LINES = 2
_STYLES = {"error": "1;31", "warning": "1;33", "caret": "1;31", "gutter": "34", "help": "36"}


def render(findings: Sequence[Finding], *, color: bool) -> str:
    def paint(text: str, style: str) -> str:
        return f"\x1b[{_STYLES[style]}m{text}\x1b[0m" if color else text

    blocks = []
    for finding in findings:
        lines = finding.source.text.splitlines()
        span = finding.span
        block = [paint(headline(finding), finding.severity.value)]
        if 1 <= span.line <= len(lines):
            first = max(1, span.line - CONTEXT_LINES)
            width = len(str(span.line))
            gutter = paint(" " * width + " |", "gutter")
            block.append(gutter)
            for number in range(first, span.line + 1):
                text = lines[number - 1]
                block.append(paint(f"{number:>{width}} |", "gutter") + f" {text}".rstrip())
            line = lines[span.line - 1]
            end = span.end_column if span.end_line == span.line else len(line) + 1
            carets = "^" * max(1, min(end, len(line) + 1) - span.column)
            block.append(gutter + " " + " " * (span.column - 1) + paint(carets, "caret"))
        if finding.help:
            block.append(" " * (len(str(span.line)) + 1) + paint(f"= help: {finding.help}", "help"))
        blocks.append("\n".join(block))
    return "\n\n".join([*blocks, summary(findings)]) + "\n"
