"""A rendered object and where each of its values came from.

The render shares every subtree it does not change with the object it came from (a
TrainJob's JobSet is mostly its runtime's template), and copies only the containers on
the way to a change (copy on write). Origins are kept the same way: one entry for a
subtree taken whole, one for each value put or merged into it, in a trie keyed by the
rendered key path; a value's origin is its nearest entry, followed down the source by the
rest of the path.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from trainlint.document import KeyPath, Manifest, dotted
from trainlint.problem import Problem, Related


class Origin(NamedTuple):
    """Where a rendered value came from.

    Written in an object: `manifest` and the key `path` in it, `note` None. Put there by
    the controller or a default: `note` says who (`injected by the torch plugin`,
    `default (Kubernetes Job)`); `manifest` and `path`, when set, name the key that made
    it so (the `numNodes` behind `PET_NNODES`), the key a user edits to change it.
    """

    manifest: Manifest | None
    path: KeyPath
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


def on_trainjob(job: Manifest, origin: Origin, message: str, what: str) -> Iterator[Problem]:
    """A finding about a value of a TrainJob's render, on the TrainJob: at the key, where
    the TrainJob wrote it, else at its `runtimeRef`, with the runtime's key beside it
    (`what` it is there). Nothing for a value no object wrote."""
    if origin.manifest is job:
        yield Problem(origin.path, message)
    elif origin.manifest is not None:
        yield Problem(("spec", "runtimeRef"), message,
                      related=(Related(origin.manifest, origin.path, what),))


def first_on(manifest: object, *places: Origin | None) -> Origin | None:
    """The first place that is in `manifest`: where a TrainJob contributed to a problem."""
    return next((at for at in places if at is not None and at.manifest is manifest), None)


def on_checked(
    manifest: Manifest, job: Manifest | None, places: Sequence[Origin | None], message: str,
    what: str,
) -> Iterator[Problem]:
    """A finding about values of a render (`places`, the first one `manifest` wrote) on
    the object checked: at that key; on the TrainJob (`job`) whose render holds only its
    runtime's, at its `runtimeRef`, with the runtime's first key beside it (`what` it is
    there)."""
    at = first_on(manifest, *places)
    if at is not None:
        yield Problem(at.path, message)
    elif job is manifest:
        first = next((place for place in places if place is not None), None)
        if first is not None:
            yield from on_trainjob(manifest, first, message, what)


def injected(note: str, cause: Origin | None = None) -> Origin:
    """The origin of a value a plugin or a default put there, `cause` the key behind it."""
    if cause is None or cause.manifest is None:
        return Origin(None, (), note)
    return Origin(cause.manifest, cause.path, note)


def within(origin: Origin, *keys: str | int) -> Origin:
    """The origin of a value inside a written one (the same object, further down)."""
    # tuple.__new__: a named tuple's own constructor is Python code, and this one is hot.
    return _new_tuple(Origin, (origin[0], origin[1] + keys, origin[2]))


_new_tuple = tuple.__new__


_HERE = None  # the trie key that holds a node's own origin (path keys are never None)

#: Where a walk in the origins trie ended: the node reached (None past the last one
#: recorded), the nearest origin on the way, and the depth it was recorded at.
Located = tuple[Any, Origin, int]


class Tree:
    """A rendered object built over shared data: read `root` freely, change it only
    through `put`, and ask `origin` where a value came from.

    The origins trie holds, under each key, either the origin of that value (nothing
    below it recorded) or a node: a dict whose `_HERE` entry, if any, is the value's own
    origin. While it is built, the containers this tree owns and the trie's nodes are
    also kept by path, so that the many changes under one container (a plugin's env
    variables) do not walk the tree from the root each time; `done` drops them."""

    __slots__ = ("_nodes", "_origins", "_owned", "_paths", "replaced", "root")

    def __init__(self, root: dict[str, Any], origin: Origin) -> None:
        self.root = root
        #: The containers this tree made itself (by id, kept alive here): the only ones it
        #: may change in place.
        self._owned: dict[int, object] = {id(root): root}
        #: KeyPath → the owned container there (every container on the way is owned too).
        self._paths: dict[KeyPath, Any] = {(): root}
        self._origins: dict[Any, Any] = {_HERE: origin}
        #: KeyPath → the trie node there.
        self._nodes: dict[KeyPath, dict[Any, Any]] = {(): self._origins}
        #: The lists a merge replaced whole (atomic lists, such as `tolerations`): the
        #: rendered path, the list it replaced and where that one was written.
        self.replaced: list[tuple[KeyPath, list[Any], Origin]] = []

    def done(self) -> None:
        """The tree is built: what only speeds up changes goes. (A later change still
        works: it copies what it changes, as it would a shared container.)"""
        self._owned = {}
        self._paths = {}
        self._nodes = {(): self._origins}

    def get(self, path: KeyPath) -> Any:
        value: Any = self._paths.get(path)
        if value is not None:
            return value
        value = self.root
        for key in path:
            if isinstance(value, dict):
                value = value.get(key)
            elif isinstance(value, list) and isinstance(key, int) and 0 <= key < len(value):
                value = value[key]
            else:
                return None
        return value

    def own(self, path: KeyPath, listed: bool = False) -> Any:
        """The container at `path` (a list if `listed`, else a mapping), copied first if it
        is shared; a missing or wrongly shaped one on the way is replaced by an empty one
        (an index must exist)."""
        found = self._paths.get(path)
        if found is not None and isinstance(found, list) == listed:
            return found
        if not path:
            return self.root
        parent = self.own(path[:-1], isinstance(path[-1], int))
        key = path[-1]
        child = parent.get(key) if isinstance(parent, dict) else parent[key]
        if not isinstance(child, list if listed else dict):
            if id(child) in self._owned:
                self._forget(path)
            child = [] if listed else {}
        elif id(child) in self._owned:
            self._paths[path] = child
            return child
        else:
            child = dict(child) if isinstance(child, dict) else list(child)
        self._owned[id(child)] = child
        self._paths[path] = child
        parent[key] = child
        return child

    def _forget(self, path: KeyPath) -> None:
        """What was kept by path at or under `path` no longer is there."""
        size = len(path)
        for kept in (self._paths, self._nodes):
            for stale in [known for known in kept if known[:size] == path and known]:
                del kept[stale]

    def adopt(self, value: Any) -> Any:
        """Mark a container made for this tree as its own, so later changes need no copy."""
        self._owned[id(value)] = value
        return value

    def put(self, path: KeyPath, value: Any, origin: Origin) -> None:
        """Set the value at `path` (an index one past the end appends) and its origin."""
        key = path[-1]
        parent = self.own(path[:-1], isinstance(key, int))
        if isinstance(parent, list):
            assert isinstance(key, int)
            if key >= len(parent):
                parent.append(value)
            else:
                if id(parent[key]) in self._owned:
                    self._forget(path)
                parent[key] = value
        else:
            if id(parent.get(key)) in self._owned:
                self._forget(path)
            parent[key] = value
        self.mark(path, origin)

    def put_items(self, path: KeyPath, items: list[tuple[int, Any, Origin]]) -> None:
        """`put` each (index, value, origin) into the list at `path`, in order (an index
        one past the end appends): many changes to one list at the cost of one."""
        values = self.own(path, listed=True)
        node = self._node(path)
        for index, value, origin in items:
            if index >= len(values):
                values.append(value)
            else:
                if id(values[index]) in self._owned:
                    self._forget((*path, index))
                values[index] = value
            if isinstance(node.get(index), dict):
                self._forget((*path, index))
            node[index] = origin

    def put_keys(self, path: KeyPath, items: list[tuple[str, Any, Origin]]) -> None:
        """`put` each (key, value, origin) into the mapping at `path`: many keys of one
        mapping at the cost of one."""
        values = self.own(path)
        node = self._node(path)
        for key, value, origin in items:
            if id(values.get(key)) in self._owned or isinstance(node.get(key), dict):
                self._forget((*path, key))
            values[key] = value
            node[key] = origin

    def _node(self, path: KeyPath) -> dict[Any, Any]:
        """The trie node at `path`, made if need be."""
        found = self._nodes.get(path)
        if found is not None:
            return found
        parent = self._node(path[:-1])
        child = parent.get(path[-1])
        if not isinstance(child, dict):
            child = {} if child is None else {_HERE: child}
            parent[path[-1]] = child
        self._nodes[path] = child
        return child

    def mark(self, path: KeyPath, origin: Origin) -> None:
        """Record where the value at `path` came from (what was recorded under it goes)."""
        parent = self._node(path[:-1])
        if isinstance(parent.get(path[-1]), dict):
            self._forget(path)
        parent[path[-1]] = origin

    def origin(self, path: KeyPath) -> Origin:
        return self.origin_below((), (self._origins, self._origins[_HERE], 0), path)

    def locate(self, path: KeyPath) -> Located:
        """Where the walk to `path` in the origins trie ends, so that many origins below
        one place (the keys of a container) are found from there."""
        node: Any = self._origins
        best: Origin = node[_HERE]
        depth = 0
        for position, key in enumerate(path):
            node = node.get(key)
            if node is None:
                break
            if not isinstance(node, dict):
                return None, node, position + 1
            here = node.get(_HERE)
            if here is not None:
                best, depth = here, position + 1
        return node, best, depth

    def origin_below(self, base: KeyPath, located: Located, keys: KeyPath) -> Origin:
        """The origin of the value at `base` + `keys`, `located` being `locate(base)`."""
        node, best, depth = located
        if node is not None:
            for position, key in enumerate(keys):
                node = node.get(key)
                if node is None:
                    break
                if not isinstance(node, dict):
                    best, depth = node, len(base) + position + 1
                    break
                here = node.get(_HERE)
                if here is not None:
                    best, depth = here, len(base) + position + 1
        if best.note is not None or depth == len(base) + len(keys):
            return best
        # tuple.__new__, as in `within`: of 107,000 asks on 10,000 files most end here,
        # and the named tuple's constructor was a third of this method's time (0.28 us).
        return _new_tuple(Origin, (best.manifest, best.path + (*base, *keys)[depth:], None))

    def written_below(self, path: KeyPath, manifest: Manifest) -> Iterator[KeyPath]:
        """The topmost paths at or below `path` whose values `manifest` wrote (not those
        a plugin or a default put there because of it)."""
        node, best, depth = self.locate(path)
        if depth and best.manifest is manifest and best.note is None:
            yield path  # all of it, from a value written higher up
            return
        stack: list[tuple[KeyPath, Any]] = [(path, node)] if isinstance(node, dict) else []
        while stack:
            base, node = stack.pop()
            for key, inner in node.items():
                if key is _HERE:
                    continue
                here = inner.get(_HERE) if isinstance(inner, dict) else inner
                if here is not None and here.manifest is manifest and here.note is None:
                    yield (*base, key)
                elif isinstance(inner, dict):
                    stack.append(((*base, key), inner))

    def sources(self) -> Iterator[Origin]:
        """Every origin recorded (not those a value inherits from the one above it)."""
        stack = [self._origins]
        while stack:
            node = stack.pop()
            for key, inner in node.items():
                if key is _HERE or not isinstance(inner, dict):
                    yield inner
                else:
                    stack.append(inner)

    def reorder(self, path: KeyPath, order: list[int]) -> None:
        """Put the items of the list at `path` in `order` (old indexes, new order), their
        origins with them."""
        items = self.own(path, listed=True)
        items[:] = [items[index] for index in order]
        node = self._node(path)
        moved: dict[int, Any] = {}
        for new, old in enumerate(order):
            entry = node.get(old)
            if isinstance(entry, dict):
                entry = dict(entry)
                entry[_HERE] = entry.get(_HERE) or self.origin((*path, old))
            elif entry is None:
                entry = self.origin((*path, old))
            moved[new] = entry
        for index in order:
            node.pop(index, None)
        node.update(moved)
        self._forget(path)  # what was kept below moved
