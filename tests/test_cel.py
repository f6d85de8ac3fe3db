"""What the CRD rules' tests share: values shaped by each rule's schema node (and values of
any other type), and the verdicts cel-python's interpreter gives as the API server reports
them, the reference `tests/test_cel_plain.py` holds the plain closures to."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tests.conftest import schema_nodes
from trainlint.model import cel
from trainlint.model.crd_rules import Node, compiled

#: Schema nodes deeper than this below a rule's node get values of any type, or none.
DEPTH = 3
#: Strings that the rules compare with or match, and some that they do not.
WORDS = ("", "auto", "cpu", "gpu", "node", "InOrder", "AnyOrder", "a", "run-1", "Run_1",
         "-a", "hf://org/data", "org/data", "s3://b/k", "trainer.kubeflow.org/trainjob-controller",
         "kueue.x-k8s.io/multikueue", "x" * 64, "ns", "1")


#: The schema nodes that declare rules, each once (kinds and releases share nodes).
DECLARING = {id(node): node for root, _ in compiled().roots.values()
             for node in schema_nodes(root) if node.rules}
#: Each rule at each node that declares it.
SITES = [(rule, node) for node in DECLARING.values() for rule in node.rules]

scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 70), st.floats(-2, 2),
                    st.sampled_from(WORDS), st.text(max_size=4))
#: Plain data of any type: what a value of the wrong type gives the rule.
anything = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.sampled_from(("name", "metadata", "torch", "x", "namespace")), inner,
                    max_size=3)), max_leaves=6)


def shaped(node: Node, depth: int = 0) -> st.SearchStrategy[Any]:
    """Values as the schema node types them, now and then of another type."""
    if depth > DEPTH:
        return anything
    if node.properties is not None or node.additional is not None:
        fields = {key: shaped(child, depth + 1)
                  for key, child in (node.properties or {}).items()}
        typed: st.SearchStrategy[Any]
        known: st.SearchStrategy[dict[str, Any]] = (
            st.fixed_dictionaries({}, optional=fields) if fields else st.just({}))
        if node.additional is not None:
            extra = st.dictionaries(st.sampled_from(WORDS), shaped(node.additional, depth + 1),
                                    max_size=2)
            known = st.builds(lambda a, b: {**b, **a}, known, extra)
        typed = known
    elif node.items is not None:
        typed = st.lists(shaped(node.items, depth + 1), max_size=3)
    elif node.int_or_string:
        typed = st.one_of(st.integers(-2, 8), st.sampled_from(WORDS))
    else:
        typed = {
            "string": st.one_of(st.sampled_from(WORDS), st.text(max_size=6)),
            "integer": st.integers(-3, 70),
            "number": st.one_of(st.integers(-3, 5), st.floats(-2, 5)),
            "boolean": st.booleans(),
        }.get(node.type, anything)
    return st.one_of(typed, anything) if depth else typed


def test_the_interpreter_gives_each_kind_of_verdict() -> None:
    """A rule that holds, a broken rule with its message, and a value of a type the rule
    cannot take (no such overload), as the API server reports them."""
    name = next((rule, node) for rule, node in SITES if "matches('^[a-z]" in rule.expression)
    procs = next((rule, node) for rule, node in SITES if "'auto'" in rule.expression)
    assert cel.failure(*name, {"metadata": {"name": "run-1"}}, None) is None
    assert cel.failure(*name, {"metadata": {"name": "Run_1"}}, None) == (
        "metadata.name must match RFC 1035 DNS label format")
    assert cel.failure(*name, {"metadata": {}}, None) is None  # no name: unknown
    assert cel.failure(*procs, 0, None) == (
        "NumProcPerNode must be equal to auto, cpu, gpu, or int value")
    assert cel.failure(*procs, "gpu", None) is None
    assert cel.failure(*procs, [1], None) == (
        f"the rule `{procs[0].expression}` cannot be evaluated on this value (no such overload)")
