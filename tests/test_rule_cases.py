"""Runs every case of `rules/TLnnn.yaml`: the findings of the rule must sit exactly on the
lines marked `# expect: TLnnn` (and nowhere in a `pass:` case); a code marked twice on a
line expects two findings there. A case with `before:` checks an update: its text holds
the objects as they were (the stored objects, `--base`), paired by apiVersion, kind,
namespace and name with those of `fail:`/`pass:`. A fail case whose findings offer fixes
has a `fixed:` text: what `--fix` (with `unsafe-fixes: true`, `--unsafe-fixes`) makes of
it, byte for byte, with no error of another rule it did not have but those it
`uncovers:` (where a fix makes a pruned field read again)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.conftest import ROOT, read_yaml
from trainlint.config import keys
from trainlint.config.settings import Settings
from trainlint.document import Manifest
from trainlint.engine.run import lint
from trainlint.finding import Finding
from trainlint.fix import fix_all
from trainlint.loader import load
from trainlint.problem import Severity
from trainlint.release import parse_version
from trainlint.rule import all_rules

CASES_DIR = ROOT / "rules"
_EXPECT = re.compile(r"#\s*expect:\s*([A-Z0-9, ]+)")


def _cases() -> list[Any]:
    params = []
    for path in sorted(CASES_DIR.glob("TL*.yaml")):
        document = read_yaml(path)
        for case in document["cases"]:
            params.append(pytest.param(document["rule"], case, id=f"{path.stem}:{case['name']}"))
    return params


def expected_lines(text: str, code: str) -> list[int]:
    lines: list[int] = []
    for number, line in enumerate(text.splitlines(), start=1):
        match = _EXPECT.search(line)
        if match:
            lines.extend(number for part in match[1].split(",") if part.strip() == code)
    return lines


def previous(case: dict[str, Any]) -> list[Manifest]:
    """The objects of a case's `before:` text (none without one)."""
    if "before" not in case:
        return []
    loaded = load(case["before"], "before.yaml")
    assert not loaded.problems, loaded.problems
    return loaded.manifests


def case_settings(code: str, case: dict[str, Any]) -> Settings:
    rule = all_rules()[code]
    options = {}
    if "options" in case:
        assert rule.options is not None, f"{code} takes no options"
        options[code] = keys.rule_options(rule, case["options"], f"rules/{code}.yaml", "")
    return Settings(
        trainer_version=parse_version(str(case.get("trainer-version", "2.3"))),
        kubernetes_version=str(case.get("kubernetes-version", Settings.kubernetes_version)),
        rule_options=options,
        preview=True,  # a preview rule's cases hold as well
        device_resources=case.get("device-resources", {}),
        bundled_runtimes=case.get("bundled-runtimes", True),
    )


@pytest.mark.parametrize(("code", "case"), _cases())
def test_case(code: str, case: dict[str, Any]) -> None:
    assert ("fail" in case) != ("pass" in case), "a case has exactly one of fail: / pass:"
    text = case.get("fail") or case["pass"]
    findings = [f for f in lint([load(text, "case.yaml")], case_settings(code, case),
                                previous=previous(case)) if f.code == code]
    got = sorted(finding.span.line for finding in findings)
    if "pass" in case:
        assert got == [], [finding.message for finding in findings]
        return
    want = expected_lines(text, code)
    assert want, "a fail case marks at least one line with `# expect:`"
    assert got == want, [f"{f.span.line}: {f.message}" for f in findings]
    if "messages" in case:
        assert [finding.message for finding in findings] == case["messages"]
    check_fixed(code, case, text, findings)


def check_fixed(code: str, case: dict[str, Any], text: str, findings: list[Finding]) -> None:
    """The rule's fixes turn the case into `fixed:` exactly, leave none of the fixed
    findings behind, bring in no error of any rule the case did not have but those it
    `uncovers:` (a fix that makes the webhook deny the object is worse than none), and a
    second run changes nothing."""
    unsafe = bool(case.get("unsafe-fixes"))
    offered = [f for f in findings if f.fix is not None and (f.fix.safe or unsafe)]
    if "fixed" not in case:
        assert not offered, f"the case offers fixes ({offered[0].fix}) but has no `fixed:`"
        return
    assert offered, "`fixed:` on a case whose findings offer no fix"
    settings = case_settings(code, case)

    def wanted(finding: Finding) -> bool:
        assert finding.fix is not None
        return finding.code == code and (finding.fix.safe or unsafe)

    def relint(inputs: list[Any]) -> list[Finding]:
        return lint(inputs, settings, previous=previous(case))

    before = relint([load(text, "case.yaml")])
    loaded, after, files = fix_all([load(text, "case.yaml")], relint, wanted)
    assert [note for entry in files.values() for note in entry.notes] == []
    # A fix that makes a pruned field read again may uncover what is wrong in it: the
    # case names those rules (`uncovers:`).
    brought = _errors(after) - _errors(before) - set(case.get("uncovers", ()))
    assert not brought, [f"{f.code}: {f.message}" for f in after if f.code in brought]
    fixed = loaded[0].source.text
    assert fixed == case["fixed"]
    assert [f.message for f in after if f.code == code and f.fix and wanted(f)] == []
    _, _, again = fix_all(loaded, relint, wanted)
    assert all(not entry.changed for entry in again.values())


def _errors(findings: list[Finding]) -> set[str]:
    return {finding.code for finding in findings if finding.severity is Severity.ERROR}


def test_every_rule_has_cases() -> None:
    for code in all_rules():
        path = CASES_DIR / f"{code}.yaml"
        assert path.exists(), f"{code} has no rules/{code}.yaml"
        cases = read_yaml(path)["cases"]
        assert any("fail" in case for case in cases), f"{code} has no fail case"
        assert any("pass" in case for case in cases), f"{code} has no pass case"


def test_case_files_name_their_rule() -> None:
    for path in CASES_DIR.glob("*.yaml"):
        assert read_yaml(path)["rule"] == path.stem

