"""Admission parity on the upstream manifests, and the parity table in the docs.

Each release's runtimes and examples are linted as one run (the examples reference
ClusterTrainingRuntimes that live in other files of the same tag). Upstream passes every
admission rule at its own release, except the known defect of `05-multi-step.yaml` from
v2.3.0 on (its dataset-initializer has no `initializer` volumeMount, check J5), whose
finding is pinned in `fixtures/admission/*.expected`.
"""

from __future__ import annotations

import re

import pytest

from tests.conftest import ROOT, UPDATE, lint_files, shared_or_skip
from trainlint.config.settings import Settings
from trainlint.finding import Finding
from trainlint.release import parse_version
from trainlint.report.concise import headline
from trainlint.rule import all_rules

TAGS = {"v2.0.0": "2.0", "v2.1.0": "2.1", "v2.2.0": "2.2", "v2.3.0": "2.3", "HEAD-8c0f5059b": "2.3"}
#: The admission rules: references between objects (TL1xx) and webhook parity (TL203-TL249).
ADMISSION = tuple(
    code for code in all_rules() if "TL100" <= code < "TL200" or "TL203" <= code <= "TL249"
)
DEFECT = "examples__yaml__05-multi-step.yaml"
FIXTURES = ROOT / "fixtures" / "admission"
TABLE = ROOT / "docs" / "admission-parity.md"


def _lint_tag(tag: str) -> list[Finding]:
    folder = shared_or_skip("corpus", "trainer", tag)
    settings = Settings(trainer_version=parse_version(TAGS[tag]), select=ADMISSION)
    return lint_files(*sorted(folder.glob("*.yaml")), settings=settings)


def _relative(finding: Finding) -> str:
    """The concise line, with the corpus file named relative to its tag folder."""
    return headline(finding).replace(finding.file, finding.file.rsplit("/", 1)[-1], 1)


@pytest.mark.parametrize("tag", TAGS)
def test_upstream_passes_at_its_release_but_for_the_known_defect(tag: str) -> None:
    findings = _lint_tag(tag)
    assert [f.file for f in findings if not f.file.endswith(DEFECT)] == []
    got = "".join(f"{_relative(f)}\n" for f in findings)
    expected = FIXTURES / f"05-multi-step.{tag}.expected"
    if UPDATE:
        if got:
            expected.write_text(got)
        else:
            expected.unlink(missing_ok=True)
    assert got == (expected.read_text() if expected.exists() else "")


def test_the_known_defect_is_pinned_from_v2_3() -> None:
    """The fixtures must say J5, so that refreshing them cannot hide the finding."""
    for tag in ("v2.3.0", "HEAD-8c0f5059b"):
        text = (FIXTURES / f"05-multi-step.{tag}.expected").read_text()
        assert "TL206" in text
        assert "must have volumeMount with name - initializer in container" in text


def test_parity_table_names_every_admission_rule_with_its_releases() -> None:
    """Every row's `trainlint` cell names real rules, and its last cell says when they run."""
    rules = all_rules()
    listed: set[str] = set()
    for line in TABLE.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 5 or not line.startswith("|"):
            continue
        for code in re.findall(r"\bTL\d{3}\b", cells[3]):
            assert code in rules, f"the table names {code}, which is not a rule"
            listed.add(code)
            if code in ADMISSION:
                assert cells[4] == rules[code].releases, f"{code}: {cells[4]!r} in the table"
    assert set(ADMISSION) - listed == set(), "admission rules missing from the table"
