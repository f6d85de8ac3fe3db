"""The plain closures of `trainlint.model.plain` give cel-python's interpreter's results:
for every rule of the v2.0–v2.3 CRDs, on values shaped by the rule's schema node and on
values of any other type, the same verdict, the same value or the same kind of error."""

from __future__ import annotations

import itertools
import sys
from typing import Any

import pytest
from celpy import celtypes
from celpy.evaluation import CELEvalError, function_matches
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.test_cel import SITES, WORDS, shaped
from trainlint.model import cel, plain
from trainlint.model.crd_rules import CrdRule, Node, compiled


def interpreted(rule: CrdRule, node: Node, value: Any, old: Any) -> tuple[Any, ...]:
    """What cel-python's interpreter gives: a value (its CEL text), an error's kind, or
    that it raised."""
    try:
        variables = {"self": cel.to_cel(node, value)}
        if rule.transition:
            variables["oldSelf"] = cel.to_cel(node, old)
        result = cel.interpreter(rule.program)(variables)
    except CELEvalError as error:
        return "error", error.args[1]
    except Exception:
        return ("raised",)
    if isinstance(result, CELEvalError):
        return "error", result.args[1]
    return "value", repr(result)


def closed(rule: CrdRule, node: Node, value: Any, old: Any) -> tuple[Any, ...] | None:
    """What the plain closures give, in the same terms; None when they leave the value to
    cel-python."""
    run = plain.runner(rule.program)
    assert run is not None
    try:
        result = plain.outcome(run, rule, node, value, old)
    except plain.Unknown:
        return ("raised",)
    except plain.Unsupported:
        return None
    if isinstance(result, plain.Error):
        return "error", result.kind
    return "value", repr(cel.to_cel(None, result))


def test_every_program_of_the_shipped_crds_has_plain_closures() -> None:
    assert len(compiled().forms) == len(compiled().programs) == 17
    assert all(plain.runner(index) is not None for index in range(17))


def test_a_rule_evaluated_on_plain_values_imports_no_cel_engine() -> None:
    """The name rule of a new TrainJob, in a process that had not imported cel-python."""
    code = ("import sys; from trainlint.model.validations import violations; "
            "found = violations('TrainJob', (2, 1), {'apiVersion': "
            "'trainer.kubeflow.org/v1alpha1', 'kind': 'TrainJob', 'metadata': "
            "{'name': 'Bad_Name'}, 'spec': {'runtimeRef': {'name': 'torch'}}}, None, (1, 31)); "
            "print([v.detail for v in found], 'celpy' in sys.modules, 'lark' in sys.modules)")
    import subprocess

    printed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True).stdout
    assert printed == "['metadata.name must match RFC 1035 DNS label format'] False False\n"


#: Names, of every type, for the name rules (`shaped` gives `metadata` no fields).
NAMES = st.one_of(st.sampled_from(WORDS), st.text(st.sampled_from("az09-_.A\n"), max_size=70),
                  st.integers(), st.none(), st.lists(st.just("a"), max_size=1))


def values(node: Node) -> st.SearchStrategy[Any]:
    """`shaped`, and at a root, now and then with a name."""
    if node.properties is None or "metadata" not in node.properties:
        return shaped(node)
    named = st.builds(lambda value, name: {**value, "metadata": {"name": name}}
                      if isinstance(value, dict) else value, shaped(node), NAMES)
    return st.one_of(shaped(node), named)


@pytest.mark.parametrize(("rule", "node"), SITES, ids=[
    f"{index}-{rule.expression[:40]}" for index, (rule, _) in enumerate(SITES)])
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_plain_closures_give_the_interpreters_verdict(rule: CrdRule, node: Node,
                                                      data: st.DataObject) -> None:
    value = data.draw(values(node), label="self")
    old = data.draw(st.one_of(st.just(value), values(node)), label="oldSelf")
    found = closed(rule, node, value, old)
    if found is None:  # left to cel-python: its verdict, whatever it is
        return
    assert found == interpreted(rule, node, value, old)
    assert plain.failure(rule, node, value, old) == cel.failure(rule, node, value, old)


SAMPLES: tuple[Any, ...] = (0, 1, 2, -1, 1.0, 0.5, True, False, "", "a", "b", None, [], [1], {},
                            {"a": 1})


#: cel-python's function of each relation of its grammar.
RELATIONS = {"relation_lt": "_<_", "relation_le": "_<=_", "relation_ge": "_>=_",
             "relation_gt": "_>_", "relation_eq": "_==_", "relation_ne": "_!=_",
             "relation_in": "_in_"}


@pytest.mark.parametrize("name", list(RELATIONS))
def test_each_relation_on_each_pair_of_types_is_cel_pythons(name: str) -> None:
    function = cel._activation().resolve_function(RELATIONS[name])
    for first, second in itertools.product(SAMPLES, repeat=2):
        try:
            expected: Any = repr(function(cel.to_cel(None, first), cel.to_cel(None, second)))
        except TypeError:
            expected = "no such overload"
        if isinstance(expected, str) and "CELEvalError" in expected:
            expected = "no such overload"
        try:
            result = plain.OPERATORS[name](first, second)
            got: Any = ("no such overload" if isinstance(result, plain.Error)
                        else repr(cel.to_cel(None, result)))
        except TypeError:
            got = "no such overload"
        assert got == expected, (first, second)


PATTERNS = ("^[a-z]([-a-z0-9]*[a-z0-9])?$", "^[A-Za-z][A-Za-z0-9+.-]*://.+$")


@settings(max_examples=400, deadline=None)
@given(pattern=st.sampled_from(PATTERNS),
       text=st.text(st.sampled_from("aZ09-+.:/_\n\r é\u2028xs"), max_size=12))
def test_re_gives_re2s_answers_for_the_rules_patterns(pattern: str, text: str) -> None:
    assert plain._matches(text, pattern) == function_matches(
        celtypes.StringType(text), celtypes.StringType(pattern))


@pytest.mark.parametrize("pattern", [r"^\d+$", "a{2}", "(?i)a", "[[:alpha:]]", "^a$|b$",
                                     r"\bx", "a**", "^*"])
def test_a_pattern_re_may_read_otherwise_is_left_to_re2(pattern: str) -> None:
    with pytest.raises(plain.Unsupported):
        plain._matches("a", pattern)
