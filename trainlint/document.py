"""Manifests as the rules see them: Kubernetes objects, and key paths → file positions.

Each object knows where its keys and items were written (`Manifest.spans`; its body is
plain dicts and lists), so a finding carries only a key path and its position costs a
short walk, never a second parse. The YAML is read by `trainlint.loader`; this module
needs no parser (a run served from the cache imports none).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import InitVar, dataclass, field
from typing import Any, ClassVar, NamedTuple, TypeGuard, TypeVar

from trainlint.files import read_bytes

KeyPath = tuple[str | int, ...]
T = TypeVar("T")


class Span(NamedTuple):
    """1-based start and end of a node in its file (end column is exclusive)."""

    line: int
    column: int
    end_line: int
    end_column: int


UNKNOWN_SPAN = Span(1, 1, 1, 1)


class Fragment(NamedTuple):
    """A document nothing in which is checked: part of an object (`metadata` or `spec`, but
    neither `kind` nor `apiVersion`), or a template (placeholders where values or lines go:
    no object until they are filled)."""

    span: Span
    template: bool = False

    def packed(self) -> list[int]:
        """As the cache and the processes keep it: the span's numbers, then 1 for a template."""
        return [*self.span, int(self.template)]

    @classmethod
    def unpacked(cls, numbers: list[int]) -> Fragment:
        return cls(Span(*numbers[:4]), bool(numbers[4]))


@dataclass(frozen=True, slots=True)
class LoadProblem:
    """Something wrong with the text itself, found before any rule runs. Each kind is a
    class of its own, reported by the one rule that says `reports=` it.

    A kind adds no field, only its `code`: a plain subclass, which inherits what the
    dataclass made (making it again for each kind costs start-up, a compile per method)."""

    message: str
    span: Span
    #: The code of the rule that reports this kind (its `@rule` checks that it matches).
    code: ClassVar[str]


class InvalidYaml(LoadProblem):
    """Text that is not YAML (or JSON, or UTF-8), or a file that cannot be read."""

    __slots__ = ()
    code = "TL001"


class DuplicateKey(LoadProblem):
    """A mapping that names a key twice."""

    __slots__ = ()
    code = "TL002"


class TooComplex(LoadProblem):
    """A document or file too large or deep to check."""

    __slots__ = ()
    code = "TL003"


class NotAnObject(LoadProblem):
    """A document that looks meant for Kubernetes but is no object it can read."""

    __slots__ = ()
    code = "TL004"


#: Numbers per entry of a document's spans: the 0-based start line and column and end
#: line and column of a key or item, as libyaml marks them, then where the entries of its
#: value start, when that value is a mapping or a list (0 otherwise).
ENTRY = 5


def locate(body: object, spans: Sequence[int], first: int, path: KeyPath) -> Span:
    """The span of the deepest node of `path` that exists under `body` (the key, for a
    mapping entry; the item, for a list index); the first key's span where none does (an
    empty path, or a first key `body` lacks): the object's own place, not the file's.

    `spans` are the entries of `body`'s document, and those of `body`'s own keys or items
    are entries `first`, `first + 1`...: one flat array per document, not an attribute per
    container, leaves every container a plain dict or list, cheap to build and to copy
    between processes.
    """
    if not spans:
        return UNKNOWN_SPAN  # not read from a file
    entry, _ = _walk(body, spans, first, path)
    if entry < 0:
        return UNKNOWN_SPAN
    line, column, end_line, end_column = spans[ENTRY * entry : ENTRY * entry + 4]
    return Span(line + 1, column + 1, end_line + 1, end_column + 1)  # stored as libyaml's


def entries_at(body: object, spans: Sequence[int], first: int, path: KeyPath) -> int:
    """Where the entries of the mapping or list at `path` (which exists) start: the
    `first` of an object nested in a document, such as an item of a `kind: List`."""
    return _walk(body, spans, first, path)[1]


def _walk(body: object, spans: Sequence[int], first: int, path: KeyPath) -> tuple[int, int]:
    """The entry of the deepest node of `path` under `body` (-1: none), and where the
    entries of its value start."""
    entry = first if isinstance(body, dict) and body else -1
    value = body
    for key in path:
        if isinstance(value, dict) and isinstance(key, str) and key in value:
            position = list(value).index(key)
        elif isinstance(value, list) and isinstance(key, int) and 0 <= key < len(value):
            position = key
        else:
            break
        entry = first + position
        first = spans[ENTRY * entry + 4]
        value = value[key]  # type: ignore[index]  # the key's type was checked above
    return entry, first


@dataclass(eq=False)
class Source:
    """The text of one input, kept for suppression comments and code frames.

    Findings served from the cache come without their text: it is read from the file the
    source names the first time it is needed (a code frame), and only then.
    """

    name: str
    _text: str | None = field(default=None, repr=False)
    #: Whether the bytes began with a byte order mark (not part of the text), so a fix
    #: writes it back.
    bom: bool = False
    #: How many lines of the file come before the text: a slice of a long file, read on
    #: its own (`trainlint.loader.load_slice`), holds only its own lines.
    lines: int = 0
    #: The codec of the bytes (`encoding_of`), in which a fix writes them back.
    encoding: str = "utf-8"

    @property
    def text(self) -> str:
        if self._text is None:
            try:
                data = read_bytes(self.name)
            except OSError:  # a FIFO, a device... is never read, nor quoted
                data = b""
            self._text = decode(data, self.name)[0]
        return self._text


@dataclass(frozen=True, slots=True, eq=False)
class Manifest:
    """One Kubernetes object: its data and where it came from.

    `body` is the object as the API server stores it: a key set to null is pruned before
    anything reads it (no field of these kinds is nullable; outside `metadata`, which is
    decoded, not pruned), so every rule sees what the controller and the webhooks see;
    only the schema checks read `written`, to say so."""

    body: dict[str, Any]
    source: Source
    document: int = 0
    #: Key path of the object inside its document (non-empty for the items of a `kind: List`).
    base: KeyPath = ()
    #: Where its document's keys and items were written, and where the body's own entries
    #: start (see `locate`); empty for an object that was not read from a file.
    spans: Sequence[int] = field(default=(), repr=False)
    first: int = 0
    #: Whether the body may hold keys set to null: the loader knows, and tells when it
    #: holds none (a walk over every document would cost a tenth of reading it).
    nulls: InitVar[bool] = True
    #: The body as written, when it set keys to null (else `body` itself): where keys are
    #: (`span`) and what the schema checks judge.
    written: dict[str, Any] = field(init=False, repr=False)
    # Read once: every rule and index look-up asks for them.
    kind: str = field(init=False)
    api_version: str = field(init=False)
    name: str = field(init=False)
    #: The namespace, `default` when unset (cluster-scoped kinds ignore it).
    namespace: str = field(init=False)
    #: What helpers work out from the body alone (`trainlint.memo.PerValue`).
    memo: dict[tuple[Hashable, ...], Any] = field(init=False, repr=False)

    def __post_init__(self, nulls: bool) -> None:
        object.__setattr__(self, "memo", {})
        object.__setattr__(self, "written", self.body)
        if nulls:  # ObjectMeta is decoded as Go structs decode: no schema prunes it
            object.__setattr__(self, "body", without_keys(self.body, _null, "metadata"))
        metadata = mapping(self.body.get("metadata"))
        object.__setattr__(self, "kind", string(self.body.get("kind")))
        object.__setattr__(self, "api_version", string(self.body.get("apiVersion")))
        object.__setattr__(self, "name", string(metadata.get("name")))
        object.__setattr__(self, "namespace", string(metadata.get("namespace")) or "default")

    def span(self, path: KeyPath) -> Span:
        return locate(self.written, self.spans, self.first, path)

    def __reduce__(self) -> tuple[type[Manifest], tuple[Any, ...]]:
        """Pickled as its constructor's arguments: a worker sends thousands, and the
        generic state of a frozen slotted dataclass is saved and set again field by field
        in Python (a fifth of the copy's time, both ways)."""
        return Manifest, (
            self.written, self.source, self.document, self.base, self.spans, self.first,
            self.written is not self.body,
        )

    def describe(self) -> str:
        return f"{self.kind} `{self.name}`" if self.name else self.kind


class StandIn(Manifest):
    """An object known by what look-ups read of it (apiVersion, kind, name, namespace, a
    TrainJob's runtime reference) and by where it is (file, document, key path in it):
    what the index holds of an object read by another process, or by an earlier run, or
    whose document was let go. A look-up that needs the whole object fetches it from
    there (`trainlint.engine.index.Index`). It keeps no more than that: an index of a
    long stream holds one per object."""

    __slots__ = ()

    @classmethod
    def made(cls, body: dict[str, Any], source: Source, document: int, base: KeyPath) -> StandIn:
        """The stand-in of the object at `document` and `base` of `source` (a text-less
        one: a stand-in must not keep its file's text alive), of which `body` tells what
        look-ups read (`stand_in_body`). Made without `Manifest`'s work on a whole body;
        its own body holds a TrainJob's runtime reference, if any, nothing else."""
        made = object.__new__(cls)
        metadata = mapping(body.get("metadata"))
        ref = mapping(body.get("spec")).get("runtimeRef")
        kept = {"spec": {"runtimeRef": ref}} if ref is not None else _NOTHING
        for slot, value in (
            ("body", kept), ("written", kept), ("source", source), ("document", document),
            ("base", base), ("spans", ()), ("first", 0), ("memo", {}),
            ("kind", sys.intern(string(body.get("kind")))),
            ("api_version", sys.intern(string(body.get("apiVersion")))),
            ("name", string(metadata.get("name"))),
            ("namespace", sys.intern(string(metadata.get("namespace")) or "default")),
        ):
            object.__setattr__(made, slot, value)
        return made

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        body = {**self.body, "apiVersion": self.api_version, "kind": self.kind,
                "metadata": {"name": self.name, "namespace": self.namespace}}
        return StandIn.made, (body, self.source, self.document, self.base)


#: The body of a stand-in that holds nothing of it (shared: never written to).
_NOTHING: dict[str, Any] = {}


def stand_in_body(manifest: Manifest) -> dict[str, Any]:
    """What look-ups read of an object: enough to answer every look-up the same way."""
    metadata = {"name": manifest.name, "namespace": manifest.namespace}
    body: dict[str, Any] = {
        "apiVersion": manifest.api_version, "kind": manifest.kind, "metadata": metadata,
    }
    ref = dig(manifest.body, "spec", "runtimeRef")
    if manifest.kind == "TrainJob" and isinstance(ref, dict):
        body["spec"] = {"runtimeRef": ref}
    return body


class Loaded(NamedTuple):
    """Everything read from one input (a named tuple, as `Span`: cheap to declare, and
    pickled as its fields)."""

    source: Source
    manifests: list[Manifest]
    problems: list[LoadProblem]
    #: The documents nothing in which is checked, which a note says.
    fragments: tuple[Fragment, ...] = ()


def without_keys(value: Any, dropped: Callable[[Any, Any], bool], verbatim: str = "") -> Any:
    """`value` without the keys of its mappings, at every depth, for which `dropped(key,
    item)` holds; `value` itself where it has none. List items stay, and so does the key
    `verbatim` of `value` itself, as written."""
    if isinstance(value, dict):
        kept = {key: item if key == verbatim else without_keys(item, dropped)
                for key, item in value.items() if key == verbatim or not dropped(key, item)}
        same = len(kept) == len(value) and all(kept[key] is item for key, item in value.items())
        return value if same else kept
    if isinstance(value, list):
        items = [without_keys(item, dropped) for item in value]
        return value if all(new is old for new, old in zip(items, value, strict=True)) else items
    return value


def _null(_: object, item: object) -> bool:
    """A key set to null, which the API server prunes before defaulting (a null list
    item is not pruned: it is the schema's to report)."""
    return item is None


# --- safe access to data of unknown shape: rules never assume a type ---


def mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def sequence(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def says_nothing(value: object) -> bool:
    """Whether a value carries nothing: null, an empty string, or a list or mapping of
    such values (`resourcesPerNode: {}`, `env: []`, as builders write a field they always
    emit): applying it changes nothing, and dropping it loses nothing."""
    if isinstance(value, dict):
        return all(says_nothing(item) for item in value.values())
    if isinstance(value, list):
        return all(says_nothing(item) for item in value)
    return value is None or value == ""


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


def dotted(path: KeyPath) -> str:
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


def is_count(value: object) -> TypeGuard[int]:
    """Whether a value is an integer as the API server reads one: `true` is no count."""
    return isinstance(value, int) and not isinstance(value, bool)


#: The most digits of a count written as text: int64's.
COUNT_DIGITS = 19


def count(value: object) -> int | None:
    """A count as written: an integer (`8`), or text of ASCII digits (`"8"`); None for
    anything else, and for text longer than int64's digits, which no count the cluster
    reads has (Python refuses to read 5,000 digits, and `isdigit` alone takes `²`)."""
    if is_count(value):
        return value
    if isinstance(value, str):
        text = value.strip()
        if text.isascii() and text.isdigit() and len(text) <= COUNT_DIGITS:
            return int(text)
    return None


def is_placeholder(value: str) -> bool:
    """Whether a string is a placeholder of the docs (`<your-namespace>`, `<num-nodes>`): a
    value the reader writes before applying, whose type and format are not yet known. The
    rest of the object is checked: only what reads the placeholder is silent."""
    inner = value[1:-1]
    return (len(value) > 2 and value[0] == "<" and value[-1] == ">" and inner[0].isalpha()
            and "<" not in inner and ">" not in inner and "\n" not in inner)


def any_string(value: Any, test: Callable[[str], object]) -> bool:
    """Whether a string of a value (its mappings' values, its lists' items) passes `test`."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            pending.extend(item)
        elif isinstance(item, str) and test(item):
            return True
    return False


def holds_placeholder(value: Any) -> bool:
    """Whether a value (what a CRD rule reads) has a docs placeholder in it."""
    return any_string(value, lambda text: text[:1] == "<" and is_placeholder(text))


# --- loading ---


#: The UTF-8 byte order mark some editors write first; it is no part of the text.
BOM = b"\xef\xbb\xbf"


#: UTF-16's byte order marks, by the codec of the bytes after them: kubectl reads a file
#: that begins with one as UTF-16 (as some Windows tools write it), any other as UTF-8.
UTF16_BOMS = {b"\xff\xfe": "utf-16-le", b"\xfe\xff": "utf-16-be"}


def encoding_of(data: bytes) -> str:
    """The codec of a file's bytes, told by its byte order mark."""
    return UTF16_BOMS.get(data[:2], "utf-8")


def character_span(text: str, at: int) -> Span:
    """The span of the character at offset `at` of `text`."""
    line = text.count("\n", 0, at) + 1
    column = at - text.rfind("\n", 0, at)
    return Span(line, column, line, column + 1)


def _utf16(data: bytes, encoding: str) -> tuple[str, list[LoadProblem]]:
    """The text of the bytes after UTF-16's byte order mark; bytes that are no UTF-16 (an
    odd length, a surrogate alone) reported where they are and replaced."""
    try:
        return data.decode(encoding), []
    except UnicodeDecodeError as error:
        text = data.decode(encoding, errors="replace")
        at = len(data[:error.start].decode(encoding, errors="replace"))
        return text, [InvalidYaml(
            "invalid UTF-16 bytes: the file begins with UTF-16's byte order mark, so all of "
            "it must be UTF-16", character_span(text, at))]


def decode(data: bytes, name: str) -> tuple[str, list[LoadProblem]]:
    """Bytes → text; invalid UTF-8 (or UTF-16) is reported at its position and replaced,
    not fatal."""
    encoding = encoding_of(data)
    if encoding != "utf-8":
        return _utf16(data[2:], encoding)
    try:
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError as error:
        skipped = len(BOM) if data.startswith(BOM) else 0  # the codec counts after it
        start = skipped + error.start
        before = data[skipped:start]
        line = before.count(b"\n") + 1
        column = len(before) - (before.rfind(b"\n") + 1) + 1
        message = f"invalid UTF-8 byte 0x{data[start]:02x}: the file must be UTF-8"
        span = Span(line, column, line, column + 1)
        return data.decode("utf-8-sig", errors="replace"), [
            InvalidYaml(message, span)
        ]
