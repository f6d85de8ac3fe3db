"""The upstream manifests: schema-clean under their own release, and the drift expected
under every other release (fixtures/drift/, refreshed with TRAINLINT_UPDATE_FIXTURES=1)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT, UPDATE, lint_files, shared_or_skip
from trainlint.config.defaults import DEFAULT_KUBERNETES_VERSION
from trainlint.config.settings import Settings
from trainlint.model.check import _Walker
from trainlint.model.node import Node, tree
from trainlint.release import RELEASES, TrainerVersion, format_version, parse_version

SCHEMA_RULES = ("TL005", "TL006", "TL007", "TL008", "TL009", "TL010", "TL011")
TAGS = ["v2.0.0", "v2.1.0", "v2.2.0", "v2.3.0"]
DRIFT = ROOT / "fixtures" / "drift"


def schema_findings(path: Path, release: tuple[int, int]) -> list[str]:
    settings = Settings(trainer_version=release, select=SCHEMA_RULES)
    return [
        f"{format_version(release)} {f.code} {f.span.line}:{f.span.column} {f.message}"
        for f in lint_files(path, settings=settings)
    ]


@pytest.mark.parametrize("tag", TAGS)
def test_corpus_is_clean_under_its_own_release(tag: str) -> None:
    files = sorted(shared_or_skip("corpus", "trainer", tag).glob("*.yaml"))
    assert files
    for path in files:
        assert schema_findings(path, parse_version(tag)) == [], path.name


@pytest.mark.parametrize("tag", TAGS)
def test_drift_under_other_releases(tag: str) -> None:
    own = parse_version(tag)
    for path in sorted(shared_or_skip("corpus", "trainer", tag).glob("*.yaml")):
        found = [line for release in RELEASES if release != own
                 for line in schema_findings(path, release)]
        text = "".join(f"{line}\n" for line in found)
        expected = DRIFT / tag / f"{path.stem}.expected"
        if UPDATE:
            expected.parent.mkdir(parents=True, exist_ok=True)
            expected.write_text(text)
        assert expected.exists(), f"{expected} is missing: run with TRAINLINT_UPDATE_FIXTURES=1"
        assert text == expected.read_text(), path.name


def test_known_drift_is_found() -> None:
    """The drift the issue names, independently of the fixtures."""
    runtime = shared_or_skip(
        "corpus", "trainer", "v2.1.0", "manifests__base__runtimes__torch_distributed.yaml"
    )
    (finding,) = schema_findings(runtime, (2, 2))
    assert finding.startswith("v2.2 TL007 ")
    assert "`numProcPerNode` in `spec.mlPolicy.torch` exists in Trainer v2.0–v2.1" in finding
    patches = shared_or_skip(
        "corpus", "trainer", "v2.3.0", "examples__yaml__02-runtime-patches.yaml"
    )
    assert any(" TL007 " in line and "`runtimePatches`" in line
               for line in schema_findings(patches, (2, 1)))


@pytest.mark.parametrize("release", RELEASES)
def test_the_embedded_types_require_what_each_release_crd_requires(
        release: TrainerVersion) -> None:
    """What a Trainer object's embedded Kubernetes types must hold is what the release's
    CRD requires (the walker's one exception, a pod condition's `status`, included): on
    the default Kubernetes version's schemas, no required list differs from the CRDs'."""
    tag = "v{}.{}.0".format(*release)
    folder = shared_or_skip("corpus", "crds", tag)
    walker = _Walker("TrainingRuntime", release, DEFAULT_KUBERNETES_VERSION, [])
    differing = []
    for path in sorted(folder.glob("trainer.kubeflow.org_*.yaml")):
        crd = yaml.safe_load(path.read_text(encoding="utf-8"))
        model = "TrainJob" if crd["spec"]["names"]["kind"] == "TrainJob" else "TrainingRuntime"
        schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        differing += _required_differences(walker, schema, tree(model, release), [])
    assert differing == []


def _required_differences(
    walker: _Walker, schema: dict[str, Any], node: Node | None, path: list[str | int]
) -> list[str]:
    """Where the walker requires other keys than the CRD's schema, along both."""
    while node is not None and node.definition and not node.fields and node.items is None:
        node = walker.converter.definition(node.definition, node.embedded)
    if node is None:
        return []
    found = []
    if set(walker.required(node, path)) != set(schema.get("required", ())):
        found.append(".".join(map(str, path)))
    for key, child in (schema.get("properties") or {}).items():
        found += _required_differences(walker, child, node.fields.get(key), [*path, key])
    for key in ("items", "additionalProperties"):
        if isinstance(schema.get(key), dict) and node.items is not None:
            found += _required_differences(walker, schema[key], node.items, [*path, 0])
    return found
