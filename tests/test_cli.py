"""`trainlint check` and `trainlint config` through a real process: exit status, streams,
bytes written, format choice and color."""

from __future__ import annotations

import ast
import gc
import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_suppression import RUNTIME
from trainlint.__main__ import NON_PRINTABLE, NON_PRINTABLE_RANGES

NO_GRACE = RUNTIME.replace("                  terminationGracePeriodSeconds: 120\n", "")
CLEAN = RUNTIME.replace("emptyDir: {}", "persistentVolumeClaim: {claimName: ckpt}")
WARN = NO_GRACE.replace("emptyDir: {}", "persistentVolumeClaim: {claimName: ckpt}")
ENV = {
    key: value for key, value in os.environ.items()
    if key not in {"GITHUB_ACTIONS", "NO_COLOR", "FORCE_COLOR", "TRAINLINT_OUTPUT_FORMAT"}
}


def trainlint(
    *args: str, cwd: Path, env: dict[str, str] | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from trainlint.cli import run; run()", *args],
        cwd=cwd, env={**ENV, **(env or {})}, input=stdin, capture_output=True, text=True,
        check=False,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """clean.yaml has no finding, warn.yaml one warning (TL402), error.yaml one error."""
    (tmp_path / "clean.yaml").write_text(CLEAN)
    (tmp_path / "warn.yaml").write_text(WARN)
    (tmp_path / "error.yaml").write_text(RUNTIME)
    (tmp_path / ".trainlint.toml").write_text('select = ["TL301", "TL402"]\n')
    return tmp_path


@pytest.mark.parametrize(
    ("files", "options", "config", "status"),
    [
        (["clean.yaml"], [], "", 0),
        (["warn.yaml"], [], "", 1),
        (["warn.yaml"], [], 'fail-on = "error"\n', 0),
        (["error.yaml"], [], 'fail-on = "error"\n', 1),
        (["warn.yaml"], [], 'fail-on = "error"\n[severity]\nTL402 = "error"\n', 1),
        (["error.yaml", "warn.yaml"], ["--exit-zero"], "", 0),
        (["error.yaml"], ["--ignore", "TL301"], "", 0),
        (["clean.yaml"], ["--select", "TL9999"], "", 2),
        (["clean.yaml"], ["--trainer-version", "3.0"], "", 2),
        (["missing.yaml"], [], "", 2),
        (["clean.yaml"], ["--output-format", "xml"], "", 2),
        (["clean.yaml"], [], "fail-on = 'never'\n", 2),
        (["error.yaml"], ["--exit-zero"], "unknown = 1\n", 2),
    ],
)
def test_exit_status(
    project: Path, files: list[str], options: list[str], config: str, status: int
) -> None:
    if config:
        (project / ".trainlint.toml").write_text('select = ["TL301", "TL402"]\n' + config)
    result = trainlint("check", *options, *files, cwd=project)
    assert result.returncode == status, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert bool(result.stderr) == (status == 2)


def test_config_error_message_names_file_and_key(project: Path) -> None:
    (project / ".trainlint.toml").write_text("[rules.TL402]\nmin-seconds = -\n")
    result = trainlint("check", "clean.yaml", cwd=project)
    assert result.returncode == 2
    assert result.stderr == "Error: .trainlint.toml:2:15: invalid TOML: Invalid value\n"
    assert result.stdout == ""


def test_output_file_gets_the_bytes_and_stdout_stays_empty(project: Path) -> None:
    result = trainlint(
        "check", "--output-format", "concise", "--output-file", "out/report.txt", "error.yaml",
        cwd=project,
    )
    assert result.returncode == 1
    assert result.stdout == ""
    written = (project / "out" / "report.txt").read_bytes()
    assert written.startswith(b"error.yaml:29:23: TL301 [error] checkpoint-dir `/mnt/ckpt/run`")
    assert written.endswith(b"\nFound 1 problem (1 error).\n")


@pytest.mark.parametrize(("options", "refusal"), [
    (["--output-file", "./error.yaml", "."],
     "--output-file error.yaml is a file the run reads: the report would replace it"),
    (["--output-format", "json:error.yaml", "--fix", "error.yaml"],
     "--output-format json error.yaml is a file the run reads: the report would replace it"),
    (["--output-format", "json:out.json,sarif:out/../out.json", "error.yaml"],
     "--output-format sarif writes out/../out.json, as --output-format json does"),
    (["--context", "error.yaml", "--output-file", "error.yaml", "clean.yaml"],
     "--output-file error.yaml is a file the run reads: the report would replace it"),
    (["--config", ".trainlint.toml", "--output-file", ".trainlint.toml", "clean.yaml"],
     "--output-file .trainlint.toml is a file that says what is checked and how: the report "
     "would replace it"),
    (["--output-file", "k/patch.yaml", "k"],
     "--output-file k/patch.yaml is a file the run reads: the report would replace it"),
    (["--output-file", ".gitignore", "clean.yaml"],
     "--output-file .gitignore is a file that says what is checked and how: the report "
     "would replace it"),
    (["--stdin-filename", "error.yaml", "--output-file", "error.yaml", "-"],
     "--output-file error.yaml is a file the run reads: the report would replace it"),
])
def test_a_report_never_replaces_a_checked_file_or_another_report(
    project: Path, options: list[str], refusal: str
) -> None:
    (project / "out").mkdir()
    (project / ".gitignore").write_text("out/\n")
    (project / "k").mkdir()  # a kustomization and the patch it builds from
    (project / "k" / "kustomization.yaml").write_text("resources: [job.yaml]\npatches:\n"
                                                      "  - path: patch.yaml\n")
    (project / "k" / "job.yaml").write_text(CLEAN)
    (project / "k" / "patch.yaml").write_text(CLEAN)
    before = (project / "error.yaml").read_bytes()
    result = trainlint("check", *options, cwd=project, stdin=before.decode())
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.endswith(f"\nError: {refusal}\n")
    assert (project / "error.yaml").read_bytes() == before
    assert not (project / "out.json").exists()


def test_a_file_named_twice_is_checked_once(project: Path) -> None:
    once = trainlint("check", "--output-format", "concise", "error.yaml", cwd=project)
    twice = trainlint("check", "--output-format", "concise", ".", "error.yaml", cwd=project)
    assert twice.returncode == once.returncode == 1
    assert twice.stdout.count("error.yaml:29:23: TL301") == 1
    assert "\nFound 2 problems (1 error, 1 warning).\n" in twice.stdout


@pytest.mark.parametrize("cache", [[], ["--no-cache"]])
def test_a_file_that_cannot_be_read_is_a_finding_not_a_crash(
    tmp_path: Path, cache: list[str]
) -> None:
    (tmp_path / "gone.yaml").symlink_to(tmp_path / "nowhere.yaml")
    (tmp_path / "clean.yaml").write_text(CLEAN)
    for _ in range(2):  # with the cache: cold, then warm
        result = trainlint(
            "check", *cache, "--select", "TL0", "--output-format", "concise", ".", cwd=tmp_path
        )
        assert result.returncode == 1, result.stderr
        assert result.stdout.startswith(
            "gone.yaml:1:1: TL001 [error] cannot read the file: No such file or directory"
        )
        assert "Found 1 problem (1 error)." in result.stdout


def test_unwritable_output_file_is_exit_2(project: Path) -> None:
    (project / "taken").write_text("")
    result = trainlint("check", "--output-file", "taken/report.txt", "clean.yaml", cwd=project)
    assert result.returncode == 2
    assert result.stderr.startswith("Error: taken/report.txt: cannot write the report: ")


def test_statistics_count_per_rule(project: Path) -> None:
    (project / "two.yaml").write_text(NO_GRACE + "---\n" + NO_GRACE.replace("torch-ckpt", "b"))
    result = trainlint("check", "--statistics", "two.yaml", cwd=project)
    assert result.returncode == 1
    assert result.stdout == (
        "2  TL301  [error] ephemeral-checkpoint-volume\n"
        "2  TL402  [warning] missing-termination-grace-period\n"
    )
    as_json = trainlint("check", "--statistics", "--output-format", "json", "two.yaml", cwd=project)
    assert '"count": 2' in as_json.stdout


def test_github_format_is_chosen_inside_github_actions(project: Path) -> None:
    result = trainlint("check", "error.yaml", cwd=project, env={"GITHUB_ACTIONS": "true"})
    assert result.stdout.startswith("::error file=error.yaml,line=29,col=23,endLine=29,")
    chosen = trainlint(
        "check", "--output-format", "concise", "error.yaml", cwd=project,
        env={"GITHUB_ACTIONS": "true"},
    )
    assert chosen.stdout.startswith("error.yaml:29:23: TL301")


def test_color_follows_force_color_and_no_color(project: Path) -> None:
    piped = trainlint("check", "--output-format", "full", "error.yaml", cwd=project)
    assert "\x1b[" not in piped.stdout
    forced = trainlint(
        "check", "--output-format", "full", "error.yaml", cwd=project, env={"FORCE_COLOR": "1"}
    )
    assert forced.stdout.startswith("\x1b[1;31merror.yaml:29:23: TL301")
    refused = trainlint(
        "check", "--output-format", "full", "error.yaml", cwd=project,
        env={"FORCE_COLOR": "1", "NO_COLOR": "1"},
    )
    assert "\x1b[" not in refused.stdout


def _on_terminal(project: Path, env: dict[str, str]) -> str:
    leader, follower = pty.openpty()
    with subprocess.Popen(
        [sys.executable, "-c", "from trainlint.cli import run; run()", "check", "error.yaml"],
        cwd=project, env={**ENV, **env}, stdout=follower, stderr=subprocess.DEVNULL,
    ) as process:
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closes when the process exits
                break
            if not chunk:
                break
            chunks.append(chunk)
        process.wait()
    os.close(leader)
    return b"".join(chunks).decode()


def test_terminal_gets_the_full_format_in_color_unless_no_color(project: Path) -> None:
    colored = _on_terminal(project, {})
    assert "\x1b[1;31merror.yaml:29:23: TL301" in colored
    assert "^^^^^^^^" in colored  # the code frame of the full format
    plain = _on_terminal(project, {"NO_COLOR": "1"})
    assert "\x1b[" not in plain and "error.yaml:29:23: TL301" in plain


def test_stdin_uses_the_configuration_of_its_filename(project: Path) -> None:
    (project / ".trainlint.toml").write_text(
        'select = ["TL301", "TL402"]\n[per-file-ignores]\n"smoke/*" = ["TL301"]\n'
    )
    smoke = trainlint(
        "check", "--stdin-filename", "smoke/rt.yaml", "-", cwd=project, stdin=NO_GRACE
    )
    assert smoke.stdout.splitlines()[0].startswith("smoke/rt.yaml:18:17: TL402 [warning]")
    assert "TL301" not in smoke.stdout
    prod = trainlint("check", "--stdin-filename", "prod/rt.yaml", "-", cwd=project, stdin=NO_GRACE)
    assert "prod/rt.yaml:28:23: TL301" in prod.stdout


def test_config_command_prints_the_effective_configuration(project: Path) -> None:
    result = trainlint("config", cwd=project)
    assert result.returncode == 0
    assert result.stdout.splitlines()[:3] == [
        "# trainlint configuration from .trainlint.toml",
        'trainer-version = "2.3"  # default',
        'kubernetes-version = "1.33"  # default',
    ]
    assert 'select = ["TL301", "TL402"]  # .trainlint.toml' in result.stdout
    isolated = trainlint("config", "--isolated", cwd=project)
    assert 'select = ["ALL"]  # default' in isolated.stdout


def _imported_by(arguments: list[str], watched: tuple[str, ...], cwd: Path) -> list[str]:
    """`trainlint ARGUMENTS` in a fresh interpreter: its output lines, then its exit code,
    then the modules it imported whose names start with one of `watched`."""
    code = (
        "import sys\nfrom trainlint.cli import main\n"
        f"try:\n    main({arguments!r})\nexcept SystemExit as end:\n    print(end.code)\n"
        f"print(sorted(m for m in sys.modules if m.startswith({watched!r})))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, check=True
    )
    return result.stdout.splitlines()


def test_version_imports_neither_pydantic_nor_the_rules(tmp_path: Path) -> None:
    watched = ("pydantic", "trainlint.rules", "yaml", "pathspec", "trainlint.engine")
    assert _imported_by(["--version"], watched, tmp_path) == [
        "trainlint, version 0.1.0", "0", "[]"
    ]


def _ending(arguments: list[str], printed: str, cwd: Path, setup: str = "") -> list[str]:
    """`trainlint ARGUMENTS` as the console script runs it (`trainlint.__main__.main`), in a
    fresh interpreter after `setup`: its output lines, then what the Python expression
    `printed` gives when the command ends (`code`: its exit status)."""
    code = (
        f"import os, sys\nfrom trainlint.__main__ import main\n{setup}"
        f"def end(code):\n    print({printed}, flush=True)\n    leave(code)\n"
        f"leave, os._exit = os._exit, end\nsys.argv = ['trainlint', *{arguments!r}]\n"
        "try:\n    main()\nexcept SystemExit as stop:\n    end(stop.code)\n"
    )
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True,
                          text=True, check=False).stdout.splitlines()


def test_the_command_imports_the_cli_with_the_collector_off(tmp_path: Path) -> None:
    """`trainlint` (and `python -m trainlint`) collects no cycles while importing the CLI,
    and runs its command with the collector on and what importing made frozen."""
    setup = (
        "import gc\nwhile_importing = []\n"
        "gc.callbacks.append(lambda phase, info: hasattr(sys.modules.get('trainlint.cli'), 'run')"
        " or while_importing.append(phase))\n"
    )
    printed = "len(while_importing), gc.isenabled(), gc.get_freeze_count() > 0, code"
    assert _ending(["--version"], printed, tmp_path, setup) == [
        "trainlint, version 0.1.0", "0 True True 0"
    ]


def test_pyyaml_s_pattern_and_the_ranges_seeded_for_it_match_the_same_characters() -> None:
    """The command seeds `re`'s cache with the text PyYAML's reader compiles on import:
    compiled from its ranges, it matches what PyYAML's own would, at every code point."""
    import yaml.reader

    tree = ast.parse(Path(yaml.reader.__file__).read_text())
    compiled = [argument.value for node in ast.walk(tree)
                if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                and [getattr(target, "id", None) for target in node.targets] == ["NON_PRINTABLE"]
                for argument in node.value.args if isinstance(argument, ast.Constant)]
    assert compiled == [NON_PRINTABLE]
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    found = re.compile(NON_PRINTABLE_RANGES).findall(every)
    assert found == re.compile(NON_PRINTABLE).findall(every)
    assert len(found) == 2111 and found[0] == "\x00" and found[-1] == "\uffff"


def test_the_command_finds_pyyaml_s_pattern_compiled(tmp_path: Path) -> None:
    """`trainlint check` imports PyYAML with the pattern its reader compiles already in
    `re`'s cache, compiled from the ranges."""
    (tmp_path / "clean.yaml").write_text(CLEAN)
    printed = ("__import__('yaml.reader').reader.Reader.NON_PRINTABLE.pattern"
               " == NON_PRINTABLE_RANGES, code")
    *_, seeded = _ending(["check", "--no-cache", "clean.yaml"], printed, tmp_path,
                         "from trainlint.__main__ import NON_PRINTABLE_RANGES\n")
    assert seeded == "True 1"  # its two warnings


@pytest.mark.parametrize(("arguments", "release"), [([], "(2, 3)"),
                                                   (["--trainer-version", "2.1"], "(2, 1)")])
def test_a_check_unpickles_the_trees_and_rules_of_its_release_only(
    tmp_path: Path, arguments: list[str], release: str
) -> None:
    """The schema trees and the CRD rules ship a section per release: a run unpickles
    those of the release it checks, not all four."""
    (tmp_path / "runtime.yaml").write_text(WARN)
    code = (
        "from trainlint.cli import main\nfrom trainlint.model import crd_rules, node\n"
        f"try:\n    main(['check', '--no-cache', *{arguments!r}, 'runtime.yaml'])\n"
        "except SystemExit as end:\n    print(end.code)\n"
        "print(list(node.TREES), list(crd_rules.ROOTS))\n"
    )
    *output, status, unpickled = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert any("TL402" in line for line in output)  # the runtime was checked
    assert (status, unpickled) == ("1", f"[{release}] [{release}]")


def test_check_without_configuration_imports_no_validation_library(tmp_path: Path) -> None:
    """Checking a TrainJob on the defaults needs neither pydantic (configuration, models:
    the schema trees ship compiled) nor the fixer's, the webhook's or the language
    server's libraries."""
    (tmp_path / "job.yaml").write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: a\n"
        "spec:\n  runtimeRef:\n    name: torch-distributed\n  trainer:\n    numNodes: 2\n"
        "  initializer:\n    dataset:\n      storageUri: hf://tatsu-lab/alpaca\n"
    )
    watched = ("pydantic", "jsonschema", "kubernetes_validate", "ruamel", "aiohttp",
               "kubernetes_asyncio", "pathspec", "pygls", "lsprotocol", "trainlint.lsp")
    *output, status, loaded = _imported_by(["check", "--no-cache", "job.yaml"], watched, tmp_path)
    assert (status, loaded) == ("1", "[]")
    # It did check, against the runtime the release installs: it has no dataset initializer.
    assert any("TL206" in line for line in output)


def test_checking_no_trainer_object_imports_the_render(tmp_path: Path) -> None:
    """A claim alone needs no JobSet rendered: its rules (the schema's) import none of
    `trainlint.render`."""
    (tmp_path / "claim.yaml").write_text(
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: ckpt\n"
        "spec:\n  accessModes: [ReadWriteMany]\n"
        "  resources:\n    requests:\n      storage: 10Gi\n"
    )
    arguments = ["check", "--no-cache", "claim.yaml"]
    assert _imported_by(arguments, ("trainlint.render",), tmp_path) == [
        "All checks passed.", "0", "[]"
    ]


def test_a_crd_rule_is_evaluated_with_no_cel_engine(tmp_path: Path) -> None:
    """The CRD rules' evaluator is imported when an object has a rule to evaluate, not to
    check other objects; it runs them on plain values, importing neither cel-python nor
    lark (its parser's library)."""
    (tmp_path / "claim.yaml").write_text(
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: ckpt\n"
        "spec:\n  accessModes: [ReadWriteMany]\n"
        "  resources:\n    requests:\n      storage: 10Gi\n"
    )
    (tmp_path / "job.yaml").write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: A\n"
        "spec:\n  runtimeRef:\n    name: torch-distributed\n"
    )
    watched = ("celpy", "lark", "trainlint.model.plain")
    *_, status, loaded = _imported_by(["check", "--no-cache", "claim.yaml"], watched, tmp_path)
    assert (status, loaded) == ("0", "[]")
    arguments = ["check", "--no-cache", "--ignore", "TL010,TL012", "job.yaml"]
    *_, status, loaded = _imported_by(arguments, watched, tmp_path)
    assert (status, loaded) == ("0", "[]")
    *output, status, loaded = _imported_by(["check", "--no-cache", "job.yaml"], watched, tmp_path)
    assert (status, loaded) == ("1", "['trainlint.model.plain']")
    assert any("TL010" in line and "RFC 1035" in line for line in output)


def test_an_edited_file_whose_values_were_seen_evaluates_no_rule(tmp_path: Path) -> None:
    """The cache keeps the CRD rules' verdicts: a pre-commit run on a file edited where no
    rule reads reports what the evaluator found (TL010's name rule) without importing it;
    a value no run saw is evaluated again."""
    job = tmp_path / "job.yaml"
    text = ("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n"
            "  name: A\nspec:\n  runtimeRef:\n    name: torch-distributed\n")
    job.write_text(text)
    arguments = ["check", "--cache-dir", "cache", "job.yaml"]
    watched = ("trainlint.model.plain",)
    *first, status, loaded = _imported_by(arguments, watched, tmp_path)
    assert status == "1" and "'trainlint.model.plain'" in loaded
    assert [line[:22] for line in first if "RFC 1035" in line] == ["job.yaml:4:3: TL010 [e"]
    job.write_text(text + "# edited\n")
    *again, status, loaded = _imported_by(arguments, watched, tmp_path)
    assert (again, status, loaded) == (first, "1", "[]")
    job.write_text(text.replace("name: A", "name: a"))
    *other, status, loaded = _imported_by(arguments, watched, tmp_path)
    assert "'trainlint.model.plain'" in loaded and not any("TL010" in line for line in other)
    *_, status, loaded = _imported_by(["check", "--no-cache", "job.yaml"], watched, tmp_path)
    assert (status, "'trainlint.model.plain'" in loaded) == ("0", True)  # nor does --no-cache


def test_a_pre_commit_run_imports_neither_openssl_nor_signals(tmp_path: Path) -> None:
    """The cache digests with CPython's own BLAKE2b, not through `hashlib` (which loads
    OpenSSL), and only a run on several processes needs `signal`: checking a file just
    edited imports neither (cel-python, when a CRD rule is left to it, brings hashlib)."""
    job = tmp_path / "job.yaml"
    job.write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: a\n"
        "spec:\n  runtimeRef:\n    name: torch-distributed\n"
    )
    trainlint("check", "job.yaml", cwd=tmp_path)
    job.write_text(job.read_text() + "# edited\n")
    watched = ("hashlib", "_hashlib", "signal")
    assert _imported_by(["check", "job.yaml"], watched, tmp_path) == [
        "All checks passed.", "0", "[]"
    ]


def test_an_edited_file_takes_the_kubernetes_definitions_it_needs_from_the_cache(
    tmp_path: Path,
) -> None:
    """The cache keeps the Kubernetes definitions a run needed: checking the file again
    once edited finds the same, without reading kubernetes-validate's file (unless that
    file is not the one they were read from); a run reads only those it needs of it."""
    job = tmp_path / "job.yaml"
    text = ("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n"
            "  name: a\nspec:\n  runtimeRef:\n    name: torch-distributed\n  trainer:\n"
            "    resourcesPerNode: {limits: {cpu: x}}\n")
    job.write_text(text)
    code = (
        "from trainlint.cli import main\nfrom trainlint.model import k8s\n"
        "try:\n    main(['check', '--cache-dir', 'cache', 'job.yaml'])\n"
        "except SystemExit as end:\n    print(end.code)\n"
        "print(k8s._places.cache_info().currsize, k8s._definitions.cache_info().currsize)\n"
    )

    def run() -> list[str]:
        return subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                              text=True, check=True).stdout.splitlines()

    *first, parsed = run()
    assert parsed == "1 0" and first[-1] == "1"
    assert any("TL008" in line for line in first)  # the quantity, checked by its definition
    job.write_text(text + "# edited\n")
    assert run() == [*first, "0 0"]
    [saved] = (tmp_path / "cache").glob("definitions-*.json")
    stored = json.loads(saved.read_text())
    for entry in stored["versions"].values():
        entry["source"] += "-another"
    saved.write_text(json.dumps(stored))
    job.write_text(text + "# edited again\n")
    assert run() == [*first, "1 0"]


def test_kubernetes_version_option(project: Path) -> None:
    """`--kubernetes-version` picks the core schemas; a release it cannot read is exit 2."""
    good = trainlint("check", "--kubernetes-version", "1.31", "clean.yaml", cwd=project)
    assert good.returncode == 0, good.stderr
    bad = trainlint("check", "--kubernetes-version", "1.x", "clean.yaml", cwd=project)
    assert bad.returncode == 2
    assert "--kubernetes-version: '1.x' is not a Kubernetes release" in bad.stderr


def test_stdin_file_is_named_in_per_file_reports(project: Path) -> None:
    """Reports that list every checked file (JUnit) name stdin by `--stdin-filename`."""
    result = trainlint(
        "check", "--output-format", "junit", "--stdin-filename", "piped.yaml", "-",
        cwd=project, stdin=CLEAN,
    )
    assert result.returncode == 0, result.stderr
    assert '<testcase classname="piped.yaml" name="trainlint" />' in result.stdout


def test_check_in_process_gives_the_cycle_collector_back(project: Path) -> None:
    """`check` turns the cyclic collector off for its run; a caller in the same process
    (a test, an embedding tool) gets it back on."""
    from click.testing import CliRunner

    from trainlint.cli import main

    assert gc.isenabled()
    result = CliRunner().invoke(main, ["check", "--no-cache", str(project)])
    assert result.exit_code == 1
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0  # the run's objects stay collectable


def test_a_run_served_from_the_cache_parses_nothing(project: Path) -> None:
    """When nothing changed, neither the YAML parser nor a rule is even imported (without
    a configuration: validating one imports pydantic and, for rule selectors, the rules)."""
    (project / ".trainlint.toml").unlink()
    watched = ("yaml", "trainlint.loader", "trainlint.rules.", "pydantic", "pathspec")
    arguments = ["check", "--cache-dir", "cache", str(project)]
    cold = _imported_by(arguments, watched, project.parent)
    warm = _imported_by(arguments, watched, project.parent)
    assert "yaml" in cold[-1] and "trainlint.loader" in cold[-1]
    assert warm[-2:] == [cold[-2], "[]"]
    assert warm[:-2] == cold[:-2]  # the same findings


#: A TrainJob whose only finding is TL502 (a preview rule): `save_steps`, no limit.
SAVES_EVERY_STEP = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: sft}
spec:
  runtimeRef: {name: torch-sft}
  trainer:
    args: [--output_dir=/mnt/ckpt/sft, --save_steps=100]
"""


@pytest.mark.parametrize(
    ("options", "config", "reported"),
    [
        ([], "", False),
        (["--preview"], "", True),
        (["--select", "TL502"], "", True),
        (["--select", "save-steps-without-save-total-limit"], "", True),
        (["--select", "TL5"], "", False),  # a prefix selects no preview rule
        ([], "preview = true\n", True),
        (["--ignore", "TL502"], "preview = true\n", False),
    ],
)
def test_preview_rules_run_only_when_asked(
    tmp_path: Path, options: list[str], config: str, reported: bool
) -> None:
    (tmp_path / "job.yaml").write_text(SAVES_EVERY_STEP)
    (tmp_path / ".trainlint.toml").write_text(config + 'ignore = ["TL102"]\n')
    result = trainlint(
        "check", "--no-cache", "--output-format", "concise", *options, "job.yaml", cwd=tmp_path
    )
    assert ("job.yaml:7:40: TL502 [warning]" in result.stdout) == reported, result.stdout
    assert result.returncode == (1 if reported else 0), result.stdout + result.stderr


def test_rules_lists_the_preview_rules_only_when_asked(tmp_path: Path) -> None:
    default = trainlint("rules", cwd=tmp_path).stdout.splitlines()
    widened = trainlint("rules", "--preview", cwd=tmp_path).stdout.splitlines()
    assert not any(line.startswith("TL502 ") for line in default)
    assert [line for line in widened if line.endswith("  preview")] == [
        line for line in widened
        if line.startswith(("TL102 ", "TL270 ", "TL412 ", "TL414 ", "TL502 "))
    ]
    assert set(default) < set(widened)
    entries = json.loads(trainlint("rules", "--preview", "--format", "json", cwd=tmp_path).stdout)
    assert {entry["code"] for entry in entries if entry["preview"]} == {
        "TL102", "TL270", "TL412", "TL414", "TL502"
    }
    shown = trainlint("rule", "TL502", cwd=tmp_path).stdout
    assert "Preview: off by default; runs with `--preview`" in shown
    assert "## Preview" in shown


def test_device_resources_take_known_kinds_only(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(SAVES_EVERY_STEP)
    (tmp_path / ".trainlint.toml").write_text('[device-resources]\n"example.com/vgpu" = "gpus"\n')
    result = trainlint("check", "--no-cache", "job.yaml", cwd=tmp_path)
    assert result.returncode == 2
    assert ".trainlint.toml: device-resources.example.com/vgpu: Input should be" in result.stderr
