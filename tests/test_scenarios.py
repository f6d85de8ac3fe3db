"""End-to-end scenarios: realistic inputs under `fixtures/scenarios/<name>/` checked by the
real command, its JSON output compared with `fixtures/scenarios/<name>.expected.json`.

Refresh with `TRAINLINT_UPDATE_FIXTURES=1 python3 -m pytest tests/test_scenarios.py`, then
review the diff.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT, UPDATE

SCENARIOS = ROOT / "fixtures" / "scenarios"
TRAINLINT = shutil.which("trainlint") or "trainlint"


def run_scenario(folder: Path) -> subprocess.CompletedProcess[str]:
    args_file = folder / "args"
    extra = args_file.read_text().split() if args_file.exists() else []
    relative = str(folder.relative_to(ROOT))
    return subprocess.run(
        [TRAINLINT, "check", "--output-format", "json", *extra, relative],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )


@pytest.mark.parametrize(
    "folder", sorted(path for path in SCENARIOS.iterdir() if path.is_dir()), ids=lambda p: p.name
)
def test_scenario(folder: Path) -> None:
    result = run_scenario(folder)
    findings = json.loads(result.stdout)
    assert result.returncode == (1 if findings else 0), result.stderr
    expected_file = SCENARIOS / f"{folder.name}.expected.json"
    if UPDATE:
        expected_file.write_text(json.dumps(findings, indent=2) + "\n")
    assert findings == json.loads(expected_file.read_text())
    for finding in findings:
        line = (ROOT / finding["file"]).read_text().splitlines()[finding["line"] - 1]
        at = line[finding["column"] - 1:]
        last = re.split(r"[.\[]", finding["path"])[-1].rstrip("]")
        if last.isdigit():  # a list item: the caret is on the item
            assert line[: finding["column"] - 1].rstrip().endswith(("-", "[", ",")), line
        else:  # a mapping entry: the caret is on its key
            assert at.startswith(last), (finding["code"], line)
