"""The CRDs' own validation rules (CEL `x-kubernetes-validations`), applied as the API server
applies them.

Each release's rules come from its CRDs (`crds/<release>.json`, compiled into `COMPILED` by
`trainlint.model.crd`). Kubernetes semantics kept here:

- a rule runs at the schema node that declares it, and only when the value is there;
- before rules run, nulls and unknown fields are pruned and defaults are applied, in the
  old object as in the new one;
- a rule that reads `oldSelf` (a transition rule) runs only on an update, and only where
  both the old and the new value exist: by key in objects and maps, by map keys in lists of
  `x-kubernetes-list-type: map` (items of other lists have no old value);
- on an update, a rule without `oldSelf` whose value did not change is ratcheted (its
  failure ignored), as Kubernetes does from 1.30;
- `status` of a kind with a status subresource is never validated from the object: the API
  server drops it on create and keeps the stored one on update;
- at the root, `self.metadata` holds only `name` and `generateName`.

A rule whose verdict is not known runs on the plain values (`trainlint.model.plain`); only
what those closures do not cover is left to `trainlint.model.cel`, which imports cel-python
(40–60 ms, half the start-up of `trainlint check one.yaml`). Verdicts
are remembered by what decides them (`verdict_key`): many objects of a run share them (a
defaulted `managedBy`, a runtime's policy), and the cache (`trainlint.cache`) keeps them
between runs, so a pre-commit run on an edited file evaluates only the values that changed.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any, NamedTuple

from trainlint.digest import blake2b
from trainlint.document import KeyPath, holds_placeholder
from trainlint.model.crd_rules import ITEMS, CrdRule, Node, Reads, compiled, programs, root_of
from trainlint.release import TrainerVersion

#: The Kubernetes release from which unchanged values are ratcheted (KEP-4008, on by default).
RATCHETING_SINCE = (1, 30)
#: What an object keeps whatever its schema says.
RESOURCE_KEYS = frozenset({"apiVersion", "kind", "metadata"})
#: Only these fields of the root's `metadata` are visible to rules.
ROOT_METADATA = ("name", "generateName")
#: The rule every immutable field carries: true whenever the value did not change.
IMMUTABLE = "self == oldSelf"


class Violation(NamedTuple):
    """A rule the object breaks, where the API server reports it."""

    path: KeyPath
    rule: CrdRule
    #: What the API server says: the rule's message, or why evaluating it failed.
    detail: str


def violations(
    kind: str, release: TrainerVersion, body: dict[str, Any], old: dict[str, Any] | None,
    kubernetes: tuple[int, int],
) -> list[Violation]:
    """Every CRD rule of `kind` in `release` that `body` breaks (`old`: the stored object,
    for an update)."""
    entry = root_of(kind, release)
    if entry is None:
        return []
    root, status_subresource = entry
    if status_subresource:
        body = {key: value for key, value in body.items() if key != "status"}
        old = None if old is None else {k: v for k, v in old.items() if k != "status"}
    ratchet = kubernetes >= RATCHETING_SINCE
    declaring: list[Declaring] = []
    _declaring(root, body, _ABSENT if old is None else old, (), declaring)
    found = []
    for path, node, new_value, old_value in declaring:
        resource = path == () or node.embedded
        unchanged = old_value is not _ABSENT and _identical(
            normalize(node, new_value, resource), normalize(node, old_value, resource))
        for position, rule in enumerate(node.rules):
            if rule.transition and old_value is _ABSENT:
                continue
            if unchanged and ((not rule.transition and ratchet) or rule.expression == IMMUTABLE):
                continue  # ratcheted, or an unchanged immutable value
            seen = _prepared(rule, node, new_value, resource)
            before = _prepared(rule, node, old_value, resource) if rule.transition else None
            key = verdict_key((kind, release, _schema_path(path), position), seen, before)
            detail = _verdict(key, rule, node, seen, before)
            if detail is not None and not holds_placeholder(seen):  # `<your-name>`: unknown
                found.append(Violation(path, rule, detail))
    return found


_ABSENT: Any = object()

#: Verdicts by `verdict_key` (None: the rule holds, or its verdict is unknown), from this
#: process and from the cache; cleared when full.
VERDICTS: dict[str, str | None] = {}
#: About 2 MB, and what the cache saves at most: 10,000 files of the benchmark corpus
#: have 2,500 verdicts (a webhook's values repeat less: its table is cleared more often).
MAXVERDICTS = 16384
#: The keys of the verdicts this process evaluated: what the cache has to add.
LEARNED: set[str] = set()


def _verdict(key: str | None, rule: CrdRule, node: Node, seen: Any, before: Any) -> str | None:
    if key is not None and key in VERDICTS:
        return VERDICTS[key]
    from trainlint.model import plain

    try:
        detail = plain.failure(rule, node, seen, before)
    except plain.Unsupported:
        from trainlint.model import cel

        detail = cel.failure(rule, node, seen, before)
    if key is not None:
        if len(VERDICTS) >= MAXVERDICTS:
            VERDICTS.clear()
            LEARNED.clear()
        VERDICTS[key] = detail
        LEARNED.add(key)
    return detail


def verdict_key(rule: tuple[Any, ...], seen: Any, before: Any) -> str | None:
    """What decides a verdict, digested: the rule (kind, release, the schema path of its
    node, its place there: the compiled rules are part of the build, which names the
    cache), and the values the rule sees. None for a value that is not plain data."""
    try:
        image = repr((rule, _frozen(seen), _frozen(before)))
    except TypeError:  # keys that do not sort, values that are not plain data
        return None
    return blake2b(image.encode(), digest_size=16).hexdigest()


def _schema_path(path: KeyPath) -> tuple[str | None, ...]:
    """The schema node's place: the path with list indexes left out (all items share one
    node; a map's keys, all one node too, stay, which only shares less)."""
    return tuple(None if isinstance(key, int) else key for key in path)


def _frozen(value: Any) -> Any:
    """An image of plain data whose `repr` tells `1` from `1.0` and `true`, the same in
    every process (TypeError for anything else: its `repr` may not say what it holds)."""
    if isinstance(value, dict):
        return ("{", *sorted((key, _frozen(item)) for key, item in value.items()))
    if isinstance(value, list):
        return ("[", *map(_frozen, value))
    if type(value) not in _SCALARS:
        raise TypeError(type(value).__name__)
    return type(value).__name__, value


_SCALARS = frozenset({str, int, float, bool, type(None)})


def prepare() -> None:
    """Load the compiled rules and schema trees of every release (a run loads those it
    checks), every program made into its plain closures, and cel-python with the parsed
    programs (for what the closures do not cover), now: a server's first request must not
    pay for them (about 50 ms, longer than its budget for one decision)."""
    from trainlint.model import cel, node, plain

    compiled()
    node.compiled()
    for index in range(len(programs())):
        plain.runner(index)
        cel.program(index)


#: A node with rules whose value is there: (path, node, value, old value or _ABSENT).
Declaring = tuple[KeyPath, Node, Any, Any]


def _declaring(node: Node, new: Any, old: Any, path: KeyPath, found: list[Declaring]) -> None:
    """Add to `found` every node with rules whose value is there (as written: each rule
    normalizes what it reads). Into one list: as a generator, each node passed up through
    every generator above it."""
    if new is None:
        return
    if node.rules:
        found.append((path, node, new, old))
    if isinstance(new, dict):
        for key, child, value in _children(node, new):
            previous = _ABSENT
            if isinstance(old, dict):
                previous = next((item for name, _, item in _children(node, old) if name == key),
                                _ABSENT)
            _declaring(child, value, previous, (*path, key), found)
    elif isinstance(new, list) and node.items is not None and node.items.ruled:
        for index, item in enumerate(new):
            _declaring(node.items, item, _correlated(node, item, old), (*path, index), found)


def _children(node: Node, value: dict[str, Any]) -> Iterator[tuple[str, Node, Any]]:
    """The (key, schema node, value) of the fields under which a rule is declared, with
    the defaults the API server applies."""
    ruled, other = node.ruled_properties, node.ruled_additional
    for key, item in value.items():
        child = ruled.get(key, other)
        if child is not None:
            yield key, child, item
    for key, child in node.ruled_defaults:
        if value.get(key) is None:
            yield key, child, copy.deepcopy(child.default[0])


def _prepared(rule: CrdRule, node: Node, value: Any, resource: bool) -> Any:
    """What the rule sees of the value: what it reads, normalized; at the root,
    `metadata` holds only `name` and `generateName`."""
    if value is _ABSENT:
        return None
    if resource and isinstance(value, dict) and isinstance(value.get("metadata"), dict):
        metadata = value["metadata"]
        value = {**value, "metadata": {key: metadata[key] for key in ROOT_METADATA
                                       if key in metadata}}
    return normalize(node, project(value, rule.reads), resource)


def project(value: Any, reads: Reads | None) -> Any:
    """The parts of `value` that `reads` names (all of it for None)."""
    if reads is None:
        return value
    if isinstance(value, dict):
        kept = {key: project(value[key], inner) for key, inner in reads.items()
                if key != ITEMS and key in value}
        if ITEMS in reads:  # every value of a map
            kept.update({key: project(item, reads[ITEMS]) for key, item in value.items()
                         if key not in kept})
        return kept
    if isinstance(value, list) and ITEMS in reads:
        return [project(item, reads[ITEMS]) for item in value]
    return value


def _correlated(node: Node, item: Any, old: Any) -> Any:
    """The old item a list item is compared with: the one with the same map keys, in a list
    of `x-kubernetes-list-type: map`; none in any other list."""
    if node.list_type != "map" or not isinstance(old, list) or not isinstance(item, dict):
        return _ABSENT
    key = [item.get(name) for name in node.map_keys]
    return next((candidate for candidate in old if isinstance(candidate, dict)
                 and [candidate.get(name) for name in node.map_keys] == key), _ABSENT)


def normalize(node: Node, value: Any, resource: bool = False) -> Any:
    """The value as the API server validates it: nulls and unknown fields pruned, defaults
    applied (on a copy; list items keep their positions). The `apiVersion`, `kind` and
    `metadata` of an object (`resource`: the root, or an embedded resource) are kept as
    they are: object metadata is not the schema's to prune."""
    if isinstance(value, dict):
        if node.preserve_unknown and node.properties is None and node.additional is None:
            return value
        result = {}
        for key, item in value.items():
            child = node.child(key)
            if resource and key in RESOURCE_KEYS:
                result[key] = item
            elif child is not None and (item is not None or child.nullable):
                result[key] = normalize(child, item, child.embedded)
            elif child is None and node.preserve_unknown:
                result[key] = item
        for key, child in (node.properties or {}).items():
            if key not in result and child.default:
                result[key] = normalize(child, copy.deepcopy(child.default[0]), child.embedded)
        return result
    if isinstance(value, list) and node.items is not None:
        return [normalize(node.items, item, node.items.embedded) for item in value]
    return value


def _identical(first: Any, second: Any) -> bool:
    """The same data, types included (`1` is not `true`): then any comparison of the two
    finds them equal."""
    if type(first) is not type(second):
        return False
    if isinstance(first, dict):
        return first.keys() == second.keys() and all(
            _identical(value, second[key]) for key, value in first.items())
    if isinstance(first, list):
        return len(first) == len(second) and all(map(_identical, first, second))
    return bool(first == second)
