"""Memos: what checks work out once and keep, each named by a key whose type is how long.

- `PerValue`: kept as long as the value it is worked out from (a Manifest, a Render),
  for what is a function of that value alone (a Manifest's schema issues): the value
  holds the entries (its `memo`), and never changes (what is kept is shared: read it,
  never change it).
- `PerObject`: kept while one object is checked, shared by all its rules (its render,
  its CRD rules' violations), and dropped before the next object: it can never hide
  another input's look-ups, and a long file does not hold it all.
- `PerRun`: kept for the whole run, worked out once however many objects ask (a runtime
  that many TrainJobs use is rendered once). Its build starts from an empty per-object
  memo, and what it looks up is recorded again for every object that asks, so a cached
  finding still names everything it was worked out from.

A check asks for a `PerObject` or `PerRun` memo through its context (`Lookups.remember`),
since those depend on the run; a `PerValue` memo asks its value (`PerValue.get`). The key
says the lifetime, the value and `what` say of what; nothing else keeps what checks derive.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from functools import wraps
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

T = TypeVar("T")
V = TypeVar("V", bound="Holder")


class Holder(Protocol):
    """A value that keeps what is worked out from it."""

    @property
    def memo(self) -> dict[tuple[Hashable, ...], Any]: ...


class PerValue(NamedTuple, Generic[T]):
    """A memo kept as long as the value it is worked out from."""

    name: str

    def get(self, value: Holder, build: Callable[[], T], *what: Hashable) -> T:
        key = (self.name, what)
        memo = value.memo
        found: T = memo.get(key, _UNSET)
        if found is _UNSET:  # one look-up for an answer kept: most asks find one
            found = memo[key] = build()
        return found


#: No entry yet (None is an answer a memo may keep).
_UNSET: Any = object()


def per_value(helper: Callable[[V], T]) -> Callable[[V], T]:
    """`helper` of one argument, worked out once per value (a `PerValue` memo named after
    it): the rules of a runtime, and those of every TrainJob that uses it, ask for the same
    parts of it many times."""
    memo: PerValue[T] = PerValue(helper.__qualname__)

    @wraps(helper)
    def once(value: V) -> T:
        return memo.get(value, lambda: helper(value))

    return once


class PerObject(NamedTuple, Generic[T]):
    """A memo kept while one object is checked."""

    name: str


class PerRun(NamedTuple, Generic[T]):
    """A memo kept for the run (see the module)."""

    name: str
    #: Kept only while it is one of the last few such results asked for (a large value
    #: the objects checked close together ask for, such as a render).
    recent: bool = False
