"""Lists whose items a CRD keys, each key taken once: `x-kubernetes-list-type: map` (by its
`x-kubernetes-list-map-keys`, a key's default standing in where an item leaves it out) and
`set` (by the whole item). The API server refuses an object that repeats one (`Duplicate
value`), before any webhook, whatever Kubernetes itself would do with a Pod of it: two
variables of one name in `spec.trainer.env`, two containers of one name in a runtime's
pod template, two ports of one number and protocol.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, NamedTuple

from trainlint.document import KeyPath, holds_placeholder
from trainlint.model.crd_rules import Node, root_of
from trainlint.release import TrainerVersion


class Repeated(NamedTuple):
    """An item of a keyed list whose key an earlier item has."""

    path: KeyPath
    #: The index of the earlier item.
    first: int
    #: The key as the API server shows it (`map[string]interface {}{"name":"A"}`, `"a"`).
    shown: str


def repeated(kind: str, release: TrainerVersion, body: dict[str, Any]) -> list[Repeated]:
    """Every item of `body` that repeats the key of an earlier item of its list."""
    found = root_of(kind, release)
    out: list[Repeated] = []
    if found is not None:
        _walk(found[0], body, (), out)
    return out


def _walk(node: Node, value: Any, path: KeyPath, out: list[Repeated]) -> None:
    if isinstance(value, dict):
        fields, others = _keyed_below(node)
        for key, child in fields.items():
            item = value.get(key)
            if item is not None:
                _walk(child, item, (*path, key), out)
        if others is not None:
            known = node.properties or {}
            for key, item in value.items():
                if key not in known:
                    _walk(others, item, (*path, key), out)
    elif isinstance(value, list) and node.items is not None:
        if node.list_type in ("map", "set") and len(value) > 1:
            out.extend(_duplicates(node, value, path))
        if _keyed(node.items):
            for index, item in enumerate(value):
                _walk(node.items, item, (*path, index), out)


def _duplicates(node: Node, items: list[Any], path: KeyPath) -> Iterator[Repeated]:
    seen: dict[tuple[Any, ...], int] = {}
    for index, item in enumerate(items):
        values = _values(node, item)
        if values is None:
            continue
        # Each value with its type (`1` and `true` are two keys); what YAML gives is
        # hashable but for a mapping or a list, compared as its JSON.
        key = tuple((type(value), value) if not isinstance(value, dict | list)
                    else (dict, json.dumps(value, sort_keys=True)) for value in values.values())
        first = seen.setdefault(key, index)
        if first != index and not holds_placeholder(values):
            yield Repeated((*path, index), first, _shown(node, values))


def _values(node: Node, item: Any) -> dict[str, Any] | None:
    """The values of the item's key (for a set, the item itself); None for an item whose
    key is not all written (or defaulted)."""
    if node.list_type == "set":
        return {"": item}
    if not isinstance(item, dict) or node.items is None:
        return None
    values = {}
    for name in node.map_keys:
        if item.get(name) is not None:
            values[name] = item[name]
        else:
            child = node.items.child(name)
            if child is None or not child.default:
                return None
            values[name] = child.default[0]
    return values


def _shown(node: Node, values: dict[str, Any]) -> str:
    """The key as the API server's message shows it."""
    if node.list_type == "set":
        return _go(values[""])
    shown = ", ".join(f"{json.dumps(name)}:{_go(value)}" for name, value in sorted(values.items()))
    return f"map[string]interface {{}}{{{shown}}}"


def _go(value: Any) -> str:
    """A value as Go's `%#v` prints it in the API server's message."""
    return json.dumps(value) if isinstance(value, str) else str(value).lower() if isinstance(
        value, bool) else str(value)


#: Per schema node (by id: the nodes live as long as the run), the fields and the values of
#: other keys at or below which a keyed list is: the walk goes only there. Most of an object
#: holds none, and a run on the benchmark's 1,000 files spends 2 % of its time here.
_KEYED: dict[int, tuple[dict[str, Node], Node | None]] = {}


def _keyed_below(node: Node) -> tuple[dict[str, Node], Node | None]:
    """The children of `node` a keyed list is at or below: its fields, and the schema of
    its other keys (a map's values) if there is one there."""
    found = _KEYED.get(id(node))
    if found is None:
        fields = {key: child for key, child in (node.properties or {}).items() if _keyed(child)}
        others = node.additional if node.additional is not None and _keyed(
            node.additional) else None
        found = _KEYED[id(node)] = (fields, others)
    return found


def _keyed(node: Node) -> bool:
    """Whether a keyed list is at or below `node`."""
    if node.list_type in ("map", "set"):
        return True
    if node.items is not None:
        return _keyed(node.items)
    fields, others = _keyed_below(node)
    return bool(fields) or others is not None
