"""One CRD rule evaluated by cel-python, in the Kubernetes CEL environment.

The 31 rules of the v2.0–v2.3 CRDs use only standard CEL (`has`, `size`, `matches`, `in`,
`all`, `exists`, `filter`, comparisons); none of the Kubernetes library functions (`isURL`,
`quantity`...). Where cel-python's defaults differ from the API server's cel-go, this module
follows the API server:

- equality is heterogeneous: values of different types are unequal, never an error
  (`0 in ['auto', 'cpu']` is false), and numbers compare by value across int and double;
- lists of `x-kubernetes-list-type: set` or `map` are equal whatever their order;
- `type: number` values are doubles even when written as integers;
- a runtime "no such overload" (possible only through int-or-string values, which the
  API server types as dynamic) is an error the API server reports with its own text; any
  other evaluation error (a missing key...) says nothing trainlint can stand behind.

Importing this module imports cel-python (40–60 ms): `trainlint.model.validations`
imports it only for what the closures over plain values (`trainlint.model.plain`) do not
cover, a value or a construct no shipped rule meets; its interpreter is also what the
tests hold those closures to. Interpreted, a rule takes 100–700 µs of CPU, ten times
and more what the plain closures take (`benchmarks/cel.py` times both).
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

import celpy
from celpy import celtypes
from celpy.evaluation import Activation, CELEvalError, Evaluator

from trainlint.document import is_count
from trainlint.model.crd_rules import CompiledProgram, CrdRule, Node, programs
from trainlint.model.plain import broken, no_overload, propagating, same_items

NUMBERS = (celtypes.IntType, celtypes.UintType, celtypes.DoubleType)


class UnorderedList(celtypes.ListType):
    """A list of `x-kubernetes-list-type: set` or `map`: equality ignores the order."""


def equal(first: Any, second: Any) -> bool:
    """CEL equality as cel-go has it (heterogeneous)."""
    if isinstance(first, NUMBERS) and isinstance(second, NUMBERS) and not (
            isinstance(first, celtypes.BoolType) or isinstance(second, celtypes.BoolType)):
        return bool(first.real == second.real)
    if isinstance(first, celtypes.ListType) and isinstance(second, celtypes.ListType):
        if isinstance(first, UnorderedList) or isinstance(second, UnorderedList):
            return len(first) == len(second) and same_items(first, second, equal)
        return len(first) == len(second) and all(map(equal, first, second))
    if isinstance(first, celtypes.MapType) and isinstance(second, celtypes.MapType):
        return first.keys() == second.keys() and all(
            equal(value, second[key]) for key, value in first.items())
    if isinstance(first, celtypes.NullType) or isinstance(second, celtypes.NullType):
        return isinstance(first, celtypes.NullType) and isinstance(second, celtypes.NullType)
    return type(first) is type(second) and bool(first == second)


def _contains(item: Any, container: Any) -> Any:
    if isinstance(container, celtypes.MapType):
        return celtypes.BoolType(any(equal(item, key) for key in container))
    if isinstance(container, celtypes.ListType):
        return celtypes.BoolType(any(equal(item, other) for other in container))
    return CELEvalError("no such overload", TypeError, ("in", type(container).__name__))


#: The operators whose semantics the API server's CEL environment defines differently.
KUBERNETES_OPERATORS = {
    "_==_": propagating(CELEvalError, lambda a, b: celtypes.BoolType(equal(a, b))),
    "_!=_": propagating(CELEvalError, lambda a, b: celtypes.BoolType(not equal(a, b))),
    "_in_": propagating(CELEvalError, _contains),
}


def to_cel(node: Node | None, value: Any) -> Any:
    """Plain data → CEL values, typed as the schema says."""
    if isinstance(value, dict):
        # Filled after it is made: the constructor's checks of its argument (typing ABCs)
        # are 2 of the 5 µs converting `{"metadata": {"name": ...}}` took.
        converted = celtypes.MapType()
        converted.update({
            celtypes.StringType(key): to_cel(node.child(key) if node else None, item)
            for key, item in value.items()
        })
        return converted
    if isinstance(value, list):
        items = node.items if node else None
        kind = UnorderedList if node and node.list_type in ("set", "map") else celtypes.ListType
        return kind([to_cel(items, item) for item in value])
    if is_count(value) and node and node.type == "number":
        return celtypes.DoubleType(value)
    return SCALARS.get(type(value), _null)(value)


def _null(_: Any) -> Any:
    return celtypes.NullType()


#: CEL types of the scalars YAML and JSON give (a number's schema may make it a double).
SCALARS: dict[type, Callable[[Any], Any]] = {
    bool: celtypes.BoolType, int: celtypes.IntType, float: celtypes.DoubleType,
    str: celtypes.StringType,
}


@cache
def program(index: int) -> CompiledProgram:
    """A rule's parsed program, unpickled once per process."""
    loaded: CompiledProgram = pickle.loads(programs()[index])
    return loaded


@cache
def _activation() -> Activation:
    return Activation(annotations=celpy.googleapis, functions=KUBERNETES_OPERATORS)


#: A program made ready to run: the variables (`self`, `oldSelf`) → its CEL result, which
#: may be a `CELEvalError` (or an exception raised, as the interpreter raises some).
Run = Callable[[Mapping[str, Any]], Any]


def failure(rule: CrdRule, node: Node, value: Any, old: Any) -> str | None:
    """What the API server says when `value` (and `old`, the stored value, for a transition
    rule) breaks the rule; None when it holds or when its verdict is unknown."""
    try:
        variables = {"self": to_cel(node, value)}
        if rule.transition:
            variables["oldSelf"] = to_cel(node, old)
        result = interpreter(rule.program)(variables)
        if isinstance(result, CELEvalError):
            raise result
    except CELEvalError as error:
        if len(error.args) > 1 and error.args[1] is TypeError:  # no such overload
            return no_overload(rule)
        return None  # a missing key...: not a verdict trainlint can stand behind
    except Exception:  # the engine failing is an unknown verdict, never a finding
        return None
    if isinstance(result, celtypes.BoolType) and not result:
        return broken(rule)
    return None


def interpreter(index: int) -> Run:
    """A program run by cel-python's interpreter."""
    def run(variables: Mapping[str, Any]) -> Any:
        return Evaluator(ast=program(index), activation=_activation()).evaluate(dict(variables))

    return run
