"""Reading manifests: YAML/JSON text → Kubernetes objects, and key paths → file positions.

Checking runs on libyaml (PyYAML's C parser): documents are composed in C and walked
into data once. Each mapping and list of that data knows where its keys and items were
written (`LocatedDict`, `LocatedList`: plain dicts and lists to every rule), so a finding
carries only a key path and its position costs a short walk, never a second parse.
"""

from __future__ import annotations

import operator
import re
import sys
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path as FilePath
from typing import Any, ClassVar, NamedTuple

import yaml

Path = tuple[str | int, ...]

#: Deepest nesting a Kubernetes object plausibly has; deeper documents are refused.
MAX_DEPTH = 200
#: Most nodes one document may expand to (aliases included): bounds "billion laughs".
MAX_NODES = 250_000
#: libyaml's composer recurses in C and overflows the stack around 20,000 levels.
#: Above this many nesting indicators a document is first measured with the event parser.
_COMPOSER_SAFE_BOUND = 5_000
#: Most plain scalars whose tags are remembered (see `_Loader.resolve`).
_TAGS_KEPT = 100_000

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_MERGE = "tag:yaml.org,2002:merge"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_DOCUMENT_START = re.compile(r"^---", re.MULTILINE)


class _Loader(yaml.CSafeLoader):
    """libyaml's composer with the per-node callbacks it makes into Python cut to the bone.

    The stock resolver also serves path resolvers, which nothing here registers; without
    them composing is an eighth faster, and tags are the same: YAML 1.1's implicit types.
    """

    _implicit = yaml.CSafeLoader.yaml_implicit_resolvers
    #: The tag of each plain scalar met so far: keys and values repeat across documents.
    _tags: ClassVar[dict[str, str]] = {}

    # The composer calls these around every node, for path resolvers, which nothing here
    # registers. C callables that do nothing (and, as builtins, take no `self`) cost a
    # fraction of a Python method: `is_(node, index)` and `tuple()` (the empty singleton).
    descend_resolver = operator.is_  # type: ignore[assignment]  # a callable all the same
    ascend_resolver = tuple  # type: ignore[assignment]

    def resolve(self, kind: type[yaml.Node], value: str | None, implicit: Any) -> str:
        if kind is yaml.ScalarNode:
            if not implicit[0]:
                return _STR
            text = value or ""
            tag = self._tags.get(text)
            if tag is None:
                tag = self._plain_tag(text)
                if len(self._tags) < _TAGS_KEPT:
                    self._tags[text] = tag
            return tag
        return _MAP if kind is yaml.MappingNode else _SEQ

    def _plain_tag(self, value: str) -> str:
        for tag, pattern in self._implicit.get(value[:1], ()):
            if pattern.match(value):
                return str(tag)
        return _STR


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


def load(text: str, name: str, problems: list[LoadProblem] | None = None) -> Loaded:
    """Parse every document of `text` into Manifests; text-level problems become LoadProblems."""
    source = Source(name, text)
    found = list(problems or [])
    manifests: list[Manifest] = []
    too_deep = _too_deep(text)
    if too_deep is not None:
        found.append(too_deep)
        return Loaded(source, manifests, found)
    documents = yaml.compose_all(text, Loader=_Loader)
    index = 0
    try:
        for node in documents:
            builder = _Builder(node)
            try:
                body = builder.build(node)
            except _Refused as refused:
                found.append(refused.problem)
            else:
                found.extend(builder.problems)
                _collect(body, source, index, manifests, found, node)
            index += 1
    except yaml.MarkedYAMLError as error:
        found.append(_syntax_problem(error))
    except yaml.YAMLError as error:  # reader errors (control characters) carry no mark
        found.append(LoadProblem("TL001", f"invalid YAML: {error}", UNKNOWN_SPAN))
    return Loaded(source, manifests, found)


def _collect(
    body: Any,
    source: Source,
    index: int,
    manifests: list[Manifest],
    problems: list[LoadProblem],
    node: yaml.Node,
) -> None:
    """Turn one document into objects: a mapping, a `kind: List` of them, or a finding."""
    if body is None:
        return
    if isinstance(body, list):
        objects = [item for item in body if isinstance(item, dict) and "kind" in item]
        if objects:
            message = (
                "document is a list of objects, not a Kubernetes object: kubectl rejects it; "
                "separate the objects with `---` or wrap them in a `kind: List`"
            )
            problems.append(LoadProblem("TL004", message, _span(node)))
        return  # a list of anything else is some other YAML file: not ours to judge
    if not isinstance(body, dict):
        message = "document is a scalar, not a Kubernetes object: nothing in it is checked"
        problems.append(LoadProblem("TL004", message, _span(node)))
        return
    if "kind" not in body and "apiVersion" not in body:
        return  # some other YAML file (CI config, Helm values...): not ours to judge
    if body.get("kind") == "List" or str(body.get("kind", "")).endswith("List"):
        items = body.get("items")
        if isinstance(items, list):
            for position, item in enumerate(items):
                if isinstance(item, dict):
                    manifests.append(Manifest(item, source, index, ("items", position)))
                else:
                    span = locate(body, ("items", position))
                    problems.append(
                        LoadProblem(
                            "TL004",
                            f"`items[{position}]` of the List is not an object: it is not checked",
                            span,
                        )
                    )
            return
    manifests.append(Manifest(body, source, index))
    if not isinstance(body.get("kind"), str) or not isinstance(body.get("apiVersion"), str):
        missing = "kind" if not isinstance(body.get("kind"), str) else "apiVersion"
        problems.append(
            LoadProblem(
                "TL004",
                f"object has no `{missing}` string: the API server rejects it, "
                "and no rule can tell what it is",
                _span(node),
            )
        )


def _syntax_problem(error: yaml.MarkedYAMLError) -> LoadProblem:
    mark = error.problem_mark or error.context_mark
    line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    detail = error.problem or error.context or "syntax error"
    if error.context and error.problem:
        detail = f"{error.problem} ({error.context})"
    return LoadProblem(
        "TL001",
        f"invalid YAML: {detail}: kubectl and the API server reject this document",
        Span(line, column, line, column + 1),
    )


def _too_deep(text: str) -> LoadProblem | None:
    """Refuse nesting the C composer cannot take, measuring only documents that could hold it.

    Every nesting level needs one of `[ { - : ?`, so their count bounds a document's depth
    (and the whole text's count bounds every document's: most files end there).
    """
    if sum(text.count(char) for char in "[{-:?") <= _COMPOSER_SAFE_BOUND:
        return None
    starts = [match.start() for match in _DOCUMENT_START.finditer(text)]
    bounds = zip([0, *starts], [*starts, len(text)], strict=True)
    for start, end in bounds:
        indicators = sum(text.count(char, start, end) for char in "[{-:?")
        if indicators > _COMPOSER_SAFE_BOUND:
            return _measure_depth(text)
    return None


def _measure_depth(text: str) -> LoadProblem | None:
    depth = 0
    try:
        for event in yaml.parse(text, Loader=yaml.CSafeLoader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    mark = event.start_mark
                    line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
                    return LoadProblem(
                        "TL003",
                        f"nesting deeper than {MAX_DEPTH} levels: this file is not checked",
                        Span(line, column, line, column + 1),
                    )
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.YAMLError:
        return None  # the composer reports the syntax error with its position
    return None


class _Refused(Exception):
    def __init__(self, problem: LoadProblem) -> None:
        self.problem = problem


class _Builder:
    """Walks a composed node tree into plain data, with the limits that keep it bounded.

    This is the hot path of every run: scalars, most of the nodes, are built in the loops
    of their collections, and spans are recorded inline.
    """

    def __init__(self, root: yaml.Node) -> None:
        self.root = root
        self.nodes = 1
        self.problems: list[LoadProblem] = []
        #: The spans of the whole document: each container appends its own when built.
        self.spans = array("I")

    def build(self, node: yaml.Node, depth: int = 0) -> Any:
        if type(node) is yaml.ScalarNode:
            return _scalar(node)
        if depth >= MAX_DEPTH:
            raise _Refused(
                LoadProblem(
                    "TL003",
                    f"nesting deeper than {MAX_DEPTH} levels: this document is not checked",
                    _span(node),
                )
            )
        self.nodes += len(node.value)
        if self.nodes > MAX_NODES:
            start = _span(self.root)
            raise _Refused(
                LoadProblem(
                    "TL003",
                    f"document expands to more than {MAX_NODES:,} nodes "
                    "(aliases of aliases?): it is not checked",
                    Span(start.line, start.column, start.line, start.column + 1),
                )
            )
        if type(node) is yaml.MappingNode:
            return self._mapping(node, depth + 1)
        items = LocatedList()
        items.spans = document = self.spans
        spans: list[int] = []
        for item in node.value:
            start, end = item.start_mark, item.end_mark
            spans += (start.line, start.column, end.line, end.column)
            if type(item) is not yaml.ScalarNode:
                items.append(self.build(item, depth + 1))
            elif item.tag is _STR:  # most scalars: a string, built here
                items.append(sys.intern(item.value))
            else:
                items.append(_scalar(item))
        # After the items' own: the spans of one container are contiguous.
        items.first = len(document) // 4
        document.fromlist(spans)
        return items

    def _mapping(self, node: yaml.Node, depth: int) -> LocatedDict:
        result = LocatedDict()
        result.spans = document = self.spans
        spans: list[int] = []
        merged: list[tuple[yaml.Node, yaml.Node]] = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                merged.append((key_node, value_node))
                continue
            if type(key_node) is not yaml.ScalarNode:
                self.problems.append(
                    LoadProblem(
                        "TL001",
                        "invalid YAML: a mapping key must be a scalar for Kubernetes",
                        _span(key_node),
                    )
                )
                continue
            key = sys.intern(key_node.value)  # keys repeat in every object: share them
            start, end = key_node.start_mark, key_node.end_mark
            key_span = (start.line, start.column, end.line, end.column)
            if key in result:
                self.problems.append(
                    LoadProblem(
                        "TL002",
                        f"duplicate key `{key}`: kubectl rejects the document "
                        "(other tools silently keep one value)",
                        _span(key_node),
                    )
                )
                slot = 4 * list(result).index(key)
                spans[slot : slot + 4] = key_span
            else:
                spans += key_span
            if type(value_node) is not yaml.ScalarNode:
                result[key] = self.build(value_node, depth)
            elif value_node.tag is _STR:  # most scalars: a string, built here
                result[key] = sys.intern(value_node.value)
            else:
                result[key] = _scalar(value_node)
        for key_node, value_node in merged:  # merged keys point at their `<<`
            is_list = isinstance(value_node, yaml.SequenceNode)
            for source in value_node.value if is_list else [value_node]:
                extra = self.build(source, depth)
                for key, value in mapping(extra).items():
                    if key not in result:
                        spans += _marks(key_node)
                        result[key] = value
        result.first = len(document) // 4
        document.fromlist(spans)
        return result


def _scalar(node: yaml.ScalarNode) -> Any:
    """YAML 1.1 scalars, as kubectl's decoder reads them (`on`/`yes` are booleans)."""
    tag = node.tag
    if tag is _STR:  # what `_Loader.resolve` answers for most scalars
        return sys.intern(node.value)  # values repeat across objects: a long file shares them
    if tag == _NULL:
        return None
    try:
        if tag == _BOOL:
            return _CONSTRUCTOR.construct_yaml_bool(node)
        if tag == _INT:
            return _CONSTRUCTOR.construct_yaml_int(node)
        if tag == _FLOAT:
            return _CONSTRUCTOR.construct_yaml_float(node)
    except (ValueError, yaml.YAMLError):
        pass
    return node.value  # strings, timestamps (kept as written), custom tags


def _span(node: yaml.Node) -> Span:
    line, column, end_line, end_column = _marks(node)
    return Span(line + 1, column + 1, end_line + 1, end_column + 1)


def _marks(node: yaml.Node) -> tuple[int, int, int, int]:
    start, end = node.start_mark, node.end_mark
    return start.line, start.column, end.line, end.column
