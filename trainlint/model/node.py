"""The schema tree the checker walks: plain slotted `Node`s, one per position of an object.

`trainlint.model.schema` compiles them from the pydantic models, once per release, and
`COMPILED` ships the result, so that checking loads the trees and never imports pydantic
(about 100 ms of every start). A test keeps the file equal to a fresh compile.
"""

from __future__ import annotations

import pickle
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal, NamedTuple, TypeVar

from trainlint.release import TrainerVersion, format_version, parse_version

#: The compiled trees: (model name, release) → root Node; written by
#: `python -m trainlint.model`.
COMPILED = Path(__file__).with_name("trees.pickle")
T = TypeVar("T")


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


def tree(name: str, release: TrainerVersion) -> Node:
    """The compiled tree of a top-level model (`TrainJob`, `TrainingRuntime`,
    `EmbeddedMeta`) in a release."""
    return _trees_of(release)[name]


def same_in_every_release(name: str) -> Node:
    """A tree the same in every release (`EmbeddedMeta`, a test says so): that of a release
    already unpickled, else the newest's."""
    for trees in list(TREES.values()):
        return trees[name]
    return tree(name, max(_sections()))


def compiled() -> dict[tuple[str, TrainerVersion], Node]:
    """Every compiled tree, by model name and release (what `COMPILED` holds)."""
    return every_release(TREES, _sections())


def _trees_of(release: TrainerVersion) -> dict[str, Node]:
    return release_section(TREES, _sections(), release)


#: Each release's trees, once unpickled: a run unpickles those of the releases it checks
#: (one, nearly always), not all four. Unpickled whole, the trees and the CRD rules took
#: 310 of the page faults of a one-file check, and 200 so.
TREES: dict[TrainerVersion, dict[str, Node]] = {}


@cache
def _sections() -> dict[TrainerVersion, bytes]:
    """Each release's trees, still pickled."""
    with COMPILED.open("rb") as file:
        sections: dict[TrainerVersion, bytes] = pickle.load(file)
    return sections


def by_release(items: dict[tuple[str, TrainerVersion], Any]) -> dict[TrainerVersion, bytes]:
    """`items` by (name, release) as sections, one per release, each a pickle of its items
    by name (what `COMPILED` and the CRD rules' file hold)."""
    releases = sorted({release for _, release in items})
    return {release: pickle.dumps({name: item for (name, of), item in items.items()
                                   if of == release}, protocol=5)
            for release in releases}


def release_section(
    unpickled: dict[TrainerVersion, dict[str, T]], sections: Mapping[TrainerVersion, bytes],
    release: TrainerVersion,
) -> dict[str, T]:
    """A release's section of what `by_release` wrote (empty when it has none), unpickled
    once into `unpickled`: two threads may both unpickle it, and every one keeps the
    first."""
    found = unpickled.get(release)
    if found is None:
        section = sections.get(release)
        found = unpickled.setdefault(release, {} if section is None else pickle.loads(section))
    return found


def every_release(
    unpickled: dict[TrainerVersion, dict[str, T]], sections: Mapping[TrainerVersion, bytes],
) -> dict[tuple[str, TrainerVersion], T]:
    """Every section of what `by_release` wrote, by (name, release), as it was given."""
    return {(name, release): item for release in sections
            for name, item in release_section(unpickled, sections, release).items()}
