"""`fix.edits` in JSON, as ruff's JSON has them: ranges of the file as it is and their new
text, which applied give exactly what `--fix` writes for that finding."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT, lint_files, read_yaml
from tests.test_cli import trainlint
from tests.test_rule_cases import CASES_DIR, case_settings, previous
from trainlint import fix
from trainlint.engine.run import lint
from trainlint.finding import Finding
from trainlint.loader import load
from trainlint.problem import TextEdit
from trainlint.run import parallel

UNRELATED = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: b}\n"

BROKEN = ROOT / "examples" / "finetune-broken"


def applied(text: str, edits: list[dict[str, Any]]) -> str:
    """`text` with JSON edits applied, from the last one back (ranges are of the original)."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(place: dict[str, int]) -> int:
        return starts[place["row"] - 1] + place["column"] - 1

    for edit in sorted(edits, key=lambda item: offset(item["location"]), reverse=True):
        text = text[: offset(edit["location"])] + edit["content"] + text[
            offset(edit["end_location"]):]
    return text


def test_every_fix_in_json_has_the_edits_fix_makes(tmp_path: Path) -> None:
    shutil.copytree(BROKEN, tmp_path / "broken")
    # --jobs 2: each file's edits are worked out in the process that checks it.
    result = trainlint("check", "--jobs", "2", "--output-format", "json", "broken",
                       cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    found = json.loads(result.stdout)
    fixable = [item for item in found if item["fix"] and "edits" in item["fix"]]
    assert {item["code"] for item in fixable} == {"TL201", "TL202", "TL401", "TL402"}
    for item in fixable:
        assert item["fix"]["applicability"] == "safe" and item["fix"]["edits"]
        path = tmp_path / item["file"]
        text = path.read_text()
        finding = next(
            f for f in lint_files(*sorted((tmp_path / "broken").glob("*.yaml")))
            if (f.code, f.span.line, f.span.column) == (item["code"], item["line"], item["column"])
        )
        assert applied(text, item["fix"]["edits"]) == fix.apply(text, [finding])[0]
    for item in found:
        if item["fix"] and "edits" not in item["fix"]:
            assert item["fix"]["applicable"] is False  # a hint, no repair


def test_unfixed_findings_keep_the_keys_they_had(tmp_path: Path) -> None:
    shutil.copytree(BROKEN, tmp_path / "broken")
    found = json.loads(trainlint("check", "--output-format", "json", "broken",
                                 cwd=tmp_path).stdout)
    hint = next(item for item in found if item["code"] == "TL301")
    assert hint["fix"] == {
        "title": "mount a PersistentVolumeClaim at /scratch (RWX if numNodes > 1)",
        "applicable": False,
    }


def _json_run(folder: Path, *options: str) -> list[dict[str, Any]]:
    result = trainlint("check", "--output-format", "json", *options, "many", cwd=folder)
    assert result.returncode == 1, result.stderr
    found: list[dict[str, Any]] = json.loads(result.stdout)
    return found


def test_edits_are_the_same_from_workers_and_from_the_cache(tmp_path: Path) -> None:
    """Enough files for workers to check some: their edits cross back packed, and a warm
    run serves them from the cache; an entry a concise run wrote holds none, so JSON
    checks that file again rather than give a fix without its edits."""
    (tmp_path / "many").mkdir()
    for number in range(parallel.MIN_INPUTS):
        (tmp_path / "many" / f"{number:03d}.yaml").write_text(UNRELATED)
    spread = range(0, parallel.MIN_INPUTS, parallel.MIN_INPUTS // 5)
    for number in spread:
        shutil.copytree(BROKEN, tmp_path / "many" / f"{number:03d}-broken")
    one = _json_run(tmp_path, "--no-cache", "--jobs", "1")
    assert sum("edits" in (item["fix"] or {}) for item in one) == 4 * len(spread)
    assert _json_run(tmp_path, "--no-cache", "--jobs", "2") == one
    cache = str(tmp_path / "cache")
    concise = trainlint("check", "--cache-dir", cache, "many", cwd=tmp_path)
    assert concise.returncode == 1, concise.stderr
    assert _json_run(tmp_path, "--cache-dir", cache, "--jobs", "2") == one  # over concise entries
    assert _json_run(tmp_path, "--cache-dir", cache, "--jobs", "2") == one  # warm: all cached
    stored = next((tmp_path / "cache").glob("findings-*.json")).read_text()
    assert "backoffLimit: 0" in stored


lines = st.lists(st.sampled_from(["a: 1\n", "b: [x, y]\n", "  c: z\n", "\n", "# note\n", "d",
                                 "e: 2\r", "f: 3\r\n"]), max_size=8)


@given(lines, lines)
def test_text_edits_turn_one_text_into_the_other(before: list[str], after: list[str]) -> None:
    old, new = "".join(before), "".join(after)
    edits = [
        {"content": edit.content, "location": {"row": edit.row, "column": edit.column},
         "end_location": {"row": edit.end_row, "column": edit.end_column}}
        for edit in fix.text_edits(old, new)
    ]
    assert applied(old, edits) == new


def test_each_fix_of_a_file_of_many_documents_has_the_edits_fix_makes(tmp_path: Path) -> None:
    """A fix's edits are worked out on its own document (a round trip of the whole file
    per fix made a file of 200 documents take minutes), and are the edits `--fix` makes
    on the whole file: rows count from the file's first line, whatever precedes the
    document (comments, an empty document, `...`, other documents), line breaks kept.
    Rows end where the findings' lines do, at a `\\r` alone too: a file of them was one
    row, its edits at columns in the hundreds."""
    documents = [path.read_text() for path in sorted(BROKEN.glob("*.yaml"))]
    body = "# the platform's objects\n" + "---\n".join(documents) + "...\n---\n"
    body += "# a fresh start\n---\n" + UNRELATED + "---\n" + documents[-1].replace(
        "name: ", "name: again-", 1)
    places: list[list[tuple[int, list[tuple[int, ...]]]]] = []
    for name, text in (("many.yaml", body), ("crlf.yaml", body.replace("\n", "\r\n")),
                       ("cr.yaml", body.replace("\n", "\r"))):
        path = tmp_path / name
        path.write_bytes(text.encode())
        findings = [f for f in fix.with_edits(lint_files(path)) if f.fix and f.fix.edit]
        assert len({f.manifest.document for f in findings if f.manifest}) == 3
        rows = set()
        places.append([])
        for finding in findings:
            assert finding.fix is not None and finding.fix.edits
            places[-1].append((finding.span.line, [edit[:4] for edit in finding.fix.edits]))
            edits = [{"content": edit.content,
                      "location": {"row": edit.row, "column": edit.column},
                      "end_location": {"row": edit.end_row, "column": edit.end_column}}
                     for edit in finding.fix.edits]
            assert applied(text, edits) == fix.apply(text, [finding])[0], finding.code
            rows.add(finding.fix.edits[0].row)
        assert max(rows) > body.count("\n") - documents[-1].count("\n")  # the last document's
    assert places[0] == places[1] == places[2]


def one_at_a_time(text: str, findings: list[Finding]) -> list[tuple[TextEdit, ...]]:
    """What each fix alone changes, by definition: `--fix` of that finding on its
    document alone (its lines, up to the next document), a round trip per fix, turned
    into edits of the file; () where it cannot be applied."""
    every = fix.lines(text)
    found = []
    for finding in findings:
        alone, cut = finding, None
        if finding.manifest is not None and finding.fix and finding.fix.edit:
            number = finding.manifest.document
            cut = fix._document_lines(text, [number])
            alone = replace(finding, manifest=replace(finding.manifest, document=0))
        start, end = cut[number] if cut else (0, None)
        piece = "".join(every[start:end])
        try:
            fixed, applied = fix.apply(piece, [alone])
        except fix.Unfixable:
            applied = []
        found.append(tuple(edit._replace(row=edit.row + start, end_row=edit.end_row + start)
                           for edit in fix.text_edits(piece, fixed)) if applied else ())
    return found


def _with_fixes(findings: list[Finding]) -> list[Finding]:
    return [finding for finding in findings if finding.fix and finding.fix.edits is None
            and (finding.fix.edit or finding.fix.rewrite)]


def _fixed_cases() -> list[tuple[str, dict[str, Any]]]:
    return [(path.stem, case) for path in sorted(CASES_DIR.glob("TL*.yaml"))
            for case in read_yaml(path)["cases"] if "fixed" in case]


FIXED_CASES = _fixed_cases()


@pytest.mark.parametrize(("code", "case"), FIXED_CASES,
                         ids=[f"{code}:{case['name']}" for code, case in FIXED_CASES])
def test_edits_of_each_rule_case_are_those_of_its_fix_alone(code: str,
                                                            case: dict[str, Any]) -> None:
    text = case["fail"]
    findings = _with_fixes(lint([load(text, "case.yaml")], case_settings(code, case),
                                previous=previous(case)))
    assert findings
    edits = [finding.fix.edits for finding in fix.with_edits(findings) if finding.fix]
    assert edits == one_at_a_time(text, findings)


@pytest.mark.parametrize("name", ["finetune.yaml", "finetune.fixed.yaml"])
def test_edits_of_the_fix_fixtures_are_those_of_each_fix_alone(name: str) -> None:
    path = ROOT / "fixtures" / "fix" / name
    findings = _with_fixes(lint_files(path))
    assert bool(findings) == (name == "finetune.yaml")
    edits = [finding.fix.edits for finding in fix.with_edits(findings) if finding.fix]
    assert edits == one_at_a_time(path.read_text(), findings)


#: Cases made of the objects alone (no stored objects to compare with), to be put together.
_ALONE = [case for _, case in FIXED_CASES if "before" not in case and "options" not in case]
_SEPARATORS = ["---\n", "...\n---\n", "# next\n---\n", "---\n# empty\n---\n"]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(_ALONE), min_size=2, max_size=4),
       st.lists(st.sampled_from(_SEPARATORS), min_size=3, max_size=3), st.booleans())
def test_edits_in_files_of_many_documents_are_those_of_each_fix_alone(
    cases: list[dict[str, Any]], separators: list[str], crlf: bool
) -> None:
    text = cases[0]["fail"]
    for separator, case in zip(separators, cases[1:], strict=False):
        text += separator + case["fail"]
    if crlf:
        text = text.replace("\n", "\r\n")
    findings = _with_fixes(lint([load(text, "many.yaml")], case_settings("TL201", cases[0])))
    edits = [finding.fix.edits for finding in fix.with_edits(findings) if finding.fix]
    assert edits == one_at_a_time(text, findings)


EVERY_FEATURE = """\
# a comment above the first key
base: &base {x: 1, y: [1, 2]}
other:
  # above a mapping's first key
  <<: *base
  tagged: !custom 3
  when: 2001-12-14t21:59:43.10-05:00
  day: 2002-12-14
  bytes: !!binary aGVsbG8=
  set: !!set {a, b}
  ordered: !!omap [a: 1, b: 2]
  numbers: [.inf, -.inf, .nan, 1.5e3, 0x1F, 0o17, 1_000]
  literal: |2
      indented
  folded: >-
    folded
    text
  quoted: ['single', "double"]
  none: ~
  yes: yes
  complex: {? key : 1}
items: !tagged
  - &item item
  - *item  # the same
"""


def test_each_fix_edits_a_copy_of_the_tree_that_dumps_as_it_does() -> None:
    """A fix but the last of a document edits a copy: a copy that lost a comment, an
    anchor or a timestamp's layout gave that fix edits that delete or rewrite them."""
    parser, documents = fix._load_tree(EVERY_FEATURE)
    dumped = fix._dump(parser, documents)
    copies = fix._copies(documents, 2)
    assert [fix._dump(parser, tree) for tree in copies] == [dumped, dumped]
    copies[0][0]["other"]["tagged"] = 4
    assert fix._dump(parser, copies[1]) == fix._dump(parser, documents) == dumped
