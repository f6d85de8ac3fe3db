"""Reading manifests: YAML/JSON text → `Loaded` objects (`trainlint.document`).

libyaml (PyYAML's C parser) composes each document in C, and the builder walks its nodes
once into data that records where every key and item was written. Text-level problems
(syntax, duplicate keys, alias bombs, deep nesting, non-objects) become LoadProblems.
Texts that could be too large or too deep are composed with the limits applied as nodes
are composed (`_GuardedLoader`); the others, nearly all, without that cost. A long text
may be cut into pieces of whole documents, parsed on several processes (`load`'s
`spread`), to the same objects and problems as parsed whole.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
import re
import sys
from array import array
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any, ClassVar, NamedTuple, Protocol, TypeVar

import yaml

from trainlint.document import (
    BOM,
    ENTRY,
    UNKNOWN_SPAN,
    DuplicateKey,
    Fragment,
    InvalidYaml,
    KeyPath,
    Loaded,
    LoadProblem,
    Manifest,
    NotAnObject,
    Source,
    Span,
    TooComplex,
    any_string,
    character_span,
    decode,
    encoding_of,
    entries_at,
    locate,
    mapping,
)
from trainlint.files import TooLarge, blocks, read_range
from trainlint.kinds import KUBERNETES_KINDS, TRAINER_KINDS

#: Deepest nesting a Kubernetes object plausibly has; deeper documents are refused.
MAX_DEPTH = 200
#: Most nodes one document may expand to (aliases included): bounds "billion laughs".
MAX_NODES = 250_000
#: Most nodes one document may compose to, aliases aside. A mapping entry composes two
#: nodes (key and value) where the build counts one, so every document the build takes
#: composes to fewer.
MAX_COMPOSED = 2 * MAX_NODES
#: A document of fewer characters than this composes to fewer than `MAX_COMPOSED` nodes
#: (a node takes one character at the least; half of that, to be safe).
_GUARD_CHARACTERS = MAX_COMPOSED // 2
#: Every nesting level needs one of `[ { - : ?`; a document with fewer of them nests less
#: deep than libyaml's own limit (1,000 levels, from PyYAML 6.0.4), so only ours refuses
#: it, on every PyYAML release, and the C composer's recursion (it overflows the stack
#: around 20,000 levels) stays shallow.
_GUARD_INDICATORS = 1_000
#: Most plain scalars whose tags are remembered (see `_Loader.resolve`): the keys and
#: values that recur, met early; bounded, as a long stream's names never recur.
_TAGS_KEPT = 20_000

T = TypeVar("T")
R = TypeVar("R")

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_MERGE = "tag:yaml.org,2002:merge"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
#: A line that starts a document (`---` at its start, then a blank or the end): libyaml
#: ends whatever it is reading there, a block or quoted scalar included (YAML forbids
#: such a line inside one). Searched for with its line break: a literal first is found
#: seven times faster than a line start (`^`).
_DOCUMENT_START = re.compile(r"\n---(?=[ \t\r\n]|\Z)")
#: How libyaml (PyYAML 6.0.4 on) refuses deep nesting by itself.
_LIBYAML_TOO_DEEP = "exceeded maximum nesting depth"


#: The plain scalars go-yaml v2 (which kubectl and the API server decode YAML with,
#: through sigs.k8s.io/yaml) looks up before anything else, with their tags and values.
_GO_NAMED: dict[str, tuple[str, Any]] = {
    **dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On",
                     "ON"), (_BOOL, True)),
    **dict.fromkeys(("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off",
                     "OFF"), (_BOOL, False)),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), (_NULL, None)),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), (_FLOAT, math.nan)),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), (_FLOAT, math.inf)),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), (_FLOAT, -math.inf)),
    "<<": (_MERGE, "<<"),
}
#: A float as go-yaml v2 takes one that starts with a sign or a digit (`yamlStyleFloat`).
_GO_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?")
#: A float that starts with a dot, as Go's `strconv.ParseFloat` reads it.
_GO_DOT_FLOAT = re.compile(r"\.[0-9]+(?:[eE][-+]?[0-9]+)?")
#: The digits of each base Go's `strconv.ParseInt(s, 0, 64)` reads, by its prefix.
_GO_BASES = {"0x": (16, "0123456789abcdefABCDEF"), "0X": (16, "0123456789abcdefABCDEF"),
             "0o": (8, "01234567"), "0O": (8, "01234567"), "0b": (2, "01"), "0B": (2, "01")}


def _go_int(text: str) -> int | None:
    """An integer as go-yaml v2 reads a plain scalar (its underscores dropped, then Go's
    `ParseInt` or `ParseUint` of base 0: `0x`, `0o`, `0b`, and a leading `0` for octal,
    as in `010`, which is 8), or None."""
    plain = text.replace("_", "")
    sign = plain[:1] if plain[:1] in "+-" else ""
    body = plain[len(sign):]
    base, digits = _GO_BASES.get(body[:2], (0, ""))
    if base:
        body = body[2:]
    elif len(body) > 1 and body[0] == "0":
        base, digits = 8, "01234567"
    else:
        base, digits = 10, "0123456789"
    if not body or body.strip(digits):
        return None
    value = int(body, base) * (-1 if sign == "-" else 1)
    return value if -(2**63) <= value < 2**64 else None


def _go_float(text: str) -> float | None:
    """A float as go-yaml v2 reads a plain scalar that is no integer, or None: one that
    starts with a dot as Go's `ParseFloat` reads it (an underscore only between digits,
    as Python's `float` takes it too), any other with its underscores dropped, spelt as
    `yamlStyleFloat` allows; out of range (`1e400`), text."""
    dotted = text[:1] == "."
    plain = text.replace("_", "")
    if not (_GO_DOT_FLOAT if dotted else _GO_FLOAT).fullmatch(plain):
        return None
    try:
        number = float(text if dotted else plain)
    except ValueError:  # `._5`
        return None
    return number if math.isfinite(number) else None


class _Resolver(yaml.CSafeLoader):
    """libyaml's composer with the per-node callbacks it makes into Python cut to the bone,
    and plain scalars resolved as kubectl reads them.

    The stock resolver also serves path resolvers, which nothing here registers; without
    them, and with the tags of repeated scalars remembered, composing takes under three
    quarters of the stock time. Tags are go-yaml v2's, not PyYAML's YAML 1.1 (`1:30` is
    text, not 90; `y` is true, `1e3` a float, `08` the float 8, `0o17` the integer 15):
    what kubectl sends is what the API server checks.
    """

    #: The tag of each plain scalar met so far: keys and values repeat across documents.
    _tags: ClassVar[dict[str, str]] = {}

    def resolve(self, kind: type[yaml.Node], value: str | None, implicit: Any) -> str:
        if value is None:  # only collections come without a value
            return _MAP if kind is yaml.MappingNode else _SEQ
        if not implicit[0]:  # quoted
            return _STR
        tag = self._tags.get(value)
        if tag is None:
            tag = self._plain_tag(value)
            if len(self._tags) < _TAGS_KEPT:
                self._tags[value] = tag
        return tag

    def _plain_tag(self, value: str) -> str:
        """go-yaml v2's `resolve`: a value looked up by name, else a number if it starts
        with a sign, a digit or a dot and reads as one, else text."""
        named = _GO_NAMED.get(value)
        if named is not None:
            return named[0]
        first = value[:1]
        if first and first in ".+-0123456789":
            if first != "." and _go_int(value) is not None:
                return _INT
            if _go_float(value) is not None:
                return _FLOAT
        return _STR


class _Loader(_Resolver):
    # The composer calls these around every node, for path resolvers, which nothing here
    # registers. C callables that do nothing (and, as builtins, take no `self`) cost a
    # fraction of a Python method: `is_(node, index)` and `tuple()` (the empty singleton).
    # With the tag memo, composing 2,000 files of the benchmark corpus takes 0.78 of
    # PyYAML's own time (247 ms against 317); either alone, about all of it
    # (benchmarks/tricks.py).
    descend_resolver = operator.is_  # type: ignore[assignment]  # a callable all the same
    ascend_resolver = tuple  # type: ignore[assignment]


class _GuardedLoader(_Resolver):
    """The composer with the limits applied while it composes, for texts whose size or
    nesting could exceed them (`_needs_guards`): a 20 MB flow sequence must be refused
    before its ten million nodes take gigabytes, not after.

    The two callbacks made around every node (aliases aside) count the nodes and the
    depth of the document being composed. A refusal stops the whole stream: libyaml
    cannot go on after an exception, so the documents after it are not read.
    """

    _composed = 0
    _depth = 0

    def descend_resolver(self, parent: yaml.Node | None, index: object) -> None:
        if parent is None:  # the root of the next document
            self._composed = self._depth = 1
            return
        self._composed += 1
        self._depth += 1
        # A node two levels below the deepest allowed has a parent the build would refuse.
        if self._depth > MAX_DEPTH + 1:
            raise _Refused(_too_deep(parent.start_mark, rest=True))
        if self._composed > MAX_COMPOSED:
            raise _Refused(
                TooComplex(
                    f"document has more than {MAX_COMPOSED:,} nodes: it is not checked, "
                    "nor is the rest of the file",
                    _point(parent.start_mark),
                )
            )

    def ascend_resolver(self) -> None:
        self._depth -= 1


def load_bytes(data: bytes, name: str, spread: Spread | None = None) -> Loaded:
    """Parse the bytes of a file: invalid UTF-8 is reported and replaced, then `load`."""
    text, problems = decode(data, name)
    encoding = encoding_of(data)
    bom = data.startswith(BOM) or encoding != "utf-8"
    del data  # parsing copies the text once more: a long file must not be held three times
    return load(text, name, problems, bom=bom, spread=spread, encoding=encoding)


def unreadable(name: str, error: OSError) -> Loaded:
    """A file that was not read: nothing but a load problem (`TooComplex` when it is too
    large)."""
    problem: LoadProblem
    if isinstance(error, TooLarge):
        problem = TooComplex(
            f"the file is {error.strerror}: it is not read, nor checked", UNKNOWN_SPAN
        )
    else:
        problem = InvalidYaml(f"cannot read the file: {error.strerror}", UNKNOWN_SPAN)
    return Loaded(Source(name, ""), [], [problem])


def load(
    text: str, name: str, problems: list[LoadProblem] | None = None, *, bom: bool = False,
    spread: Spread | None = None, encoding: str = "utf-8",
) -> Loaded:
    """Parse every document of `text` into Manifests; text-level problems become LoadProblems.
    `bom`: the bytes began with a byte order mark (see `Source.bom`); `encoding`: their
    codec (`Source.encoding`). With `spread`, a long
    text is cut into pieces of whole documents (`_pieces`), parsed on several processes,
    to the same Manifests and problems as parsed whole."""
    # Decided on the whole text for every piece: a document nested too deep stops the
    # file where another one is long (`_GuardedLoader`), and only there.
    guarded = _needs_guards(text)
    whole = (0, len(text), 0)
    pieces = [whole] if spread is None else _pieces(text, spread.pieces(len(text)))
    if spread is None or len(pieces) == 1:
        parts = [_part(text, whole, guarded)]
    else:
        parts = spread(partial(_part, text, guarded=guarded), pieces)
        if any(part.stopped for part in parts):
            # Which documents libyaml composes before it stops depends on how far it read
            # ahead (it decodes 16 KB at a time, refusing a control character as it
            # decodes it), so only the whole text tells: it is parsed again, in one piece.
            parts = [_part(text, whole, guarded)]
    found = list(problems or [])
    if _json_sniffed(text):
        if len(parts) == 1 and parts[0].stopped:
            values = _json_values(text)
            if len(values) > 1:  # no YAML, but a JSON stream, as kubectl reads it
                parts = [_part(text, value, guarded) for value in values]
        elif _NOT_JSON.search(text):  # YAML takes `{"a": 1,}` and a `//` line, JSON not
            at = _commented_json(text)
            if at is not None and at != -1:
                found.append(_comment_problem(text, at))
    return _joined(Source(name, text, bom, encoding=encoding), found, parts)


#: A comma before a closing bracket, a line that starts a comment, a comment: what YAML
#: may read in a JSON text and JSON does not (looked for before the text is read again).
_NOT_JSON = re.compile(r",\s*[}\]]|^[ \t]*//|/\*", re.MULTILINE)


#: JSON's whitespace, between the values of a stream; the spaces kubectl skips before
#: looking for a JSON text's `{`.
_BLANKS = re.compile(r"[ \t\r\n]*")
_SPACES = re.compile(r"\s*")


def _json_sniffed(text: str, at: int = 0) -> bool:
    """Whether kubectl reads `text` (from `at`) as JSON: it starts, after spaces, with `{`
    (looked at where it is: a long text is not copied to be stripped)."""
    found = _SPACES.match(text, at)
    return text.startswith("{", found.end() if found else at)


def _json_values(text: str) -> list[Piece]:
    """The values of a JSON stream, as pieces of `text` (none when it is not one): kubectl
    reads a text that starts with `{` as JSON values one after another (an object a line,
    or pretty-printed ones in a row), which YAML reads no further than the first."""
    import json

    decoder = json.JSONDecoder()
    pieces: list[Piece] = []
    position, lines, counted = _after_blanks(text, 0), 0, 0
    while position < len(text):
        try:
            _, end = decoder.raw_decode(text, position)
        except ValueError:
            return []
        lines += text.count("\n", counted, position)
        counted = position
        pieces.append((position, end, lines))
        position = _after_blanks(text, end)
    return pieces


def _after_blanks(text: str, position: int) -> int:
    found = _BLANKS.match(text, position)
    return found.end() if found else position


class Spread(Protocol):
    """Runs work on several processes (`trainlint.run.parallel` has one)."""

    def pieces(self, characters: int) -> int:
        """How many pieces a text of this many characters is best parsed in (1: whole)."""
        ...

    def __call__(self, work: Callable[[T], R], items: Sequence[T]) -> list[R]:
        """`work` over every item: the results, in order."""
        ...


#: A run of whole documents of a text: where it starts and ends, and how many lines come
#: before it.
Piece = tuple[int, int, int]
#: An object read from a piece: its body, the number of its document in the piece, its key
#: path in the document, the spans of the document, where its own entries start and
#: whether it may hold nulls (see `Manifest`).
_Object = tuple[dict[str, Any], int, KeyPath, "array[int]", int, bool]


class Part(NamedTuple):
    """What a piece of a text reads as, placed where it is in the whole text: sent back by
    the process that parsed it, without the text, which the parent has. (A named tuple:
    a dataclass takes four times as long to make, at every start-up.)"""

    objects: list[_Object]
    problems: list[LoadProblem]
    fragments: list[Fragment]
    documents: int
    #: Whether an error or a refusal stopped libyaml before the piece's end.
    stopped: bool
    #: Those of its problems that make a document no object only in a file of Kubernetes
    #: objects (a scalar, a mapping with a `kind` of another tool's): dropped elsewhere.
    doubtful: list[LoadProblem]


def _part(text: str, piece: Piece, guarded: bool, stood_in: str = "") -> Part:
    """The documents of a piece of `text`, composed with the limits applied if `guarded`
    (`stood_in`: what the colons that end flow scalars stand in for, `_flow_colons`).

    What stops libyaml is placed in the piece alone: a piece that stopped is used only
    when it is the whole text (see `load`)."""
    start, end, lines = piece
    piece_text = text[start:end]  # the text itself, not a copy, when the piece is all of it
    found = Part([], [], [], 0, False, [])
    index = 0
    # Most pieces have no placeholder: no look for templates in their documents.
    templating = (PLACEHOLDER_START in piece_text or GO_START in piece_text
                  or JINJA_START in piece_text)
    ytt = YTT_START in piece_text and _compiled(_YTT_LINE).search(piece_text) is not None
    try:
        composed = yaml.compose_all(piece_text, Loader=_GuardedLoader if guarded else _Loader)
        for node in (_colons_put_back(node, stood_in) for node in composed) if stood_in else (
                composed):
            _document(piece_text, node, index, lines, templating, found, ytt=ytt)
            index += 1
    except _Refused as refused:  # by the guarded composer, at a mark in the piece
        found.problems.append(_shifted(refused.problem, lines))
    except yaml.MarkedYAMLError as error:
        read = _as_kubectl_reads(text, piece_text, error, stood_in)
        if read is not None:
            return _part(read[0], (0, len(read[0]), lines), guarded, read[1] or stood_in)
        _take_stop(piece_text, error, lines, found, templating=templating, ytt=ytt)
    except yaml.reader.ReaderError as error:  # a character YAML does not take
        if _json_sniffed(text) and _JSON_ONLY.search(piece_text) and _json_values(piece_text):
            return _part(_JSON_ONLY.sub("\ufffd", piece_text), (0, len(piece_text), lines),
                         guarded)
        _add(found, _shifted(_reader_problem(piece_text, error), lines),
             doubtful=_compiled(_OBJECT_SIGN).search(piece_text) is None)
    except yaml.YAMLError as error:
        found.problems.append(InvalidYaml(f"invalid YAML: {error}", UNKNOWN_SPAN))
    else:
        return found._replace(documents=index)
    return found._replace(documents=index, stopped=True)


def _take_stop(
    text: str, error: yaml.MarkedYAMLError, lines: int, found: Part, *, templating: bool,
    ytt: bool,
) -> None:
    """Take in what stopped libyaml in a piece (`lines` lines after the file's start): the
    note of a template of lines, or the problem, doubtful where the text shows nothing
    of an object (`_OBJECT_SIGN`)."""
    mark = error.problem_mark or error.context_mark
    line = (mark.line + 1 if mark else 1) if ytt else _template_line(text, mark, templating)
    if line is not None:  # a template of lines, no YAML until filled
        if _object_lines(text):  # a template of anything else: silent
            found.fragments.append(Fragment(Span(line + lines, 1, line + lines, 1), template=True))
    elif (dropped := _after_end(text, error)) is not None:
        _add(found, _shifted(dropped[0], lines), doubtful=dropped[1])
    else:
        unknown = _compiled(_OBJECT_SIGN).search(text) is None  # another tool's text, maybe
        for problem in _stopped(text, error):  # (nesting refused is said in any text)
            _add(found, _shifted(problem, lines),
                 doubtful=unknown and isinstance(problem, InvalidYaml))


def _as_kubectl_reads(
    text: str, piece_text: str, error: yaml.MarkedYAMLError, stood_in: str
) -> tuple[str, str] | None:
    """The piece rewritten where libyaml stopped on what kubectl reads: JSON's escaped
    surrogates (`_joined_surrogates`), a flow scalar that ends in `:` (`_flow_colons`,
    once), tabs between JSON's tokens (YAML refuses one where it indents); with the stand-in
    of the colons, if that is what it rewrote. None otherwise."""
    if error.problem == _BAD_ESCAPE and _json_sniffed(text):
        paired = _SURROGATE.sub(_joined_surrogates, piece_text)
        return (paired, "") if paired != piece_text else None
    if error.problem == _FLOW_COLON and not stood_in:
        return _flow_colons(piece_text, error)
    if error.context == _ANCHOR_AGAIN and not _json_sniffed(text):  # JSON has no anchor
        renamed = _anchors_renamed(piece_text)
        return (renamed, "") if renamed is not None else None
    if "\t" in piece_text and _json_sniffed(text) and _json_values(piece_text):
        return piece_text.replace("\t", " "), ""  # JSON's blanks (no string holds a raw tab)
    return None


#: How libyaml refuses an anchor a document defines again, which YAML 1.1 and 1.2 take (an
#: alias refers to the latest), and so does kubectl's reader.
_ANCHOR_AGAIN = "found duplicate anchor; first occurrence"
#: The characters of an anchor's name, as libyaml takes them.
_ANCHOR_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"


def _anchors_renamed(text: str) -> str | None:
    """`text` with each anchor a document defines again, and the aliases that refer to it,
    renamed to another name of as many characters (every position stays; no value holds
    an anchor's name). None where nothing is renamed or the text's tokens cannot be read."""
    try:
        tokens = [token for token in yaml.scan(text, Loader=yaml.CSafeLoader) if isinstance(
            token, (yaml.AnchorToken, yaml.AliasToken, yaml.DocumentStartToken,
                    yaml.DocumentEndToken))]
    except yaml.YAMLError:
        return None
    names = _spare_names({getattr(token, "value", "") for token in tokens})
    edits: list[tuple[int, str]] = []
    defined: set[str] = set()
    current: dict[str, str] = {}
    for token in tokens:
        if isinstance(token, (yaml.DocumentStartToken, yaml.DocumentEndToken)):
            defined.clear()  # anchors are a document's own
            current.clear()
            continue
        if isinstance(token, yaml.AnchorToken):
            if token.value in defined:
                current[token.value] = next(names(len(token.value)), "")
            else:
                current.pop(token.value, None)
            defined.add(token.value)
        if token.value in current:  # an anchor defined again, or an alias of it
            edits.append((token.start_mark.index + 1, current[token.value]))
    if not edits or not all(name for _, name in edits):
        return None
    pieces, at = [], 0
    for start, name in edits:
        pieces += [text[at:start], name]
        at = start + len(name)
    return "".join(pieces) + text[at:]


def _spare_names(used: set[str]) -> Callable[[int], Iterator[str]]:
    """The names of a given length an anchor may take (libyaml's: letters, digits, `_`
    and `-`) that none in `used` is, each given once: one walk of the names per length,
    kept between calls (restarted, 10,000 renames took 4.6 s)."""
    walks: dict[int, Iterator[str]] = {}

    def names(length: int) -> Iterator[str]:
        if length not in walks:
            walks[length] = ("".join(letters) for letters in itertools.product(
                _ANCHOR_LETTERS, repeat=length) if "".join(letters) not in used)
        return walks[length]

    return names


#: How libyaml refuses a `\u` escape of a UTF-16 surrogate, which YAML does not take.
_BAD_ESCAPE = "found invalid Unicode character escape code"
#: A JSON escape of a UTF-16 surrogate, a high one with the low one after it or alone, after
#: an even run of backslashes (`\\ud83d` is a backslash, then text).
_SURROGATE = re.compile(
    r"(?<!\\)((?:\\\\)*)\\u(?:(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})|d[89a-f][0-9a-f]{2})",
    re.IGNORECASE,
)


def _joined_surrogates(match: re.Match[str]) -> str:
    r"""kubectl reads a stream that starts with `{` as JSON, where a character beyond the
    BMP is written as two escaped surrogates (`\ud83d\ude80`, as `json.dumps` writes 🚀):
    a pair becomes the character's `\U` escape, and a surrogate alone U+FFFD, as Go's
    JSON decoder reads it. (A position after a pair on its line is 2 columns off.)"""
    before, high, low = match.groups()
    if high is None:
        return f"{before}\\uFFFD"
    code = 0x10000 + ((int(high, 16) - 0xD800) << 10) + int(low, 16) - 0xDC00
    return f"{before}\\U{code:08X}"


def _document(
    text: str, node: yaml.Node, index: int, lines: int, templating: bool, found: Part,
    *, ytt: bool = False,
) -> None:
    """Take in a piece's document: its object and problems, or the note a fragment or a
    template of an object takes (every document of a `ytt` template)."""
    builder = _Builder(node, lines)
    try:
        body = builder.build(node)
    except _Refused as refused:
        found.problems.append(refused.problem)
        return
    if ytt or (templating and _is_template(
            text, node.start_mark.index, node.end_mark.index, body, builder.problems)):
        if _object_like(body):  # a template of anything else is none of trainlint's
            found.fragments.append(Fragment(_span(node, lines), template=True))
        return
    problems = builder.problems
    if builder.repeats or builder.kubernetes_only:
        problems = _as_read(problems, builder, body, _json_sniffed(text, node.start_mark.index))
    found.problems.extend(problems)
    if _fragment(body):
        found.fragments.append(Fragment(_span(node, lines)))
    _collect(body, index, found, node, builder, text)


def _joined(
    source: Source, problems: list[LoadProblem], parts: list[Part], before: int = 0,
    *, doubtful: bool = False,
) -> Loaded:
    """The parts of a text as one `Loaded`, their documents numbered in the whole text
    (`before` come before its first part). Its `doubtful` problems are kept where it holds
    a Kubernetes object, or with `doubtful` (a slice of a long file, whose other slices
    are not known here: such a file is a stream of manifests)."""
    manifests: list[Manifest] = []
    found = list(problems)
    fragments: list[Fragment] = []
    unsure: list[LoadProblem] = []
    for objects, part_problems, part_fragments, documents, _, part_doubtful in parts:
        # A loop, not a comprehension, which makes a frame, for every file read.
        for body, document, base, spans, first, nulls in objects:
            manifests.append(
                Manifest(body, source, before + document, base, spans, first, nulls))
        found += part_problems
        fragments += part_fragments
        unsure += part_doubtful
        before += documents
    if unsure and not doubtful and not any(
            manifest.kind and manifest.api_version for manifest in manifests):
        dropped = {id(problem) for problem in unsure}  # shared with the problems, pickled too
        found = [problem for problem in found if id(problem) not in dropped]
    return Loaded(source, manifests, found, tuple(fragments))


def _pieces(text: str, count: int) -> list[Piece]:
    """`text` cut into about `count` pieces of whole documents, of about equal length.

    A cut is made only where parsing the whole text goes on as parsing a text that begins
    there would: at a line `---` begins (`_DOCUMENT_START`). libyaml ends there whatever
    it reads (block and plain scalars, block collections) or fails (inside a flow
    collection or a quoted scalar, where the piece before fails too, at its end, and
    the text is parsed whole: see `load`), and a new document keeps nothing of the ones
    before: anchors and `%TAG` handles hold for one document. Not after a directive
    (`%YAML`, `%TAG`), which belongs to the document the line starts; and not in a text
    with line breaks other than LF and CRLF: libyaml counts CR, NEL, LS and PS as line
    breaks too, and the pieces' first lines would be wrong."""
    if count < 2 or not _plain_breaks(text):
        return [(0, len(text), 0)]
    step = max(1, len(text) // count)
    cuts = [0]
    while (cut := _next_cut(text, cuts[-1] + step)) is not None:
        cuts.append(cut)
    pieces = []
    lines = 0
    for start, end in itertools.pairwise([*cuts, len(text)]):
        pieces.append((start, end, lines))
        lines += text.count("\n", start, end)
    return pieces


def _next_cut(text: str, position: int) -> int | None:
    """The start of the first line at or after `position` where `_pieces` may cut."""
    for match in _DOCUMENT_START.finditer(text, position - 1):
        cut = match.start() + 1
        if not _after_directive(text, cut):
            return cut
    return None


#: How many lines before a `---` are looked through for a directive (`_after_directive`).
_LOOK_BACK = 100


def _after_directive(text: str, cut: int) -> bool:
    """Whether the line at `cut` may follow a directive: the last line before it that holds
    more than blanks or a comment starts with `%` (or lies more than `_LOOK_BACK` up)."""
    end = cut - 1  # the line break before the line
    for _ in range(_LOOK_BACK):
        start = text.rfind("\n", 0, end) + 1
        line = text[start:end].strip(" \t\r")
        if line and not line.startswith("#"):
            return text.startswith("%", start)
        if start == 0:
            return False
        end = start - 1
    return True


def _plain_breaks(text: str) -> bool:
    """Whether every line break of `text` is LF or CRLF."""
    if text.count("\r") != text.count("\r\n"):
        return False
    return text.isascii() or not any(char in text for char in "\x85\u2028\u2029")


#: The top-level keys by which a document reads as a Kubernetes object, or part of one.
_OBJECT_KEYS = ("kind", "apiVersion", "metadata", "spec")


def _object_like(body: Any) -> bool:
    """Whether a document reads as a Kubernetes object or as part of one: a template of
    anything else (a Grafana dashboard's `${DS}`, a benchmark tool's profile) is none of
    trainlint's."""
    return isinstance(body, dict) and any(key in body for key in _OBJECT_KEYS)


def _object_lines(text: str) -> bool:
    """Whether a text that is no YAML as written has a line that starts with one of an
    object's top-level keys (clusterloader2's configs, templates of lines too, have none)."""
    starts = tuple(f"{key}:" for key in _OBJECT_KEYS)
    return any(line.startswith(starts) for line in text.splitlines())


def _fragment(body: Any) -> bool:
    """Whether a document looks like part of a Kubernetes object (a snippet from the
    docs, a patch body) rather than some other YAML file: it has a `spec`, or `metadata`
    as an object's (a name, labels: not a notebook's `kernelspec`), but neither `kind`
    nor `apiVersion`."""
    if not isinstance(body, dict) or "kind" in body or "apiVersion" in body:
        return False
    metadata = body.get("metadata")
    return "spec" in body or (isinstance(metadata, dict) and not _OBJECT_META.isdisjoint(metadata))


#: Keys of an object's `metadata`.
_OBJECT_META = frozenset({"name", "generateName", "namespace", "labels", "annotations"})


#: A value left for a tool to fill before the object is applied: `${NAME}`,
#: `${NAME:-default}`, `${a.b}` (`envsubst`, Katib's trial templates, shells), an
#: expression with spaces but no shell's default (Terraform's `${ num_nodes }`; a
#: `${CMD:-python train.py}` is a script's), or a Go template's action `{{ .Name }}`
#: (Helm, clusterloader2, goreleaser...).
PLACEHOLDER = r"\$\{[^{}\s]+\}|\$\{(?![^{}]*:[-=+?])[^{}\n]+\}|\{\{[^{}]*\}\}"
PLACEHOLDER_START = "${"
GO_START = "{{"
#: A Jinja statement on a line of its own (`{% include "x" %}`, `{% for %}`): Ansible's and
#: Salt's templates (one inside a value, a chat template, is the value's).
JINJA_START = "{%"
_JINJA_LINE = re.compile(r"^[ \t]*\{%.*%\}[ \t]*\r?$", re.MULTILINE)
#: A ytt annotation at the start of a line, a comment that starts `#@ ` or `#@` and one of
#: ytt's namespaces (`#@ if`, `#@ load`, `#@overlay/match`; not Colab's `#@param`, nor
#: `#@author`, nor a script's comment in a block scalar, which is indented): ytt
#: evaluates the file before any YAML is read, so the whole file is a template.
YTT_START = "#@"
_YTT_LINE = r"(?m)^#@(?: |(?:overlay|data|schema|yaml|template|library|assert)/)"


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    """A pattern of the paths a broken or templated text takes, compiled when first used:
    compiled on import, the eight of them took 1.3 ms of every run (`check one.yaml` takes
    about 100), which a run that meets no such text never pays now."""
    return re.compile(pattern)


@functools.cache
def _placeholders() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """A placeholder; one where a value may stand alone (after `key:`, `- ` or `[`, up to
    the end of the line, `,`, `]` or `}`), so that only a document where one may is walked
    for them, not one whose placeholders are all inside scripts; and a Go action anywhere
    in a line. Compiled when a text first has one: they take 0.4 ms, which a run that
    meets none never pays."""
    alone = rf"""(?:[:\[,-]\s*|^\s*)["']?(?:{PLACEHOLDER})["']?\s*(?:$|[,\]}}#])"""
    return (re.compile(PLACEHOLDER), re.compile(alone, re.MULTILINE),
            re.compile(r"\{\{.*?\}\}"))


def _is_template(
    text: str, start: int, end: int, body: Any, problems: list[LoadProblem]
) -> bool:
    """Whether the document of `text[start:end]` is a template rather than an object: a
    value is a placeholder alone (`numNodes: ${NODES}`, `name: "{{ .Name }}"`), or a Go
    action or a Jinja statement makes what it holds no object (`name: {{ .Name }}` is a
    flow mapping whose key is a mapping; a repeated key alone is no sign of one: an action
    in a script is the script's). Placeholders inside a longer string (a script's
    `${RANK:-0}`) are the container's own."""
    if any(not isinstance(problem, DuplicateKey) for problem in problems) and (
            text.find(GO_START, start, end) != -1
            or _JINJA_LINE.search(text, start, end) is not None):
        return True
    return bool(_placeholders()[1].search(text, start, end)) and any_string(
        body, _placeholders()[0].fullmatch)


def _template_line(text: str, mark: Any, templating: bool) -> int | None:
    """The line (1-based) of `text` nearest before the line of `mark`, where libyaml
    stopped (or, if none, after it), that is a placeholder alone (`${EXTRA_LIMITS}`,
    `${indent(4, x)}`: lines a tool writes in) or holds a Go action or a Jinja statement;
    or the line of `mark` itself, where a placeholder no YAML value may start with or be
    glued to is what stopped libyaml (`_FILLED_IN`, not JSON's), or it or the line before
    if that is a line left to fill (`_LEFT_OUT_LINE`): what makes a template no YAML until
    filled. `templating`: the text has one of the other kinds' starts."""
    stop = mark.line + 1 if mark else 1
    if mark is not None and not _json_sniffed(text):
        before, stopped = _lines_at(text, mark.index)
        if any(match.start() <= mark.column <= match.end()
               for match in _compiled(_FILLED_IN).finditer(stopped)):
            return stop
        if "\t" not in stopped[:mark.column + 1]:  # a tab that breaks the line: an error
            for number, line in ((stop - 1, before), (stop, stopped)):
                if _compiled(_LEFT_OUT_LINE).fullmatch(line):
                    return number
    if not templating:
        return None
    _, _, action = _placeholders()
    found = None
    for number, line in enumerate(text.splitlines(), start=1):
        if (PLACEHOLDER_START in line
                and _compiled(_EXPRESSION_LINE).fullmatch(line.strip())) or (
                GO_START in line and action.search(line)) or (
                JINJA_START in line and _JINJA_LINE.fullmatch(line)):
            if number > stop:
                return found or number
            found = number
    return found


#: A line that is one placeholder, an expression that may hold spaces (Terraform's
#: `${indent(4, yamlencode(labels))}`).
_EXPRESSION_LINE = r"\$\{[^{}\n]+\}"


#: A placeholder of Python's `%` formatting (`%(project)s`: Jsonnet's `importstr ... %`
#: fills such a file), a verb of Go's alone as a key's value (`name: %s`, which
#: `fmt.Sprintf` fills; not an item of a flow list, `[printf, %s]`), a `%NAME%` (`feast
#: init`), a `${NAME}` alone as an item of a flow collection (`[${SUBNET_IDS}]`, which
#: `envsubst` fills; not inside a longer item, a shell's `python train.py ${RANK}`), or a
#: name in braces glued to what follows (`{PREFIX}.16`, `{username}/image`, which `sed`
#: fills): each makes the line no YAML, where YAML reads a placeholder alone (`{NAME}` is
#: a flow mapping; `${NAME}` a plain scalar) as it is.
_FILLED_IN = (
    r"%\([^()\s]+\)[sdifgrx]|%[A-Za-z_][\w-]*%(?=\s*(?:$|[,\]}#]))"
    r"|(?<=: )%[sdv](?=\s*(?:$|#))|(?<=[\[,])\s*\$\{[^{}\s]+\}(?=\s*[,\]])"
    r"|\{[A-Za-z_][\w-]*\}[^\s,\]}#]")
#: A line left for a tool to fill or a reader to complete: `$NAME` alone (`envsubst`), or
#: an ellipsis where an excerpt leaves lines out (indented, or of more than three dots:
#: `...` at the start of a line ends a YAML document).
_LEFT_OUT_LINE = r"[ \t]*\$[A-Za-z_]\w*[ \t]*|[ \t]+\.{3,}[ \t]*|\.{4,}[ \t]*"


#: A line break as libyaml counts lines (`\r`, NEL, LS and PS too).
_BREAK = "\r\n|[\n\r\x85\u2028\u2029]"


def _lines_at(text: str, at: int) -> tuple[str, str]:
    """The line before the one that holds offset `at` of `text`, and that line."""
    starts = [0, 0, *(found.end() for found in _compiled(_BREAK).finditer(text, 0, at))]
    end = _compiled(_BREAK).search(text, at)
    return (_compiled(_BREAK).sub("", text[starts[-2]:starts[-1]]),
            text[starts[-1]:end.start() if end else len(text)])


#: Characters JSON takes in a string as they are and YAML refuses: DEL, the C1 controls,
#: U+FFFE and U+FFFF (kubectl reads a JSON manifest that holds them). Read in their place:
#: U+FFFD, one character for one, so that every position stays.
_JSON_ONLY = re.compile("[\x7f-\x9f\ufffe\uffff]")


def _reader_problem(text: str, error: yaml.reader.ReaderError) -> LoadProblem:
    """A character YAML does not take, where it is (libyaml gives its offset in the text's
    UTF-8 bytes)."""
    at = len(text.encode()[:error.position].decode(errors="ignore"))
    character = error.character
    shown = f"#x{character:04x}" if isinstance(character, int) else repr(character)
    return InvalidYaml(
        f"invalid YAML: the character {shown} is not allowed ({error.reason}): kubectl and "
        "the API server reject this document", character_span(text, at))


def _after_end(text: str, error: yaml.MarkedYAMLError) -> tuple[LoadProblem, bool] | None:
    """A document that follows the end marker `...` with no `---`, where libyaml stopped
    on it (or on a marker that ends no document): YAML 1.1 refuses it; kubectl reads no
    further than the marker, up to the next `---`. With whether it is doubtful (said only
    beside objects): what follows holds no `kind:` or `apiVersion:` line (Helm's provenance
    files are written so). None for anything else."""
    mark = error.problem_mark
    if mark is None:
        return None
    # The lines before the mark's, and "":
    lines = _compiled(_BREAK).split(text[:mark.index - mark.column])
    if error.problem == "did not find expected <document start>":
        marker = next((number for number in range(len(lines) - 1, 0, -1)
                       if lines[number - 1].strip() and lines[number - 1][:1] != "#"), None)
    elif error.problem == "did not find expected node content" and mark.column == 0:
        lines[-1], marker = _lines_at(text, mark.index)[1], len(lines)  # a marker alone
    else:
        return None
    if marker is None or lines[marker - 1].rstrip() != "...":
        return None
    rest = text[mark.index:].split("\n---", 1)[0]
    objects = _compiled(_OBJECT_LINE).search(rest) is not None
    return InvalidYaml(
        f"this document follows the end marker `...` of line {marker} with no `---`: kubectl "
        "reads no further than `...` until the next `---`, so it is silently dropped",
        Span(marker + 1, 1, marker + 1, 2)), not objects


#: What shows a text that is no YAML as written was meant as Kubernetes objects: a `kind`
#: or an `apiVersion` key anywhere, a `metadata:` or `spec:` line. A text with none is
#: another tool's file (a test fixture, a captured log, ytt's `+++` tests, a KEP's
#: metadata): what stops YAML there is said only beside objects. On the hook's replays of
#: 113 repositories, such texts drew no true syntax finding, and 241 false or debatable.
_OBJECT_SIGN = r"""(?m)(?:^|[{,\s])["']?(?:kind|apiVersion)["']?[ \t]*:|^(?:metadata|spec):"""
#: A line that starts an object's `kind` or `apiVersion`.
_OBJECT_LINE = r"(?m)^(?:kind|apiVersion):"


def _stopped(text: str, error: yaml.MarkedYAMLError) -> list[LoadProblem]:
    """What stopped libyaml in `text`, as reported: nothing for JSON Lines (a dataset) or
    another tool's JSON with comments; a comment of a Kubernetes object written so, where
    it is; the nesting refused or the syntax error otherwise."""
    if _json_lines(text):
        return []
    commented = _commented_json(text)
    if commented is None:
        return [_nesting_refused(text, error) or _syntax_problem(error)]
    return [] if commented == -1 else [_comment_problem(text, commented)]


#: How libyaml refuses a `:` in a flow scalar before a flow indicator: kubectl's YAML
#: reader takes one before `,`, `]` or `}` as the value's (`[10.0.0.1, 2001:db8::]`), and
#: refuses one before `[`, `{` or `?`.
_FLOW_COLON = "found unexpected ':'"
#: What stands for such a `:` while the text is composed: one character for one, so that
#: every position stays; made a `:` again in every scalar (`_colons_put_back`). The first
#: of them the text does not hold.
_COLON_STAND_INS = "\ue000\ue001\ue002\ue003"
#: A `:` that ends a flow scalar before `,`, `]` or `}` (not one after a quote: that is a
#: value indicator, as in JSON), with the word it ends (a tag's, `!t:`, is left).
_ENDING_COLON = r"(?<![\s\"'])(?P<word>[^\s\"',\[\]{}]*):(?=[,\]}])"


def _flow_colons(text: str, error: yaml.MarkedYAMLError) -> tuple[str, str] | None:
    """`text` with each `:` that ends a flow scalar before `,`, `]` or `}` replaced by a
    stand-in the text does not hold, and the stand-in, as kubectl reads them: the values'
    own; None where kubectl refuses the one libyaml stopped on too (before `[`, `{` or
    `?`), in JSON (kubectl reads it as JSON), or where the text holds every stand-in."""
    colon = error.problem_mark
    if colon is None or text[colon.index + 1:colon.index + 2] not in (",", "]", "}") or (
            _json_sniffed(text)):
        return None
    stand_in = next((character for character in _COLON_STAND_INS if character not in text),
                    None)
    if stand_in is None:
        return None
    return _compiled(_ENDING_COLON).sub(
        lambda found: found[0] if found["word"][:1] == "!" else f"{found['word']}{stand_in}",
        text), stand_in


def _colons_put_back(node: yaml.Node, stand_in: str) -> yaml.Node:
    """A document's node with each `stand_in` of its scalars made a `:` again."""
    seen: set[int] = set()
    todo = [node]
    while todo:
        current = todo.pop()
        if id(current) in seen:
            continue  # a node an alias shares
        seen.add(id(current))
        if isinstance(current, yaml.ScalarNode):
            current.value = current.value.replace(stand_in, ":")
        elif isinstance(current, yaml.SequenceNode):
            todo.extend(current.value)
        elif isinstance(current, yaml.MappingNode):
            todo.extend(item for pair in current.value for item in pair)
    return node


def _comment_problem(text: str, at: int) -> LoadProblem:
    """A comment or a trailing comma at `at` of a Kubernetes object written as JSON."""
    return InvalidYaml(
        "invalid JSON: a comment (`//`, `/* */`) or a comma before `}` or `]` is no JSON: "
        "kubectl and the API server reject this document", character_span(text, at))


def _commented_json(text: str) -> int | None:
    """Where the first comment or trailing comma of `text` is, if it is JSON with them
    (`tsconfig.json`, `devcontainer.json`, VS Code's settings) holding a Kubernetes
    object, which kubectl refuses; -1 if it holds none (another tool's file); None if it
    is no such JSON."""
    import json

    if "//" not in text and "/*" not in text and "," not in text:
        return None
    kept: list[str] = []
    first = comma = -1  # the first comment or trailing comma; the last comma kept
    at, end = 0, len(text)
    while at < end:
        character = text[at]
        if character == '"':
            close = at + 1
            while close < end and text[close] != '"':
                close += 2 if text[close] == "\\" else 1
            kept.append(text[at:close + 1])
            at = close + 1
        elif text.startswith(("//", "/*"), at):
            first = at if first == -1 else first
            close = text.find("\n" if text[at + 1] == "/" else "*/", at + 2)
            at = end if close == -1 else close + (text[at + 1] == "*") * 2
        else:
            if character in "}]":
                while kept and kept[-1].isspace():
                    kept.pop()
                if kept and kept[-1] == ",":
                    kept.pop()
                    first = comma if first == -1 else min(first, comma)
            comma = at if character == "," else comma
            kept.append(character)
            at += 1
    try:
        data = json.loads("".join(kept))
    except ValueError:
        return None
    return first if _applied(data) else -1


def _json_lines(text: str) -> bool:
    """Whether `text` is JSON Lines (a dataset: a JSON object or array on each line), which
    YAML reads no further than its first line, rather than a manifest gone wrong; its
    objects' keys may be left unquoted (`mongoimport`'s relaxed JSON, which YAML's flow
    style reads), where they are no Kubernetes objects; not a text with a `---` line (a
    manifest after them)."""
    rows = [line for line in text.splitlines()[:2] if line.strip()]
    return len(rows) == 2 and all(_row(row.strip()) for row in rows) and (
        _DOCUMENT_START.search(text) is None)  # a dataset holds no `---`


def _row(line: str) -> bool:
    """Whether a line is a JSON object or array, or an object of relaxed JSON."""
    import json

    try:
        return isinstance(json.loads(line), dict | list)
    except ValueError:
        pass
    try:
        row = yaml.load(line, Loader=_Loader) if line[:1] == "{" else None
    except yaml.YAMLError:
        return False
    return isinstance(row, dict) and not ("kind" in row and "apiVersion" in row)


def _collect(
    body: Any, index: int, found: Part, node: yaml.Node, builder: _Builder, text: str
) -> None:
    """Turn one document of `text` into objects: a mapping, a `kind: List` of them, or a
    finding (one that may be another tool's file is `doubtful`: said only beside
    objects)."""
    spans, first = builder.spans, builder.first  # the body is the container built last
    lines = builder.lines
    objects, problems = found.objects, found.problems
    if body is None:
        return
    if isinstance(body, list):
        if any(isinstance(item, dict) and "kind" in item for item in body):
            message = (
                "document is a list of objects, not a Kubernetes object: kubectl rejects it; "
                "separate the objects with `---` or wrap them in a `kind: List`"
            )
            # Said alone of a list of Trainer's objects; of others, beside objects only (a
            # Go test's golden output is such a list, and no one applies it).
            trainer = any(isinstance(item, dict) and isinstance(item.get("kind"), str)
                          and item["kind"] in TRAINER_KINDS for item in body)
            _add(found, NotAnObject(message, _span(node, lines)), doubtful=not trainer)
        return  # a list of anything else is some other YAML file: not ours to judge
    if not isinstance(body, dict):
        message = "document is a scalar, not a Kubernetes object: nothing in it is checked"
        _add(found, NotAnObject(message, _span(node, lines)), doubtful=True)
        return
    if "kind" not in body and "apiVersion" not in body:
        return  # some other YAML file (CI config, Helm values...): not ours to judge
    if body.get("kind") == "List" or str(body.get("kind", "")).endswith("List"):
        items = body.get("items")
        if isinstance(items, list):
            for position, item in enumerate(items):
                if isinstance(item, dict):
                    base = ("items", position)
                    item_first = entries_at(body, spans, first, base)
                    objects.append((item, index, base, spans, item_first, builder.nulls))
                else:
                    span = locate(body, spans, first, ("items", position))
                    problems.append(
                        NotAnObject(
                            f"`items[{position}]` of the List is not an object: it is not checked",
                            span,
                        )
                    )
            return
    objects.append((body, index, (), spans, first, builder.nulls))
    kind, version = body.get("kind"), body.get("apiVersion")
    if not isinstance(kind, str) or not isinstance(version, str):
        missing = "kind" if not isinstance(kind, str) else "apiVersion"
        meant = _meant_for_kubernetes(
            body, kind, version, json=_json_sniffed(text, node.start_mark.index))
        message = (f"object has no `{missing}` string: the API server rejects it, and no "
                   "rule can tell what it is")
        _add(found, NotAnObject(message, _span(node, lines)), doubtful=not meant)


def _applied(data: Any) -> bool:
    """Whether a JSON document is an object kubectl applies: a kind and an apiVersion of
    Kubernetes' shape, and `metadata` or a kind of Kubernetes' own (a `List` too); not a
    kubeconfig or a kubelet's configuration (`kind: Config`, no `metadata`), which their
    programs read as YAML, nor another tool's file of that shape."""
    if not isinstance(data, dict) or not isinstance(data.get("kind"), str):
        return False
    version = data.get("apiVersion")
    return isinstance(version, str) and _API_VERSION.fullmatch(version) is not None and (
        isinstance(data.get("metadata"), dict) or data["kind"] in KUBERNETES_KINDS
        or data["kind"] == "List")


def _as_read(
    problems: list[LoadProblem], builder: _Builder, body: Any, json: bool
) -> list[LoadProblem]:
    """A document's problems with its repeated keys and keys that are collections, as what
    reads it sees them. kubectl keeps a repeated key's last value, and a key written again
    as it was, with its value written again as it was, loses nothing. A key that is a
    collection is YAML's, not Kubernetes'. JSON takes a repeated name (RFC 8259: names
    SHOULD be unique), and tools write them (`lvm --reportformat json`). In another tool's
    YAML, keys written apart (`1` and `"1"`) are two for most readers, and a key written
    again with another value loses the first where the program reads it with PyYAML, which
    keeps the last (go-yaml v3, js-yaml and ruamel.yaml refuse the file)."""
    applied = _applied(body)
    kubernetes = applied or any(_fragment(item) or _kubernetes_shaped(item)
                                for item in (body if isinstance(body, list) else [body]))
    kubectl = kubernetes and (applied or not json)  # whose reading of a repeat is kubectl's
    read = _repeats_read([mapping for _, mapping in builder.repeats.values()])
    kept: list[LoadProblem] = []
    for problem in problems:
        if id(problem) in builder.kubernetes_only:
            if kubernetes:
                kept.append(problem)
            continue
        repeat = builder.repeats.get(id(problem))
        if repeat is None:
            kept.append(problem)
            continue
        key, key_alike, value_alike = read[id(repeat[0])]
        if kubectl:
            if not (key_alike and value_alike):
                kept.append(problem)
        elif key_alike and not value_alike and not (
                json and getattr(repeat[0], "style", None) == '"'):  # a name of JSON's
            kept.append(DuplicateKey(
                f"duplicate key `{key}` with another value: a program that reads it with "
                "PyYAML silently keeps the last value, and stricter parsers (go-yaml v3, "
                "js-yaml, ruamel.yaml) refuse the file", problem.span))
    return kept


def _repeats_read(mappings: list[yaml.Node]) -> dict[int, tuple[str, bool, bool]]:
    """Each repeated key of these mappings, by the id of its node: the key, and whether
    it and its value are written as before (one pass over each mapping)."""
    read: dict[int, tuple[str, bool, bool]] = {}
    for owner in {id(node): node for node in mappings}.values():
        before: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for key_node, value_node in owner.value:
            if key_node.tag == _MERGE or type(key_node) is not yaml.ScalarNode:
                continue
            key = key_node.value if key_node.tag is _STR else _key(key_node)
            if key in before:
                first_key, first_value = before[key]
                read[id(key_node)] = (key, _written_alike(first_key, key_node),
                                      _written_alike(first_value, value_node))
            before[key] = (key_node, value_node)
    return read


def _written_alike(first: yaml.Node, last: yaml.Node) -> bool:
    """Whether two nodes are written alike: the same texts and tags, plain or quoted alike
    (`1` and `"1"`, `3` and `3.0`, `false` and `n`, `!!str 8080` and `8080` are read apart
    by some readers)."""
    if first is last:
        return True
    if type(first) is not type(last) or len(first.value) != len(last.value):
        return False
    if isinstance(first, yaml.ScalarNode) and isinstance(last, yaml.ScalarNode):
        return bool(first.value == last.value and first.tag == last.tag
                    and (first.style in _PLAIN) == (last.style in _PLAIN))
    if type(first) is yaml.MappingNode:
        return all(_written_alike(a, b) and _written_alike(x, y)
                   for (a, x), (b, y) in zip(first.value, last.value, strict=True))
    return all(map(_written_alike, first.value, last.value))


#: How libyaml marks a plain scalar's style.
_PLAIN = ("", None)


def _kubernetes_shaped(item: Any) -> bool:
    """Whether a document's mapping is, or was meant as, an object kubectl reads: a kind
    and an apiVersion of Kubernetes' shape, or half of them (`_meant_for_kubernetes`)."""
    if not isinstance(item, dict):
        return False
    kind, version = item.get("kind"), item.get("apiVersion")
    return (isinstance(kind, str) and isinstance(version, str)
            and _API_VERSION.fullmatch(version) is not None) or _meant_for_kubernetes(
        item, kind, version)


def _meant_for_kubernetes(
    body: dict[str, Any], kind: object, version: object, *, json: bool = False
) -> bool:
    """Whether a mapping with half of what makes an object was meant as one: a kind of
    Trainer's, a kind of Kubernetes' with `metadata`, or any kind with `metadata` and a
    `spec` (not `kind: pipeline`, `kind: Kustomization`, `kind: ZarfPackageConfig`) in
    YAML or beside an apiVersion (JSON of that shape with no apiVersion is a program's
    own: a quota manager's `kind: QuotaTree`); or an apiVersion of Kubernetes' shape with
    `metadata`, or with a `spec` and a group that has a dot or is Kubernetes' own
    (`argoproj.io/v1alpha1`, `apps/v1`; not Helm's `apiVersion: v2`, nor istio's
    `release-notes/v2`, nor a test suite's file that names the API it tests)."""
    metadata = isinstance(body.get("metadata"), dict)
    if isinstance(kind, str):
        return kind in TRAINER_KINDS or (metadata and (
            kind in KUBERNETES_KINDS or ("spec" in body and (
                "apiVersion" in body or not json))))
    shape = _API_VERSION.fullmatch(version) if isinstance(version, str) else None
    if shape is None or shape[1] in _KIND_FILLED:
        return False
    return metadata or ("spec" in body and shape[1] is not None and (
        "." in shape[1] or shape[1] in _UNDOTTED_GROUPS))


def _add(found: Part, problem: LoadProblem, *, doubtful: bool) -> None:
    found.problems.append(problem)
    if doubtful:
        found.doubtful.append(problem)


#: A Kubernetes apiVersion's shape: `v1`, or a group and a version (`apps/v1`).
_API_VERSION = re.compile(r"(?:([a-z0-9-]+(?:\.[a-z0-9-]+)*)/)?v\d+(?:(?:alpha|beta)\d+)?")
#: The groups without a dot, all Kubernetes' own: every other has one (a custom resource's
#: must), so an apiVersion alone names a Kubernetes object only with one of these or a dot
#: (not istio's `release-notes/v2`).
_UNDOTTED_GROUPS = frozenset({"apps", "batch", "autoscaling", "policy", "extensions"})
#: The groups of files whose tool fills in the kind it reads (kustomize's
#: `kustomization.yaml`, which may carry `metadata` and no kind).
_KIND_FILLED = frozenset({"kustomize.config.k8s.io"})


def _syntax_problem(error: yaml.MarkedYAMLError) -> LoadProblem:
    mark = error.problem_mark or error.context_mark
    line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    detail = error.problem or error.context or "syntax error"
    if error.context and error.problem:
        detail = f"{error.problem} ({error.context})"
    return InvalidYaml(
        f"invalid YAML: {detail}: kubectl and the API server reject this document",
        Span(line, column, line, column + 1),
    )


def _needs_guards(text: str) -> bool:
    """Whether a document of `text` could exceed a limit while it is composed: one that
    is long, or holds many nesting indicators (most files have neither)."""
    if len(text) <= _GUARD_INDICATORS:
        return False
    if len(text) <= _GUARD_CHARACTERS and _indicators(text, 0, len(text)) <= _GUARD_INDICATORS:
        return False
    starts = [match.start() + 1 for match in _DOCUMENT_START.finditer(text)]
    for start, end in zip([0, *starts], [*starts, len(text)], strict=True):
        if end - start > _GUARD_CHARACTERS or _indicators(text, start, end) > _GUARD_INDICATORS:
            return True
    return False


def _indicators(text: str, start: int, end: int) -> int:
    return sum(text.count(char, start, end) for char in "[{-:?")


def _nesting_refused(text: str, error: yaml.MarkedYAMLError) -> LoadProblem | None:
    """libyaml's own refusal of deep nesting (PyYAML 6.0.4 on) as ours: `TooComplex` where the
    document first nests deeper than `MAX_DEPTH`. Its scanner looks ahead, so it can
    refuse before the composer is past our limit: the text it took is measured with the
    event parser. None when that finds no collection too deep: the nesting then lies in
    a key longer than libyaml takes (1,024 characters), a syntax error, reported as any
    other (releases without the refusal find that the key has no `:`)."""
    mark = error.problem_mark
    if mark is None or _LIBYAML_TOO_DEEP not in str(error.problem):
        return None
    depth = 0
    too_deep: Any = None  # a Mark: the C parser's, or the pure Python one
    try:
        for event in yaml.parse(text[: mark.index], Loader=yaml.CSafeLoader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH and too_deep is None:
                    too_deep = event.start_mark
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
            elif isinstance(event, yaml.DocumentStartEvent):
                too_deep = None  # the refused document is the last one begun
    except yaml.YAMLError:
        pass  # the text ends inside the refused document
    return None if too_deep is None else _too_deep(too_deep, rest=True)


def _too_deep(mark: Any, *, rest: bool, lines: int = 0) -> LoadProblem:
    """`TooComplex` at the start of the first collection nested deeper than `MAX_DEPTH` (`rest`:
    the documents after it are not read either)."""
    scope = "it is not checked, nor is the rest of the file" if rest else "it is not checked"
    return TooComplex(
        f"document nests deeper than {MAX_DEPTH} levels: {scope}", _point(mark, lines)
    )


def _point(mark: Any, lines: int = 0) -> Span:
    """The first character at a libyaml mark, in a piece that `lines` lines come before."""
    line = mark.line + lines + 1
    return Span(line, mark.column + 1, line, mark.column + 2)


class _Refused(Exception):
    def __init__(self, problem: LoadProblem) -> None:
        self.problem = problem


#: The places of a mapping's keys before one repeats: shared, never written (a dict made
#: for every mapping cost 1.5 % of the instructions of a run on 100 benchmark files).
_NO_PLACES: dict[str, int] = {}


class _Builder:
    """Walks a composed node tree into plain data, with the limits that keep it bounded.

    This is the hot path of every run: scalars, most of the nodes, are built in the loops
    of their collections, and spans are recorded inline (see `trainlint.document.locate`
    for their layout).
    """

    def __init__(self, root: yaml.Node, lines: int) -> None:
        self.root = root
        #: The lines before the piece of text the document is in.
        self.lines = lines
        self.nodes = 1
        self.problems: list[LoadProblem] = []
        #: The spans of the whole document: each container appends its entries when built,
        #: after those of the containers it holds, so the entries of one are contiguous.
        self.spans = array("I")
        #: Where the entries of the container built last start.
        self.first = 0
        #: Whether a mapping sets a key to null (see `Manifest.nulls`).
        self.nulls = False
        #: The node of each repeated key, and of its mapping, by the id of its problem.
        self.repeats: dict[int, tuple[yaml.Node, yaml.Node]] = {}
        #: The problems only Kubernetes has with the text (a key that is a collection,
        #: which YAML takes), by id.
        self.kubernetes_only: set[int] = set()

    def build(self, node: yaml.Node, depth: int = 0) -> Any:
        if type(node) is yaml.ScalarNode:
            return _scalar(node)
        if depth >= MAX_DEPTH:
            raise _Refused(_too_deep(node.start_mark, rest=False, lines=self.lines))
        self.nodes += len(node.value)
        if self.nodes > MAX_NODES:
            raise _Refused(
                TooComplex(
                    f"document expands to more than {MAX_NODES:,} nodes "
                    "(aliases of aliases?): it is not checked",
                    _point(self.root.start_mark, self.lines),
                )
            )
        if type(node) is yaml.MappingNode:
            return self._mapping(node, depth + 1)
        items: list[Any] = []
        spans: list[int] = []
        lines = self.lines
        for item in node.value:
            start, end = item.start_mark, item.end_mark
            if type(item) is not yaml.ScalarNode:
                items.append(self.build(item, depth + 1))
                spans += (start.line + lines, start.column, end.line + lines, end.column,
                          self.first)
                continue
            if item.tag is _STR:  # most scalars: a string, built here
                items.append(sys.intern(item.value))
            else:
                items.append(_scalar(item))
            spans += (start.line + lines, start.column, end.line + lines, end.column, 0)
        self._add(spans)
        return items

    def _mapping(self, node: yaml.Node, depth: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        spans: list[int] = []
        places = _NO_PLACES  # where each key is: made at a repeated one (`_repeated`)
        merged: list[tuple[yaml.Node, yaml.Node]] = []
        lines = self.lines
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                merged.append((key_node, value_node))
                continue
            if type(key_node) is not yaml.ScalarNode:
                problem = InvalidYaml(
                    "invalid YAML: a mapping key must be a scalar for Kubernetes",
                    _span(key_node, lines),
                )
                self.problems.append(problem)
                self.kubernetes_only.add(id(problem))
                continue
            # Keys repeat in every object: share them. One that is no string is the text
            # kubectl gives it (`y:` is the key `true`, `0x10:` is `16`).
            key = sys.intern(key_node.value if key_node.tag is _STR else _key(key_node))
            if type(value_node) is not yaml.ScalarNode:
                value = self.build(value_node, depth)
                value_first = self.first
            elif value_node.tag is _STR:  # most scalars: a string, built here
                value, value_first = sys.intern(value_node.value), 0
            else:
                value, value_first = _scalar(value_node), 0
                self.nulls = self.nulls or value is None
            start, end = key_node.start_mark, key_node.end_mark
            entry = (start.line + lines, start.column, end.line + lines, end.column, value_first)
            if key in result:
                places = self._repeated(key, key_node, node, result, places)
                slot = ENTRY * places[key]
                spans[slot : slot + ENTRY] = entry
            else:
                spans += entry
                if places:  # a table made at a repeated key: kept up as keys come
                    places[key] = len(result)
            result[key] = value
        if merged:
            self._merge(merged, result, spans, depth)
        self._add(spans)
        return result

    def _merge(
        self, merged: list[tuple[yaml.Node, yaml.Node]], result: dict[str, Any],
        spans: list[int], depth: int,
    ) -> None:
        """Add the keys of `<<` merges a mapping does not set itself (they point at their
        `<<`)."""
        for key_node, value_node in merged:
            is_list = isinstance(value_node, yaml.SequenceNode)
            for source in value_node.value if is_list else [value_node]:
                extra = self.build(source, depth)
                extra_first = self.first
                for position, (key, value) in enumerate(mapping(extra).items()):
                    if key not in result:
                        value_first = self.spans[ENTRY * (extra_first + position) + 4]
                        spans += (*_marks(key_node, self.lines), value_first)
                        result[key] = value

    def _repeated(
        self, key: str, key_node: yaml.Node, node: yaml.Node, result: dict[str, Any],
        places: dict[str, int],
    ) -> dict[str, int]:
        """Report a key a mapping repeats; where each of its keys is, made at the first
        (a tool's JSON may repeat thousands: looking each up in the keys was quadratic, 22 s
        for 30,000; `_mapping` keeps the table up as keys come)."""
        problem = DuplicateKey(
            f"duplicate key `{key}`: kubectl silently keeps the last value (other tools keep "
            "the first, or refuse the file)", _span(key_node, self.lines))
        self.problems.append(problem)
        self.repeats[id(problem)] = (key_node, node)
        return places if key in places else {name: at for at, name in enumerate(result)}

    def _add(self, spans: list[int]) -> None:
        """Append the entries of a container just built."""
        document = self.spans
        self.first = len(document) // ENTRY
        document.fromlist(spans)


def _scalar(node: yaml.ScalarNode) -> Any:
    """A scalar's value as kubectl's decoder reads it (`_Resolver`: `on`/`y` are booleans,
    timestamps text)."""
    tag, value = node.tag, node.value
    if tag is _STR:  # what `_Loader.resolve` answers for most scalars
        return sys.intern(value)  # values repeat across objects: a long file shares them
    named = _GO_NAMED.get(value)
    if named is not None and named[0] == tag:
        return named[1]
    if tag == _NULL:
        return None
    if tag == _INT:
        number = _go_int(value)
        if number is not None:
            return number
    if tag == _FLOAT:
        real = _go_float(value)
        if real is not None:  # sent as JSON, where `8.0` is `8`: an integer field takes it
            return int(real) if real.is_integer() and abs(real) < 2**63 else real
    return value  # strings, timestamps (kept as written), custom tags


def _key(node: yaml.ScalarNode) -> str:
    """A mapping key that is no string, as sigs.k8s.io/yaml writes it in the JSON kubectl
    sends: a boolean or an integer as Go prints it; anything else as written."""
    value = _scalar(node)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value) if isinstance(value, int) else str(node.value)


def _span(node: yaml.Node, lines: int) -> Span:
    """Where a node is, in a piece that `lines` lines come before."""
    line, column, end_line, end_column = _marks(node, lines)
    return Span(line + 1, column + 1, end_line + 1, end_column + 1)


def _marks(node: yaml.Node, lines: int) -> tuple[int, int, int, int]:
    """libyaml's marks of a node (0-based), in a piece that `lines` lines come before."""
    start, end = node.start_mark, node.end_mark
    return start.line + lines, start.column, end.line + lines, end.column


# --- long files, in slices ---

#: A file of more bytes than this is read in slices of whole documents (`slices`), each
#: parsed and checked on its own and let go: memory holds one slice at a time, not the
#: file, and the slices of one file spread over processes as files do.
SLICED_BYTES = 512 * 1024
#: The bytes of a slice, about: small enough that a process holds little, large enough
#: that a slice's own costs (a parse set up, a result sent) stay a small share.
SLICE_BYTES = 64 * 1024
#: How far before a cut a directive is looked for (`_after_directive`), in bytes.
_LOOK_BACK_BYTES = 8 * 1024
_DOCUMENT_START_BYTES = re.compile(rb"\n---(?=[ \t\r\n]|\Z)")
#: Line breaks libyaml counts besides LF and CRLF (NEL, LS, PS in UTF-8): a file that holds
#: one is not cut, its lines would be counted wrong.
_OTHER_BREAKS_BYTES = (b"\xc2\x85", b"\xe2\x80\xa8", b"\xe2\x80\xa9")


class Slice(NamedTuple):
    """A run of whole documents of a long file, read and parsed on its own: where its bytes
    start and end, and how many lines and documents of the file come before it."""

    start: int
    end: int
    lines: int
    documents: int


class Sliced(NamedTuple):
    """A long file, cut: its slices (the next one's `documents` closes each), how many
    documents it holds, the digest of its bytes, and whether they begin with a BOM."""

    slices: list[Slice]
    documents: int
    digest: str
    bom: bool


def slices(name: str, hashed: Any) -> Sliced | None:
    """`name` cut into slices of about `SLICE_BYTES` at lines that start a document (where
    `_pieces` cuts a text, and not right after a suppression comment, which applies to
    such a line), found in one pass over its bytes, a block at a time: the file is never
    held whole. Its bytes are fed to `hashed` (a hash object). None when it
    cannot be cut: a line break other than LF or CRLF, a start that libyaml may read
    otherwise, or no line to cut at."""
    cuts: list[tuple[int, int, int]] = []  # (byte, lines before, document starts before)
    buffer = b""
    offset = 0  # where `buffer` starts in the file
    scanned = 0  # what is counted: lines and document starts before it
    lines = starts = 0
    first: int | None = None  # the first line that starts a document
    bom = False
    for block, last in _with_last(blocks(name)):
        hashed.update(block)
        if not offset and not buffer:
            bom = block.startswith(BOM)
        buffer += block
        if any(mark in buffer for mark in _OTHER_BREAKS_BYTES) or (
            buffer.count(b"\r") != buffer.count(b"\r\n") and not buffer.endswith(b"\r")
        ):
            return None
        # A match needs the byte after `---`: the last four wait for the next block.
        until = len(buffer) if last else max(0, len(buffer) - 4)
        for match in _DOCUMENT_START_BYTES.finditer(buffer, max(0, scanned - offset - 1), until):
            cut = offset + match.start() + 1
            lines += buffer.count(b"\n", scanned - offset, cut - offset)
            scanned = cut
            if first is None:
                first = cut
            previous = cuts[-1][0] if cuts else 0
            if cut - previous >= SLICE_BYTES and not _directive_before(
                    buffer, cut - offset, whole=not offset) and not _suppression_before(
                    buffer, cut - offset, whole=not offset):
                cuts.append((cut, lines, starts))
            starts += 1
        lines += buffer.count(b"\n", scanned - offset, until)
        scanned = offset + until
        keep = max(0, min(len(buffer), _LOOK_BACK_BYTES))
        offset += len(buffer) - keep
        buffer = buffer[len(buffer) - keep :]
    if not cuts or first is None:
        return None
    head = read_range(name, 0, first).removeprefix(BOM) if first else b""
    implicit = _documents_in(head)
    if implicit is None:
        return None
    size = offset + len(buffer)
    edges = [(0, 0, 0), *((byte, before, implicit + documents) for byte, before, documents in cuts),
             (size, lines, implicit + starts)]
    found = [Slice(start, end, before, documents)
             for (start, before, documents), (end, _, _) in itertools.pairwise(edges)]
    return Sliced(found, implicit + starts, hashed.hexdigest(), bom)


def _with_last(items: Iterator[T]) -> Iterator[tuple[T, bool]]:
    """Each item, and whether it is the last one."""
    previous: list[T] = []
    for item in items:
        if previous:
            yield previous[0], False
        previous = [item]
    if previous:
        yield previous[0], True


def _suppression_before(buffer: bytes, cut: int, *, whole: bool) -> bool:
    """Whether a suppression comment may stand on its own line before the line at `cut`,
    with only blank and comment lines between: it then applies to the line at `cut`
    (`suppression.comment_entries`), which a slice that ends before it does not hold.
    Judged on the bytes before it that `buffer` holds (`whole`: all of the file's, from
    its start); where they are too few to tell, as if it might."""
    end = cut - 1  # the line break before the line
    while True:
        start = buffer.rfind(b"\n", 0, end) + 1
        if not start and not whole:
            return True  # the line may begin before the bytes at hand
        line = buffer[start:end].strip(b" \t\r")
        if line and not line.startswith(b"#"):
            return False
        if b"trainlint:" in line:
            return True
        if not start:
            return False
        end = start - 1


def _directive_before(buffer: bytes, cut: int, *, whole: bool) -> bool:
    """Whether the line at `cut` may follow a directive (`_after_directive`), judged on
    the bytes before it that `buffer` holds (`whole`: all of the file's, from its start);
    where they are too few to tell, as if it might."""
    start = max(0, cut - _LOOK_BACK_BYTES)
    text = buffer[start:cut].decode("utf-8", "replace")
    if start or not whole:  # the look-back may run past what is here
        significant = [line for line in text.split("\n")[1:]
                       if line.strip(" \t\r") and not line.strip(" \t\r").startswith("#")]
        if not significant:
            return True
    return _after_directive(text, len(text))


def _documents_in(head: bytes) -> int | None:
    """How many documents libyaml reads in the bytes before a file's first line that
    starts one (0 or 1: an implicit first document); None when it cannot tell."""
    significant = [line for line in head.splitlines()
                   if line.strip() and not line.lstrip().startswith(b"#")]
    if not significant:
        return 0
    if not any(line.startswith((b"%", b"...")) for line in significant):
        # No `---` before it (it ends at the first), no end marker, no directive: one
        # document, told without parsing what may be all of a long file's first object
        # (istio's CRDs: 0.45 ms for its 33 KB head, against 3 ms parsed).
        return 1
    try:
        events = yaml.parse(head.decode("utf-8"), Loader=yaml.CSafeLoader)
        return sum(isinstance(event, yaml.DocumentStartEvent) for event in events)
    except (UnicodeDecodeError, yaml.YAMLError):
        return None


def load_slice(name: str, piece: Slice, documents: int, bom: bool) -> tuple[Loaded, bool]:
    """The objects and problems of one slice of a long file (`slices`), placed where they
    are in the file: lines and documents after those before it; its Source holds its own
    text, `lines` after the file's start. Whether it stopped: libyaml stopped before its
    end, or it holds other than its `documents` (the scan's count), so that the file must
    be read whole to know what it holds."""
    data = read_range(name, piece.start, piece.end)
    if bom and not piece.start:
        data = data.removeprefix(BOM)
    text, problems = decode(data, name)
    problems = [_shifted(problem, piece.lines) for problem in problems]
    part = _part(text, (0, len(text), piece.lines), _needs_guards(text))
    source = Source(name, text, bom, piece.lines)
    loaded = _joined(source, problems, [part], piece.documents, doubtful=True)
    return loaded, part.stopped or part.documents != documents


def _shifted(problem: LoadProblem, lines: int) -> LoadProblem:
    """A problem found in a text that `lines` lines come before, placed in the file."""
    if not lines:
        return problem
    span = problem.span
    return type(problem)(problem.message, Span(span.line + lines, span.column,
                                               span.end_line + lines, span.end_column))
