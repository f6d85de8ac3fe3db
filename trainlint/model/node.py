"""The schema tree the checker walks: plain slotted `Node`s, one per position of an object.

`trainlint.model.schema` compiles them from the pydantic models, once per release, and
`COMPILED` ships the result, so that checking loads the trees and never imports pydantic
(about 100 ms of every start). A test keeps the file equal to a fresh compile.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal, NamedTuple

from trainlint.release import TrainerVersion, format_version, parse_version

#: The compiled trees: (model name, release) → root Node; written by
#: `python -m trainlint.model`.
COMPILED = Path(__file__).with_name("trees.pickle")


class Released(NamedTuple):
    """The releases a field (or a constraint) exists in, `until` included, and what to do
    in the others: (first release, advice) pairs in `instead`, the advice of the latest
    pair not after the release applies. (A named tuple: checking unpickles them with the
    trees, and a frozen dataclass costs every run's start-up its compiled methods.)"""

    since: str = "2.0"
    until: str | None = None
    instead: tuple[tuple[str, str], ...] = ()

    def covers(self, release: TrainerVersion) -> bool:
        return parse_version(self.since) <= release and (
            self.until is None or release <= parse_version(self.until)
        )

    def describe(self) -> str:
        first = format_version(parse_version(self.since))
        if self.until is None:
            return f"{first} and later" if self.since != "2.0" else "every release"
        last = format_version(parse_version(self.until))
        return f"{first} only" if first == last else f"{first}–{last}"

    def advice(self, release: TrainerVersion) -> str:
        found = ""
        for first, text in self.instead:
            if parse_version(first) <= release:
                found = text
        return found


Type = Literal["object", "array", "map", "string", "integer", "number", "boolean",
               "int-or-string", "quantity", "any", "core"]


@dataclass(eq=False, slots=True)
class Node:
    """One position of the schema: what a value there must be."""

    type: Type
    #: object: the known keys; map: None.
    fields: dict[str, Node] = field(default_factory=dict)
    #: array items, map values.
    items: Node | None = None
    required: tuple[str, ...] = ()
    #: Fields of this object that exist in other releases, with when and what instead.
    elsewhere: dict[str, Released] = field(default_factory=dict)
    enum: tuple[Any, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None
    min_length: int | None = None
    max_length: int | None = None
    min_items: int | None = None
    max_items: int | None = None
    min_properties: int | None = None
    default: Any = None
    #: An object whose unknown keys are kept (free-form Kubernetes objects).
    open: bool = False
    #: Null is a valid value (Kubernetes types that say so); otherwise null is pruned.
    nullable: bool = False
    #: For `core`: the Kubernetes definition; `embedded` inside a custom resource.
    definition: str = ""
    embedded: bool = True
    #: Why an integer is required (the field took strings in other releases).
    note: str = ""
    #: The value has an enumeration, bounds or sizes to check (a fast path for the rest).
    bounded: bool = False


@cache
def compiled() -> dict[tuple[str, TrainerVersion], Node]:
    """Every compiled tree, read once (the file ships with trainlint, like its code)."""
    with COMPILED.open("rb") as file:
        trees: dict[tuple[str, TrainerVersion], Node] = pickle.load(file)
    return trees
