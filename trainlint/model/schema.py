"""The schema tree: what the checker walks, derived once per release from the models.

The models (`trainlint.model.trainjob`, `trainlint.model.runtime`) are pydantic classes
whose fields carry the facts of every release at once: `Released` says in which
releases a field exists, `Versioned` which constraints hold in which releases, `Core`
that a value is a Kubernetes type checked against kubernetes-validate's schemas.
`tree(model, release)` flattens them into `Node`s (`trainlint.model.node`), plain
slotted objects that a single recursive walk can check without asking pydantic anything.

Checking reads the trees compiled into `COMPILED`; after changing a model, write them
again with `python -m trainlint.model` (a test fails until then).
"""

from __future__ import annotations

import copy
import pickle
import types
import typing
from dataclasses import dataclass
from typing import Any, Literal, Union, get_args, get_origin

from annotated_types import Ge, Le, MaxLen, MinLen
from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from trainlint.model.node import Node, Released, Type, by_release
from trainlint.release import TrainerVersion


class Model(BaseModel):
    """Base of the API models: camelCase keys, nothing else accepted, built on demand."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", defer_build=True
    )


@dataclass(frozen=True)
class Required:
    """The field must be present (for fields required in some releases only)."""


@dataclass(frozen=True)
class MinProperties:
    count: int


@dataclass(frozen=True)
class Enum:
    values: tuple[str, ...]


@dataclass(frozen=True)
class Integer:
    """The value must be an integer (a field that accepted strings in older releases)."""

    note: str = ""


@dataclass(frozen=True)
class Versioned:
    """Constraints that hold only in some releases."""

    releases: Released
    constraints: tuple[object, ...]


def only(since: str = "2.0", until: str | None = None, *constraints: object) -> Versioned:
    return Versioned(Released(since, until), constraints)


@dataclass(frozen=True)
class Core:
    """A Kubernetes type, by its OpenAPI definition name, checked with kubernetes-validate's
    schemas."""

    definition: str
    #: Inside a custom resource, object metadata is reduced to name, namespace, labels,
    #: annotations and finalizers; a top-level object has the full ObjectMeta.
    embedded: bool = True


@dataclass(frozen=True)
class Unchecked:
    """A subtree the API server does not judge on create (status) or keeps as is."""


_TREES: dict[tuple[type[Model], TrainerVersion], Node] = {}


def tree(model: type[Model], release: TrainerVersion) -> Node:
    """The schema of `model` in `release` (built once, shared by equal sub-models)."""
    key = (model, release)
    node = _TREES.get(key)
    if node is None:
        node = _TREES[key] = Node("object")
        _fill(node, model, release)
    return node


def _fill(node: Node, model: type[Model], release: TrainerVersion) -> None:
    required = []
    for name, info in model.model_fields.items():
        key = info.alias or name
        metadata = list(info.metadata)
        released = next((item for item in metadata if isinstance(item, Released)), None)
        if released is not None and not released.covers(release):
            node.elsewhere[key] = released
            continue
        child = _node(info.annotation, metadata, release)
        if info.is_required() or _active(metadata, release, Required):
            required.append(key)
        elif info.default is not None:
            child.default = info.default
        node.fields[key] = child
    node.required = tuple(required)


def _active(metadata: list[Any], release: TrainerVersion, kind: type) -> list[Any]:
    """The constraints of `kind` in metadata that hold in `release`."""
    found: list[Any] = []
    for item in metadata:
        if isinstance(item, Versioned):
            if item.releases.covers(release):
                found.extend(inner for inner in item.constraints if isinstance(inner, kind))
        elif isinstance(item, kind):
            found.append(item)
    return found


def _node(annotation: Any, metadata: list[Any], release: TrainerVersion) -> Node:
    annotation, metadata = _unwrap(annotation, metadata)
    node = _shape(annotation, metadata, release)
    for constraint in _active(metadata, release, object):
        _constrain(node, constraint)
    return node


def _unwrap(annotation: Any, metadata: list[Any]) -> tuple[Any, list[Any]]:
    """Strip `Annotated` (keeping its metadata) and `| None` (optional is not nullable)."""
    while True:
        if get_origin(annotation) is typing.Annotated:
            annotation, *extra = get_args(annotation)
            metadata = [*metadata, *extra]
        elif get_origin(annotation) in (Union, types.UnionType) and type(None) in get_args(
            annotation
        ):
            rest = [arg for arg in get_args(annotation) if arg is not type(None)]
            annotation = rest[0] if len(rest) == 1 else Union[tuple(rest)]  # noqa: UP007
        else:
            return annotation, metadata


_SCALARS: dict[Any, Type] = {str: "string", int: "integer", bool: "boolean", float: "number"}


def _shape(  # noqa: PLR0911 - one return per kind of annotation
    annotation: Any, metadata: list[Any], release: TrainerVersion
) -> Node:
    core = next((item for item in metadata if isinstance(item, Core)), None)
    if core is not None:
        return Node("core", definition=core.definition, embedded=core.embedded)
    if any(isinstance(item, Unchecked) for item in metadata) or annotation is Any:
        return Node("any")
    origin, args = get_origin(annotation), get_args(annotation)
    if isinstance(annotation, type) and issubclass(annotation, Model):
        return copy.copy(tree(annotation, release))  # the field's constraints are its own
    if origin is Literal:
        return Node("string", enum=args, bounded=True)
    if origin is list:
        return Node("array", items=_node(args[0], [], release))
    if origin is dict:
        return Node("map", fields={}, items=_node(args[1], [], release))
    if origin in (Union, types.UnionType) and set(args) == {int, str}:
        return Node("int-or-string")
    if annotation in _SCALARS:
        return Node(_SCALARS[annotation])
    raise TypeError(f"no schema for {annotation!r}")


def _constrain(node: Node, constraint: object) -> None:
    sized = node.type == "string"
    node.bounded = node.bounded or not isinstance(constraint, Integer | MinProperties)
    match constraint:
        case Ge(ge=value):
            node.minimum = int(value)  # type: ignore[call-overload]
        case Le(le=value):
            node.maximum = int(value)  # type: ignore[call-overload]
        case MinLen(min_length=value):
            if sized:
                node.min_length = value
            else:
                node.min_items = value
        case MaxLen(max_length=value):
            if sized:
                node.max_length = value
            else:
                node.max_items = value
        case MinProperties(count=value):
            node.min_properties = value
        case Enum(values=values):
            node.enum = values
        case Integer(note=note):
            node.type, node.note = "integer", note


def dump(trees: dict[tuple[str, TrainerVersion], Node]) -> bytes:
    """The bytes of `trainlint.model.node.COMPILED` for these trees (a subtree shared within
    a release is written once)."""
    return pickle.dumps(by_release(trees), protocol=5)
