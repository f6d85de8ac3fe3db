"""Runs every case of `rules/TLnnn.yaml`: the findings of the rule must sit exactly on the
lines marked `# expect: TLnnn` (and nowhere in a `pass:` case)."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT, lint_text
from trainlint.engine import Settings
from trainlint.rule import all_rules, parse_version

CASES_DIR = ROOT / "rules"
_EXPECT = re.compile(r"#\s*expect:\s*([A-Z0-9, ]+)")


def _cases() -> list[Any]:
    params = []
    for path in sorted(CASES_DIR.glob("TL*.yaml")):
        document = yaml.safe_load(path.read_text())
        for case in document["cases"]:
            params.append(pytest.param(document["rule"], case, id=f"{path.stem}:{case['name']}"))
    return params


def expected_lines(text: str, code: str) -> list[int]:
    lines = []
    for number, line in enumerate(text.splitlines(), start=1):
        match = _EXPECT.search(line)
        if match and code in [part.strip() for part in match[1].split(",")]:
            lines.append(number)
    return lines


def case_settings(code: str, case: dict[str, Any]) -> Settings:
    rule = all_rules()[code]
    options = {}
    if "options" in case:
        assert rule.options is not None, f"{code} takes no options"
        options[code] = rule.options.model_validate(case["options"])
    return Settings(
        trainer_version=parse_version(str(case.get("trainer-version", "2.3"))),
        rule_options=options,
    )


@pytest.mark.parametrize(("code", "case"), _cases())
def test_case(code: str, case: dict[str, Any]) -> None:
    assert ("fail" in case) != ("pass" in case), "a case has exactly one of fail: / pass:"
    text = case.get("fail") or case["pass"]
    findings = [f for f in lint_text(text, case_settings(code, case)) if f.code == code]
    got = sorted(finding.span.line for finding in findings)
    if "pass" in case:
        assert got == [], [finding.message for finding in findings]
        return
    want = expected_lines(text, code)
    assert want, "a fail case marks at least one line with `# expect:`"
    assert got == want, [f"{f.span.line}: {f.message}" for f in findings]
    if "messages" in case:
        assert [finding.message for finding in findings] == case["messages"]


def test_every_rule_has_cases() -> None:
    for code in all_rules():
        path = CASES_DIR / f"{code}.yaml"
        assert path.exists(), f"{code} has no rules/{code}.yaml"
        cases = yaml.safe_load(path.read_text())["cases"]
        assert any("fail" in case for case in cases), f"{code} has no fail case"
        assert any("pass" in case for case in cases), f"{code} has no pass case"


def test_case_files_name_their_rule() -> None:
    for path in CASES_DIR.glob("*.yaml"):
        assert yaml.safe_load(path.read_text())["rule"] == path.stem

