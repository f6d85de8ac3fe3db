"""The CRDs' CEL rules: every rule of the shipped v2.0–v2.3 CRDs is evaluated by the engine,
the shipped schemas are the upstream ones trimmed, and the engine keeps the API server's
semantics where cel-python's defaults differ."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import read_yaml, schema_nodes, shared_or_skip
from trainlint.model import cel, validations
from trainlint.model.crd import FILES, SOURCES, compile_all, dump, schemas, shipped, trimmed_release
from trainlint.model.crd_rules import Compiled, Node, compiled
from trainlint.model.validations import Violation, verdict_key, violations
from trainlint.release import RELEASES

#: Rules no object in a file or request can break, with the reason (none else may be left).
NOT_FROM_OBJECTS = {
    "status.trainerStatus": "status is a subresource: the API server drops a written status "
                            "on create and keeps the stored one on update",
}
#: The functions and macros CEL itself defines, which cel-python implements.
STANDARD = {"has", "size", "matches", "all", "exists", "exists_one", "filter", "map"}


def declared(schema: dict[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    for entry in schema.get("x-kubernetes-validations", ()):
        yield path, entry
    for name, child in schema.get("properties", {}).items():
        yield from declared(child, f"{path}.{name}".lstrip("."))
    for key, mark in (("items", "[]"), ("additionalProperties", "{}")):
        if isinstance(schema.get(key), dict):
            yield from declared(schema[key], f"{path}{mark}")


def evaluated(node: Node, path: str = "") -> Iterator[tuple[str, str, str]]:
    for rule in node.rules:
        yield path, rule.expression, rule.message
    for name, child in (node.properties or {}).items():
        yield from evaluated(child, f"{path}.{name}".lstrip("."))
    if node.items is not None:
        yield from evaluated(node.items, f"{path}[]")
    if node.additional is not None:
        yield from evaluated(node.additional, f"{path}{{}}")


def test_every_rule_of_the_shipped_crds_is_evaluated() -> None:
    """Each `x-kubernetes-validations` entry of each release's CRDs is compiled at its own
    node, with nothing beyond `rule` and `message`, and uses only functions the engine has;
    the one rule that no object can break says why."""
    count = 0
    for release in RELEASES:
        for kind, (schema, status_subresource) in schemas(release).items():
            root, _ = compiled().roots[kind, release]
            engine = set(evaluated(root))
            for path, entry in declared(schema):
                count += 1
                assert set(entry) == {"rule", "message"}, (release, kind, path, entry)
                assert (path, entry["rule"], entry["message"]) in engine, (release, kind, path)
                if path.startswith("status"):  # the engine skips it, for the reason given
                    assert status_subresource and path in NOT_FROM_OBJECTS, (kind, path)
    assert count == 21 + 23 + 36 + 41
    used = {name for rule in _rules() for name in _functions(cel.program(rule.program))}
    assert used - STANDARD == set(), "a rule needs a function the engine lacks"
    assert used == {"has", "size", "matches", "all", "exists", "filter"}


def test_status_rules_never_apply_to_an_object() -> None:
    job = _job(status={"trainerStatus": {"progressPercentage": 5}})
    assert [v.rule.message for v in violations("TrainJob", (2, 3), job, None, (1, 33))] == []


def test_the_compiled_rules_are_those_of_the_shipped_crds() -> None:
    """Checking reads `validations.pickle`: it must be a compile of `crds/*.json` (after
    changing them: `python -m trainlint.model`)."""
    sections, programs, forms = pickle.loads(dump(compile_all()))
    fresh = Compiled({(kind, release): found for release, section in sections.items()
                      for kind, found in pickle.loads(section).items()}, programs, forms)
    assert dump(compiled()) == dump(fresh)


@pytest.mark.parametrize("release", RELEASES)
def test_shipped_crds_are_the_upstream_ones_trimmed(release: tuple[int, int]) -> None:
    tag, commit = SOURCES[release]
    folder = shared_or_skip("corpus", "crds", tag)
    data = shipped(release)
    assert data["source"] == {"repository": "kubeflow/trainer", "tag": tag, "commit": commit}
    assert data["license"] == "Apache-2.0"
    assert json.loads(json.dumps(trimmed_release(folder, release))) == data
    for kind, name in FILES.items():  # and no rule was lost in trimming
        crd = read_yaml(folder / name)
        upstream = list(declared(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]))
        assert upstream == list(declared(schemas(release)[kind][0]))


def _job(**spec_and_status: Any) -> dict[str, Any]:
    status = spec_and_status.pop("status", None)
    body: dict[str, Any] = {
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
        "metadata": {"name": "run"},
        "spec": {"runtimeRef": {"name": "torch-distributed"}, **spec_and_status},
    }
    if status is not None:
        body["status"] = status
    return body


def _details(found: list[Violation]) -> list[tuple[str, str]]:
    return [(".".join(map(str, v.path)), v.detail) for v in found]


def test_set_and_map_lists_compare_without_order_atomic_lists_with_it() -> None:
    """`self == oldSelf` on `spec.trainer`: `command` is an atomic list (order counts),
    runtime patches' `containers` a map list keyed by name (order does not)."""
    before = _job(trainer={"command": ["torchrun", "train.py"]})
    after = _job(trainer={"command": ["train.py", "torchrun"]})
    assert _details(violations("TrainJob", (2, 3), after, before, (1, 33))) == [
        ("spec.trainer", "field is immutable")]
    pod = "trainingRuntimeSpec", "template", "spec", "replicatedJobs"

    def patched(*names: str) -> dict[str, Any]:
        containers = [{"name": name} for name in names]
        spec = {"template": {"spec": {"template": {"spec": {"containers": containers}}}}}
        patch: dict[str, Any] = {"manager": "acme.io/a"}
        patch[pod[0]] = {pod[1]: {pod[2]: {pod[3]: [{"name": "node", **spec}]}}}
        return _job(runtimePatches=[patch])

    assert violations("TrainJob", (2, 3), patched("b", "a"), patched("a", "b"), (1, 33)) == []
    assert [v.detail for v in violations(
        "TrainJob", (2, 3), patched("a", "c"), patched("a", "b"), (1, 33))] == [
        "field is immutable"]


def test_equality_is_heterogeneous_as_in_the_api_server() -> None:
    """cel-python would raise "no such overload" for `0 in ['auto']`; cel-go says false."""
    torch: dict[str, Any] = {}
    runtime = {"kind": "ClusterTrainingRuntime", "spec": {"mlPolicy": {"torch": torch}}}
    for value, detail in ((0, "NumProcPerNode must be equal to auto, cpu, gpu, or int value"),
                          (4, None), ("gpu", None)):
        torch["numProcPerNode"] = value
        found = violations("ClusterTrainingRuntime", (2, 0), runtime, None, (1, 33))
        assert [v.detail for v in found] == ([detail] if detail else []), value
    assert cel.equal(cel.to_cel(None, 1), cel.to_cel(None, 1.0))
    assert not cel.equal(cel.to_cel(None, 1), cel.to_cel(None, True))
    assert not cel.equal(cel.to_cel(None, "1"), cel.to_cel(None, 1))


def test_transition_rules_need_both_sides_and_ratcheting_needs_1_30() -> None:
    bad = _job(initializer={"dataset": {"storageUri": "org/data"}})
    good = _job(initializer={"dataset": {"storageUri": "hf://org/data"}})
    uri = "storageUri may be empty, or it must be a valid URI (scheme://...)"
    assert [v.detail for v in violations("TrainJob", (2, 3), bad, None, (1, 33))] == [uri]
    assert violations("TrainJob", (2, 3), bad, bad, (1, 33)) == []  # unchanged: ratcheted
    assert [v.detail for v in violations("TrainJob", (2, 3), bad, bad, (1, 29))] == [uri]
    # the initializer appears: nothing old to compare with, only the URI rule runs
    assert [v.detail for v in violations("TrainJob", (2, 3), bad, _job(), (1, 33))] == [uri]
    assert [v.detail for v in violations("TrainJob", (2, 3), good, bad, (1, 33))] == [
        "field is immutable"]


def test_root_rules_see_only_the_name_of_metadata() -> None:
    job = _job()
    job["metadata"] = {"generateName": "run-", "labels": {"a": "b"}}
    assert violations("TrainJob", (2, 3), job, None, (1, 33)) == []  # no name: unknown
    job["metadata"]["name"] = "Run_1"
    assert _details(violations("TrainJob", (2, 3), job, None, (1, 33))) == [
        ("", "metadata.name must match RFC 1035 DNS label format")]


def _rules() -> Iterator[Any]:
    seen: set[int] = set()
    stack = [root for root, _ in compiled().roots.values()]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield from node.rules
        stack.extend(child for child in (*(node.properties or {}).values(), node.items,
                                         node.additional) if child is not None)


def _functions(ast: Any) -> set[str]:
    """The names called in a program: `f(...)` and `x.f(...)`."""
    names = set()
    for tree in ast.iter_subtrees():
        if tree.data == "ident_arg":
            names.add(str(tree.children[0]))
        elif tree.data == "member_dot_arg":
            names.add(str(tree.children[1]))
    return names


def test_verdicts_are_kept_by_what_decides_them() -> None:
    """A verdict is shared only by the same rule (kind, release, schema node, place) and
    the same values, types included, whatever the order of keys; the verdicts a store
    gives decide without the engine."""
    rule = ("TrainJob", (2, 3), ("spec", "trainer", None), 0)
    values = (1, 1.0, True, "1", None, [1], {"a": 1}, {"a": "1"})
    assert len({verdict_key(rule, value, None) for value in values}) == len(values)
    assert verdict_key(rule, 1, None) != verdict_key(rule, None, 1)
    others = [("TrainJob", (2, 2), *rule[2:]), ("TrainingRuntime", *rule[1:]),
              (*rule[:2], ("spec", "trainer"), 0), (*rule[:3], 1)]
    assert verdict_key(rule, 1, None) not in {verdict_key(other, 1, None) for other in others}
    assert verdict_key(rule, {"a": 1, "b": [2]}, None) == verdict_key(rule, {"b": [2], "a": 1},
                                                                      None)
    assert verdict_key(rule, {1: "a", "b": 2}, None) is None  # keys that do not sort
    assert verdict_key(rule, object(), None) is None  # not plain data

    validations.VERDICTS.clear()
    validations.LEARNED.clear()
    job = _job(trainer={"numNodes": 2})
    assert violations("TrainJob", (2, 3), job, None, (1, 33)) == []
    evaluated = set(validations.LEARNED)
    assert evaluated
    validations.VERDICTS.update(dict.fromkeys(evaluated, "planted"))
    validations.LEARNED.clear()
    found = violations("TrainJob", (2, 3), job, None, (1, 33))
    assert [violation.detail for violation in found] == ["planted"] * len(evaluated)
    assert not validations.LEARNED
    validations.VERDICTS.clear()


def test_the_tables_to_the_rules_agree_with_the_schema() -> None:
    """The walk to the rules reads each node's tables (`ruled_properties`,
    `ruled_additional`): for every node of every release, each key finds there the child
    `child(key)` finds when rules are declared at or below it, else None."""
    checked = 0
    for root, _ in compiled().roots.values():
        for node in schema_nodes(root):
            for key in [*(node.properties or {}), "not-a-property"]:
                child = node.child(key)
                expected = child if child is not None and child.ruled else None
                assert node.ruled_properties.get(key, node.ruled_additional) is expected
                checked += 1
    assert checked > 1000


def test_a_server_prepares_every_release_before_its_first_request() -> None:
    """A run unpickles the trees and CRD rules of the releases it checks; a server, before
    its first request, those of every release, and every program's closures and parse."""
    code = (
        "from trainlint.model import cel, crd_rules, node, plain, validations\n"
        "validations.prepare()\n"
        "print(sorted(node.TREES), sorted(crd_rules.ROOTS), plain.runner.cache_info().currsize,"
        " cel.program.cache_info().currsize)\n"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True).stdout
    releases = str(sorted(RELEASES))
    assert found == f"{releases} {releases} 17 17\n"
