"""Every output format: golden files over the broken fine-tune example, and the contracts
each consumer (GitHub, GitLab, JUnit and Checkstyle readers) relies on."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from xml.etree import ElementTree

import pytest
import yaml

from tests.conftest import ROOT, SHARED, UPDATE, lint_text
from trainlint.document import Source, Span
from trainlint.finding import Finding
from trainlint.problem import Severity
from trainlint.report import FORMATS, Report, fingerprints, renderer, shown

GOLDEN = ROOT / "fixtures" / "report"
EXAMPLE = "examples/finetune-broken"
#: The rules that fire on the example today: new rules do not churn these files.
CODES = "TL201,TL202,TL301,TL401,TL402"
CLEAN_ENV = {
    **{key: value for key, value in os.environ.items()
       if key not in {"GITHUB_ACTIONS", "NO_COLOR", "FORCE_COLOR", "TRAINLINT_OUTPUT_FORMAT"}},
    "SOURCE_DATE_EPOCH": "1767225600",  # the policy reports' timestamps
}


def trainlint(
    *args: str, env: dict[str, str] | None = None, cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from trainlint.cli import run; run()", *args],
        cwd=cwd, env=env or CLEAN_ENV, capture_output=True, text=True, check=False,
    )


def example_report(fmt: str, *extra: str, env: dict[str, str] | None = None) -> str:
    result = trainlint(
        "check", "--isolated", "--select", CODES, "--output-format", fmt, *extra, EXAMPLE, env=env
    )
    assert result.returncode == 1, result.stderr
    assert result.stderr == ""
    return result.stdout


def check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path} is missing: run with TRAINLINT_UPDATE_FIXTURES=1"
    assert text == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_golden(fmt: str) -> None:
    check_golden(f"finetune-broken.{fmt}.expected", example_report(fmt))


def test_golden_full_in_color() -> None:
    text = example_report("full", env={**CLEAN_ENV, "FORCE_COLOR": "1"})
    assert "\x1b[1;31m" in text
    check_golden("finetune-broken.full-color.expected", text)


def test_golden_statistics() -> None:
    check_golden("finetune-broken.statistics.expected", example_report("concise", "--statistics"))


def test_sarif_is_valid_and_fits_github_code_scanning() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema_path = SHARED / "schemas" / "sarif-schema-2.1.0.json"
    if not schema_path.exists():
        pytest.skip(f"{schema_path} is absent: the SARIF schema lives beside the checkout in CI")
    log = json.loads(example_report("sarif"))
    schema = json.loads(schema_path.read_text())
    jsonschema.validators.validator_for(schema)(schema).validate(log)

    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == sorted(CODES.split(","))
    for rule in rules:
        assert rule["help"]["text"] and rule["help"]["markdown"].startswith("## What it does")
        assert rule["helpUri"] == f"https://trainlint.dev/rules/{rule['id']}/"
    results = run["results"]
    assert len(results) == 6
    first = results[0]
    assert rules[first["ruleIndex"]]["id"] == first["ruleId"] == "TL401"
    assert first["level"] == "warning"
    location = first["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {
        "uri": "examples/finetune-broken/runtime.yaml", "uriBaseId": "%SRCROOT%",
    }
    assert location["region"] == {
        "startLine": 20, "startColumn": 13, "endLine": 20, "endColumn": 17,
    }
    assert {result["level"] for result in results} == {"error", "warning"}
    prints = [result["partialFingerprints"]["trainlint/v1"] for result in results]
    assert len(set(prints)) == len(prints)


def test_sarif_uri_is_relative_and_escaped() -> None:
    from trainlint.report.sarif import uri

    assert uri(str(Path.cwd() / "deploy" / "a b.yaml")) == "deploy/a%20b.yaml"
    assert uri("charts/x#1.yaml") == "charts/x%231.yaml"
    assert uri("/elsewhere/x.yaml") == "file:///elsewhere/x.yaml"


def test_a_file_name_that_is_not_utf8_is_written_alike_by_every_format(tmp_path: Path) -> None:
    """A byte of a name that is not UTF-8 (a lone surrogate in Python) is the escape `\\xff`
    in every format, percent-encoded in SARIF's URI: each report is UTF-8 and parses. The
    surrogate lost the SARIF and GitLab reports and made the XML formats unparseable."""
    name = os.fsdecode(b"bad\xff.yaml")
    try:
        (tmp_path / name).write_bytes((ROOT / EXAMPLE / "runtime.yaml").read_bytes())
    except OSError:
        pytest.skip("the file system takes only UTF-8 names")
    files = ",".join(f"{fmt}:out.{fmt}" for fmt in FORMATS if fmt != "concise")
    result = trainlint(  # a standard output that takes no surrogate, as in most locales
        "check", "--isolated", "--no-cache", "--output-format", f"concise,{files}", ".",
        env={**CLEAN_ENV, "PYTHONIOENCODING": "utf-8"}, cwd=tmp_path,
    )
    assert result.returncode == 1, result.stderr
    names: dict[str, Callable[[str], list[str]]] = {
        "json": lambda text: [item["file"] for item in json.loads(text)],
        "json-lines": lambda text: [json.loads(line)["file"] for line in text.splitlines()],
        "gitlab": lambda text: [item["location"]["path"] for item in json.loads(text)],
        "sarif": lambda text: [
            result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for result in json.loads(text)["runs"][0]["results"]
        ],
        "junit": lambda text: [
            case.attrib["classname"] for case in ElementTree.fromstring(text).iter("testcase")
        ],
        "checkstyle": lambda text: [
            file.attrib["name"] for file in ElementTree.fromstring(text).iter("file")
        ],
    }
    shown_name = "bad\\xff.yaml"
    for fmt in FORMATS:
        text = result.stdout if fmt == "concise" else (
            (tmp_path / f"out.{fmt}").read_bytes().decode("utf-8"))
        if fmt == "policy-report":  # each finding is on an object: no file is named
            assert len(list(yaml.safe_load_all(text))) == 1
        elif fmt in names:
            assert set(names[fmt](text)) == {"bad%FF.yaml" if fmt == "sarif" else shown_name}
        else:
            assert shown_name in text, fmt


def _finding(
    message: str, *, file: str = "a.yaml", line: int = 3, code: str = "TL301"
) -> Finding:
    return Finding(
        code, "ephemeral-checkpoint-volume", Severity.ERROR, message, None,
        Source(file, "x: 1\n"), Span(line, 5, line, 9), ("spec",), None,
    )


def test_github_commands_escape_data_and_properties() -> None:
    found = replace(_finding("50% done,\nnext: x", file="dir,1/a:b.yaml"), remediation="fix it")
    text = renderer("github")(Report([found]))
    # the help goes on a line of its own; a line break in a message is shown as `\n`
    assert text == (
        "::error file=dir%2C1/a%3Ab.yaml,line=3,col=5,endLine=3,endColumn=9,"
        "title=trainlint TL301 (ephemeral-checkpoint-volume)::50%25 done,\\nnext: x"
        "%0Ahelp: fix it\n"
    )


def test_what_people_read_shows_control_and_reordering_characters_as_escapes() -> None:
    """A value quoted from a manifest cannot reorder (U+202E) or restyle (an ANSI escape)
    what a terminal or a CI page shows of a finding; the machine formats keep it exact."""
    message = "value `\u202eexe.sh` \x1b[2Jgone"
    source = Source("a.yaml", "a: 1\nkey: \u202e\u202eabc\n")
    found = Finding("TL301", "ephemeral-checkpoint-volume", Severity.ERROR, message, "≥ 1 é",
                    source, Span(2, 8, 2, 11), ("key",), None)
    escaped = "value `\\u202eexe.sh` \\x1b[2Jgone"
    assert shown(message) == escaped and shown("tab\tand ≥ é") == "tab\tand ≥ é"
    for fmt in ("concise", "full", "grouped", "github", "markdown"):
        text = renderer(fmt)(Report([found]))
        assert "\u202e" not in text and "\x1b" not in text and escaped in text, fmt
    # in a code frame, the carets stay under `abc` however wide the escapes before it
    frame = renderer("full")(Report([found])).splitlines()
    assert frame[3:5] == ["2 | key: \\u202e\\u202eabc", "  | " + " " * 17 + "^^^"]
    assert json.loads(renderer("json")(Report([found])))[0]["message"] == message


def test_gitlab_fingerprints_survive_line_moves_and_stay_unique() -> None:
    moved = fingerprints([_finding("m", line=3)]) == fingerprints([_finding("m", line=40)])
    assert moved
    twice = fingerprints([_finding("m"), _finding("m", line=9)])
    assert twice[1] == f"{twice[0]}:2"
    other = fingerprints([_finding("m", file="b.yaml")])
    assert other[0] != twice[0]
    issues = json.loads(renderer("gitlab")(Report([_finding("m")])))
    assert issues[0]["severity"] == "major"
    assert issues[0]["location"]["positions"]["begin"] == {"line": 3, "column": 5}


def test_junit_has_a_case_per_file_and_rule_and_a_passing_case_per_clean_file() -> None:
    findings = [_finding("one", line=3), _finding("two", line=7), _finding("x", code="TL302")]
    text = renderer("junit")(Report(findings, files=["a.yaml", "clean.yaml"]))
    root = ElementTree.fromstring(text)
    assert root.attrib["tests"] == "3" and root.attrib["failures"] == "2"
    cases = root.findall("./testsuite/testcase")
    assert [(case.attrib["classname"], case.attrib["name"]) for case in cases] == [
        ("a.yaml", "TL301 ephemeral-checkpoint-volume"),
        ("a.yaml", "TL302 ephemeral-checkpoint-volume"),
        ("clean.yaml", "trainlint"),
    ]
    failure = cases[0].find("failure")
    assert failure is not None and failure.attrib["message"] == "2 problems of TL301"
    assert failure.text == "a.yaml:3:5: one\na.yaml:7:5: two"
    assert cases[2].find("failure") is None


def test_checkstyle_escapes_markup_and_lists_clean_files() -> None:
    text = renderer("checkstyle")(Report([_finding('a <b> & "c"')], files=["a.yaml", "ok.yaml"]))
    root = ElementTree.fromstring(text)
    files = root.findall("file")
    assert [element.attrib["name"] for element in files] == ["a.yaml", "ok.yaml"]
    error = files[0].find("error")
    assert error is not None
    assert error.attrib == {
        "line": "3", "column": "5", "severity": "error", "message": 'a <b> & "c"',
        "source": "trainlint.TL301.ephemeral-checkpoint-volume",
    }


def test_xml_formats_write_what_xml_cannot_hold_as_escapes() -> None:
    """XML 1.0 cannot hold most C0 controls, not even as references: a `\\b` in a key that
    a message quotes made the JUnit and Checkstyle reports unparseable."""
    report = Report([_finding("field `imag\be` \x1b[0m \uffff, tab\tkept")], files=["a.yaml"])
    escaped = "field `imag\\x08e` \\x1b[0m \\uffff, tab\tkept"
    error = ElementTree.fromstring(renderer("checkstyle")(report)).find("file/error")
    assert error is not None and error.attrib["message"] == escaped
    failure = ElementTree.fromstring(renderer("junit")(report)).find(".//failure")
    assert failure is not None and failure.text == f"a.yaml:3:5: {escaped}"


def test_json_lines_carry_the_json_objects() -> None:
    findings = lint_text((ROOT / EXAMPLE / "runtime.yaml").read_text())
    lines = renderer("json-lines")(Report(findings)).splitlines()
    assert [json.loads(line) for line in lines] == json.loads(renderer("json")(Report(findings)))
    assert renderer("json-lines")(Report([])) == ""


def test_text_formats_on_a_clean_run() -> None:
    for fmt in ("full", "concise", "grouped"):
        assert renderer(fmt)(Report([])) == "All checks passed.\n"
    assert json.loads(renderer("sarif")(Report([])))["runs"][0]["results"] == []


def test_full_output_splits_each_file_into_lines_once() -> None:
    """A file of thousands of findings (a long stream) is split into lines once, not once
    per finding: that took minutes on a 12 MB file."""
    splits = []

    class Counted(str):
        def splitlines(self, keepends: bool = False) -> list[str]:
            splits.append(1)
            return super().splitlines(keepends)

    source = Source("stream.yaml", Counted("a: 1\n" * 100))
    findings = [
        Finding("TL201", "x", Severity.ERROR, f"message {line}", None, source,
                Span(line, 1, line, 2), (), None)
        for line in range(1, 101)
    ]
    text = renderer("full")(Report(findings))
    assert text.count("a: 1") > 100 and splits == [1]


def test_the_notes_show_a_runtime_name_that_reorders_as_an_escape(tmp_path: Path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
                   "metadata: {name: j}\nspec:\n  runtimeRef: {name: \"a\\u202eb\"}\n")
    result = trainlint("check", "--isolated", "--no-cache", str(job))
    assert result.stderr.splitlines()[-1] == (
        "trainlint: 1 TrainJob not checked against its runtime (`a\\u202eb`): add it with "
        "`--context` (or `--from-cluster`)"
    ), result.stderr
