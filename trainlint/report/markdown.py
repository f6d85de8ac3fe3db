"""A Markdown summary (a CI job's summary page, `$GITHUB_STEP_SUMMARY`): the totals, the
count per rule linked to its page, and the findings, the first `SHOWN` of them."""

from __future__ import annotations

from trainlint.report import Report, file_name, shown, summary
from trainlint.report.statistics import counts
from trainlint.rule import RULE_DOCS

#: Findings listed one by one; the rest are counted.
SHOWN = 200


def _cell(text: str) -> str:
    return shown(text).replace("|", "\\|")


def render(report: Report) -> str:
    lines = ["## trainlint", "", summary(report.findings, report).replace("\n", "  \n"), ""]
    if not report.findings:
        return "\n".join(lines)
    site = report.site.rstrip("/")
    lines += ["| rule | severity | findings |", "|---|---|---|"]
    for row in counts(report):
        link = RULE_DOCS.format(site=site, code=row["code"])
        lines.append(f"| [{row['code']}]({link}) {row['name']} | {row['severity']} "
                     f"| {row['count']} |")
    lines += ["", "| where | rule | message |", "|---|---|---|"]
    for finding in report.findings[:SHOWN]:
        span = finding.span
        where = f"{_cell(file_name(finding.file))}:{span.line}:{span.column}"
        lines.append(f"| `{where}` | {finding.code} | {_cell(finding.message)} |")
    if len(report.findings) > SHOWN:
        lines += ["", f"and {len(report.findings) - SHOWN} more."]
    return "\n".join(lines) + "\n"
