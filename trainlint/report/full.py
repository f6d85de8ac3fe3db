"""Each finding with the lines around it and a caret under the key at fault."""

from __future__ import annotations

from collections.abc import Iterator

from trainlint.report import Report, paint, shown, summary
from trainlint.report.concise import headline

CONTEXT_LINES = 2


def render(report: Report) -> str:
    return "".join(chunks(report))


def chunks(report: Report) -> Iterator[str]:
    """The report a finding at a time (see `concise.chunks`)."""
    color = report.color
    split: dict[str, list[str]] = {}  # each file's lines, split once
    for finding in report.findings:
        if finding.file not in split:
            quotable = report.quotable(finding.file)
            split[finding.file] = finding.source.text.splitlines() if quotable else []
        lines = split[finding.file]
        span = finding.span
        title = headline(finding, report.marker(finding))
        block = [paint(title, finding.severity.value, color=color)]
        if 1 <= span.line <= len(lines):
            first = max(1, span.line - CONTEXT_LINES)
            width = len(str(span.line))
            gutter = paint(" " * width + " |", "gutter", color=color)
            block.append(gutter)
            for number in range(first, span.line + 1):
                text = shown(lines[number - 1])
                block.append(
                    paint(f"{number:>{width}} |", "gutter", color=color) + f" {text}".rstrip()
                )
            line = lines[span.line - 1]
            end = span.end_column if span.end_line == span.line else len(line) + 1
            # columns as shown: an escape is wider than the character it stands for
            before = len(shown(line[: span.column - 1]))
            carets = "^" * max(1, len(shown(line[span.column - 1 : end - 1])))
            pointer = " " * before + paint(carets, "caret", color=color)
            block.append(f"{gutter} {pointer}")
        if finding.remediation:
            help_line = paint(f"= help: {shown(finding.remediation)}", "help", color=color)
            block.append(" " * (len(str(span.line)) + 1) + help_line)
        yield "\n".join(block) + "\n\n"
    yield summary(report.findings, report) + "\n"
