"""The GitHub Action (action.yml): its steps run here as the runner runs them, with the
runner's environment variables and files, and actionlint checks it where it is installed."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT
from tests.test_suppression import RUNTIME
from trainlint import __version__

ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
ACTION_TEXT = (ROOT / "action.yml").read_text()
CLEAN = RUNTIME.replace("emptyDir: {}", "persistentVolumeClaim: {claimName: ckpt}")
#: Where TL301 points in RUNTIME: the `emptyDir` key.
LINE = next(number for number, line in enumerate(RUNTIME.splitlines(), 1) if "emptyDir" in line)
COLUMN = RUNTIME.splitlines()[LINE - 1].index("emptyDir") + 1
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


class Runner:
    """Runs the action's shell steps in order, with `${{ }}` expressions evaluated from the
    inputs and the outputs of earlier steps; steps that use other actions are recorded
    with their inputs, not run."""

    def __init__(self, workspace: Path, inputs: dict[str, str]) -> None:
        self.workspace = workspace
        defaults = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
        unknown = set(inputs) - set(defaults)
        assert not unknown, f"the action has no inputs {unknown}"
        self.inputs = {**defaults, **inputs}
        self.outputs: dict[str, dict[str, str]] = {}
        self.used: list[tuple[str, dict[str, str]]] = []
        self.summaries: list[str] = []
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self.failed: int | None = None

    def value(self, expression: str) -> Any:
        """An expression of the subset action.yml uses: inputs, step outputs, string
        literals, ==, !=, && and ||."""
        def name(match: re.Match[str]) -> str:
            if match[1] == "inputs":
                return repr(self.inputs[match[2]])
            step, output = match[2].split(".outputs.")
            return repr(self.outputs.get(step, {}).get(output, ""))

        python = re.sub(r"\b(inputs|steps)\.([a-z-]+(?:\.outputs\.[a-z-]+)?)", name, expression)
        python = python.replace("&&", " and ").replace("||", " or ")
        return eval(python, {"__builtins__": {}})  # the action's own expressions, no names

    def text(self, template: str) -> str:
        return EXPRESSION.sub(lambda match: str(self.value(match[1])), template)

    def run(self, skip: frozenset[str] = frozenset()) -> None:
        for step in ACTION["runs"]["steps"]:
            if "if" in step and not self.value(step["if"]):
                continue
            if "uses" in step:
                self.used.append((step["uses"], {k: self.text(str(v))
                                                 for k, v in step.get("with", {}).items()}))
                continue
            if step.get("name") in skip:
                continue
            self._shell(step)
            if self.failed:
                return

    def _shell(self, step: dict[str, Any]) -> None:
        files = self.workspace.parent / "runner"
        files.mkdir(exist_ok=True)
        number = len(self.stdout)
        output, summary = files / f"output-{number}", files / f"summary-{number}"
        output.write_text("")
        summary.write_text("")
        env = {
            **{key: value for key, value in os.environ.items()
               if not key.startswith(("GITHUB_", "TRAINLINT_", "PIP_"))},
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            "GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_ACTION_PATH": str(ROOT),
            "GITHUB_WORKSPACE": str(self.workspace), "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(summary), "RUNNER_TEMP": str(files),
            "PIP_NO_INDEX": "1", "PIP_DRY_RUN": "1", "PIP_NO_DEPS": "1",
            **{key: self.text(str(value)) for key, value in step.get("env", {}).items()},
        }
        script = files / "step.sh"
        script.write_text(step["run"])
        # How the runner starts a `shell: bash` step.
        result = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=self.workspace, env=env, capture_output=True, text=True, check=False,
        )
        self.stdout.append(result.stdout)
        self.stderr.append(result.stderr)
        self.summaries.append(summary.read_text())
        if "id" in step:
            self.outputs[step["id"]] = dict(
                line.split("=", 1) for line in output.read_text().splitlines()
            )
        if result.returncode:
            self.failed = result.returncode


#: The step that installs trainlint: here a dry run that finds the suite's own install (the
#: release the `version` input names), tested on its own, and left out of the runs of the
#: other tests (a second of pip each).
INSTALL = "Install trainlint"


def run_action(workspace: Path, **inputs: str) -> Runner:
    runner = Runner(workspace, {key.replace("_", "-"): value for key, value in inputs.items()})
    runner.run(skip=frozenset({INSTALL}))
    return runner


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "repo"
    (folder / "deploy").mkdir(parents=True)
    (folder / "deploy" / "runtime.yaml").write_text(RUNTIME)  # one TL301 error
    (folder / "deploy" / "clean.yaml").write_text(CLEAN)
    (folder / ".trainlint.toml").write_text('select = ["TL301", "TL402"]\n')
    return folder


def test_one_run_annotates_writes_sarif_and_the_summary_then_fails(workspace: Path) -> None:
    runner = run_action(workspace, version=__version__, paths="deploy/")
    assert runner.failed == 1
    check = runner.outputs["check"]
    assert check == {"exit-code": "1", "sarif-written": "true", "findings": "1"}
    annotations = [line for out in runner.stdout for line in out.splitlines()
                   if line.startswith("::")]
    assert len(annotations) == 1
    assert annotations[0].startswith(
        f"::error file=deploy/runtime.yaml,line={LINE},col={COLUMN},endLine={LINE},"
        f"endColumn={COLUMN + len('emptyDir')},"
        "title=trainlint TL301 (ephemeral-checkpoint-volume)::"
    )
    sarif = json.loads((workspace / "trainlint.sarif").read_text())
    (result,) = sarif["runs"][0]["results"]
    region = result["locations"][0]["physicalLocation"]["region"]
    assert (result["ruleId"], region["startLine"], region["startColumn"]) == (
        "TL301", LINE, COLUMN
    )
    summary = "".join(runner.summaries)
    assert summary.startswith("## trainlint\n\nFound 1 problem (1 error).")
    assert f"| `deploy/runtime.yaml:{LINE}:{COLUMN}` | TL301 |" in summary
    (upload,) = [used for used in runner.used if "upload-sarif" in used[0]]
    assert upload[1] == {"sarif_file": "trainlint.sarif", "category": "trainlint"}


def test_a_clean_run_passes_and_upload_can_be_turned_off(workspace: Path) -> None:
    runner = run_action(workspace, version=__version__, paths="deploy/clean.yaml",
                        upload_sarif="false")
    assert runner.failed is None
    assert runner.outputs["check"] == {"exit-code": "0", "sarif-written": "true", "findings": "0"}
    assert not [used for used in runner.used if "upload-sarif" in used[0]]
    assert "All checks passed." in "".join(runner.summaries)


def test_fail_on_and_args_reach_trainlint(workspace: Path) -> None:
    warns = CLEAN.replace("                  terminationGracePeriodSeconds: 120\n", "")
    (workspace / "deploy" / "runtime.yaml").write_text(warns)  # one TL402 warning
    assert run_action(workspace, version=__version__, paths="deploy").failed == 1
    assert run_action(workspace, version=__version__, paths="deploy",
                      fail_on="error").failed is None
    ignored = run_action(workspace, version=__version__, paths="deploy",
                         args="--ignore TL402 --no-cache")
    assert ignored.outputs["check"]["findings"] == "0"


def test_inputs_cannot_run_commands(workspace: Path) -> None:
    hostile = '$(touch pwned) `touch pwned2` "; touch pwned3; " *'
    runner = run_action(workspace, version=__version__, paths=hostile, args="--no-cache")
    assert not list(workspace.glob("pwned*"))
    assert runner.outputs["check"]["exit-code"] == "2"  # no such file: `$(touch`
    assert runner.failed == 2
    assert "${{" not in "".join(
        step["run"] for step in ACTION["runs"]["steps"] if "run" in step
    ), "an expression in a script is pasted into it: pass inputs through env"


def test_the_version_input_installs_that_release(workspace: Path) -> None:
    """The install step asks pip for exactly `trainlint==VERSION` (a dry run, offline: the
    installed release is found, another one is not)."""
    runner = Runner(workspace, {"version": "0.0.1"})
    install = next(step for step in ACTION["runs"]["steps"] if step.get("name") == INSTALL)
    runner._shell(install)
    assert runner.failed == 1
    assert "No matching distribution found for trainlint==0.0.1" in runner.stderr[-1]
    found = Runner(workspace, {"version": __version__})
    found._shell(install)
    assert found.failed is None


def test_base_reports_only_what_the_change_adds_or_modifies(workspace: Path) -> None:
    """`base` reaches `check --base`: of two runtimes with TL301, only the one the change
    touched is reported, and the SARIF goes to a category of its own."""
    def git(*arguments: str) -> None:
        subprocess.run(["git", *arguments], cwd=workspace, check=True, capture_output=True)

    deploy = workspace / "deploy"
    (deploy / "old.yaml").write_text(RUNTIME.replace("name: torch-ckpt", "name: old-ckpt"))
    (deploy / "runtime.yaml").write_text(CLEAN)
    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "base")
    (deploy / "runtime.yaml").write_text(RUNTIME)  # the change: checkpoints on emptyDir
    runner = run_action(workspace, version=__version__, paths="deploy", base="HEAD")
    assert runner.outputs["check"] == {"exit-code": "1", "sarif-written": "true", "findings": "1"}
    annotations = [line for out in runner.stdout for line in out.splitlines()
                   if line.startswith("::")]
    assert [line.split(",")[0] for line in annotations] == ["::error file=deploy/runtime.yaml"]
    (upload,) = [used for used in runner.used if "upload-sarif" in used[0]]
    assert upload[1]["category"] == "trainlint-changes"


def test_other_actions_are_pinned_by_commit_with_the_tag_beside() -> None:
    uses = re.findall(r"uses:\s*(\S+)(.*)", ACTION_TEXT)
    assert len(uses) == 2
    for reference, comment in uses:
        assert re.fullmatch(r"[\w-]+/[\w/-]+@[0-9a-f]{40}", reference), reference
        assert re.fullmatch(r"\s*# v\d+\.\d+\.\d+", comment), comment


def test_readme_documents_every_input() -> None:
    section = (ROOT / "README.md").read_text().split("### GitHub Actions", 1)[1]
    section = section.split("\n### ", 1)[0]
    for name in ACTION["inputs"]:
        assert f"`{name}`" in section, f"README does not document the action input {name}"


def actionlint_or_skip() -> str:
    found = shutil.which("actionlint", path=str(Path(sys.executable).parent)) or shutil.which(
        "actionlint"
    )
    if found is None:
        pytest.skip("actionlint is not installed")
    return found


def as_reusable_workflow(action: dict[str, Any]) -> dict[str, Any]:
    """The action's steps as the job of a reusable workflow with the same inputs:
    actionlint checks a workflow's expressions, contexts and scripts, not an action's."""
    return {
        "on": {"workflow_call": {"inputs": {
            name: {"type": "string", "required": False, "default": spec.get("default", ""),
                   "description": spec["description"]}
            for name, spec in action["inputs"].items()
        }}},
        "permissions": {"contents": "read", "security-events": "write"},
        "jobs": {"trainlint": {"runs-on": "ubuntu-latest", "steps": action["runs"]["steps"]}},
    }


@pytest.mark.parametrize("broken", [False, True])
def test_actionlint_accepts_the_action_and_a_workflow_using_it(
    tmp_path: Path, broken: bool
) -> None:
    actionlint = actionlint_or_skip()
    text = ACTION_TEXT.replace("inputs.fail-on }}", "inputs.fail-onn }}") if broken else ACTION_TEXT
    repo = tmp_path / "repo"
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / "action.yml").write_text(text)
    (repo / ".github" / "workflows" / "steps.yml").write_text(
        yaml.safe_dump(as_reusable_workflow(yaml.safe_load(text)), sort_keys=False)
    )
    (repo / ".github" / "workflows" / "lint.yml").write_text(
        "on: [pull_request]\n"
        "permissions:\n  contents: read\n  security-events: write\n"
        "jobs:\n  trainlint:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1\n"
        "      - uses: ./\n        with:\n          paths: deploy/\n"
        "          base: origin/${{ github.base_ref }}\n          upload-sarif: 'true'\n"
    )
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    result = subprocess.run(
        [actionlint, "-no-color", "-pyflakes="], cwd=repo,
        capture_output=True, text=True, check=False,
    )
    if broken:
        assert result.returncode == 1
        assert 'property "fail-onn" is not defined' in result.stdout, result.stdout
    else:
        assert result.returncode == 0, result.stdout + result.stderr
