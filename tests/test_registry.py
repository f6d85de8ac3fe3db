"""The registry of the rules (`trainlint/rules/registry.py`): written from the rules and
kept equal to them, so that a run imports only the rule modules of the kinds it checks;
a rule module it does not list is still found, as a plugin is."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.test_cli import ENV, _imported_by
from trainlint.config.settings import Settings
from trainlint.rule import Listed, all_rules, listed_rules

CLAIM = (
    "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: ckpt\n"
    "spec:\n  accessModes: [ReadWriteMany]\n  resources:\n    requests:\n      storage: 10Gi\n"
)
JOB = (
    "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: a\n"
    "spec:\n  runtimeRef:\n    name: torch-distributed\n"
)
PLUGIN = '''
from trainlint.problem import Problem, Severity
from trainlint.rule import rule


@rule("{code}", "{name}", kinds={{"PersistentVolumeClaim"}}, severity=Severity.WARNING)
def check(claim, ctx):
    """## What it does
    Says hello."""
    yield Problem(("metadata", "name"), "a plugin's finding")
'''


def test_committed_registry_is_what_the_generator_writes(tmp_path: Path) -> None:
    written = tmp_path / "registry.py"
    result = subprocess.run(
        [sys.executable, "-m", "trainlint.rules.registry", str(written)],
        capture_output=True, text=True, check=False,
    )
    assert (result.returncode, result.stdout) == (0, f"wrote {written}\n"), result.stderr
    committed = (ROOT / "trainlint" / "rules" / "registry.py").read_text()
    assert written.read_text() == committed, (
        "trainlint/rules/registry.py is out of date: run `python -m trainlint.rules.registry`"
    )


def test_the_rules_listed_are_the_rules_declared() -> None:
    assert listed_rules() == {code: Listed.of(rule) for code, rule in all_rules().items()}


def _rule_modules(arguments: list[str], cwd: Path) -> tuple[list[str], list[str]]:
    """The output of `trainlint ARGUMENTS` (with its exit code last), and the rule modules
    it imported."""
    *output, loaded = _imported_by(arguments, ("trainlint.rules.",), cwd)
    return output, ast.literal_eval(loaded)


@pytest.mark.parametrize(("text", "kind"), [(CLAIM, "PersistentVolumeClaim"), (JOB, "TrainJob")])
def test_a_run_imports_only_the_enabled_rules_of_the_kinds_it_checks(
    tmp_path: Path, text: str, kind: str
) -> None:
    (tmp_path / "one.yaml").write_text(text)
    _, loaded = _rule_modules(["check", "--no-cache", "one.yaml"], tmp_path)
    expected = {rule.module for rule in Settings().enabled.values() if kind in rule.kinds}
    assert loaded == sorted({*expected, "trainlint.rules.registry"})


def test_the_rules_of_load_problems_are_imported_for_a_file_that_has_one(tmp_path: Path) -> None:
    (tmp_path / "one.yaml").write_text(CLAIM + "---\n[unclosed\n")
    output, loaded = _rule_modules(["check", "--no-cache", "one.yaml"], tmp_path)
    assert any(" TL001 " in line for line in output)
    expected = {rule.module for rule in Settings().enabled.values()
                if not rule.kinds or "PersistentVolumeClaim" in rule.kinds}
    assert loaded == sorted({*expected, "trainlint.rules.registry"})


def _with_plugin(
    tmp_path: Path, code: str, name: str, *arguments: str, module: str = "tl599_plugin.py"
) -> subprocess.CompletedProcess[str]:
    """`trainlint ARGUMENTS` where the rules' package holds one more module (at `module`
    in it), which the registry does not list (as one a plugin installs beside them)."""
    plugins = tmp_path / "plugins"
    (plugins / module).parent.mkdir(parents=True, exist_ok=True)
    (plugins / module).write_text(PLUGIN.format(code=code, name=name))
    run = (
        f"import trainlint.rules\ntrainlint.rules.__path__.append({str(plugins)!r})\n"
        "from trainlint.cli import run\nrun()\n"
    )
    return subprocess.run(
        [sys.executable, "-c", run, *arguments], cwd=tmp_path, env=ENV,
        capture_output=True, text=True, check=False,
    )


@pytest.mark.parametrize("module", ["tl599_plugin.py", "tl599_plugin/__init__.py"])
def test_a_rule_module_the_registry_does_not_list_still_runs(tmp_path: Path, module: str) -> None:
    (tmp_path / "claim.yaml").write_text(CLAIM)
    (tmp_path / "job.yaml").write_text(JOB)
    arguments = ["check", "--no-cache", "--output-format", "concise", "claim.yaml", "job.yaml"]
    result = _with_plugin(tmp_path, "TL599", "plugin-rule", *arguments, module=module)
    found = [line for line in result.stdout.splitlines() if "TL599" in line]
    assert found == ["claim.yaml:4:3: TL599 [warning] a plugin's finding [plugin-rule]"]
    listing = _with_plugin(
        tmp_path, "TL599", "plugin-rule", "rules", "--format", "json", module=module
    )
    assert [rule["code"] for rule in json.loads(listing.stdout)][-1] == "TL599"


def test_a_rule_module_the_registry_does_not_list_cannot_take_a_listed_code(
    tmp_path: Path,
) -> None:
    (tmp_path / "claim.yaml").write_text(CLAIM)
    result = _with_plugin(tmp_path, "TL301", "plugin-rule", "check", "--no-cache", "claim.yaml")
    assert (result.returncode, result.stderr) == (2, (
        "trainlint: internal error: ValueError: rule TL301 plugin-rule clashes with TL301 "
        "ephemeral-checkpoint-volume\n"
    ))
