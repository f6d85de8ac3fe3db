"""Default findings on real manifests match what was judged by hand.

Each unit of `../shared/corpus/field/` (a documentation page) and of `fixtures/field/` (a
folder) is linted alone with the default settings. A finding judged `true` must still be
reported, one judged `false` must not be, a `debatable` one as `DEBATABLE` in `benchmarks/field.py`
settles its rule, and every finding must be judged: a new one is either a true problem
(judge it, and give its rule a case) or a bug to fix.
"""

from __future__ import annotations

import json
import sys

import pytest
from click.testing import CliRunner

from tests.conftest import ROOT, shared_or_skip
from trainlint.cli import main

# The benchmarks are scripts that import each other by module name, as this test does.
sys.path.insert(0, str(ROOT / "benchmarks"))
from field import CORPUS, DEBATABLE, FIXTURES, UPSTREAM_UNITS, Unit, judged, units

UNITS = {unit.name: unit for unit in units()}

def expected(unit: Unit) -> tuple[set[tuple[str, int, str]], set[tuple[str, int, str]]]:
    """What must be reported and what must not, TL102 aside."""
    present: set[tuple[str, int, str]] = set()
    absent: set[tuple[str, int, str]] = set()
    for key, verdict in unit.verdicts.items():
        if verdict.code == "TL102":
            continue
        kept = verdict.verdict == "true" or (
            verdict.verdict == "debatable" and DEBATABLE[verdict.code][0]
        )
        (present if kept else absent).add(key)
    return present, absent


@pytest.mark.parametrize("name", sorted(UNITS))
def test_findings_match_the_verdicts(name: str) -> None:
    unit = UNITS[name]
    findings = unit.lint()
    got = {unit.key(finding) for finding in findings}
    present, absent = expected(unit)
    assert present - got == set(), "findings judged true (or kept) are no longer reported"
    assert got & absent == set(), "findings judged false (or dropped) are reported"
    unjudged = [
        f"{unit.key(finding)}: {finding.message}"
        for finding, verdict in judged(unit, findings) if verdict == "unjudged"
    ]
    assert unjudged == [], "judge each new finding in its verdicts.json"


def test_every_debatable_rule_is_decided() -> None:
    for unit in UNITS.values():
        for verdict in unit.verdicts.values():
            if verdict.verdict == "debatable":
                assert verdict.code in DEBATABLE, f"decide {verdict.code} in DEBATABLE"


def test_the_fixtures_and_the_corpus_are_there() -> None:
    fixtures = [name for name in UNITS if name.startswith("fixtures/")]
    assert len(fixtures) >= 10
    assert sum(len(UNITS[name].files) for name in fixtures) >= 20
    if not CORPUS.is_dir():
        pytest.skip(f"{CORPUS} is absent: the upstream corpus lives beside the checkout in CI")
    assert any(name.startswith("corpus/") for name in UNITS)
    assert all(UNITS[f"upstream/{name}"].files for name in UPSTREAM_UNITS)


TL102_CASES = [
    pytest.param(name, key, id=f"{key[0]}:{key[1]}")
    for name, unit in sorted(UNITS.items())
    for key, verdict in sorted(unit.verdicts.items())
    if verdict.code == "TL102"
]


@pytest.mark.parametrize(("name", "key"), TL102_CASES)
def test_tl102_leaves_known_and_user_named_runtimes_alone(
    name: str, key: tuple[str, int, str]
) -> None:
    """`torch-distributed` is a runtime the release installs, and a runtime a page names
    without showing it is no problem of the TrainJob (TL102 is in preview)."""
    unit = UNITS[name]
    assert key not in {unit.key(finding) for finding in unit.lint()}


def test_the_data_cache_notebook_is_denied_by_the_v2_3_webhook() -> None:
    """What the SDK submits for Trainer's data-cache notebook, checked against the runtime
    it names as v2.3.0 ships it: v2.3.0's webhook wants an `initializer` volume mounted in
    the dataset initializer of any runtime a TrainJob with `initializer.dataset` uses, and
    this runtime's (which fills a cache service) has none. v2.2 had no such check."""
    runtime = shared_or_skip(
        "corpus", "trainer", "v2.3.0",
        "manifests__base__runtimes__data-cache__torch_distributed_with_cache.yaml",
    )
    job = FIXTURES / "kubeflow-sdk-notebooks" / "pytorch-data-cache-fine-tune-with-cache.yaml"
    for version, expected_exit in (("2.3", 1), ("2.2", 0)):
        result = CliRunner().invoke(main, [
            "check", "--no-cache", "--isolated", "--output-format", "json",
            "--trainer-version", version, "--context", str(runtime), str(job),
        ])
        assert result.exit_code == expected_exit, result.output
        found = [(f["code"], f["line"], f["column"], f["path"], f["message"])
                 for f in json.loads(result.stdout)]
        assert found == ([(
            "TL206", 9, 5, "spec.initializer.dataset",
            "`spec.initializer.dataset` needs what ClusterTrainingRuntime "
            "`torch-distributed-with-cache` lacks: the Trainer webhook denies the TrainJob "
            '("must have volumeMount with name - initializer in container dataset-initializer '
            'of the dataset-initializer job")',
        )] if version == "2.3" else [])
