"""Every rule documents itself fully, and its documentation is true."""

from __future__ import annotations

import re

import pytest

from trainlint.config.settings import Settings
from trainlint.engine.run import lint
from trainlint.finding import Finding
from trainlint.loader import load
from trainlint.release import NEWEST
from trainlint.rule import Rule, all_rules

SECTIONS = ("## What it does", "## Why is this bad?", "## Example", "Use instead:")
_BLOCK = re.compile(r"```yaml\n(.*?)```", re.DOTALL)
RULES = [pytest.param(rule, id=code) for code, rule in all_rules().items()]


#: An update rule's Example shows the object before the change, then after it; its "Use
#: instead" is compared with the same previous object.
BEFORE, AFTER = "Before the change:", "After:"


def examples(rule: Rule) -> tuple[str, str, str | None]:
    """The Example, the "Use instead" and, for an update rule, the object before."""
    bad_part, good_part = rule.doc.split("Use instead:", 1)
    before = None
    if BEFORE in bad_part:
        stored, bad_part = bad_part.split(BEFORE, 1)[1].split(AFTER, 1)
        found = _BLOCK.search(stored)
        assert found, f"{rule.code}: {BEFORE!r} needs a ```yaml block"
        before = found[1]
    bad, good = _BLOCK.search(bad_part), _BLOCK.search(good_part)
    assert bad and good, f"{rule.code}: Example and Use instead need a ```yaml block each"
    return bad[1], good[1], before


@pytest.mark.parametrize("rule", RULES)
def test_docs_have_every_section(rule: Rule) -> None:
    for section in SECTIONS:
        assert section in rule.doc, f"{rule.code} docs lack {section!r}"
    assert rule.remediation, f"{rule.code} has no fix text"


@pytest.mark.parametrize("rule", RULES)
def test_docs_say_what_evidence_the_rule_needs(rule: Rule) -> None:
    """A finding is a claim about the cluster: every rule says when it makes none, and a
    preview rule also says why it is not on by default."""
    sections = [line for line in rule.doc.splitlines() if line.startswith("## ")]
    assert "## When it stays silent" in sections, f"{rule.code} docs lack its evidence"
    assert sections.index("## When it stays silent") > sections.index("## Why is this bad?")
    silent = rule.doc.split("## When it stays silent", 1)[1].split("\n## ", 1)[0]
    assert len(silent.split()) >= 5, f"{rule.code}: say when the rule stays silent"
    assert ("## Preview" in sections) == rule.preview, f"{rule.code}: ## Preview iff preview"


@pytest.mark.parametrize("rule", RULES)
def test_documented_example_fires_and_fix_is_clean(rule: Rule) -> None:
    bad, good, before = examples(rule)
    # A rule retired in a later release is shown at the last release that has it.
    settings = Settings(trainer_version=rule.until or NEWEST, preview=True)
    previous = load(before, "before.yaml").manifests if before is not None else []

    def findings(text: str) -> list[Finding]:
        return lint([load(text, "case.yaml")], settings, previous=previous)

    fired = findings(bad)
    assert any(f.code == rule.code for f in fired), f"{rule.code} Example does not fire"
    assert not [f.message for f in findings(good) if f.code == rule.code]


@pytest.mark.parametrize("rule", RULES)
def test_code_names_theme(rule: Rule) -> None:
    assert re.fullmatch(r"TL\d{3}", rule.code)
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name)
