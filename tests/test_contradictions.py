"""Two findings never disagree about what the cluster does.

When TL201 says the controller drops keys of a TrainJob's `spec.trainer` (its runtime has
no job labelled `trainer`), no other rule may report an effect of those keys: every rule
reads the same render, in which a dropped key has no effect. The check runs with the
preview rules on, over every rule case that has a TrainJob, once as written and once with
the trainer label taken off its runtimes (so that every key is dropped), and over the
real manifests of the field trial.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import pytest

from tests.conftest import ROOT, lint_text, read_yaml
from trainlint.config.settings import Settings
from trainlint.finding import Finding, ObjectRef
from trainlint.release import parse_version

sys.path.insert(0, str(ROOT / "benchmarks"))
from field import units

TRAINER_LABEL = re.compile(r"(trainer\.kubeflow\.org/trainjob-ancestor-step:\s*)trainer\b")


def about_the_object(code: str) -> bool:
    """Whether a rule's finding on a dropped key is no claim of its effect in the pods:
    the schema rules (TL0xx), the references (TL1xx) and the Trainer webhook's checks
    (TL203-TL249), which judge the TrainJob as the API server and webhook see it, label
    or not; and TL256, which says the key is dropped, as TL201 does."""
    return code < "TL200" or "TL203" <= code <= "TL249" or code == "TL256"

def dropped_keys(findings: Iterable[Finding]) -> dict[tuple[str, ObjectRef], set[str]]:
    """The `spec.trainer` keys TL201 says are dropped, by TrainJob (and its file: a page's
    blocks may show alternatives that reuse one name)."""
    found: dict[tuple[str, ObjectRef], set[str]] = {}
    for finding in findings:
        if finding.code == "TL201" and finding.object and finding.object.kind == "TrainJob":
            listed = finding.message.split(" drops ", 1)[1].split(" set here", 1)[0]
            found[finding.file, finding.object] = set(re.findall(r"`(\w+)`", listed))
    return found


def contradictions(findings: list[Finding]) -> list[str]:
    """Findings that claim an effect of a key TL201 says is dropped."""
    dropped = dropped_keys(findings)
    return [
        f"{finding.code} at {'.'.join(map(str, finding.path))}: {finding.message}"
        for finding in findings
        if finding.code != "TL201" and not about_the_object(finding.code)
        and finding.path[:2] == ("spec", "trainer") and len(finding.path) > 2
        and finding.object is not None
        and finding.path[2] in dropped.get((finding.file, finding.object), set())
    ]


def _cases() -> list[Any]:
    params = []
    for path in sorted((ROOT / "rules").glob("TL*.yaml")):
        for case in read_yaml(path)["cases"]:
            text = case.get("fail") or case["pass"]
            if "kind: TrainJob" not in text:
                continue
            version = case.get("trainer-version")
            for unlabelled in (False, True) if TRAINER_LABEL.search(text) else (False,):
                shown = TRAINER_LABEL.sub(r"\1unlabelled", text) if unlabelled else text
                name = f"{path.stem}:{case['name']}{':unlabelled' * unlabelled}"
                params.append(pytest.param(shown, version, id=name))
    return params


@pytest.mark.parametrize(("text", "version"), _cases())
def test_no_finding_claims_an_effect_of_a_dropped_key(text: str, version: Any) -> None:
    settings = Settings(preview=True)
    if version:
        settings = replace(settings, trainer_version=parse_version(str(version)))
    assert contradictions(lint_text(text, settings)) == []


@pytest.mark.parametrize("unit", units(), ids=lambda unit: unit.name)
def test_real_manifests_hold_no_contradiction(unit: Any) -> None:
    assert contradictions(unit.lint(Settings(preview=True))) == []


# The shape of Kueue's TrainJob pages: a torch runtime whose trainer job is not labelled,
# and a TrainJob asking for 4 nodes with torchrun and the default backoffLimit.
KUEUE_SHAPE = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch-distributed}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
                      command: [torchrun, train.py]
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: pytorch-simple, namespace: default}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    numNodes: 4
    resourcesPerNode:
      requests: {cpu: "1", nvidia.com/gpu: 1}
      limits: {cpu: "1", nvidia.com/gpu: 1}
"""


def test_tl201_and_tl414_agree_on_the_nodes_a_trainjob_runs() -> None:
    """TL201 says `numNodes` is dropped, so no rule may warn of 4 torch nodes."""
    findings = lint_text(KUEUE_SHAPE, Settings(preview=True))
    assert list(dropped_keys(findings).values()) == [{"numNodes", "resourcesPerNode"}]
    assert [f.code for f in findings if "4" in f.message and f.code != "TL201"] == []
    assert contradictions(findings) == []


# The shape of Trainer's KEP-2170 examples: a served group, an unserved version, and a
# trainer label on the pod template.
UNSERVED_VERSION = """\
apiVersion: trainer.kubeflow.org/v2alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch-distributed-single-worker}
spec:
  mlPolicy: {numNodes: 1, torch: {}}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            spec:
              template:
                metadata:
                  labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
                spec:
                  containers: [{name: node, image: docker.io/kubeflow/pytorch-mnist}]
"""


def test_an_object_the_api_server_rejects_gets_no_claim_of_what_the_controller_does() -> None:
    """TL011 says the API server rejects the version: TL201's claim that the controller
    drops values would contradict it."""
    findings = lint_text(UNSERVED_VERSION, Settings(preview=True))
    assert [finding.code for finding in findings] == ["TL011"]
