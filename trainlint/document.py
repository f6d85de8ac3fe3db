"""Manifests as the rules see them: Kubernetes objects, and key paths → file positions.

Each mapping and list of an object knows where its keys and items were written
(`LocatedDict`, `LocatedList`: plain dicts and lists to every rule), so a finding carries
only a key path and its position costs a short walk, never a second parse. The YAML is
read by `trainlint.loader`; this module needs no parser (a run served from the cache
imports none).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path as FilePath
from typing import Any, NamedTuple

Path = tuple[str | int, ...]


class Span(NamedTuple):
    """1-based start and end of a node in its file (end column is exclusive)."""

    line: int
    column: int
    end_line: int
    end_column: int


UNKNOWN_SPAN = Span(1, 1, 1, 1)


@dataclass(frozen=True, slots=True)
class LoadProblem:
    """Something wrong with the text itself, found before any rule runs."""

    code: str
    message: str
    span: Span


class LocatedDict(dict[str, Any]):
    """A mapping read from a file; the spans of its keys, in key order, are the entries
    `first`, `first + 1`... of `spans` (four numbers an entry: start and end, 0-based, as
    libyaml marks them).

    All the containers of a document share one `spans` array: an array per container
    would be a third of the memory a document takes. The loader sets both attributes
    (there is no `__init__` to call: it builds hundreds of thousands of these).
    """

    __slots__ = ("first", "spans")
    first: int
    spans: array[int]


class LocatedList(list[Any]):
    """A list read from a file; the spans of its items are entries `first`... of `spans`."""

    __slots__ = ("first", "spans")
    first: int
    spans: array[int]


def locate(value: object, path: Path) -> Span:
    """The span of the deepest node of `path` that exists under `value` (the key, for a
    mapping entry; the item, for a list index); the first key's span for an empty path."""
    found: tuple[LocatedDict | LocatedList, int] | None = None
    if not path and isinstance(value, LocatedDict) and value:
        found = value, 0
    for key in path:
        if isinstance(value, LocatedDict) and isinstance(key, str) and key in value:
            found = value, list(value).index(key)
        elif isinstance(value, LocatedList) and isinstance(key, int) and 0 <= key < len(value):
            found = value, key
        else:
            break
        value = value[key]  # type: ignore[index]
    if found is None:
        return UNKNOWN_SPAN
    container, position = found  # only the deepest span is unpacked
    entry = 4 * (container.first + position)
    line, column, end_line, end_column = container.spans[entry : entry + 4]
    return Span(line + 1, column + 1, end_line + 1, end_column + 1)  # stored as libyaml's


@dataclass(eq=False)
class Source:
    """The text of one input, kept for suppression comments and code frames.

    Findings served from the cache come without their text: it is read from the file the
    source names the first time it is needed (a code frame), and only then.
    """

    name: str
    _text: str | None = field(default=None, repr=False)

    @property
    def text(self) -> str:
        if self._text is None:
            try:
                data = FilePath(self.name).read_bytes()
            except OSError:
                data = b""
            self._text = decode(data, self.name)[0]
        return self._text


@dataclass(frozen=True, slots=True, eq=False)
class Manifest:
    """One Kubernetes object: its data and where it came from."""

    body: dict[str, Any]
    source: Source
    document: int = 0
    #: Path of the object inside its document (non-empty for the items of a `kind: List`).
    base: Path = ()
    # Read once: every rule and index look-up asks for them.
    kind: str = field(init=False)
    api_version: str = field(init=False)
    name: str = field(init=False)
    #: The namespace, `default` when unset (cluster-scoped kinds ignore it).
    namespace: str = field(init=False)

    def __post_init__(self) -> None:
        metadata = mapping(self.body.get("metadata"))
        object.__setattr__(self, "kind", string(self.body.get("kind")))
        object.__setattr__(self, "api_version", string(self.body.get("apiVersion")))
        object.__setattr__(self, "name", string(metadata.get("name")))
        object.__setattr__(self, "namespace", string(metadata.get("namespace")) or "default")

    def span(self, path: Path) -> Span:
        return locate(self.body, path)

    def describe(self) -> str:
        return f"{self.kind} `{self.name}`" if self.name else self.kind


@dataclass(frozen=True, slots=True)
class Loaded:
    """Everything read from one input."""

    source: Source
    manifests: list[Manifest]
    problems: list[LoadProblem]


# --- safe access to data of unknown shape: rules never assume a type ---


def mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def sequence(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def mappings(value: object) -> Iterator[tuple[int, dict[str, Any]]]:
    """The (index, item) pairs of a list that are mappings."""
    for index, item in enumerate(sequence(value)):
        if isinstance(item, dict):
            yield index, item


def dig(value: object, *path: str | int) -> Any:
    """The value at `path` (keys and list indexes), or None where the shape differs."""
    for key in path:
        if isinstance(key, str):  # most steps: rules dig through mappings
            value = value.get(key) if isinstance(value, dict) else None
        elif isinstance(value, list) and 0 <= key < len(value):
            value = value[key]
        else:
            value = None
    return value


def dotted(path: Path) -> str:
    """`("spec", "replicatedJobs", 0, "name")` → `spec.replicatedJobs[0].name`; keys that
    hold dots or slashes (labels) are bracketed, as Kubernetes prints them:
    `metadata.labels[trainer.kubeflow.org/trainjob-ancestor-step]`."""
    return "".join(
        f"[{key}]" if isinstance(key, int) or "." in key or "/" in key else f".{key}"
        for key in path
    ).lstrip(".")


def string(value: object) -> str:
    """The value if it is a string, else the empty string."""
    return value if isinstance(value, str) else ""


# --- loading ---


def decode(data: bytes, name: str) -> tuple[str, list[LoadProblem]]:
    """Bytes → text; invalid UTF-8 is reported at its position and replaced, not fatal."""
    try:
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError as error:
        before = data[: error.start]
        line = before.count(b"\n") + 1
        column = len(before) - (before.rfind(b"\n") + 1) + 1
        message = f"invalid UTF-8 byte 0x{data[error.start]:02x}: the file must be UTF-8"
        span = Span(line, column, line, column + 1)
        return data.decode("utf-8-sig", errors="replace"), [
            LoadProblem("TL001", message, span)
        ]
