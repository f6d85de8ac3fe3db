"""The loader: data as kubectl decodes it, positions on the key, bad input as findings."""

from __future__ import annotations

import gc
import json
import pickle
import time

import pytest

from tests.conftest import lint_text
from trainlint.document import Manifest, Span, decode
from trainlint.loader import MAX_COMPOSED, MAX_DEPTH, load
from trainlint.memo import per_value

RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch
spec:
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata:
              labels: {app: x}
"""


def test_positions_land_on_the_key() -> None:
    manifest = load(RUNTIME, "r.yaml").manifests[0]
    jobs = ("spec", "template", "spec", "replicatedJobs")
    assert manifest.span(("metadata", "name")) == Span(4, 3, 4, 7)
    assert manifest.span((*jobs, 0, "template", "metadata")) == Span(11, 13, 11, 21)
    labels = (*jobs, 0, "template", "metadata", "labels")
    assert manifest.span((*labels, "app")) == Span(12, 24, 12, 27)
    # a list item points at the item itself
    assert manifest.span((*jobs, 0)).line == 9
    # a missing key falls back to the deepest existing one
    assert manifest.span((*jobs, 0, "template", "spec", "backoffLimit")) == Span(10, 11, 10, 19)



def test_a_path_missing_from_its_first_key_lands_on_the_object_not_the_file() -> None:
    """An object without `spec`, after another document: its findings about `spec` are
    on its own first key (they were on line 1, the other object's)."""
    second = load(f"apiVersion: v1\nkind: ConfigMap\n---\n{RUNTIME[:RUNTIME.index('spec:')]}",
                  "r.yaml").manifests[1]
    assert second.span(("spec", "template", "spec", "replicatedJobs")) == Span(4, 1, 4, 11)
    assert second.span(()) == Span(4, 1, 4, 11)

def test_yaml_11_booleans_and_numbers_decode_like_kubectl() -> None:
    text = (
        "apiVersion: v1\nkind: ConfigMap\n"
        "data: {a: on, b: yes, c: off, d: 0x10, e: 1_000, f: '1'}\n"
    )
    data = load(text, "c.yaml").manifests[0].body["data"]
    assert data == {"a": True, "b": True, "c": False, "d": 16, "e": 1000, "f": "1"}


def test_go_yaml_v2_scalars_decode_like_kubectl() -> None:
    """Where go-yaml v2 (kubectl's decoder) and YAML 1.1 part: a duration is text, `y` a
    boolean, `1e3` and `08` numbers (`8.0` goes as JSON's `8`), `0o17` octal (as `kubectl
    label --local -o json` prints them; `test_plain_scalars_read_as_kubectl_reads_them`
    asks kubectl itself)."""
    text = (
        "apiVersion: v1\nkind: ConfigMap\n"
        "data: {a: 1:30, b: y, c: n, d: 1e3, e: 08, f: 0o17, g: 8.0, h: 1e400, i: 8.5}\n"
    )
    data = load(text, "c.yaml").manifests[0].body["data"]
    assert data == {"a": "1:30", "b": True, "c": False, "d": 1000, "e": 8, "f": 15, "g": 8,
                    "h": "1e400", "i": 8.5}
    assert [type(data[key]) for key in "degi"] == [int, int, int, float]


def test_json_surrogate_pairs_are_the_character_they_escape() -> None:
    """A JSON stream takes `\\ud83d\\ude80` (as `json.dumps` writes 🚀), and a surrogate
    alone as U+FFFD, as Go's decoder does; YAML refuses both (go-yaml: "found invalid
    Unicode character escape code"), and so does a JSON-looking text that is YAML."""
    body = ('"data": {"a": "\\ud83d\\ude80 go", "b": "\\\\ud83d", "c": "\\udc00 x"}')
    loaded = load('{"apiVersion": "v1", "kind": "ConfigMap", ' + body + "}\n", "c.json")
    assert loaded.problems == []
    assert loaded.manifests[0].body["data"] == {"a": "\U0001f680 go", "b": "\\ud83d",
                                                "c": "\ufffd x"}
    for yaml_text in ("apiVersion: v1\nkind: ConfigMap\n" + body.replace('"data"', "data"),
                      '# a comment first: YAML\n{"kind": "ConfigMap", ' + body + "}\n"):
        problems = load(yaml_text, "c.yaml").problems
        assert [problem.code for problem in problems] == ["TL001"], yaml_text


def test_a_json_stream_is_read_value_by_value() -> None:
    """kubectl reads a text that starts with `{` as JSON values one after another, a line
    each or pretty-printed (`kubectl label --local -f` lists both objects of each): every
    object is checked, at its own line; a JSON Lines dataset holds no object of ours."""
    first = '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}'
    second = ('{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b"}, '
              '"data": {"x": "\\ud83d\\ude80"}}')
    pretty = (f"{json.dumps(json.loads(first), indent=2)}\n"
              f"{json.dumps(json.loads(second), indent=2)}\n")
    for text, lines in ((f"{first}\n{second}\n", [1, 2]), (pretty, [3, 10])):
        loaded = load(text, "stream.json")
        assert loaded.problems == []
        assert [(m.name, m.span(("kind",)).line) for m in loaded.manifests] == list(
            zip("ab", lines, strict=True))
        assert loaded.manifests[1].body["data"] == {"x": "\U0001f680"}
    dataset = '{"prompt": "a", "completion": "b"}\n{"prompt": "c", "completion": "d"}\n'
    assert load(dataset, "train.json").manifests == []
    assert load(dataset, "train.json").problems == []


def test_timestamps_stay_strings() -> None:
    text = "apiVersion: v1\nkind: ConfigMap\ndata: {when: 2026-01-01}\n"
    assert load(text, "c.yaml").manifests[0].body["data"]["when"] == "2026-01-01"


def test_json_positions() -> None:
    text = (
        '{\n  "apiVersion": "v1",\n  "kind": "PersistentVolumeClaim",\n'
        '  "metadata": {"name": "c"}\n}\n'
    )
    manifest = load(text, "c.json").manifests[0]
    assert manifest.name == "c"
    assert manifest.span(("metadata", "name")).line == 4


def test_kind_list_items_are_objects_with_their_own_paths() -> None:
    text = (
        "apiVersion: v1\nkind: List\nitems:\n"
        "- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n"
    )
    [manifest] = load(text, "l.yaml").manifests
    assert manifest.base == ("items", 0)
    assert manifest.span(("metadata",)) == Span(6, 3, 6, 11)
    assert manifest.span(("metadata", "name")) == Span(6, 14, 6, 18)


def test_documents_before_a_syntax_error_are_kept() -> None:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\nkind: [\n"
    loaded = load(text, "s.yaml")
    assert [m.name for m in loaded.manifests] == ["a"]
    [problem] = loaded.problems
    assert problem.code == "TL001"
    assert problem.span.line == 6


def test_invalid_utf8_is_reported_at_its_byte_and_the_rest_is_read() -> None:
    data = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: caf\xe9\n"
    text, problems = decode(data, "u.yaml")
    assert [(p.code, p.span.line, p.span.column) for p in problems] == [("TL001", 4, 12)]
    assert "0xe9" in problems[0].message
    assert load(text, "u.yaml", problems).manifests[0].kind == "ConfigMap"


def test_invalid_utf8_after_a_bom_is_reported_at_its_byte() -> None:
    """The codec counts from after the byte order mark, which is no part of the text."""
    _, problems = decode(b"\xef\xbb\xbfapiVersion: v1\nmetadata: {name: caf\xe9}\n", "u.yaml")
    assert [(p.code, p.span, p.message) for p in problems] == [
        ("TL001", Span(2, 21, 2, 22), "invalid UTF-8 byte 0xe9: the file must be UTF-8")
    ]


def test_bom_is_accepted() -> None:
    text, problems = decode(b"\xef\xbb\xbfapiVersion: v1\nkind: ConfigMap\n", "b.yaml")
    assert problems == []
    assert load(text, "b.yaml").manifests[0].kind == "ConfigMap"


@pytest.mark.parametrize("opener", ["[", "{a: ", "- "])
def test_absurd_nesting_is_refused_quickly_without_crashing(opener: str) -> None:
    """At the first collection deeper than the limit (the 201st opener), whether or not
    the PyYAML release refuses deep nesting itself (6.0.4 does, past 1,000 levels)."""
    closer = {"[": "]", "{a: ": "}", "- ": ""}[opener]
    text = opener * 100_000 + "x" + closer * 100_000
    started = time.perf_counter()
    loaded = load(text, "deep.yaml")
    assert time.perf_counter() - started < 5
    column = MAX_DEPTH * len(opener) + 1
    assert [(p.code, p.span, p.message) for p in loaded.problems] == [(
        "TL003", Span(1, column, 1, column + 1),
        f"document nests deeper than {MAX_DEPTH} levels: it is not checked, nor is the rest "
        "of the file",
    )]


@pytest.mark.parametrize(
    ("depth", "rest_checked"), [(MAX_DEPTH + 1, True), (900, True), (1_001, False), (5_000, False)]
)
def test_deep_nesting_is_refused_where_it_passes_the_limit(depth: int, rest_checked: bool) -> None:
    """Ours is the limit that applies, at the same place on every PyYAML release: libyaml
    (from 6.0.4) refuses past 1,000 levels, and its scanner, which looks ahead, can get
    there before the composer is 201 deep. A document too deep for the plain composer
    stops the file (libyaml cannot go on after it); a shallower one is skipped alone."""
    text = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: before}\n---\n"
        f"b: {'[' * depth}{']' * depth}\n---\napiVersion: v1\nkind: ConfigMap\n"
        "metadata: {name: after}\n"
    )
    loaded = load(text, "deep.yaml")
    [problem] = loaded.problems
    column = 3 + MAX_DEPTH  # the root mapping is the first level, the 200th `[` the 201st
    assert (problem.code, problem.span) == ("TL003", Span(5, column, 5, column + 1))
    assert problem.message.endswith("it is not checked" if rest_checked else "rest of the file")
    names = ["before", "after"] if rest_checked else ["before"]
    assert [manifest.name for manifest in loaded.manifests] == names


def test_deep_nesting_in_a_key_is_a_syntax_error_on_every_pyyaml() -> None:
    """Nesting past libyaml's own limit in a block mapping's key cannot be valid (a key
    takes at most 1,024 characters): PyYAML 6.0.3 finds no `:` after it, 6.0.4 refuses
    the nesting before any of it reaches the composer. Both are TL001 on that line; the
    documents before are checked."""
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: before}\n---\na: 1\n" + "[" * 10_000
    loaded = load(text, "key.yaml")
    assert [(p.code, p.span.line) for p in loaded.problems] == [("TL001", 6)]
    assert [manifest.name for manifest in loaded.manifests] == ["before"]


def test_a_huge_document_is_refused_while_it_is_composed() -> None:
    """The node limit applies as libyaml composes, not once the document is composed (a
    20 MB flow sequence took 2.9 GB before its refusal): the text past the limit is never
    read, so the syntax error at its end is not reached."""
    text = "[" + "0, " * MAX_COMPOSED + "}"
    collecting = gc.isenabled()
    gc.disable()  # as in a run: the collector would only slow composing down
    try:
        loaded = load(text, "huge.yaml")
    finally:
        if collecting:
            gc.enable()
    assert [(p.code, p.span, p.message) for p in loaded.problems] == [(
        "TL003", Span(1, 1, 1, 2),
        f"document has more than {MAX_COMPOSED:,} nodes: it is not checked, nor is the rest "
        "of the file",
    )]


def test_nesting_just_under_the_limit_is_read() -> None:
    text = "a: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\n"
    assert load(text, "ok.yaml").problems == []


def test_merge_keys_are_applied() -> None:
    text = "apiVersion: v1\nkind: ConfigMap\nbase: &b {x: '1', w: '2'}\ndata:\n  <<: *b\n  w: '3'\n"
    manifest = load(text, "m.yaml").manifests[0]
    assert manifest.body["data"] == {"x": "1", "w": "3"}
    assert manifest.span(("data", "w")) == Span(6, 3, 6, 4)  # its own key
    assert manifest.span(("data", "x")) == Span(5, 3, 5, 5)  # merged: the `<<` it came by


def test_keys_under_a_merged_or_repeated_key_are_found_where_written() -> None:
    text = (
        "apiVersion: v1\nkind: ConfigMap\nbase: &b {x: {deep: '1'}}\n"
        "data:\n  <<: *b\n  w: {a: '1'}\n  w: {b: '2'}\n"
    )
    manifest = load(text, "m.yaml").manifests[0]
    assert manifest.span(("data", "x", "deep")) == Span(3, 15, 3, 19)  # in the anchor
    assert manifest.span(("data", "w", "b")) == Span(7, 7, 7, 8)  # the value kept
    assert manifest.span(("data", "w", "a")) == Span(7, 3, 7, 4)  # gone: its parent key


def test_control_characters_are_a_finding_not_a_crash() -> None:
    findings = lint_text("apiVersion: v1\nkind: ConfigMap\ndata: {a: \x07}\n")
    assert [f.code for f in findings] == ["TL001"]


def test_wrong_shapes_do_not_crash_any_rule() -> None:
    text = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: []
spec:
  mlPolicy: 3
  template:
    spec:
      failurePolicy: {maxRestarts: "3"}
      replicatedJobs:
        - 7
        - name: node
          template: [1]
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: [x]}
spec:
  runtimeRef: [torch]
  trainer: {env: [1, {name: 2}], command: "python", numNodes: "two"}
  podTemplateOverrides: {a: b}
  runtimePatches: [null, {trainingRuntimeSpec: 5}]
"""
    codes = {f.code for f in lint_text(text)}
    assert "TL005" in codes


def test_a_loaded_file_survives_pickling_as_workers_send_it() -> None:
    """Workers pickle what they read; the parent must get the same objects, positions
    and all (items of a `kind: List` included)."""
    text = (
        "apiVersion: v1\nkind: List\nitems:\n"
        "  - {apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: a, namespace: ml}}\n"
        "---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {key: value}\n"
    )
    loaded = load(text, "two.yaml")
    received = pickle.loads(pickle.dumps(loaded, pickle.HIGHEST_PROTOCOL))
    assert received.source.name == "two.yaml" and received.source.text == text
    assert received.problems == loaded.problems
    pairs = list(zip(loaded.manifests, received.manifests, strict=True))
    assert [(copied.kind, copied.name, copied.namespace) for _, copied in pairs] == [
        ("PersistentVolumeClaim", "a", "ml"), ("ConfigMap", "settings", "default"),
    ]
    for original, copied in pairs:
        assert copied.body == original.body
        assert (copied.document, copied.base) == (original.document, original.base)
        for path in [("metadata", "name"), ("kind",), ("data", "key")]:
            assert copied.span(path) == original.span(path)


def test_a_helper_works_an_object_out_once_and_a_copy_afresh() -> None:
    """What `per_value` keeps belongs to the object: asked again, the helper does not
    run; another object, or a copy a worker sent, works it out for itself."""
    asked: list[Manifest] = []

    @per_value
    def names(manifest: Manifest) -> tuple[str, ...]:
        asked.append(manifest)
        return (manifest.name,)

    text = RUNTIME + "---\n" + RUNTIME.replace("name: torch", "name: jax")
    first, second = load(text, "two.yaml").manifests
    assert names(first) is names(first)
    assert (names(first), names(second)) == (("torch",), ("jax",))
    copied = pickle.loads(pickle.dumps(first, pickle.HIGHEST_PROTOCOL))
    assert names(copied) == ("torch",)
    assert asked == [first, second, copied]
