"""The schema fixes beyond their `rules/` cases: why TL007 declines to migrate overrides
(told in the finding's help, since there is no fix to carry a title), and how a typo fix
and a migration chain across passes."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import ROOT, read_yaml
from tests.test_rule_cases import case_settings
from trainlint.config.settings import Settings
from trainlint.engine.run import lint
from trainlint.finding import Finding
from trainlint.fix import fix_all
from trainlint.loader import load
from trainlint.release import parse_version

_CASES = {
    case["name"]: case for case in read_yaml(ROOT / "rules/TL007.yaml")["cases"]
}
_BY_HAND = "; move the overrides to `{}` by hand"
_JOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: sft}
spec:
  runtimeRef: {name: torch-distributed}
"""


def _tl007(case: dict[str, Any]) -> Finding:
    [finding] = [
        f for f in lint([load(case["fail"], "case.yaml")], case_settings("TL007", case))
        if f.code == "TL007"
    ]
    return finding


@pytest.mark.parametrize(("name", "help_text"), [
    ("no-patch-when-two-entries-target-one-job",
     "not fixed automatically: entries 0 and 1 both target job `node` (overrides apply in "
     "order, the later one winning; a patch holds one entry per job)"
     + _BY_HAND.format("runtimePatches")),
    ("no-patch-when-runtime-patches-exist",
     "not fixed automatically: `runtimePatches` is already set"
     + _BY_HAND.format("runtimePatches")),
    ("no-rename-when-pod-template-overrides-exist-v2.1",
     "not fixed automatically: `podTemplateOverrides` is already set"
     + _BY_HAND.format("podTemplateOverrides")),
])
def test_refusals_say_why(name: str, help_text: str) -> None:
    finding = _tl007(_CASES[name])
    assert finding.fix is None
    assert finding.remediation == help_text


@pytest.mark.parametrize(("entry", "why"), [
    ("{targetJobs: [{name: node}], affinity: {}}",
     "entry 0 has `affinity`, which `podSpecOverrides` does not have"),
    ("{targetJobs: [], nodeSelector: {a: b}}", "entry 0 does not name its target jobs"),
    ("{nodeSelector: {a: b}}", "entry 0 does not name its target jobs"),
])
def test_shapes_the_migration_does_not_know_are_left_alone(entry: str, why: str) -> None:
    text = f"{_JOB}  podSpecOverrides:\n    - {entry}\n"
    finding = _tl007({"fail": text, "trainer-version": "2.2"})
    assert finding.fix is None
    assert finding.remediation == (
        f"not fixed automatically: {why}" + _BY_HAND.format("runtimePatches")
    )


def test_a_typo_fix_then_a_migration_settle_in_passes() -> None:
    text = _JOB + """\
  podSpecOverride:  # typo
    - targetJobs: [{name: node}]
      nodeSelector: {pool: spot}
"""
    settings = Settings(trainer_version=parse_version("2.2"))
    loaded, after, files = fix_all(
        [load(text, "x.yaml")], lambda inputs: lint(inputs, settings),
        lambda finding: finding.code in ("TL006", "TL007"),
    )
    assert [finding.code for finding in after if finding.code in ("TL006", "TL007")] == []
    assert [f.code for f in files["x.yaml"].applied] == ["TL006", "TL007"]
    assert loaded[0].source.text == _JOB + """\
  runtimePatches:  # typo
    - manager: trainlint.dev/migrated
      trainingRuntimeSpec:
        template:
          spec:
            replicatedJobs:
              - name: node
                template:
                  spec:
                    template:
                      spec:
                        nodeSelector: {pool: spot}
"""
