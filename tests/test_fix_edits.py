"""`fix.edits` in JSON, as ruff's JSON has them: ranges of the file as it is and their new
text, which applied give exactly what `--fix` writes for that finding."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import ROOT, lint_files
from tests.test_cli import trainlint
from trainlint import fix
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


lines = st.lists(st.sampled_from(["a: 1\n", "b: [x, y]\n", "  c: z\n", "\n", "# note\n", "d"]),
                 max_size=8)


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
    document (comments, an empty document, `...`, other documents), line breaks kept."""
    documents = [path.read_text() for path in sorted(BROKEN.glob("*.yaml"))]
    body = "# the platform's objects\n" + "---\n".join(documents) + "...\n---\n"
    body += "# a fresh start\n---\n" + UNRELATED + "---\n" + documents[-1].replace(
        "name: ", "name: again-", 1)
    for name, text in (("many.yaml", body), ("crlf.yaml", body.replace("\n", "\r\n"))):
        path = tmp_path / name
        path.write_bytes(text.encode())
        findings = [f for f in fix.with_edits(lint_files(path)) if f.fix and f.fix.edit]
        assert len({f.manifest.document for f in findings if f.manifest}) == 3
        rows = set()
        for finding in findings:
            assert finding.fix is not None and finding.fix.edits
            edits = [{"content": edit.content,
                      "location": {"row": edit.row, "column": edit.column},
                      "end_location": {"row": edit.end_row, "column": edit.end_column}}
                     for edit in finding.fix.edits]
            assert applied(text, edits) == fix.apply(text, [finding])[0], finding.code
            rows.add(finding.fix.edits[0].row)
        assert max(rows) > text.count("\n") - documents[-1].count("\n")  # the last document's
