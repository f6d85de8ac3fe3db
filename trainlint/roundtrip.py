"""Edits on the round-trip tree (ruamel.yaml) that rule fixes are made of.

A fix is built by its check, which knows the case, and edits the object's mapping in
place when `trainlint check --fix` runs. ruamel.yaml is imported here only inside the
functions, so declaring fixes costs nothing to a run that does not fix.

Every edit looks its nodes up again: when an earlier fix of the same pass changed the
shape it was made for, it raises `Stale`, and the next pass (after a fresh check) retries.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from trainlint.document import KeyPath


class Stale(LookupError):
    """The tree no longer has the shape the fix was made for."""


def at(node: Any, path: KeyPath) -> Any:
    """The node at `path` (keys and list indexes), or Stale."""
    for key in path:
        if isinstance(key, int):
            if not isinstance(node, list) or not 0 <= key < len(node):
                raise Stale(path)
        elif not isinstance(node, dict) or key not in node:
            raise Stale(path)
        node = node[key]
    return node


def new_map(items: Iterable[tuple[str, Any]] = ()) -> Any:
    """A block mapping for the round-trip tree."""
    from ruamel.yaml.comments import CommentedMap

    return CommentedMap(items)


def new_seq(items: Iterable[Any] = ()) -> Any:
    """A block sequence for the round-trip tree."""
    from ruamel.yaml.comments import CommentedSeq

    return CommentedSeq(items)


def nested(path: tuple[str, ...], value: Any) -> Any:
    """A block mapping holding `value` at key path `path`: `nested(("a", "b"), 1)` is
    `{a: {b: 1}}`."""
    for key in reversed(path):
        value = new_map([(key, value)])
    return value


def gather(parent: Any, keys: Iterable[str], deeper: int) -> Any:
    """A new block mapping of `keys` taken out of `parent` in their order, with their
    comments, to be placed `deeper` columns to the right of where they were."""
    found = new_map()
    for key in keys:
        value, comment = take(parent, key)
        place(found, key, value, comment, shift=0)
    _shift_comments(found, deeper)
    return found


def _shift_comments(node: Any, columns: int) -> None:
    """Move the comments inside `node` by `columns`, as the node itself moved: comment
    lines stay aligned with the keys and items they stand above."""
    seen: set[int] = set()
    stack = [node]
    while stack:
        value = stack.pop()
        comments = getattr(value, "ca", None)
        if comments is not None:
            for token in _tokens([comments.comment, *comments.items.values()]):
                if id(token) not in seen:  # ruamel keeps some tokens in two places
                    seen.add(id(token))
                    _shift(token, columns)
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)


def _tokens(slots: Any) -> Iterable[Any]:
    """The comment tokens of ruamel's nested comment slots (lists, tokens and Nones)."""
    if isinstance(slots, list):
        for slot in slots:
            yield from _tokens(slot)
    elif slots is not None:
        yield slots


def put(parent: Any, key: str, value: Any, *, first: bool = False) -> None:
    """Set `key`: in its place (keeping its comments) when present, else at the end (or,
    with `first`, before the other keys)."""
    if not isinstance(parent, dict):
        raise Stale((key,))
    tree: Any = parent  # a CommentedMap, which can insert
    if key in tree or not first:
        tree[key] = value
    else:
        tree.insert(0, key, value)


def ensure(parent: Any, path: KeyPath, *, first: bool = False) -> Any:
    """The mapping at `path` under `parent`, creating empty block mappings for missing or
    null keys (list indexes must exist)."""
    node = parent
    for key in path:
        if isinstance(key, int):
            node = at(node, (key,))
            continue
        if not isinstance(node, dict):
            raise Stale(path)
        if node.get(key) is None:
            put(node, key, new_map(), first=first)
        node = node[key]
    if not isinstance(node, dict):
        raise Stale(path)
    return node


def take(parent: Any, key: str) -> tuple[Any, Any]:
    """Remove `key` and return its value with the comments attached to it, to move both."""
    if not isinstance(parent, dict) or key not in parent:
        raise Stale((key,))
    comment = parent.ca.items.pop(key, None) if hasattr(parent, "ca") else None
    return parent.pop(key), comment


def prune(root: Any, path: KeyPath) -> Any:
    """Remove the mapping at `path`, and then its parents, while they are empty: what a
    moved key leaves behind. The comments inside the innermost one are returned, for the
    caller to carry to where the key went; a key's own comment stops the pruning."""
    carried = None
    while path:
        parent, key = at(root, path[:-1]), path[-1]
        node = parent[key]
        own = getattr(parent, "ca", _NONE).items.get(key)
        # Comment lines before a mapping's first key are kept in slot 3 of its key.
        if not isinstance(node, dict) or node or (own and any(own[:3])):
            break
        comments = getattr(node, "ca", None)
        if comments is not None and comments.items:
            break
        if comments is not None and comments.comment:
            if carried is not None:
                break
            carried = comments.comment
        parent.ca.items.pop(key, None)
        del parent[key]
        path = path[:-1]
    return carried


def carry(mapping: Any, comment: Any) -> None:
    """Give `mapping` the comment lines `prune` returned, before its own."""
    if comment is None:
        return
    own = mapping.ca.comment
    if own is None:
        mapping.ca.comment = comment
        return
    for index, tokens in enumerate(comment):
        if tokens and index < len(own):
            own[index] = tokens if own[index] is None else [*tokens, *own[index]]


class _NoComments:
    items: dict[Any, Any] = {}  # noqa: RUF012 - read-only stand-in for a plain dict's `ca`


_NONE = _NoComments()


def place(
    parent: Any, key: str, value: Any, comment: Any, *, index: int | None = None,
    shift: int | None = None,
) -> None:
    """Insert `key` (at `index`, else at the end) with comments taken from elsewhere; an
    end-of-line comment follows its new line, or with `shift` (how much longer the line
    became) keeps its distance from it."""
    if index is None or index >= len(parent):
        parent[key] = value
    else:
        parent.insert(index, key, value)
    if comment is not None and hasattr(parent, "ca"):
        parent.ca.items[key] = comment
        _unpin(comment, shift)


def _unpin(comment: Any, shift: int | None = None) -> None:
    """Let a moved end-of-line comment follow its line, not the column it had before (or
    the column moved by `shift`)."""
    token = comment[2] if len(comment) > 2 else None
    if token is not None:
        _shift(token, shift)


def _shift(token: Any, columns: int | None) -> None:
    """Move a comment token by `columns` (None: to column 0, right after its line)."""
    import copy

    mark = getattr(token, "start_mark", None)
    if mark is not None:
        mark = copy.copy(mark)
        mark.column = 0 if columns is None else max(0, mark.column + columns)
        token.start_mark = mark


def keep_comment(parent: Any, key: str, comment: Any) -> None:
    """Give `key` the comments of a key merged into it, after any of its own."""
    if comment is None or not hasattr(parent, "ca"):
        return
    own = parent.ca.items.get(key)
    if own is None:
        parent.ca.items[key] = comment
        _unpin(comment)
        return
    for index, token in enumerate(comment):
        if token is None:
            continue
        if index >= len(own) or own[index] is None:
            own.extend([None] * (index + 1 - len(own)))
            own[index] = token
        elif not isinstance(token, list):
            own[index].value = own[index].value.rstrip("\n") + " " + token.value


def overwrite(target: Any, source: Any) -> None:
    """Make mapping `target` hold what `source` holds, keeping `target`'s comments on the
    keys both have."""
    for key in [key for key in target if key not in source]:
        del target[key]
    for key, value in source.items():
        target[key] = value


def respell(root: Any, path: KeyPath, written: Any, value: str) -> None:
    """Replace the value `written` at `path` where it stands; the comment that ends its
    line keeps its distance from it (held by the key of the innermost block collection,
    outside any flow collections around the value)."""
    parent, key = at(root, path[:-1]), path[-1]
    if not isinstance(parent, dict) or parent.get(key) != written:
        raise Stale(path)
    parent[key] = value
    for depth in range(len(path) - 1, -1, -1):
        holder = at(root, path[:depth])
        comment = holder.ca.items.get(path[depth]) if hasattr(holder, "ca") else None
        if comment is not None:
            _unpin(comment, len(value) - len(str(written)))
            return
        if not (hasattr(holder, "fa") and holder.fa.flow_style()):
            return


def rename(parent: Any, old: str, new: str) -> None:
    """Rename a key where it stands, keeping its value and comments."""
    if not isinstance(parent, dict) or old not in parent or new in parent:
        raise Stale((old,))
    index = list(parent).index(old)
    value, comment = take(parent, old)
    place(parent, new, value, comment, index=index, shift=len(new) - len(old))
