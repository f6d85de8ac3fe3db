"""The command line speaks to users: the name meant for a misspelt one, color as asked,
several outputs from one run, and exit status 2 for every configuration error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_cli import ENV, trainlint
from tests.test_suppression import RUNTIME


@pytest.fixture
def runtime(tmp_path: Path) -> Path:
    """runtime.yaml: one TL301 error (emptyDir checkpoints) and nothing else selected."""
    (tmp_path / "runtime.yaml").write_text(RUNTIME)
    (tmp_path / ".trainlint.toml").write_text('select = ["TL301", "TL402", "TL090", "TL091"]\n')
    return tmp_path


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["check", "--select", "TL3O1", "runtime.yaml"],
         "command line: --select: no rule matches 'TL3O1' (did you mean `TL301`?)"),
        (["check", "--ignore", "ephemeral-checkpoint-volum", "runtime.yaml"],
         "no rule matches 'ephemeral-checkpoint-volum' "
         "(did you mean `ephemeral-checkpoint-volume`?)"),
        (["check", "--select", "TLXYZ", "runtime.yaml"],
         "no rule matches 'TLXYZ' (see `trainlint rules`)"),
        (["rule", "tl3o1"], "no rule 'tl3o1' (did you mean `TL301`?)"),
        (["check", "--show-settings", "runtime.yaml"],
         "no such option: --show-settings; `trainlint config [PATH]` prints the settings"),
        (["check", "--add-noqa", "runtime.yaml"],
         "no such option: --add-noqa; did you mean --add-suppressions?"),
        (["check", "--unsafe-fix", "runtime.yaml"],
         "no such option: --unsafe-fix; did you mean --unsafe-fixes?"),
        (["check", "--output-format", "githb", "runtime.yaml"],
         "unknown format 'githb' (did you mean `github`?)"),
        (["check", "--output-format", "github,json", "runtime.yaml"],
         "only one format can go to standard output"),
        (["check", "--output-format", "sarif:", "runtime.yaml"],
         "`sarif:`: name the file after the colon"),
        # One rule must be named: a code prefix is no answer (it named itself).
        (["rule", "TL30"],
         "no rule 'TL30' (the start of 8 rules' codes, TL301 to TL309: name one)"),
        (["check", "--select", "", "runtime.yaml"],
         "Invalid value for --select: names no rule: it would run none"),
        (["rule", ""], "no rule '' (see `trainlint rules`)"),
        (["check", "--select", " , ", "runtime.yaml"],
         "Invalid value for --select: names no rule: it would run none"),
    ],
)
def test_misspelt_names_are_answered_with_the_one_meant(
    runtime: Path, arguments: list[str], said: str
) -> None:
    result = trainlint(*arguments, cwd=runtime)
    assert result.returncode == 2
    assert said in result.stderr, result.stderr
    assert "did you mean --show-fixes" not in result.stderr.lower()


def test_a_misspelt_config_key_is_named(runtime: Path) -> None:
    (runtime / ".trainlint.toml").write_text('fail_on = "error"\n')
    result = trainlint("check", "runtime.yaml", cwd=runtime)
    assert result.returncode == 2
    assert result.stderr.startswith(
        "Error: .trainlint.toml: fail_on: unknown key (did you mean `fail-on`?) (known: "
    )


def test_a_misspelt_suppression_says_which_rule_it_meant(runtime: Path) -> None:
    text = RUNTIME.replace("emptyDir: {}", "emptyDir: {}  # trainlint: disable=TL3O1")
    (runtime / "runtime.yaml").write_text(text)
    result = trainlint("check", "--no-cache", "--output-format", "json", "runtime.yaml",
                       cwd=runtime)
    messages = {item["code"]: item["message"] for item in json.loads(result.stdout)}
    assert messages["TL091"].startswith(
        "suppression names `TL3O1`, which is no rule's code or name (did you mean `TL301`?)"
    )


def test_color_as_asked_whatever_the_environment(runtime: Path) -> None:
    def shown(*options: str, env: dict[str, str] | None = None) -> str:
        return trainlint("check", "--no-cache", "--output-format", "full", *options,
                         "runtime.yaml", cwd=runtime, env=env).stdout

    assert "\x1b[" not in shown()  # not a terminal
    assert "\x1b[1;31m" in shown("--color", "always")
    assert "\x1b[1;31m" in shown("--color", "always", env={"NO_COLOR": "1"})
    assert "\x1b[" not in shown("--color", "never", env={"FORCE_COLOR": "1"})
    assert "\x1b[1;31m" in shown(env={"FORCE_COLOR": "1"})
    assert "\x1b[" not in shown(env={"FORCE_COLOR": "1", "NO_COLOR": "1"})


def test_output_format_from_the_environment(runtime: Path) -> None:
    result = trainlint("check", "--no-cache", "runtime.yaml", cwd=runtime,
                       env={"TRAINLINT_OUTPUT_FORMAT": "json"})
    assert [item["code"] for item in json.loads(result.stdout)] == ["TL301"]
    given = trainlint("check", "--no-cache", "--output-format", "concise", "runtime.yaml",
                      cwd=runtime, env={"TRAINLINT_OUTPUT_FORMAT": "json"})
    assert given.stdout.startswith("runtime.yaml:")  # the option wins
    bad = trainlint("check", "runtime.yaml", cwd=runtime, env={"TRAINLINT_OUTPUT_FORMAT": "jsn"})
    assert bad.returncode == 2
    assert "Invalid value for $TRAINLINT_OUTPUT_FORMAT: unknown format 'jsn'" in bad.stderr


def test_one_run_writes_several_formats_from_the_same_findings(runtime: Path) -> None:
    result = trainlint(
        "check", "--no-cache", "--color", "always",
        "--output-format", "github,sarif:out/trainlint.sarif,json:out/findings.json",
        "runtime.yaml", cwd=runtime,
    )
    assert result.returncode == 1
    annotations = result.stdout.splitlines()
    assert len(annotations) == 1 and annotations[0].startswith("::error file=runtime.yaml,")
    sarif = json.loads((runtime / "out" / "trainlint.sarif").read_text())
    findings = json.loads((runtime / "out" / "findings.json").read_text())
    (run,) = sarif["runs"]
    assert [item["ruleId"] for item in run["results"]] == [item["code"] for item in findings]
    assert [item["locations"][0]["physicalLocation"]["region"]["startLine"]
            for item in run["results"]] == [item["line"] for item in findings] == [
        int(annotations[0].split("line=")[1].split(",")[0])
    ]
    full = trainlint("check", "--no-cache", "--color", "always",
                     "--output-format", "concise,full:out/full.txt", "runtime.yaml", cwd=runtime)
    assert full.stdout.startswith("runtime.yaml:")
    assert "\x1b[" not in (runtime / "out" / "full.txt").read_text()  # files hold no colors


def test_fail_on_option_overrides_the_configuration(runtime: Path) -> None:
    warning_only = RUNTIME.replace("emptyDir: {}", "persistentVolumeClaim: {claimName: ckpt}")
    (runtime / "runtime.yaml").write_text(
        warning_only.replace("                  terminationGracePeriodSeconds: 120\n", "")
    )
    assert trainlint("check", "--no-cache", "runtime.yaml", cwd=runtime).returncode == 1
    assert trainlint("check", "--no-cache", "--fail-on", "error", "runtime.yaml",
                     cwd=runtime).returncode == 0


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["--tls-cert", "missing.crt", "--tls-key", "missing.key"],
         "cannot serve: cannot read the certificate missing.crt"),
        (["--self-signed", "--config", "bad.toml"], "fail-on: Input should be"),
        (["--self-signed", "--config", "typo.toml"], "unknown key (did you mean `fail-on`?)"),
    ],
)
def test_serve_exits_2_on_configuration_errors(
    tmp_path: Path, arguments: list[str], said: str
) -> None:
    pytest.importorskip("aiohttp")
    (tmp_path / "bad.toml").write_text('fail-on = "info"\n')
    (tmp_path / "typo.toml").write_text('fail_on = "error"\n')
    (tmp_path / "context").mkdir()
    result = trainlint(
        "serve", *arguments, "--context-dir", "context", "--port", "0", "--metrics-port", "0",
        cwd=tmp_path,
    )
    assert result.returncode == 2, result.stderr
    assert said in result.stderr
    assert "Traceback" not in result.stderr and sys.executable not in result.stderr


def test_watch_checks_again_when_a_file_changes(runtime: Path) -> None:
    """A real watcher on the folder: the check runs at once, again after an edit (not
    after the cache it writes itself), and Ctrl-C ends it with status 0."""
    pytest.importorskip("watchfiles")
    import selectors
    import signal
    import time

    clean = RUNTIME.replace("emptyDir: {}", "persistentVolumeClaim: {claimName: ckpt}")
    (runtime / "runtime.yaml").write_text(clean)
    process = subprocess.Popen(
        [sys.executable, "-c", "from trainlint.cli import run; run()", "check", "--watch",
         "--output-format", "concise", "."],
        cwd=runtime, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0,
    )
    assert process.stdout is not None and process.stderr is not None
    watching = selectors.DefaultSelector()
    watching.register(process.stdout, selectors.EVENT_READ)
    watching.register(process.stderr, selectors.EVENT_READ)
    seen = {"out": "", "err": ""}

    def read(timeout: float) -> None:
        for key, _ in watching.select(timeout=timeout):
            chunk = os.read(key.fd, 65536).decode()
            seen["out" if key.fileobj is process.stdout else "err"] += chunk

    def wait_for(text: str, stream: str, seconds: float = 20) -> None:
        deadline = time.monotonic() + seconds
        while text not in seen[stream]:
            assert time.monotonic() < deadline, f"no {text!r} in {seen}"
            read(0.5)

    try:
        wait_for("All checks passed.", "out")
        wait_for("[watching for changes", "err")
        time.sleep(0.5)  # the watcher is set up before the edit
        (runtime / "runtime.yaml").write_text(RUNTIME)
        wait_for("[1 changed: checking again]", "err")
        wait_for("Found 1 problem (1 error).", "out")
        assert seen["out"].count("runtime.yaml:") == 1
        time.sleep(1)  # the cache written by the second run must not start a third
        read(0.5)
        assert seen["err"].count("checking again") == 1
    finally:
        process.send_signal(signal.SIGINT)
        try:
            status = process.wait(timeout=20)
        except subprocess.TimeoutExpired:  # never leave it watching after the test
            process.kill()
            process.wait()
            raise
    assert status == 0


def test_serve_without_credentials_for_the_cluster_exits_2(tmp_path: Path) -> None:
    pytest.importorskip("aiohttp")
    (tmp_path / "kubeconfig").write_text("apiVersion: v1\nkind: Config\n")
    result = trainlint(
        "serve", "--self-signed", "--port", "0", "--metrics-port", "0", cwd=tmp_path,
        env={"KUBECONFIG": str(tmp_path / "kubeconfig"), "KUBERNETES_SERVICE_HOST": ""},
    )
    assert result.returncode == 2, result.stderr
    assert "Error: cannot serve: no credentials for the cluster (" in result.stderr
    assert "or read the context from manifests with --context-dir" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_suppression_naming_a_prefix_is_told_to_name_one_rule(runtime: Path) -> None:
    (runtime / "runtime.yaml").write_text(
        RUNTIME.replace("emptyDir: {}", "emptyDir: {}  # trainlint: disable=TL30, ALL"))
    result = trainlint("check", "--no-cache", "--output-format", "concise", "runtime.yaml",
                       cwd=runtime)
    assert result.stdout.splitlines()[1:3] == [
        "runtime.yaml:29:58: TL091 [warning] suppression names `TL30`, which is no rule's code "
        "or name (the start of 8 rules' codes, TL301 to TL309: name one): it silences "
        "nothing (see `trainlint rules`) [invalid-suppression]",
        "runtime.yaml:29:64: TL091 [warning] suppression names `ALL`, which is no rule's code "
        "or name (`ALL` selects every rule, where rules are selected: name one): it silences "
        "nothing (see `trainlint rules`) [invalid-suppression]",
    ]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_report_standard_output_cannot_take_is_said_plainly(runtime: Path) -> None:
    with Path("/dev/full").open("w") as full:
        result = subprocess.run(
            [sys.executable, "-c", "from trainlint.cli import run; run()", "check", "--no-cache",
             "runtime.yaml"], cwd=runtime, stdout=full, stderr=subprocess.PIPE, text=True,
            env=ENV, check=False)
    assert (result.returncode, result.stderr) == (
        2, "Error: cannot write the report to standard output: No space left on device\n")
