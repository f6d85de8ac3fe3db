"""Applies rule fixes on the round-trip tree, and writes the result atomically.

ruamel.yaml's round trip keeps comments but not every byte: it respaces flow collections,
drops `...` and normalises indentation. So the file is never replaced by a dump. The
tree is dumped twice, before and after the edits; the lines that differ between the two
dumps are the edits, and only those are spliced into the original text (a three-way
merge with the unedited dump as the common ancestor). Every other byte, other documents
and separators included, stays as it was. The spliced text must then load to the same
data as the edited dump, or the file is left alone.

Fixing runs in passes: apply the fixes of the current findings, check again, repeat until
nothing changes (or `MAX_PASSES`), so fixes that depend on each other converge.
"""

from __future__ import annotations

import contextlib
import difflib
import errno
import functools
import io
import itertools
import os
import pickle
import re
import stat
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from trainlint import roundtrip
from trainlint.document import InvalidYaml, Loaded
from trainlint.files import read_bytes
from trainlint.finding import Finding
from trainlint.loader import load
from trainlint.problem import TextEdit

#: Why a file behind a symbolic link out of the folders checked is not written.
OUTSIDE_TREE = (
    "it is a symbolic link to a file outside the folders checked (`--write-outside-tree` "
    "writes it)"
)
#: Passes of fix-then-check before giving up on convergence.
MAX_PASSES = 5
#: Template syntax (Helm, Jinja, Go templates): such files are never rewritten.
TEMPLATE = "{{"
#: A line break other than `\n`: `\r\n`, or `\r` alone.
_LINE_BREAK = re.compile(r"\r\n?")
#: A line and its ending (none for the last one, maybe).
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_KEY_LINE = re.compile(r"^(?P<indent>[ -]*)(?P<key>[^\s#-][^#]*?):\s*(?:#.*)?$")


class Unfixable(Exception):
    """Why a file is not fixed; the message completes `<file>: not fixed: ...`."""


@dataclass
class FileFix:
    """What fixing did to one input."""

    name: str
    original: str
    text: str
    #: The findings whose fixes were applied, over all passes.
    applied: list[Finding] = field(default_factory=list)
    #: Why the file (or some of its fixes) was not fixed.
    notes: list[str] = field(default_factory=list)
    #: The bytes began with a byte order mark (`Source.bom`), which the fixed bytes keep,
    #: as they keep the codec (`Source.encoding`).
    bom: bool = False
    encoding: str = "utf-8"

    @property
    def changed(self) -> bool:
        return self.text != self.original

    def encoded(self, text: str) -> bytes:
        """The bytes of `text` (the original or the fixed one) as the file holds them."""
        return with_bom(text, self.bom).encode(self.encoding)

    def diff(self) -> str:
        """A unified diff of the fix, as `git apply` reads it: lines end at `\\n` alone, as
        git's do (a `\\r` is a character of a line), a last line without one is followed
        by git's marker (else the next file's header ran on after it), and a name goes
        in the headers as git writes it (`_git_quoted`)."""
        return "".join(
            line if line.endswith("\n") else f"{line}\n\\ No newline at end of file\n"
            for line in difflib.unified_diff(
                _PATCH_LINE.findall(self.original), _PATCH_LINE.findall(self.text),
                _git_quoted(f"a/{self.name}"), _git_quoted(f"b/{self.name}"),
            )
        )


#: A line as git reads a patch's: up to `\\n`, or the end of the text.
_PATCH_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")
#: How git writes each byte of a name it quotes in a patch (`quote.c`): printable ASCII as
#: it is, but a quote and a backslash, which it escapes as C does, as it does the controls
#: C names; the other bytes in octal (`\\377`).
_GIT_BYTES = {
    **{byte: chr(byte) if 0x20 <= byte < 0x7F else f"\\{byte:03o}" for byte in range(256)},
    **{byte: f"\\{letter}"
       for byte, letter in zip(b'\a\b\t\n\v\f\r"\\', 'abtnvfr"\\', strict=True)},
}


def _git_quoted(name: str) -> str:
    """`name` as git writes it in a patch: as it is, or in double quotes where a byte needs
    an escape. Written raw, the name of a file that is not UTF-8 is no text, and a line
    break in one cuts the header."""
    raw = os.fsencode(name)
    quoted = "".join(_GIT_BYTES[byte] for byte in raw)
    return name if len(quoted) == len(raw) else f'"{quoted}"'


def with_bom(text: str, bom: bool) -> str:
    """`text`, after a byte order mark if its bytes began with one."""
    return "\ufeff" + text if bom else text


Relint = Callable[[list[Loaded]], list[Finding]]


def fix_all(
    inputs: Sequence[Loaded], relint: Relint, wanted: Callable[[Finding], bool]
) -> tuple[list[Loaded], list[Finding], dict[str, FileFix]]:
    """Fix every input in passes until nothing changes; the inputs and findings after the
    last pass, and what happened to each file that had something to fix."""
    loaded = list(inputs)
    findings = relint(loaded)
    files: dict[str, FileFix] = {}
    blocked: set[str] = set()
    for _ in range(MAX_PASSES):
        todo = _fixable(findings, wanted, blocked)
        changed = False
        for position, item in enumerate(loaded):
            name = item.source.name
            if name not in todo:
                continue
            entry = files.setdefault(
                name, FileFix(name, item.source.text, item.source.text, bom=item.source.bom,
                        encoding=item.source.encoding)
            )
            try:
                broken = any(isinstance(problem, InvalidYaml) for problem in item.problems)
                if broken and TEMPLATE not in item.source.text:
                    raise Unfixable("it cannot be read exactly (see TL001)")
                text, applied = apply(item.source.text, todo[name])
            except Unfixable as error:
                entry.notes.append(f"{name}: not fixed: {error}")
                blocked.add(name)
                continue
            entry.applied.extend(applied)
            if text != item.source.text:
                loaded[position] = load(text, name, bom=item.source.bom,
                                        encoding=item.source.encoding)
                entry.text = text
                changed = True
        if not changed:
            break
        findings = relint(loaded)
    else:
        for name, left in _fixable(findings, wanted, blocked).items():
            codes = ", ".join(sorted({finding.code for finding in left}))
            files[name].notes.append(
                f"{name}: fixes of {codes} did not settle after {MAX_PASSES} passes; "
                "please report this with the file"
            )
    return loaded, findings, files


def _fixable(
    findings: list[Finding], wanted: Callable[[Finding], bool], blocked: set[str]
) -> dict[str, list[Finding]]:
    todo: dict[str, list[Finding]] = {}
    for finding in findings:
        repairable = finding.fix is not None and (
            finding.manifest is not None or finding.fix.rewrite is not None
        )
        if repairable and finding.file not in blocked and wanted(finding):
            todo.setdefault(finding.file, []).append(finding)
    return todo


def apply(text: str, findings: Sequence[Finding]) -> tuple[str, list[Finding]]:
    """`text` with the fixes of `findings` applied, and the findings whose edits ran:
    rewrites of the text first (they touch comments, never the data), then the edits of
    the round-trip tree."""
    if TEMPLATE in text:
        raise Unfixable(
            "it contains template syntax (`{{ ... }}`), which a YAML rewrite would break"
        )
    applied = []
    for finding in findings:
        assert finding.fix is not None
        if finding.fix.rewrite is not None:
            try:
                text = finding.fix.rewrite(text)
            except LookupError:
                continue  # an earlier fix changed this line: the next pass checks again
            applied.append(finding)
    edits = [finding for finding in findings if finding.fix and finding.fix.rewrite is None]
    if edits and in_flow_style(text):
        raise Unfixable(
            "it is written in flow style (JSON), and an edit would write its objects as "
            "YAML, which a JSON reader refuses: fix it by hand"
        )
    if edits:
        text, edited = _edit_tree(text, edits)
        applied += edited
    return text, applied


def in_flow_style(text: str) -> bool:
    """Whether a document of `text` is one flow collection (`{...}`: JSON, or YAML
    written as JSON), as the parser reads it: after comments, `---`, tags or directives."""
    import yaml

    after_start = False
    try:
        for event in yaml.parse(text, Loader=yaml.CSafeLoader):
            if after_start and isinstance(event, yaml.CollectionStartEvent) and event.flow_style:
                return True
            after_start = isinstance(event, yaml.DocumentStartEvent)
    except yaml.YAMLError:
        pass  # what it read so far is judged; the rest cannot be edited anyway
    return False


def _edit_tree(text: str, findings: Sequence[Finding]) -> tuple[str, list[Finding]]:
    """`text` with the tree edits of `findings` spliced in (see the module's docstring),
    each document that has some round-tripped alone: in a dump of the whole file, an edit
    at the end of one document took the layout of the next one (a comment-only document
    became `--- null`). The whole file at once where it cannot be cut."""
    pieces, by_document = _cut(text, findings)
    every = lines(text)
    newline = most_common_ending(every)
    applied: dict[int, list[Finding]] = {}
    for number in sorted(pieces, reverse=True):  # the last first: the lines before stay put
        start, end = pieces[number]
        piece = "".join(every[start:end])
        parser, documents = _load_tree(piece)
        fixed, applied[number] = _spliced(
            piece, parser, documents, _dump(parser, documents), by_document[number],
            first=number, newline=newline)
        every[start:end] = lines(fixed)
    return "".join(every), [finding for number in sorted(applied) for finding in applied[number]]


def _cut(
    text: str, findings: Sequence[Finding]
) -> tuple[dict[int, tuple[int, int | None]], dict[int, list[Finding]]]:
    """The lines of each document of `text` that `findings` (tree edits) land on
    (`_document_lines`), and its findings; where the file cannot be cut, one piece of all
    of it, holding every finding, as document 0."""
    by_document: dict[int, list[Finding]] = {}
    for finding in findings:
        assert finding.manifest is not None
        by_document.setdefault(finding.manifest.document, []).append(finding)
    pieces = _document_lines(text, sorted(by_document))
    if pieces is None:
        return {0: (0, None)}, {0: list(findings)}
    return pieces, by_document


def _load_tree(text: str) -> tuple[Any, list[Any]]:
    """The round-trip parser for `text` and the documents it reads from it."""
    work = _LINE_BREAK.sub("\n", text)  # the round trip reads and writes `\n` alone
    parser = _round_trip(work)
    try:
        return parser, list(parser.load_all(work))
    except Exception as error:  # ruamel raises many unrelated types for bad input
        raise Unfixable(f"the round-trip parser cannot read it ({type(error).__name__})") from None


def _spliced(
    text: str, parser: Any, documents: list[Any], before: str, findings: Sequence[Finding],
    first: int = 0, newline: str | None = None,
) -> tuple[str, list[Finding]]:
    """`text` with the edits of `findings` made on `documents` (which `before` dumps, and
    which they change) spliced in; `text` holds the file's documents from number `first`."""
    applied = []
    for finding in findings:
        assert finding.fix is not None and finding.fix.edit is not None
        assert finding.manifest is not None
        manifest = finding.manifest
        try:
            node = roundtrip.at(documents[manifest.document - first], manifest.base)
            finding.fix.edit(node)
        except (roundtrip.Stale, IndexError):
            continue  # an earlier fix changed this part: the next pass checks again
        applied.append(finding)
    after = _dump(parser, documents)
    if after == before:
        return text, []
    merged = "".join(merge(lines(text), lines(before), lines(after), newline))
    expected = _data(after)
    # A node takes a character at the least: both texts' length never cuts a file short.
    if expected is None or not same_data(_data(merged), expected, len(merged) + len(after)):
        raise Unfixable("its layout could not be kept around the fixed lines")
    return merged, applied


def merge(
    original: list[str], before: list[str], after: list[str], newline: str | None = None
) -> list[str]:
    """`original` with the changes from `before` to `after` spliced in.

    `before` is `original` as a dump lays it out: lines equal in both are anchors. Each
    edit replaces the original lines between its anchors; an edit with no anchor at an
    end grows over its unanchored neighbours, so only lines of (or right beside) edited
    nodes take the dump's layout. Original lines are kept as written, line ending
    included; the dump's lines (which end in `\n`) take `newline`, by default the ending
    most of `original` has (a document of a file: the file's, `most_common_ending`).
    """
    if original == before:
        return after
    newline = newline or most_common_ending(original)
    anchors = _equal_lines(before, [_LINE_BREAK.sub("\n", line) for line in original])
    hunks: list[list[int]] = []
    for tag, low, high, new_low, new_high in difflib.SequenceMatcher(
        None, before, after, autojunk=False
    ).get_opcodes():
        if tag != "equal":
            hunks.append([low, high, new_low, new_high])
    spans: list[tuple[int, int, int, int]] = []
    while hunks:
        low, high, new_low, new_high = hunks.pop(0)
        first = _start(anchors, low, high)
        last = _end(anchors, low, high, len(before), len(original))
        if first is None or last is None:
            # Grow over an unanchored neighbour (an equal line, or the next edit).
            if first is None:
                low, new_low = low - 1, new_low - 1
            else:
                high, new_high = high + 1, new_high + 1
            if hunks and high > hunks[0][0]:
                _, high, _, new_high = hunks.pop(0)
            if spans and low < spans[-1][1]:
                low, _, new_low, _ = spans.pop()
            hunks.insert(0, [low, high, new_low, new_high])
            continue
        spans.append((low, high, new_low, new_high))
    result: list[str] = []
    done = 0
    for low, high, new_low, new_high in spans:
        first = _start(anchors, low, high)
        last = _end(anchors, low, high, len(before), len(original))
        assert first is not None and last is not None
        result += original[done:first]
        result += [line[:-1] + newline if line.endswith("\n") else line
                   for line in after[new_low:new_high]]
        done = last
    return result + original[done:]


def most_common_ending(original: list[str]) -> str:
    endings = Counter(line[len(line.rstrip("\r\n")) :] for line in original)
    return max(("\n", "\r\n", "\r"), key=lambda ending: endings[ending])


def _start(anchors: dict[int, int], low: int, high: int) -> int | None:
    """Where in the original the lines `before[low:high]` begin, if an anchor says."""
    if low < high and low in anchors:
        return anchors[low]
    if low == 0:
        return 0
    if low - 1 in anchors:
        return anchors[low - 1] + 1
    return anchors[low] if low == high and low in anchors else None


def _end(anchors: dict[int, int], low: int, high: int, size: int, original: int) -> int | None:
    """Where in the original the lines `before[low:high]` end, if an anchor says."""
    if low == high:
        return _start(anchors, low, high)  # an insertion replaces nothing
    if high - 1 in anchors:
        return anchors[high - 1] + 1
    if high == size:
        return original
    return anchors.get(high)


def _equal_lines(left: list[str], right: list[str]) -> dict[int, int]:
    """Index in `left` → index in `right` of the lines a diff keeps."""
    pairs = {}
    for tag, start, end, other, _ in difflib.SequenceMatcher(
        None, left, right, autojunk=False
    ).get_opcodes():
        if tag == "equal":
            pairs.update({start + offset: other + offset for offset in range(end - start)})
    return pairs


def lines(text: str) -> list[str]:
    """The lines of `text`, each with its ending, broken where YAML breaks them (`\r\n`,
    `\r` or `\n`; not at the form feeds and other separators `str.splitlines` knows)."""
    return _LINE.findall(text)


def same_data(left: object, right: object, budget: int) -> bool:
    """Whether two loaded texts hold the same data, in at most `budget` steps (Unfixable
    beyond). Each pair of containers is compared once: an alias bomb shares its
    containers, and `==` would walk every expansion of them (a ten-level bomb in another
    document of the file took half a minute)."""
    seen: set[tuple[int, int]] = set()
    pending = [(left, right)]
    while pending:
        budget -= 1
        if budget < 0:
            raise Unfixable("it is too large to check that its layout was kept")
        first, second = pending.pop()
        if not isinstance(first, dict | list) or not isinstance(second, dict | list):
            if first != second:  # two scalars, or a scalar and a container
                return False
            continue
        if (id(first), id(second)) in seen:
            continue
        seen.add((id(first), id(second)))
        if isinstance(first, dict) and isinstance(second, dict) and first.keys() == second.keys():
            pending.extend((value, second[key]) for key, value in first.items())
        elif isinstance(first, list) and isinstance(second, list) and len(first) == len(second):
            pending.extend(zip(first, second, strict=True))
        else:
            return False
    return True


def _data(text: str) -> list[Any] | None:
    try:
        return list(yaml.load_all(text, Loader=yaml.CSafeLoader))
    except yaml.YAMLError:
        return None


def _round_trip(text: str) -> Any:
    """A round-trip parser set to the file's own indentation and quoting."""
    from ruamel.yaml import YAML

    parser = YAML(typ="rt")
    parser.Representer = _representer()
    parser.preserve_quotes = True
    parser.allow_duplicate_keys = True
    parser.width = 1 << 16  # never fold a long line the file did not fold
    mapping, offset = indentation(text)
    parser.indent(mapping=mapping, sequence=offset + 2, offset=offset)
    return parser


@functools.cache
def _representer() -> type:
    """ruamel's round-trip representer, giving the nodes of a tag one shared `Tag`.

    ruamel makes a `Tag` per scalar it dumps, and each works out its name again, a
    character at a time, when the serializer compares it. A shared `Tag` works it out
    once (`Tag` caches it, and nothing changes a tag once made): `with_edits`, which
    dumps each document with a fix twice or more, runs 7 % fewer instructions
    (callgrind, 100 documents of the benchmark corpus)."""
    from ruamel.yaml.representer import RoundTripRepresenter
    from ruamel.yaml.tag import Tag

    shared = functools.cache(lambda name: Tag(suffix=name))

    class Representer(RoundTripRepresenter):
        def represent_scalar(self, tag: Any, value: Any, style: Any = None,
                             anchor: Any = None) -> Any:
            return super().represent_scalar(
                shared(tag) if isinstance(tag, str) else tag, value, style, anchor)

    return Representer


def _dump(parser: Any, documents: list[Any]) -> str:
    stream = io.StringIO()
    parser.dump_all(documents, stream)
    return stream.getvalue()


def indentation(text: str) -> tuple[int, int]:
    """(mapping indent, sequence dash offset) most used in `text`: `2, 2` for
    `key:\\n  - item`, `2, 0` for the kubectl style `key:\\n- item`."""
    mappings: Counter[int] = Counter()
    offsets: Counter[int] = Counter()
    lines = [line for line in text.splitlines() if line.strip() and line.lstrip()[0] != "#"]
    for line, following in itertools.pairwise(lines):
        match = _KEY_LINE.match(line)
        if match is None:
            continue
        column = len(match["indent"])
        inner = len(following) - len(following.lstrip(" "))
        if following.lstrip().startswith("- "):
            if inner >= column:
                offsets[inner - column] += 1
        elif inner > column:
            mappings[inner - column] += 1
    mapping = mappings.most_common(1)[0][0] if mappings else 2
    offset = offsets.most_common(1)[0][0] if offsets else 2
    return mapping, offset


# --- writing ---


#: Why a file is not written: it no longer holds what was read.
_CHANGED = "the file changed on disk since it was read"


def write(path: Path, original: bytes, data: bytes) -> None:
    """Replace the file's bytes, `original`, with `data`: a temporary file in the same
    folder, with the file's owner and mode, synced, then put in its place.

    Refused (Unfixable) for a read-only file, for one with other hard links (replacing
    it would split them), and for one that no longer holds `original` (someone changed
    it after it was read). Where the system can exchange two names atomically (Linux,
    macOS), that is how the file is replaced, and what it held at that very moment is
    checked after the fact: an edit that landed between the check and the exchange is put
    back, and the fix is not written. Elsewhere the last check is made just before the
    rename, and an edit can still land in between.
    """
    target = path.resolve()  # a symbolic link stays a link to the fixed file
    status = target.stat()
    if status.st_nlink > 1:
        raise Unfixable(
            f"it has {status.st_nlink} hard links, which replacing it would split; "
            "fix one by hand, or remove the other links"
        )
    if not status.st_mode & _WRITABLE or not os.access(target, os.W_OK):
        raise Unfixable(
            f"it is read-only (mode {stat.S_IMODE(status.st_mode):04o}): make it writable first"
        )
    if read_bytes(target) != original:
        raise Unfixable(_CHANGED)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    #: Whether the temporary name holds someone's edit, which must outlive this function.
    holds_edit = False
    try:
        with os.fdopen(handle, "wb") as stream:
            _keep_owner(stream.fileno(), status)
            os.fchmod(stream.fileno(), stat.S_IMODE(status.st_mode))
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
            ours = os.fstat(stream.fileno()).st_ino
        if not _exchange(temporary, target):
            if read_bytes(target) != original:
                raise Unfixable(_CHANGED)
            Path(temporary).replace(target)
        else:
            holds_edit = True  # until shown to hold `original`
            if _read_or_none(temporary) != original:
                _put_back(temporary, target, ours)
                holds_edit = False
                raise Unfixable(
                    "the file changed on disk while it was being fixed: the change is kept"
                )
            holds_edit = False
    finally:
        if not holds_edit:
            Path(temporary).unlink(missing_ok=True)
    _sync_folder(target.parent)


#: Any write permission bit: a file without one was made read-only on purpose (and
#: root, who may write it all the same, must not replace it either).
_WRITABLE = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH


def _keep_owner(handle: int, status: os.stat_result) -> None:
    made = os.fstat(handle)
    if (made.st_uid, made.st_gid) == (status.st_uid, status.st_gid):
        return
    try:
        os.fchown(handle, status.st_uid, status.st_gid)
    except PermissionError:
        raise Unfixable(
            "it belongs to another user or group, which replacing it would change"
        ) from None


def _read_or_none(name: str) -> bytes | None:
    try:
        return read_bytes(name)
    except OSError:
        return None


def _put_back(temporary: str, target: Path, ours: int) -> None:
    """Exchange the names again, so the changed file is back in place. If the fixed file
    was itself replaced meanwhile (an editor saving again), the newest file goes back in
    place, and the one it superseded is what is left at the temporary name."""
    try:
        _exchange(temporary, target)
        if Path(temporary).stat().st_ino != ours:
            _exchange(temporary, target)
    except OSError as error:
        raise Unfixable(
            f"the file changed on disk while it was being fixed, and could not be put back "
            f"({error.strerror}): the changed file is {temporary}"
        ) from None


#: `renameat2` flag (Linux) and `renamex_np` flag (macOS): swap the two names.
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
#: The system cannot exchange names (old kernel, or a file system that cannot).
_CANNOT_EXCHANGE = frozenset({errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP})


def _exchange(first: str, second: Path) -> bool:
    """Swap what two names point at, atomically; False where the system cannot."""
    import ctypes

    swap = _exchange_call()
    if swap is None:
        return False
    if swap(os.fsencode(first), os.fsencode(second)) == 0:
        return True
    error = ctypes.get_errno()
    if error in _CANNOT_EXCHANGE:
        return False
    raise OSError(error, os.strerror(error), str(second))


@functools.cache
def _exchange_call() -> Callable[[bytes, bytes], int] | None:
    """The C library's atomic exchange of two names, if it has one."""
    import ctypes

    library = ctypes.CDLL(None, use_errno=True)
    if hasattr(library, "renameat2"):  # Linux (glibc 2.28 on)
        call = library.renameat2
        call.argtypes = [
            ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint,
        ]
        return lambda first, second: int(
            call(_AT_FDCWD, first, _AT_FDCWD, second, _RENAME_EXCHANGE)
        )
    if hasattr(library, "renamex_np"):  # macOS
        swap = library.renamex_np
        swap.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint]
        return lambda first, second: int(swap(first, second, _RENAME_EXCHANGE))
    return None


def _sync_folder(folder: Path) -> None:
    """Make the rename durable (not possible on every platform or file system)."""
    with contextlib.suppress(OSError):
        handle = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(handle)
        finally:
            os.close(handle)


def fixed_codes(applied: Sequence[Finding]) -> Iterator[tuple[str, str, int]]:
    """(code, name, count) of applied fixes, in code order, for `--show-fixes`."""
    counts = Counter((finding.code, finding.name) for finding in applied)
    for (code, name), count in sorted(counts.items()):
        yield code, name, count


# --- the edits of one fix (`fix.edits` in JSON) ---


def with_edits(findings: Sequence[Finding]) -> list[Finding]:
    """`findings`, each fix that has no edits yet given what it alone changes in its file
    (`Fix.edits`, JSON's `fix.edits`): ranges of the file as it is and their new text.

    Each document's round-trip tree is loaded and dumped once for all its fixes, and each
    fix but the last edits a copy of it: loading costs about twice a dump, which each fix
    pays anyway. A fix pays for its own document, never for the others of its file: over
    the whole file, a file of many documents took a round trip of all of them per fix
    (200 documents took three minutes). Run where the findings were made: the edits work
    on those objects."""
    done: dict[int, Finding] = {}
    by_file: dict[int, list[Finding]] = {}
    for finding in findings:
        if finding.fix is not None and finding.fix.edits is None:
            by_file.setdefault(id(finding.source), []).append(finding)
    for group in by_file.values():
        for finding, edits in zip(group, _file_edits(group[0].source.text, group), strict=True):
            assert finding.fix is not None
            done[id(finding)] = replace(finding, fix=finding.fix._replace(edits=edits))
    return [done.get(id(finding), finding) for finding in findings]


def _file_edits(text: str, findings: Sequence[Finding]) -> list[tuple[TextEdit, ...]]:
    """The edits of each finding's fix alone, on the file `text` they share; () for one
    that cannot be applied there (as `apply(text, [finding])` would find)."""
    if TEMPLATE in text:
        return [() for _ in findings]
    edits: dict[int, tuple[TextEdit, ...]] = {}
    on_tree: list[Finding] = []
    for finding in findings:
        assert finding.fix is not None
        if finding.fix.rewrite is not None:
            with contextlib.suppress(LookupError):
                edits[id(finding)] = tuple(text_edits(text, finding.fix.rewrite(text)))
        elif finding.fix.edit is not None and finding.manifest is not None:
            on_tree.append(finding)
    pieces, by_document = _cut(text, on_tree) if on_tree else ({}, {})
    every = lines(text)
    newline = most_common_ending(every)
    for number, (start, end) in pieces.items():
        piece = "".join(every[start:end])
        for key, found in _document_edits(piece, number, by_document[number], newline).items():
            edits[key] = tuple(
                edit._replace(row=edit.row + start, end_row=edit.end_row + start)
                for edit in found)
    return [edits.get(id(finding), ()) for finding in findings]


def _document_edits(
    text: str, number: int, findings: Sequence[Finding], newline: str | None = None
) -> dict[int, list[TextEdit]]:
    """The edits of each finding's fix alone (by the finding's id), on `text`, which holds
    document `number` of their file (and maybe others after it); new lines end in
    `newline`, the file's most common ending.

    Each fix but the last edits a copy of the tree (`_copies`)."""
    try:
        parser, documents = _load_tree(text)
    except Unfixable:
        return {}
    before = _dump(parser, documents)
    edits = {}
    for finding, tree in zip(findings, [*_copies(documents, len(findings) - 1), documents],
                             strict=True):
        with contextlib.suppress(Unfixable):
            fixed, applied = _spliced(text, parser, tree, before, [finding], first=number,
                                      newline=newline)
            if applied:
                edits[id(finding)] = text_edits(text, fixed)
    return edits


def _copies(documents: list[Any], count: int) -> list[list[Any]]:
    """`count` copies of a round-trip tree, which dump as it does.

    The tree is pickled once and each copy unpickled. ruamel's `deepcopy` loses what
    the dump shows: the comments above a mapping's first key, anchors and merge keys
    (expanded), a timestamp's layout; its edits then deleted those comments, or
    rewrote the lines. Pickling keeps every attribute of the nodes and the objects they
    share, but for the layout of a timestamp (`TimeStamp` is a `datetime`, which pickles
    its value alone), which `_with_layout` adds. It costs less, too: `with_edits` runs
    4 % fewer instructions than with `deepcopy` (callgrind, 100 documents of the
    benchmark corpus)."""
    if not count:
        return []
    from ruamel.yaml.timestamp import TimeStamp

    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = {TimeStamp: _with_layout}
    pickler.dump(documents)
    pickled = buffer.getvalue()
    return [pickle.loads(pickled) for _ in range(count)]


def _with_layout(stamp: Any) -> tuple[Any, ...]:
    """How to pickle a timestamp with its attributes (its layout)."""
    kind, value = stamp.__reduce__()[:2]
    return kind, value, vars(stamp)


#: Line breaks of YAML 1.1 (libyaml's) that YAML 1.2 (ruamel's) reads as characters: a
#: file holding one is not cut into documents.
_OTHER_BREAKS = ("\x85", "\u2028", "\u2029")


def _document_lines(text: str, numbers: Sequence[int]) -> dict[int, tuple[int, int | None]] | None:
    """Which lines of `text` (0-based, the end excluded; None: to the end) hold each
    document of `numbers`, with what follows it up to the next document; None when the
    file cannot be cut (it does not parse: neither does its round trip)."""
    if any(mark in text for mark in _OTHER_BREAKS):
        return None
    starts = []
    try:
        for event in yaml.parse(text, Loader=yaml.CSafeLoader):
            if isinstance(event, yaml.DocumentStartEvent):
                if event.start_mark is None:
                    return None
                starts.append(event.start_mark.line)
    except yaml.YAMLError:
        return None
    starts[:1] = [0]  # what comes before the first document is its own
    if any(later <= earlier for earlier, later in itertools.pairwise(starts)):
        return None  # two documents on one line
    if not numbers or numbers[-1] >= len(starts):
        return None
    return {number: (starts[number], starts[number + 1] if number + 1 < len(starts) else None)
            for number in numbers}


def text_edits(before: str, after: str) -> list[TextEdit]:
    """The smallest replacements, one per changed run of lines, that turn `before` into
    `after`."""
    old_lines = before.splitlines(keepends=True)
    new_lines = after.splitlines(keepends=True)
    starts = list(itertools.accumulate((len(line) for line in old_lines), initial=0))
    found = []
    for tag, low, high, new_low, new_high in difflib.SequenceMatcher(
        None, old_lines, new_lines, autojunk=False
    ).get_opcodes():
        if tag == "equal":
            continue
        old, new = "".join(old_lines[low:high]), "".join(new_lines[new_low:new_high])
        prefix = _common(old, new)
        suffix = _common(old[prefix:][::-1], new[prefix:][::-1])
        start, end = starts[low] + prefix, starts[low] + len(old) - suffix
        found.append(TextEdit(*_place(before, start), *_place(before, end),
                              new[prefix:len(new) - suffix]))
    return found


def _common(left: str, right: str) -> int:
    """How many characters both strings begin with."""
    return next(
        (index for index, (a, b) in enumerate(zip(left, right, strict=False)) if a != b),
        min(len(left), len(right)),
    )


def _place(text: str, offset: int) -> tuple[int, int]:
    """(row, column), 1-based, of a character offset in `text`, rows counted as a finding's
    lines are: each `\\r\\n`, `\\r` or `\\n` ends one (a file of `\\r` alone is not one
    row). An offset between the two of a `\\r\\n` is on the row they end."""
    end = offset - 1 if offset and text.startswith("\r\n", offset - 1) else offset
    row = text.count("\n", 0, end) + text.count("\r", 0, end) - text.count("\r\n", 0, end) + 1
    return row, offset - max(text.rfind("\n", 0, end), text.rfind("\r", 0, end))


# --- `check --add-suppressions` ---


def add_suppressions(
    findings: Sequence[Finding], writable: Callable[[str], bool]
) -> tuple[int, list[str]]:
    """Silence every finding with a `# trainlint: disable=CODE` comment on its line (or
    just above it, indented as it is), as ruff's `--add-noqa` does, and write the files
    `writable` allows (see `Request.writable`): how many were added, and why files were
    not written. Findings about suppressions themselves are left to be fixed instead."""
    from trainlint import suppression
    from trainlint.rule import listed_rules

    rules = listed_rules()
    by_file: dict[str, list[Finding]] = {}
    for finding in findings:
        if not suppression.about_suppressions(rules[finding.code]):
            by_file.setdefault(finding.file, []).append(finding)
    added, unwritten = 0, []
    for name, found in by_file.items():
        source = found[0].source
        if in_flow_style(source.text):
            unwritten.append(f"{name}: not written: it is written in flow style (JSON), which "
                             "holds no comments: use the `trainlint.dev/ignore` annotation")
            continue
        entry = FileFix(name, source.text, source.text, bom=source.bom,
                        encoding=source.encoding)
        wanted = sorted({(f.span.line, f.code) for f in found},
                        key=lambda item: (-item[0], item[1]))
        # Placed by the values of the text as read, the data compared once (a parse per
        # comment took minutes on a file of 800 findings); where the data changed, each
        # comment is placed and checked one at a time.
        entry.text, done, refused = _suppressed(
            source.text, wanted, suppression.values_of(source.text))
        if not suppression.same_data(source.text, entry.text):
            entry.text, done, refused = _suppressed(source.text, wanted, None)
        unwritten += [f"{name}:{line}: {code} not suppressed: a comment there would be part "
                      "of a value" for line, code in refused]
        try:
            if not writable(name):
                raise Unfixable(OUTSIDE_TREE)
            write(Path(name), entry.encoded(entry.original), entry.encoded(entry.text))
        except (OSError, Unfixable) as error:
            reason = error.strerror if isinstance(error, OSError) else str(error)
            unwritten.append(f"{name}: not written: {reason}")
            continue
        added += done
    return added, unwritten


def _suppressed(
    text: str, wanted: list[tuple[int, str]], in_value: Callable[[int, int], bool] | None
) -> tuple[str, int, list[tuple[int, str]]]:
    """`text` with a suppression comment for each (line, code) of `wanted`, from the last
    line up (a comment put on a line of its own moves what is below): placed by
    `in_value` (the values of `text`) and checked once by the caller, or, without it,
    checked one by one. How many were written, and those with no place outside a value."""
    from trainlint import suppression

    done, refused = 0, []
    for line, code in wanted:
        changed = suppression.disable_on_line(text, line, code, in_value)
        if changed == text:
            refused.append((line, code))
        done += changed != text
        text = changed
    return text, done, refused


# --- the `check --fix` flow ---


@dataclass
class Request:
    """What the command line asked of fixing."""

    unsafe: bool = False
    #: Print a diff and write nothing (`--diff`).
    diff: bool = False
    #: List the fixes applied (`--show-fixes`).
    show: bool = False
    #: Whether a file may be fixed: not one outside the folders checked, reached through
    #: a symbolic link, unless `--write-outside-tree` (see `trainlint.files.Tree`).
    writable: Callable[[str], bool] = field(default=lambda name: True)


def run(
    inputs: Sequence[Loaded], relint: Relint, request: Request,
    may_fix: Callable[[Finding], bool], stdin: str | None,
) -> tuple[list[Loaded], list[Finding], Outcome]:
    """Fix, then write each changed file (or the diff; or, for `-`, the fixed text to
    stdout); what was done and what was refused, for the command to print."""
    def wanted(finding: Finding) -> bool:
        assert finding.fix is not None
        return (finding.fix.safe or request.unsafe) and may_fix(finding)

    loaded, findings, files = fix_all(inputs, relint, wanted)
    outcome = Outcome()
    for name, entry in files.items():
        outcome.notes.extend(entry.notes)
        if not entry.changed:
            continue
        outcome.changed.append(entry)
        if name == stdin and not request.diff:
            outcome.stdout += with_bom(entry.text, entry.bom)
            continue
        try:
            if not request.writable(name):
                raise Unfixable(OUTSIDE_TREE)
            if request.diff:
                outcome.stdout += entry.diff()
            else:
                write(Path(name), entry.encoded(entry.original), entry.encoded(entry.text))
        except (OSError, Unfixable) as error:
            reason = error.strerror if isinstance(error, OSError) else str(error)
            outcome.notes.append(f"{name}: not written: {reason}")
            outcome.unwritten.append(entry)
    if outcome.unwritten:  # report what the files still hold
        unwritten = {entry.name for entry in outcome.unwritten}
        loaded = [
            original if original.source.name in unwritten else item
            for original, item in zip(inputs, loaded, strict=True)
        ]
        findings = relint(loaded)
    if stdin is not None and not request.diff and not (stdin in files and files[stdin].changed):
        # Unchanged (nothing to fix, or its fixes refused): what came in goes out.
        source = next(item.source for item in inputs if item.source.name == stdin)
        outcome.stdout += with_bom(source.text, source.bom)
    if request.show:
        outcome.notes[:0] = list(_shown(outcome.changed, findings, request))
    return loaded, findings, outcome


@dataclass
class Outcome:
    changed: list[FileFix] = field(default_factory=list)
    unwritten: list[FileFix] = field(default_factory=list)
    #: The diff (`--diff`) or the fixed text of stdin.
    stdout: str = ""
    #: Messages for standard error.
    notes: list[str] = field(default_factory=list)

    @property
    def fixed(self) -> int:
        return sum(len(entry.applied) for entry in self.changed if entry not in self.unwritten)


def _shown(changed: list[FileFix], left: list[Finding], request: Request) -> Iterator[str]:
    """`--show-fixes`: each file's fixes by rule, then the unsafe fixes not applied."""
    verb = "would fix" if request.diff else "fixed"
    for entry in changed:
        yield f"{entry.name}:"
        for code, name, count in fixed_codes(entry.applied):
            yield f"    {count} × {code} ({name}) {verb}"
    if not request.unsafe:
        for finding in left:
            if finding.fix is not None and not finding.fix.safe:
                span = finding.span
                yield (f"{finding.file}:{span.line}:{span.column}: {finding.code} not fixed: "
                       f"{finding.fix.title}; `--unsafe-fixes` applies it")
