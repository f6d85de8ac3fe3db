"""Our models of each release against the real CRDs of that release: the same fields,
types, enums, defaults and bounds, everywhere except the Kubernetes types delegated to
kubernetes-validate's schemas (which the CRD inlines) and `status`."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from tests.conftest import read_yaml, shared_or_skip
from trainlint.model.node import Node, compiled
from trainlint.model.runtime import TrainingRuntime
from trainlint.model.schema import Model, dump, tree
from trainlint.model.trainjob import TrainJob
from trainlint.model.trees import compile_trees
from trainlint.release import parse_version

TAGS = ["v2.0.0", "v2.1.0", "v2.2.0", "v2.3.0"]
CRDS: dict[str, type[Model]] = {
    "trainer.kubeflow.org_trainjobs.yaml": TrainJob,
    "trainer.kubeflow.org_trainingruntimes.yaml": TrainingRuntime,
    "trainer.kubeflow.org_clustertrainingruntimes.yaml": TrainingRuntime,
}
#: CRD keyword → Node attribute, compared wherever the CRD states them.
BOUNDS = {
    "minimum": "minimum", "maximum": "maximum", "minLength": "min_length",
    "maxLength": "max_length", "minItems": "min_items", "maxItems": "max_items",
    "minProperties": "min_properties",
}


def crd_type(schema: dict[str, Any]) -> str:
    if schema.get("x-kubernetes-int-or-string"):
        return "int-or-string"
    kind = str(schema.get("type", "any"))
    if kind == "object" and "properties" not in schema and "additionalProperties" in schema:
        return "map"
    return kind


def differences(schema: dict[str, Any], node: Node, path: str) -> list[str]:
    """Every way `node` differs from the CRD's `schema` at `path`, recursively."""
    if node.type in ("core", "any"):
        return []
    if crd_type(schema) != node.type:
        return [f"{path}: CRD type {crd_type(schema)}, model {node.type}"]
    return [*_own_differences(schema, node, path), *_child_differences(schema, node, path)]


def _own_differences(schema: dict[str, Any], node: Node, path: str) -> list[str]:
    found = []
    if set(schema.get("enum", ())) != set(node.enum or ()):
        found.append(f"{path}: CRD enum {schema.get('enum')}, model {node.enum}")
    if node.type not in ("object", "map", "array") and schema.get("default") != node.default:
        found.append(f"{path}: CRD default {schema.get('default')!r}, model {node.default!r}")
    for keyword, attribute in BOUNDS.items():
        if schema.get(keyword) != getattr(node, attribute):
            found.append(f"{path}: CRD {keyword} {schema.get(keyword)}, model "
                         f"{getattr(node, attribute)}")
    if node.type == "object" and set(schema.get("required", ())) != set(node.required):
        found.append(f"{path}: CRD requires {schema.get('required')}, model {node.required}")
    return found


def _child_differences(schema: dict[str, Any], node: Node, path: str) -> list[str]:
    if node.type in ("array", "map"):
        assert node.items is not None
        inner = schema["items"] if node.type == "array" else schema["additionalProperties"]
        return differences(inner, node.items, f"{path}[]" if node.type == "array" else
                           f"{path}{{}}")
    if node.type != "object":
        return []
    properties = schema.get("properties", {})
    found = [f"{path}.{key}: in the CRD, not in the model"
             for key in sorted(set(properties) - set(node.fields))]
    found += [f"{path}.{key}: in the model, not in the CRD"
              for key in sorted(set(node.fields) - set(properties))]
    for key in sorted(set(properties) & set(node.fields)):
        found += differences(properties[key], node.fields[key], f"{path}.{key}")
    return found


@pytest.mark.parametrize("tag", TAGS)
@pytest.mark.parametrize("crd", sorted(CRDS))
def test_model_matches_crd(tag: str, crd: str) -> None:
    document = read_yaml(shared_or_skip("corpus", "crds", tag, crd))
    (version,) = document["spec"]["versions"]
    assert version["name"] == "v1alpha1"
    schema = version["schema"]["openAPIV3Schema"]
    node = tree(CRDS[crd], parse_version(tag))
    assert differences(schema, node, "") == []


def test_comparison_sees_a_difference() -> None:
    """The walk above is not vacuous: a model of another release differs from a CRD."""
    crd = shared_or_skip("corpus", "crds", "v2.2.0", "trainer.kubeflow.org_trainjobs.yaml")
    schema = read_yaml(crd)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    found = differences(schema, tree(TrainJob, (2, 1)), "")
    assert ".spec.runtimePatches: in the CRD, not in the model" in found
    assert ".spec.podTemplateOverrides: in the model, not in the CRD" in found
    assert ".spec.trainer.numProcPerNode: CRD type integer, model int-or-string" in found


def test_compiled_trees_are_those_of_the_models() -> None:
    """Checking reads the trees shipped in `trees.pickle`: they must be what the models say
    today (after changing a model: `python -m trainlint.model`)."""
    # Each release's section round-tripped: its objects shared as a load shares them.
    fresh = {(name, release): node
             for release, section in pickle.loads(dump(compile_trees())).items()
             for name, node in pickle.loads(section).items()}
    assert dump(compiled()) == dump(fresh)
    # Object metadata inside a custom resource is one tree for every release.
    assert len({pickle.dumps(node) for (name, _), node in compiled().items()
                if name == "EmbeddedMeta"}) == 1
    assert compiled()["TrainJob", (2, 1)].fields["spec"].fields["podTemplateOverrides"]
    assert "podTemplateOverrides" not in compiled()["TrainJob", (2, 0)].fields["spec"].fields
