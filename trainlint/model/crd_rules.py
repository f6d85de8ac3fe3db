"""The compiled form of the CRDs' validation rules: schema `Node`s carrying `CrdRule`s, per
kind and release, as `trainlint.model.crd` writes them into `COMPILED`."""

from __future__ import annotations

import pickle
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from trainlint.model.node import every_release, release_section
from trainlint.release import TrainerVersion

CRDS = Path(__file__).with_name("crds")
#: The compiled rules and schema nodes; written by `python -m trainlint.model`.
COMPILED = Path(__file__).with_name("validations.pickle")
#: A rule's parsed program: a cel-python AST (a `lark.Tree`), opaque here.
CompiledProgram = Any
#: The same program as plain tuples, readable without lark: a node is `(name, children)`
#: (children a tuple), a token `(type, text)` (text a str).
Form = tuple[str, Any]
#: What a rule reads of a value: field → what it reads of that field (None: all of it);
#: `ITEMS` stands for every item of a list (or value of a map).
Reads = dict[str, "Reads | None"]
ITEMS = "[]"


class CrdRule(NamedTuple):
    """One `x-kubernetes-validations` entry. (Named tuples, this and `Compiled`: checking
    unpickles them, and a frozen dataclass costs every run's start-up its compiled
    methods.)"""

    expression: str
    message: str
    #: Reads `oldSelf`: runs on updates only.
    transition: bool
    #: Its compiled program in `Compiled.programs`.
    program: int
    #: What the rule reads of `self` (only that is normalized and converted for CEL);
    #: None when it reads `self` whole.
    reads: Reads | None
    #: Where below its node a finding points: the path all it reads shares
    #: (`("metadata", "name")` for the name rules of the root), else `()`.
    anchor: tuple[str, ...] = ()


class Node:
    """A schema node, as far as validation rules need it."""

    __slots__ = (
        "additional", "default", "embedded", "int_or_string", "items", "list_type", "map_keys",
        "nullable", "preserve_unknown", "properties", "ruled", "ruled_additional",
        "ruled_defaults", "ruled_properties", "rules", "type",
    )

    def __init__(
        self, *, properties: dict[str, Node] | None, items: Node | None,
        additional: Node | None, type: str, list_type: str, map_keys: tuple[str, ...],
        int_or_string: bool, preserve_unknown: bool, nullable: bool, embedded: bool,
        default: tuple[Any, ...], rules: tuple[CrdRule, ...],
    ) -> None:
        self.properties = properties
        self.items = items
        self.additional = additional
        self.type = type
        self.list_type = list_type
        self.map_keys = map_keys
        self.int_or_string = int_or_string
        self.preserve_unknown = preserve_unknown
        self.nullable = nullable
        #: An embedded resource (`x-kubernetes-embedded-resource`): its metadata is kept.
        self.embedded = embedded
        #: `(value,)` when the schema sets a default, else `()`.
        self.default = default
        self.rules = rules
        children = [*(properties or {}).values(), items, additional]
        #: Whether a rule is declared here or below.
        self.ruled: bool = bool(rules) or any(child.ruled for child in children if child)
        # The way to the rules below, worked out once per schema node rather than for each
        # key of each value walked (`trainlint.model.validations`): the child of each
        # property, None where no rule is declared at or below it; the child of other keys
        # if rules are declared there; the properties with rules and a default.
        self.ruled_properties = {
            key: child if child.ruled else None for key, child in (properties or {}).items()
        }
        self.ruled_additional = additional if additional is not None and additional.ruled else None
        self.ruled_defaults = tuple(
            (key, child) for key, child in (properties or {}).items()
            if child.ruled and child.default
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return _node, (self.properties, self.items, self.additional, self.type,
                       self.list_type, self.map_keys, self.int_or_string,
                       self.preserve_unknown, self.nullable, self.embedded, self.default,
                       self.rules)

    def child(self, key: str) -> Node | None:
        if self.properties is not None and key in self.properties:
            return self.properties[key]
        return self.additional


def _node(properties: dict[str, Node] | None, items: Node | None, additional: Node | None,
          type: str, list_type: str, map_keys: tuple[str, ...], int_or_string: bool,
          preserve_unknown: bool, nullable: bool, embedded: bool, default: tuple[Any, ...],
          rules: tuple[CrdRule, ...]) -> Node:
    return Node(properties=properties, items=items, additional=additional, type=type,
                list_type=list_type, map_keys=map_keys, int_or_string=int_or_string,
                preserve_unknown=preserve_unknown, nullable=nullable, embedded=embedded,
                default=default, rules=rules)


class Compiled(NamedTuple):
    #: (kind, release) → (root node, whether status is a subresource).
    roots: dict[tuple[str, TrainerVersion], tuple[Node, bool]]
    #: Each distinct rule's parsed CEL program (a pickled cel-python AST).
    programs: tuple[bytes, ...]
    #: Each program as a `Form`, in the same order.
    forms: tuple[Form, ...]


def root_of(kind: str, release: TrainerVersion) -> tuple[Node, bool] | None:
    """A kind's root node in a release and whether status is a subresource (None: no CRD
    of that kind)."""
    return _roots_of(release).get(kind)


def programs() -> tuple[bytes, ...]:
    return _stored()[1]


def forms() -> tuple[Form, ...]:
    return _stored()[2]


def compiled() -> Compiled:
    """Every release's rules (what `COMPILED` holds)."""
    return Compiled(every_release(ROOTS, _stored()[0]), programs(), forms())


#: Each release's roots, once unpickled: a run unpickles those of the releases it checks,
#: as `trainlint.model.node` does its trees.
ROOTS: dict[TrainerVersion, dict[str, tuple[Node, bool]]] = {}


@cache
def _stored() -> tuple[dict[TrainerVersion, bytes], tuple[bytes, ...], tuple[Form, ...]]:
    """The file: each release's roots, still pickled, then every release's programs and
    forms."""
    with COMPILED.open("rb") as file:
        stored: tuple[dict[TrainerVersion, bytes], tuple[bytes, ...], tuple[Form, ...]] = (
            pickle.load(file))
    return stored


def _roots_of(release: TrainerVersion) -> dict[str, tuple[Node, bool]]:
    return release_section(ROOTS, _stored()[0], release)
