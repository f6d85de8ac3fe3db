"""The CRDs' CEL rules evaluated on plain values, without cel-python.

`trainlint.model.cel` runs a rule on cel-python's types; importing it imports cel-python
(80–110 ms of CPU in the CLI), which every run pays that meets a value no run saw (every new
TrainJob's name). The closures here run a program's `Form` (plain tuples in `COMPILED`:
neither lark nor cel-python is imported) on what the loader gives (dict, list, str, int,
float, bool, None), typed by the schema node as `cel.to_cel` types them: `type: number`
integers as floats, lists of `x-kubernetes-list-type: set` or `map` as `Unordered`. Each
does what cel-python's interpreter does for its node of the program, with its answers: heterogeneous
equality, numbers by value across int and double, the orderings cel-python's types allow
(`ORDERED`), the kind of each error (a TypeError is the API server's "no such overload"),
64-bit integers (a value beyond them is an unknown verdict, as `to_cel` makes it).

`matches` runs Python's `re` only on patterns built of what RE2 and `re` read alike
(`SAFE_PATTERN`), `$` made `\\Z` (RE2's `$` does not match before a final newline). A
construct, pattern or value they do not cover raises `Unsupported`: the rule is then
evaluated by `cel`, so nothing is lost. A property test holds them to cel-python's
interpreter on every rule of v2.0–v2.3.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping
from functools import cache, reduce
from typing import Any

from trainlint.document import is_count
from trainlint.model.crd_rules import CrdRule, Form, Node, forms

INT64 = range(-(2**63), 2**63)


class Unsupported(Exception):
    """A construct, pattern or value the plain closures do not cover: `cel` evaluates it."""


class Unknown(Exception):
    """What makes cel-python raise an exception that is no CEL error: an unknown verdict."""


class Error:
    """A CEL error value, by the kind of exception cel-python gives it (`TypeError`: no
    such overload)."""

    __slots__ = ("kind",)

    def __init__(self, kind: type[Exception]) -> None:
        self.kind = kind

    def __repr__(self) -> str:
        return f"Error({self.kind.__name__})"


class Raised(Exception):
    """An error value that cel-python raises instead of returning (a `filter` item's)."""

    def __init__(self, error: Error) -> None:
        super().__init__(error.kind.__name__)
        self.error = error


class Unordered(list[Any]):
    """A list of `x-kubernetes-list-type: set` or `map`: equality ignores the order."""


#: A program made ready to run: the variables (`self`, `oldSelf`) → its result (an `Error`
#: for a CEL error), or `Raised`, `Unknown` or `Unsupported` raised.
Run = Callable[[Mapping[str, Any]], Any]
NUMBERS = (int, float)


def typed(node: Node | None, value: Any) -> Any:
    """Plain data as `cel.to_cel` types it, in plain values."""
    if isinstance(value, dict):
        if any(type(key) is not str for key in value):
            raise Unsupported("a key that is no string")
        return {key: typed(node.child(key) if node else None, item)
                for key, item in value.items()}
    if isinstance(value, list):
        items = node.items if node else None
        kind = Unordered if node and node.list_type in ("set", "map") else list
        return kind([typed(items, item) for item in value])
    if is_count(value) and node and node.type == "number":
        try:
            return float(value)
        except OverflowError as error:
            raise Unknown from error
    if type(value) is int and value not in INT64:
        raise Unknown("beyond 64 bits")
    return value if type(value) in (bool, int, float, str) else None


def equal(first: Any, second: Any) -> bool:
    """`cel.equal` on plain values."""
    if type(first) in NUMBERS and type(second) in NUMBERS:
        return bool(first == second)
    if isinstance(first, list) and isinstance(second, list):
        if isinstance(first, Unordered) or isinstance(second, Unordered):
            return len(first) == len(second) and same_items(first, second, equal)
        return len(first) == len(second) and all(map(equal, first, second))
    if isinstance(first, dict) and isinstance(second, dict):
        return first.keys() == second.keys() and all(
            equal(value, second[key]) for key, value in first.items())
    if first is None or second is None:
        return first is None and second is None
    return type(first) is type(second) and bool(first == second)


def same_items(first: list[Any], second: list[Any], equal: Callable[[Any, Any], bool]) -> bool:
    """Whether the lists hold the same items by `equal`, in any order."""
    unmatched = list(second)
    for item in first:
        position = next((index for index, other in enumerate(unmatched) if equal(item, other)),
                        None)
        if position is None:
            return False
        del unmatched[position]
    return True


def propagating(error: type, function: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """An operator that passes an error operand (of type `error`) on, as every CEL
    operator does."""
    def run(first: Any, second: Any) -> Any:
        for operand in (first, second):
            if isinstance(operand, error):
                return operand
        return function(first, second)

    return run


def _contains(item: Any, container: Any) -> Any:
    if isinstance(container, (dict, list)):
        return any(equal(item, other) for other in container)
    return Error(TypeError)


#: The (left, right) types cel-python orders (the other pairs are no such overload);
#: those it orders, it orders as Python does.
ORDERED = frozenset({(int, int), (float, int), (float, float), (float, bool), (bool, int),
                     (bool, float), (bool, bool), (str, str)})


def _ordering(compare: Callable[[Any, Any], bool]) -> Callable[[Any, Any], Any]:
    def run(first: Any, second: Any) -> Any:
        if isinstance(first, Error):
            return first
        if isinstance(second, Error):
            return second
        if (type(first), type(second)) not in ORDERED:
            raise TypeError("no such overload")
        return bool(compare(first, second))

    return run


def _logical(decided: bool) -> Callable[[Any, Any], Any]:
    """cel-python's `logical_or` (`decided` True) or `logical_and` (False): commutative
    over errors and other values that are no booleans."""
    def run(first: Any, second: Any) -> Any:
        first_bool, second_bool = type(first) is bool, type(second) is bool
        if not first_bool and not second_bool:
            raise TypeError("no such overload")
        if not first_bool:
            return second if second is decided else first
        if not second_bool:
            return first if first is decided else second
        return (first or second) if decided else (first and second)

    return run


OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "relation_eq": propagating(Error, equal), "relation_ne": propagating(
        Error, lambda first, second: not equal(first, second)),
    "relation_in": propagating(Error, _contains), "relation_lt": _ordering(operator.lt),
    "relation_le": _ordering(operator.le), "relation_gt": _ordering(operator.gt),
    "relation_ge": _ordering(operator.ge), "conditionalor": _logical(True),
    "conditionaland": _logical(False),
}


def _size(container: Any) -> int:
    if isinstance(container, (str, list, dict)):
        return len(container)
    raise TypeError("no such overload")


#: The patterns `matches` leaves to Python's `re`: literals, ASCII classes, groups, `?*+|`,
#: anchors (`$` only last); no escapes, repetition counts, or class syntax beyond ranges.
SAFE_PATTERN = re.compile(r"\^?(?:[A-Za-z0-9 _:/@,=%'\"!#&~<>-]|\.|[()?*+|]"
                          r"|\[\^?(?:[A-Za-z0-9 _:/@.+,=%-])+\])*\$?")


@cache
def _regex(pattern: str) -> re.Pattern[str]:
    if SAFE_PATTERN.fullmatch(pattern) is None or "(?" in pattern or "$" in pattern[:-1]:
        raise Unsupported(f"pattern {pattern!r}")
    try:
        return re.compile(pattern[:-1] + r"\Z" if pattern.endswith("$") else pattern)
    except re.error as error:  # RE2 may read it, or fail otherwise
        raise Unsupported(f"pattern {pattern!r}") from error


def _matches(text: Any, pattern: Any) -> Any:
    if type(text) is not str or type(pattern) is not str:
        raise TypeError("no such overload")
    if not text.isascii():
        text.encode()  # a surrogate: RE2 cannot take it (a ValueError)
    return _regex(pattern).search(text) is not None


FUNCTIONS: dict[str, Callable[..., Any]] = {"size": _size, "matches": _matches}


def closures(tree: Form) -> Run:
    """The plain closures of a program's `Form` (or of one node of it); Unsupported for a
    construct none of the CRDs' rules uses."""
    name, children = tree
    if not isinstance(children, tuple):
        raise Unsupported(name)
    if len(children) == 1 and name in _PASSING:
        return closures(children[0])
    compile_node = _COMPILERS.get(name)
    if compile_node is None:
        raise Unsupported(name)
    return compile_node(children)


#: Nodes that stand for their only child (the grammar's levels of precedence).
_PASSING = frozenset({"expr", "conditionalor", "conditionaland", "relation", "addition",
                      "multiplication", "unary", "member", "primary", "paren_expr"})


def _overload(operation: Callable[..., Any], *operands: Run) -> Run:
    def run(variables: Mapping[str, Any]) -> Any:
        values = [operand(variables) for operand in operands]
        try:
            return operation(*values)
        except TypeError:
            return Error(TypeError)

    return run


def _logical_node(name: str) -> Callable[[tuple[Form, ...]], Run]:
    return lambda children: _overload(OPERATORS[name], *map(closures, children))


def _relation(children: tuple[Form, ...]) -> Run:
    (name, left), right = children
    if name not in OPERATORS or len(left) != 1:
        raise Unsupported(name)
    return _overload(OPERATORS[name], closures(left[0]), closures(right))


def _unary(children: tuple[Form, ...]) -> Run:
    (name, _), operand = children
    if name != "unary_not":
        raise Unsupported(name)
    inner = closures(operand)

    def run(variables: Mapping[str, Any]) -> Any:
        value = inner(variables)
        if isinstance(value, Error):
            return value
        return (not value) if type(value) is bool else Error(TypeError)

    return run


def _member_dot(children: tuple[Form, ...]) -> Run:
    inner, (_, name) = children
    member = closures(inner)

    def run(variables: Mapping[str, Any]) -> Any:
        value = member(variables)
        if isinstance(value, Error):
            return value
        if isinstance(value, dict):
            return value[name] if name in value else Error(KeyError)
        return Error(TypeError)

    return run


def _member_dot_arg(children: tuple[Form, ...]) -> Run:
    inner, (_, name) = children[:2]
    member = closures(inner)
    arguments = children[2] if len(children) == 3 else None
    if name in ("all", "exists", "filter"):
        return _macro(member, name, arguments)
    return _call(name, member, None if arguments is None else _exprlist(arguments[1]))


def _idents(tree: Form) -> list[Form]:
    name, children = tree
    if not isinstance(children, tuple):
        return []
    found = [tree] if name == "ident" else []
    return found + [ident for child in children for ident in _idents(child)]


def _iterated(items: Any) -> Any:
    """What cel-python's macros iterate: a list's items, a map's keys."""
    if isinstance(items, (list, dict)):
        return items
    if isinstance(items, str):
        raise Unsupported("a macro over a string")  # its characters are no CEL strings
    raise Unknown("not iterable")


def _macro(member: Run, name: str, arguments: Form | None) -> Run:
    if arguments is None or len(arguments[1]) != 2:
        raise Unsupported(f"{name} without a variable and an expression")
    variable, expression = arguments[1]
    idents = _idents(variable)
    if len(idents) != 1:
        raise Unsupported("macro variable")
    identifier, body = idents[0][1][0][1], closures(expression)

    def item(variables: Mapping[str, Any], value: Any) -> Any:
        return body({**variables, identifier: value})

    if name == "filter":
        def kept(variables: Mapping[str, Any], value: Any) -> bool:
            result = item(variables, value)
            if isinstance(result, Error):
                raise Raised(result)
            return True if result is None else bool(result)  # cel-python's null is true

        def run(variables: Mapping[str, Any]) -> Any:
            items = member(variables)
            if isinstance(items, Error):
                return items
            return [value for value in _iterated(items) if kept(variables, value)]

        return run
    fold, start = OPERATORS["conditionaland" if name == "all" else "conditionalor"], name == "all"

    def folding(first: Any, second: Any) -> Any:
        try:
            return fold(first, second)
        except TypeError:
            return Error(TypeError)

    def folded(variables: Mapping[str, Any]) -> Any:
        items = member(variables)
        if isinstance(items, Error):
            return items
        return reduce(folding, [item(variables, value) for value in _iterated(items)], start)

    return folded


def _call(name: str, target: Run | None, arguments: Run | None) -> Run:
    function = FUNCTIONS.get(name)
    if function is None:
        raise Unsupported(name)

    def run(variables: Mapping[str, Any]) -> Any:
        value = target(variables) if target is not None else None
        listed = arguments(variables) if arguments is not None else []
        if isinstance(value, Error):
            return value
        if isinstance(listed, Error):
            return listed
        try:
            return function(*listed) if target is None else function(value, *listed)
        except ValueError:
            return Error(ValueError)
        except TypeError:
            return Error(TypeError)

    return run


def _exprlist(children: tuple[Form, ...]) -> Run:
    items = [closures(child) for child in children]

    def run(variables: Mapping[str, Any]) -> Any:
        values = [item(variables) for item in items]
        for value in values:
            if isinstance(value, Error):
                return value
        return values

    return run


def _list_lit(children: tuple[Form, ...]) -> Run:
    if not children:
        return lambda variables: []
    (name, items), = children
    if name != "exprlist":
        raise Unsupported(name)
    return _exprlist(items)


def _ident_arg(children: tuple[Form, ...]) -> Run:
    (_, name), arguments = children[0], children[1][1] if len(children) == 2 else ()
    if name != "has":
        return _call(name, None, _exprlist(arguments) if len(children) == 2 else None)
    if not arguments:
        raise Unsupported("has()")
    checked = [closures(argument) for argument in arguments]

    def has(variables: Mapping[str, Any]) -> Any:
        values = [argument(variables) for argument in checked]
        return not isinstance(values[0], Error)

    return has


def _ident(children: tuple[Form, ...]) -> Run:
    (_, name), = children

    def run(variables: Mapping[str, Any]) -> Any:
        if name in variables:
            return variables[name]
        raise Unsupported(f"the name {name}")  # a function as a value, or undeclared

    return run


#: A string literal without prefix, escapes or triple quotes.
PLAIN_STRING = re.compile(r"'([^'\\\n]*)'|\"([^\"\\\n]*)\"")


def _literal(children: tuple[Form, ...]) -> Run:
    (kind, text), = children
    value: Any
    if kind == "STRING_LIT" and (plain := PLAIN_STRING.fullmatch(text)):
        value = next(group for group in plain.groups() if group is not None)
    elif kind == "INT_LIT" and text.isdigit():
        value = int(text) if int(text) in INT64 else Error(ValueError)
    elif kind == "BOOL_LIT":
        value = text.lower() == "true"
    else:
        raise Unsupported(f"{kind} {text}")
    return lambda variables: value


_COMPILERS: dict[str, Callable[[tuple[Form, ...]], Run]] = {
    "conditionalor": _logical_node("conditionalor"),
    "conditionaland": _logical_node("conditionaland"), "relation": _relation,
    "unary": _unary, "member_dot": _member_dot, "member_dot_arg": _member_dot_arg,
    "list_lit": _list_lit, "exprlist": _exprlist,
    "ident_arg": _ident_arg, "ident": _ident, "literal": _literal,
}


@cache
def runner(index: int) -> Run | None:
    """A program's plain closures, made once per process; None for a program they do not
    cover."""
    try:
        return closures(forms()[index])
    except Unsupported:
        return None


def outcome(run: Run, rule: CrdRule, node: Node, value: Any, old: Any) -> Any:
    """The result of `run` on the value (and the old one, for a transition rule): a value,
    an `Error`, or `Unknown` raised; `Unsupported` raised for a value or construct the
    plain closures do not cover."""
    variables = {"self": typed(node, value)}
    if rule.transition:
        variables["oldSelf"] = typed(node, old)
    try:
        return run(variables)
    except Raised as raised:
        return raised.error


def failure(rule: CrdRule, node: Node, value: Any, old: Any) -> str | None:
    """What the API server says when the value breaks the rule (`cel.failure`); Unsupported
    when the plain closures cannot tell."""
    run = runner(rule.program)
    if run is None:
        raise Unsupported(rule.expression)
    try:
        result = outcome(run, rule, node, value, old)
    except Unknown:
        return None
    if isinstance(result, Error):
        return no_overload(rule) if result.kind is TypeError else None
    return broken(rule) if result is False else None


def no_overload(rule: CrdRule) -> str:
    """What the API server says of a rule that cannot take the value's type."""
    return f"the rule `{rule.expression}` cannot be evaluated on this value (no such overload)"


def broken(rule: CrdRule) -> str:
    """What the API server says of a broken rule."""
    return rule.message or f"failed rule: {rule.expression}"
