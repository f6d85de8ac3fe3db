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
imports it only for what the closures over plain values (`trainlint.model.plain`, which
mirror the ones here) do not cover.

cel-python's interpreter walks the parse tree on every evaluation, through lark's visitor,
and builds an activation, and a nested evaluator for each macro's item: 105 µs (CPU) for
`self.metadata.name.matches(...)`, which every object's name pays (the verdict memo cannot
share it: names differ), 200–700 µs for the rules with `in` or a macro. `closures` turns
each parsed program once into Python closures that call, in the same order and with the
same error handling, the functions the interpreter calls (those of `KUBERNETES_OPERATORS`
and cel-python's own): 9–22 µs for the same rules (12 µs for the name, 7 of them RE2's),
the same verdicts; a property test holds the two to the same results on every rule of
v2.0–v2.3. A program with a construct the closures do not cover is interpreted.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Mapping
from functools import cache, reduce
from typing import Any

import celpy
from celpy import celtypes
from celpy.evaluation import Activation, CELEvalError, Evaluator, celstr, eval_error

from trainlint.document import is_count
from trainlint.model.crd_rules import CompiledProgram, CrdRule, Node, compiled
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
    loaded: CompiledProgram = pickle.loads(compiled().programs[index])
    return loaded


@cache
def _activation() -> Activation:
    return Activation(annotations=celpy.googleapis, functions=KUBERNETES_OPERATORS)


#: A node of a parsed program (a `lark.Tree`, or a `lark.Token` in it), read by the shapes
#: cel-python's grammar gives it.
Tree = Any
#: A program made ready to run: the variables (`self`, `oldSelf`) → its CEL result, which
#: may be a `CELEvalError` (or an exception raised, as the interpreter raises some).
Run = Callable[[Mapping[str, Any]], Any]


def failure(rule: CrdRule, node: Node, value: Any, old: Any) -> str | None:
    """What the API server says when `value` (and `old`, the stored value, for a transition
    rule) breaks the rule; None when it holds or when its verdict is unknown."""
    return verdict(rule, runner(rule.program), node, value, old)


def verdict(rule: CrdRule, run: Run, node: Node, value: Any, old: Any) -> str | None:
    """`failure`, with the program run by `run`."""
    try:
        variables = {"self": to_cel(node, value)}
        if rule.transition:
            variables["oldSelf"] = to_cel(node, old)
        result = run(variables)
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


@cache
def runner(index: int) -> Run:
    """A program's closures, made once per process; cel-python's interpreter for a program
    they do not cover."""
    try:
        return closures(program(index))
    except Unsupported:
        return interpreter(index)


def interpreter(index: int) -> Run:
    """A program run by cel-python's interpreter."""
    def run(variables: Mapping[str, Any]) -> Any:
        return Evaluator(ast=program(index), activation=_activation()).evaluate(dict(variables))

    return run


class Unsupported(Exception):
    """A construct the closures do not cover."""


def closures(tree: Tree) -> Run:
    """The closures of a parsed program (or of one node of it): each mirrors the
    `Evaluator` method of the node's name (what it evaluates, in which order, which
    exceptions become `CELEvalError`s and which escape). Unsupported for a construct that
    none of the CRDs' rules uses."""
    compile_node = _COMPILERS.get(tree.data)
    if compile_node is None:
        raise Unsupported(tree.data)
    return compile_node(tree)


def _single(tree: Tree) -> Run:
    if len(tree.children) != 1:
        raise Unsupported(f"{tree.data} of {len(tree.children)}")
    return closures(tree.children[0])


def _overload(tree: Tree, operation: Callable[..., Any], *operands: Run) -> Run:
    """`operation` on the operands' values, a TypeError becoming an error value."""
    def run(variables: Mapping[str, Any]) -> Any:
        values = [operand(variables) for operand in operands]
        try:
            return operation(*values)
        except TypeError as error:
            return CELEvalError(f"found no matching overload for {tree.data}", error.__class__,
                                error.args)

    return run


def _logical(name: str) -> Callable[[Tree], Run]:
    def compile_node(tree: Tree) -> Run:
        if len(tree.children) == 1:
            return closures(tree.children[0])
        return _overload(tree, _activation().resolve_function(name), *map(closures, tree.children))

    return compile_node


RELATIONS = {"relation_lt": "_<_", "relation_le": "_<=_", "relation_ge": "_>=_",
             "relation_gt": "_>_", "relation_eq": "_==_", "relation_ne": "_!=_",
             "relation_in": "_in_"}


def _relation(tree: Tree) -> Run:
    if len(tree.children) == 1:
        return closures(tree.children[0])
    operator, right = tree.children
    function = _activation().resolve_function(RELATIONS[operator.data])
    return _overload(tree, function, _single(operator), closures(right))


def _unary(tree: Tree) -> Run:
    if len(tree.children) == 1:
        return closures(tree.children[0])
    operator, operand = tree.children
    function = _activation().resolve_function({"unary_not": "!_", "unary_neg": "-_"}[operator.data])
    inner = closures(operand)

    def run(variables: Mapping[str, Any]) -> Any:
        value = inner(variables)
        try:
            return function(value)
        except TypeError as error:
            return CELEvalError("found no matching overload", error.__class__, error.args)
        except ValueError as error:
            return CELEvalError("return error for overflow", error.__class__, error.args)

    return run


def _member_dot(tree: Tree) -> Run:
    inner, token = tree.children
    member, name = closures(inner), token.value

    def run(variables: Mapping[str, Any]) -> Any:
        value = member(variables)
        if isinstance(value, CELEvalError):
            return value
        if isinstance(value, celtypes.MessageType):
            return value.get(name)
        if isinstance(value, celtypes.MapType):
            try:
                return value[name]
            except KeyError:
                return CELEvalError(f"no such member in mapping: {name!r}", KeyError, None)
        return CELEvalError(f"{type(value)} does not support field selection", TypeError, None)

    return run


#: The macros `all` and `exists` fold their items' results (errors kept as values) with.
_FOLDS: dict[str, tuple[Callable[[Any, Any], Any], Any]] = {
    "all": (eval_error("no such overload", TypeError)(celtypes.logical_and),
            celtypes.BoolType(True)),
    "exists": (eval_error("no such overload", TypeError)(celtypes.logical_or),
               celtypes.BoolType(False)),
}


def _member_dot_arg(tree: Tree) -> Run:
    inner, token = tree.children[:2]
    member, name = closures(inner), token.value
    arguments = tree.children[2] if len(tree.children) == 3 else None
    if name in _FOLDS or name == "filter":
        return _macro(member, name, arguments)
    if name in ("map", "exists_one", "reduce", "min"):
        raise Unsupported(name)
    return _call(name, member, None if arguments is None else _exprlist(arguments))


def _macro(member: Run, name: str, arguments: Tree | None) -> Run:
    if arguments is None or len(arguments.children) != 2:
        raise Unsupported(f"{name} without a variable and an expression")
    variable, expression = arguments.children
    idents = list(variable.find_data("ident"))
    if len(idents) != 1:
        raise Unsupported("macro variable")
    identifier, body = idents[0].children[0].value, closures(expression)

    def item(variables: Mapping[str, Any], value: Any) -> Any:
        """The body on one item, an error result raised, as the interpreter's nested
        evaluation does."""
        result = body({**variables, identifier: value})
        if isinstance(result, CELEvalError):
            raise result
        return result

    if name == "filter":
        def run(variables: Mapping[str, Any]) -> Any:
            items = member(variables)
            if isinstance(items, CELEvalError):
                return items
            return celtypes.ListType(filter(lambda value: item(variables, value), items))

        return run
    fold, start = _FOLDS[name]

    def kept(variables: Mapping[str, Any], value: Any) -> Any:
        """`all` and `exists` keep an item's error as a value, to fold."""
        try:
            return item(variables, value)
        except CELEvalError as error:
            return error

    def folded(variables: Mapping[str, Any]) -> Any:
        items = member(variables)
        if isinstance(items, CELEvalError):
            return items
        return reduce(fold, (kept(variables, value) for value in items), start)

    return folded


def _call(name: str, target: Run | None, arguments: Run | None) -> Run:
    """A function (`target` None) or method call, as `function_eval` and `method_eval`."""
    function = _activation().functions.get(name)
    missing = CELEvalError(f"undeclared reference to {name!r}", KeyError, (name,))

    def run(variables: Mapping[str, Any]) -> Any:
        value = target(variables) if target is not None else None
        listed = arguments(variables) if arguments is not None else celtypes.ListType()
        if function is None:
            return missing
        if isinstance(value, CELEvalError):
            return value
        if isinstance(listed, CELEvalError):
            return listed
        try:
            return function(*listed) if target is None else function(value, *listed)
        except ValueError as error:
            return CELEvalError("return error for overflow", error.__class__, error.args)
        except (TypeError, AttributeError) as error:
            return CELEvalError("no such overload", error.__class__, error.args)

    return run


def _exprlist(tree: Tree) -> Run:
    items = [closures(child) for child in tree.children]

    def run(variables: Mapping[str, Any]) -> Any:
        values = [item(variables) for item in items]
        for value in values:
            if isinstance(value, CELEvalError):
                return value
        return celtypes.ListType(values)

    return run


def _list_lit(tree: Tree) -> Run:
    if not tree.children:
        return lambda variables: celtypes.ListType()
    return _single(tree)


def _ident_arg(tree: Tree) -> Run:
    name = tree.children[0].value
    arguments = tree.children[1].children if len(tree.children) == 2 else []
    if name == "has":
        if not arguments:
            raise Unsupported("has()")
        checked = [closures(argument) for argument in arguments]

        def has(variables: Mapping[str, Any]) -> Any:
            values = [argument(variables) for argument in checked]
            return celtypes.BoolType(not isinstance(values[0], CELEvalError))

        return has
    if name == "dyn":
        raise Unsupported(name)
    return _call(name, None, _exprlist(tree.children[1]) if len(tree.children) == 2 else None)


def _ident(tree: Tree) -> Run:
    name, functions = tree.children[0].value, _activation().functions

    def run(variables: Mapping[str, Any]) -> Any:
        if name in variables:
            return variables[name]
        if name in functions:
            return functions[name]
        return CELEvalError(f"undeclared reference to '{name}'", KeyError, (name,))

    return run


def _literal(tree: Tree) -> Run:
    token = tree.children[0]
    kinds: dict[str, Callable[[str], Any]] = {
        "FLOAT_LIT": celtypes.DoubleType, "INT_LIT": celtypes.IntType,
        "BOOL_LIT": lambda text: celtypes.BoolType(text.lower() == "true"),
        "NULL_LIT": lambda text: None,
    }
    value: Any
    if token.type in ("STRING_LIT", "MLSTRING_LIT"):
        value = celstr(token)
    elif token.type in kinds:
        try:
            value = kinds[token.type](token.value)
        except ValueError as error:
            value = CELEvalError(error.args[0], error.__class__, error.args)
    else:
        raise Unsupported(token.type)
    return lambda variables: value


_COMPILERS: dict[str, Callable[[Tree], Run]] = {
    "expr": _single, "conditionalor": _logical("_||_"), "conditionaland": _logical("_&&_"),
    "relation": _relation, "addition": _single, "multiplication": _single, "unary": _unary,
    "member": _single, "member_dot": _member_dot, "member_dot_arg": _member_dot_arg,
    "primary": _single, "paren_expr": _single, "list_lit": _list_lit, "exprlist": _exprlist,
    "ident_arg": _ident_arg, "ident": _ident, "literal": _literal,
}
