"""A rendered object and where each of its values came from.

The render shares every subtree it does not change with the object it came from (a
TrainJob's JobSet is mostly its runtime's template), and copies only the containers on
the way to a change (copy on write). Origins are kept the same way: one entry for a
subtree taken whole, one for each value put or merged into it, in a trie keyed by the
rendered key path; a value's origin is its nearest entry, followed down the source by the
rest of the path.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from trainlint.document import Manifest, Path, dotted


class Origin(NamedTuple):
    """Where a rendered value came from.

    Written in an object: `manifest` and the key `path` in it, `note` None. Put there by
    the controller or a default: `note` says who (`injected by the torch plugin`,
    `default (Kubernetes Job)`); `manifest` and `path`, when set, name the key that made
    it so (the `numNodes` behind `PET_NNODES`), the key a user edits to change it.
    """

    manifest: Manifest | None
    path: Path
    note: str | None = None

    def describe(self) -> str:
        """`TrainJob llm-sft spec.trainer.env[1]`, `injected by the torch plugin from ...`."""
        place = ""
        if self.manifest is not None:
            kind = self.manifest.kind or "object"
            name = f" {self.manifest.name}" if self.manifest.name else ""
            place = f"{kind}{name} {dotted(self.path)}".rstrip()
        if self.note is None:
            return place
        return f"{self.note} from {place}" if place else self.note


def injected(note: str, cause: Origin | None = None) -> Origin:
    """The origin of a value a plugin or a default put there, `cause` the key behind it."""
    if cause is None or cause.manifest is None:
        return Origin(None, (), note)
    return Origin(cause.manifest, cause.path, note)


def within(origin: Origin, *keys: str | int) -> Origin:
    """The origin of a value inside a written one (the same object, further down)."""
    return Origin(origin.manifest, (*origin.path, *keys), origin.note)


_HERE = None  # the trie key that holds a node's own origin (path keys are never None)


class Tree:
    """A rendered object built over shared data: read `root` freely, change it only
    through `put`, and ask `origin` where a value came from."""

    __slots__ = ("_origins", "_owned", "replaced", "root")

    def __init__(self, root: dict[str, Any], origin: Origin) -> None:
        self.root = root
        #: The containers this tree made itself (by id, kept alive here): the only ones it
        #: may change in place.
        self._owned: dict[int, object] = {id(root): root}
        self._origins: dict[Any, Any] = {_HERE: origin}
        #: The lists a merge replaced whole (atomic lists, such as `tolerations`): the
        #: rendered path, the list it replaced and where that one was written.
        self.replaced: list[tuple[Path, list[Any], Origin]] = []

    def get(self, path: Path) -> Any:
        value: Any = self.root
        for key in path:
            if isinstance(value, dict):
                value = value.get(key)
            elif isinstance(value, list) and isinstance(key, int) and 0 <= key < len(value):
                value = value[key]
            else:
                return None
        return value

    def own(self, path: Path, listed: bool = False) -> Any:
        """The container at `path` (a list if `listed`, else a mapping), copied first if it
        is shared; a missing or wrongly shaped one on the way is replaced by an empty one
        (an index must exist)."""
        value: Any = self.root
        for position, key in enumerate(path):
            child = value.get(key) if isinstance(value, dict) else value[key]
            wanted = (
                isinstance(path[position + 1], int) if position + 1 < len(path) else listed
            )
            if not isinstance(child, list if wanted else dict):
                child = [] if wanted else {}
            elif id(child) not in self._owned:
                child = dict(child) if isinstance(child, dict) else list(child)
            else:
                value = child
                continue
            self._owned[id(child)] = child
            value[key] = child
            value = child
        return value

    def adopt(self, value: Any) -> Any:
        """Mark a container made for this tree as its own, so later changes need no copy."""
        self._owned[id(value)] = value
        return value

    def put(self, path: Path, value: Any, origin: Origin) -> None:
        """Set the value at `path` (an index one past the end appends) and its origin."""
        key = path[-1]
        parent = self.own(path[:-1], isinstance(key, int))
        if isinstance(parent, list):
            assert isinstance(key, int)
            if key >= len(parent):
                parent.append(value)
            else:
                parent[key] = value
        else:
            parent[key] = value
        self.mark(path, origin)

    def mark(self, path: Path, origin: Origin) -> None:
        """Record where the value at `path` came from (what was recorded under it goes)."""
        node = self._origins
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = {_HERE: origin}

    def origin(self, path: Path) -> Origin:
        node: dict[Any, Any] | None = self._origins
        best: Origin = self._origins[_HERE]
        depth = 0
        for position, key in enumerate(path):
            node = node.get(key) if node is not None else None
            if node is None:
                break
            here = node.get(_HERE)
            if here is not None:
                best, depth = here, position + 1
        if best.note is not None or depth == len(path):
            return best
        return Origin(best.manifest, best.path + path[depth:])

    def sources(self) -> Iterator[Origin]:
        """Every origin recorded (not those a value inherits from the one above it)."""
        stack = [self._origins]
        while stack:
            node = stack.pop()
            for key, inner in node.items():
                if key is _HERE:
                    yield inner
                else:
                    stack.append(inner)

    def reorder(self, path: Path, order: list[int]) -> None:
        """Put the items of the list at `path` in `order` (old indexes, new order), their
        origins with them."""
        items = self.own(path, listed=True)
        items[:] = [items[index] for index in order]
        node = self._origins
        for key in path:
            node = node.setdefault(key, {})
        moved = {}
        for new, old in enumerate(order):
            entry = dict(node.get(old, {}))
            entry[_HERE] = entry.get(_HERE) or self.origin((*path, old))
            moved[new] = entry
        for index in order:
            node.pop(index, None)
        node.update(moved)
