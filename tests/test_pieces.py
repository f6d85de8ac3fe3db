"""A long file parsed in pieces of whole documents: the same as parsed whole, always."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.conftest import shared_or_skip
from trainlint import loader
from trainlint.cli import _read
from trainlint.document import Fragment, Loaded, Span
from trainlint.loader import MAX_DEPTH, load, load_bytes
from trainlint.rule import all_rules
from trainlint.run import parallel

T = TypeVar("T")
R = TypeVar("R")


class InOrder:
    """A spread that cuts a text into `count` pieces and parses them in this process."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.parsed = 0

    def pieces(self, characters: int) -> int:
        return self.count

    def __call__(self, work: Callable[[T], R], items: Sequence[T]) -> list[R]:
        self.parsed += len(items)
        return [work(item) for item in items]


def read(loaded: Loaded) -> tuple[list[tuple[Any, ...]], list[Any], tuple[Fragment, ...]]:
    """Everything a run takes from a file: each object with its document, place and spans,
    the problems, the fragments."""
    objects = [(manifest.body, manifest.written, manifest.document, manifest.base,
                list(manifest.spans), manifest.first, manifest.source.name)
               for manifest in loaded.manifests]
    return objects, loaded.problems, loaded.fragments


def in_pieces(text: str, count: int = 1_000) -> tuple[Loaded, int]:
    """`text` parsed in (at most) `count` pieces, and how many it was parsed in."""
    spread = InOrder(count)
    return load(text, "f.yaml", spread=spread), spread.parsed


CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: b}\n"
#: Documents that make libyaml go far: block and quoted scalars (one with a marker line
#: inside it), flow collections (one left open), anchors and tags (one undefined),
#: directives, comments, every load problem.
DOCUMENTS = [
    CONFIG_MAP,
    "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Secret, metadata: {name: s}}\n"
    "- 3\n",
    "a: |\n  text\n  ---\n  more\n",
    "a: |+\n  kept\n\n\n",
    "a: >-\n  folded\n  text\n",
    "|\n  a block scalar at document level\n",
    "plain\nscalar over lines\n----\n",
    'a: "double\n  quoted\n\n  over lines"\n',
    "a: 'single\n  quoted'\n",
    'a: "a quoted scalar cut by\n---\nis an error"\n',
    "[a,\n b]\n",
    "{a: 1,\n b: 2}\n",
    "[a, left open,\n",
    "base: &b {x: 1}\nd:\n  <<: *b\n  y: 2\n",
    "c: *b\n",
    "%TAG !e! tag:example.com,2000:\n---\na: !e!thing 1\n",
    "a: !e!thing 1\n",
    "%YAML 1.1\n---\na: 1\n",
    "# a comment\n  # another\n\n",
    "a: 1\na: 2\n",
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nulls}\ndata: {a: null, b: ~}\n",
    "? [a, b]\n: 1\n",
    "just a scalar\n",
    "- kind: ConfigMap\n",
    "metadata: {name: a fragment}\nspec: {}\n",
    "apiVersion: v1\nmetadata: {name: no kind}\n",
    "a: " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "\n",
    "k: v\nno colon\n",
    "a:\t1\n",
    "é: ü\n",
    "a: \x07\n",
    "",
]
#: What comes between two documents.
SEPARATORS = ["---\n", "--- \n", "---\t# c\n", "...\n---\n", "# c\n---\n", "\n---\n", "", "..."]


@st.composite
def streams(draw: st.DrawFn) -> str:
    documents = draw(st.lists(st.sampled_from(DOCUMENTS), min_size=1, max_size=12))
    text = documents[0]
    for document in documents[1:]:
        text += draw(st.sampled_from(SEPARATORS)) + document
    return text.replace("\n", "\r\n") if draw(st.booleans()) else text


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams(), st.integers(min_value=2, max_value=40))
@example(CONFIG_MAP + "---\n" + "a: |\n  x\n---\n" + CONFIG_MAP, 3)
def test_pieces_read_as_the_whole_text(text: str, count: int) -> None:
    assert read(in_pieces(text, count)[0]) == read(load(text, "f.yaml"))


def test_every_document_start_is_a_cut_and_every_piece_is_placed_in_the_whole() -> None:
    """Objects and problems of late pieces land on the lines and documents of the whole
    text: TL002, TL004, a key's span, a `kind: List` item's."""
    text = "\n".join([
        CONFIG_MAP,  # lines 1-4, the empty line 5
        "---\na: |\n  block\n",  # 6-8
        "--- # a comment\n" + CONFIG_MAP.replace("a: b", "a: b, a: c"),  # 10-14
        "---\njust a scalar\n",  # 16-17
        "...\n---\n" + DOCUMENTS[1],  # 19-25
    ])
    loaded, pieces = in_pieces(text)
    assert pieces == 5
    assert read(loaded) == read(load(text, "f.yaml"))
    assert [(problem.code, problem.span) for problem in loaded.problems] == [
        ("TL002", Span(14, 14, 14, 15)), ("TL004", Span(17, 1, 17, 14)),
        ("TL004", Span(25, 3, 25, 4)),
    ]
    assert [(manifest.document, manifest.span(("metadata", "name")).line)
            for manifest in loaded.manifests] == [(0, 3), (2, 13), (4, 24)]


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        ("a: 1\n" * 10, 1),  # no document marker
        ("%YAML 1.1\n---\na: 1\n...\n%YAML 1.1\n# the version\n\n---\nb: 1\n", 1),
        ("a: 1\n%TAG !e! tag:e,2000:\n---\nb: !e!x 1\n---\nc: 1\n", 2),
        ("a: 1\rb: 1\n---\nc: 1\n", 1),  # libyaml's line breaks, not ours: CR,
        ("a: 1\x85b: 1\n---\nc: 1\n", 1),  # NEL,
        ("a: 1\u2028b: 1\n---\nc: 1\n", 1),  # and LS
        ("a: 1\n\ufeff---\nb: 1\n", 1),  # not a marker after a BOM (an error)
        ("a: 1\n----\nb: 1\n---x\nc: 1\n--- d\n", 2),
        ("a: 1\r\n---\r\nb: 1\r\n---\r\n", 3),
    ],
)
def test_cuts_only_where_a_document_provably_starts(text: str, pieces: int) -> None:
    """Not after a directive (it belongs to the next document), nor where libyaml counts
    lines otherwise: the same either way."""
    loaded, parsed = in_pieces(text)
    assert parsed == (0 if pieces == 1 else pieces)
    assert read(loaded) == read(load(text, "f.yaml"))


@pytest.mark.parametrize(
    "broken",
    ['a: "quoted\n---\nb: 1\n', "[a,\n---\n]\n", "a: \x07\n", "k: v\nno colon\n", "c: *none\n"],
)
def test_a_piece_that_stops_has_the_whole_text_parsed_again(broken: str) -> None:
    """libyaml stops at a syntax error, a reader error (which it finds ahead of what it
    composed) or a refusal: which documents it composed before depends on the whole text,
    so that is what is parsed, and TL001 is where and as it would be."""
    text = "---\n".join([CONFIG_MAP] * 30 + [broken] + [CONFIG_MAP] * 30)
    loaded, parsed = in_pieces(text, 10)
    assert parsed > 1
    assert read(loaded) == read(load(text, "f.yaml"))
    assert [problem.code for problem in loaded.problems] == ["TL001"]


def test_the_limits_apply_as_they_do_to_the_whole_text() -> None:
    """A document too long for the plain composer has every piece composed with the limits
    applied, so one nested too deep stops the file, as when the whole is parsed: libyaml
    cannot go on after a refusal."""
    deep = "a: " + "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1) + "\n"
    long_document = "data:\n" + "".join(f"  k{number}: v\n" for number in range(40_000))
    text = "---\n".join([CONFIG_MAP, long_document, CONFIG_MAP, deep, CONFIG_MAP])
    loaded, parsed = in_pieces(text)
    assert parsed > 1  # the deep document in a piece too short to need the limits
    assert read(loaded) == read(load(text, "f.yaml"))
    [problem] = loaded.problems
    assert problem.message.endswith("nor is the rest of the file")
    assert len(loaded.manifests) == 2


def test_a_bom_and_invalid_utf8_are_the_file_s() -> None:
    data = b"\xef\xbb\xbf" + (CONFIG_MAP + "---\n").encode() * 20 + b"a: caf\xe9\n"
    whole = load_bytes(data, "f.yaml")
    spread = InOrder(4)
    pieces = load_bytes(data, "f.yaml", spread)
    assert spread.parsed == 4
    assert read(pieces) == read(whole)
    assert pieces.source.bom and pieces.source.text == whole.source.text
    assert [(problem.code, problem.span) for problem in pieces.problems] == [
        ("TL001", Span(101, 7, 101, 8))
    ]


def test_the_trainer_manifests_joined_read_as_the_whole() -> None:
    """Every upstream manifest of every release in one file."""
    folder = shared_or_skip("corpus", "trainer")
    texts = [path.read_text() for path in sorted(folder.glob("*/*.yaml"))]
    text = "---\n".join(texts)
    loaded, parsed = in_pieces(text)
    assert parsed > len(texts)
    assert read(loaded) == read(load(text, "f.yaml"))
    assert len(loaded.manifests) > len(texts)


def _long_file(path: Path) -> Path:
    """A file long enough to be parsed in pieces, of few objects (each 2 KB long), with
    findings of their own."""
    documents = []
    padding = "x" * 2_000
    for number in range(parallel.SPLIT_CHARACTERS // len(padding) + 1):
        documents.append(CONFIG_MAP.replace("a: b", f"a: {padding}, b: {number}"))
        documents.append("just a scalar\n" if number % 10 == 0 else "a: 1\na: 2\n")
    path.write_text("---\n".join(documents))
    return path


def test_a_long_file_is_parsed_on_every_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Alone in a run, a long file's pieces go to every process; its `Loaded` is the one
    parsed whole."""
    path = _long_file(tmp_path / "long.yaml")
    pids = tmp_path / "pids"
    part = loader._part

    def noted(text: str, piece: loader.Piece, guarded: bool) -> loader.Part:
        with pids.open("a") as out:
            out.write(f"{os.getpid()}\n")
        time.sleep(0.005)  # the parent cannot take every chunk before the worker starts
        return part(text, piece, guarded)

    monkeypatch.setattr(loader, "_part", noted)
    all_rules()  # which the parent imports while the worker parses, or it may parse none
    [loaded] = parallel.read_all([str(path)], lambda name, spread: _read(name, spread, "-"), 2)
    assert len(set(pids.read_text().split())) == 2
    assert read(loaded) == read(load_bytes(path.read_bytes(), str(path)))


def _check(*arguments: str) -> str:
    result = subprocess.run(
        [shutil.which("trainlint") or "trainlint", "check", "--output-format", "concise",
         *arguments],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 1, result.stderr
    return result.stdout


def test_a_long_file_gives_the_same_findings_in_pieces_cached_or_not(tmp_path: Path) -> None:
    path = _long_file(tmp_path / "long.yaml")
    cache = str(tmp_path / "cache")
    alone = _check("--no-cache", "--jobs", "1", str(path))
    assert alone.count("TL002") > 200 and alone.count("TL004") > 20
    assert _check("--no-cache", "--jobs", "2", str(path)) == alone
    assert _check("--cache-dir", cache, "--jobs", "2", str(path)) == alone  # cold
    assert _check("--cache-dir", cache, "--jobs", "2", str(path)) == alone  # warm
