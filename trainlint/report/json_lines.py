"""One JSON object per line (the keys of the `json` format), for streaming tools."""

from __future__ import annotations

import json

from trainlint.report import Report
from trainlint.report.json_format import as_dict, with_edits


def render(report: Report) -> str:
    return "".join(
        json.dumps(as_dict(finding, report.can_fix(finding))) + "\n"
        for finding in with_edits(report)
    )
