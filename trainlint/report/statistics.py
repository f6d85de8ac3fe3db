"""`--statistics`: how many findings each rule has, most first."""

from __future__ import annotations

import json
from collections import Counter

from trainlint.report import Report


def counts(report: Report) -> list[dict[str, object]]:
    tally = Counter(finding.code for finding in report.findings)
    first = {finding.code: finding for finding in reversed(report.findings)}
    return [
        {"code": code, "name": first[code].name, "severity": first[code].severity.value,
         "count": count}
        for code, count in sorted(tally.items(), key=lambda item: (-item[1], item[0]))
    ]


def render(report: Report, *, as_json: bool) -> str:
    rows = counts(report)
    if as_json:
        return json.dumps(rows, indent=2) + "\n"
    width = max((len(str(row["count"])) for row in rows), default=1)
    lines = [
        f"{row['count']:>{width}}  {row['code']}  [{row['severity']}] {row['name']}"
        for row in rows
    ]
    return "".join(line + "\n" for line in lines)
