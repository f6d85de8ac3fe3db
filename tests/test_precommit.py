"""The pre-commit hook, through the real pre-commit framework, from a clean clone."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT
from tests.test_context import RUNTIMES
from tests.test_suppression import RUNTIME

pytestmark = [
    pytest.mark.network,
    pytest.mark.skipif(
        os.environ.get("TRAINLINT_OFFLINE") == "1", reason="installs the hook from PyPI"
    ),
]

FIXED = RUNTIME.replace("emptyDir: {}", "persistentVolumeClaim: {claimName: train-ckpt}")
#: The runtimes of the platform team: `torch-ckpt` (a ReadWriteOnce PVC) and one whose
#: trainer job has no trainer label.
PLATFORM = RUNTIMES + """\
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-plain
spec:
  mlPolicy:
    numNodes: 1
    torch: {}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            spec:
              template:
                spec:
                  containers:
                    - name: node
                      image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
"""


def trainjob(name: str, runtime: str, trainer: str = "") -> str:
    return (
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
        f"metadata:\n  name: {name}\nspec:\n  runtimeRef:\n    name: {runtime}\n{trainer}"
    )


def _git(*args: str, cwd: Path, env: dict[str, str] | None = None) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)


@pytest.fixture(scope="module")
def hooks(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, str]]:
    """What a project's `.pre-commit-config.yaml` says to use this repository's hook (a
    clean clone, at its commit), and an environment whose pre-commit cache the tests
    share: the hook is installed once."""
    folder = tmp_path_factory.mktemp("hooks")
    clone = folder / "trainlint"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True, check=True
    ).stdout.strip()
    env = {
        key: value for key, value in os.environ.items()
        if not key.startswith(("GIT_", "PRE_COMMIT"))
    }
    env["PRE_COMMIT_HOME"] = str(folder / "cache")
    for role in ("AUTHOR", "COMMITTER"):
        env[f"GIT_{role}_NAME"], env[f"GIT_{role}_EMAIL"] = "Test", "test@example.com"
    config = (
        f"repos:\n  - repo: {clone}\n    rev: {sha}\n"
        "    hooks:\n      - id: trainlint\n        verbose: true\n"
    )
    return config, env


def _run(repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["pre-commit", "run", "trainlint", "--files", "runtime.yaml"],
        cwd=repo, env=env, capture_output=True, text=True, timeout=300, check=False,
    )


def test_hook_manifest_declares_the_documented_hook() -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "trainlint"
    assert hook["entry"] == "trainlint check --allow-empty"
    assert hook["types_or"] == ["yaml", "json"]
    assert hook["require_serial"] is True
    assert hook.get("pass_filenames", True) is True


def test_hook_fails_on_a_finding_and_passes_after_the_fix(
    hooks: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    config, env = hooks
    repo = tmp_path / "project"
    repo.mkdir()
    _git("init", "--quiet", cwd=repo)
    (repo / ".pre-commit-config.yaml").write_text(config)
    # The project's own configuration is honoured by the hook: one rule, so that rules
    # added later do not change what this test sees.
    (repo / ".trainlint.toml").write_text('select = ["TL301"]\n')
    (repo / "runtime.yaml").write_text(RUNTIME)
    _git("add", ".", cwd=repo)

    failed = _run(repo, env)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "trainlint" in failed.stdout and "Failed" in failed.stdout
    assert "runtime.yaml:29:23: TL301 [error] checkpoint-dir `/mnt/ckpt/run`" in failed.stdout

    (repo / "runtime.yaml").write_text(FIXED)
    _git("add", ".", cwd=repo)
    passed = _run(repo, env)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout
    assert "TL301" not in passed.stdout and "All checks passed." in passed.stdout


def test_a_commit_of_one_trainjob_is_checked_against_the_repository_s_context(
    hooks: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    """The README's recipe: the hook gets only the changed files, the configuration's
    `context` brings the platform's runtimes and PVCs, the release's own runtimes are
    known, and a commit of other YAML alone passes."""
    config, env = hooks
    repo = tmp_path / "project"
    (repo / "platform").mkdir(parents=True)
    (repo / "jobs").mkdir()
    (repo / ".github" / "workflows").mkdir(parents=True)
    _git("init", "--quiet", cwd=repo)
    (repo / ".pre-commit-config.yaml").write_text(config)
    (repo / ".trainlint.toml").write_text(
        'context = ["platform"]\nselect = ["TL201", "TL206", "TL302"]\n'
    )
    (repo / "platform" / "runtimes.yaml").write_text(PLATFORM)
    (repo / "jobs" / "sft.yaml").write_text(trainjob("sft", "torch-ckpt"))
    (repo / ".github" / "workflows" / "ci.yaml").write_text("on: push\njobs: {}\n")
    _git("add", ".", cwd=repo)
    _git("commit", "--quiet", "--no-verify", "-m", "the project before the hook", cwd=repo)
    subprocess.run(["pre-commit", "install"], cwd=repo, env=env, check=True, capture_output=True)

    def commit(path: str, text: str) -> tuple[int, str]:
        """`git commit` of one changed file: its status, and what the hook printed."""
        (repo / path).write_text(text)
        _git("add", path, cwd=repo)
        done = subprocess.run(
            ["git", "commit", "-m", f"edit {path}"], cwd=repo, env=env, capture_output=True,
            text=True, timeout=300, check=False,
        )
        return done.returncode, done.stdout + done.stderr

    nodes = "  trainer:\n    numNodes: {}\n"
    status, output = commit("jobs/sft.yaml", trainjob("sft", "torch-ckpt", nodes.format(3)))
    assert status == 1, output
    assert (
        "jobs/sft.yaml:9:5: TL302 [error] trainer job `node` runs on 3 nodes but mounts PVC "
        "`default/ckpt` (volume `ckpt`), which allows only ReadWriteOnce"
    ) in output
    assert "platform/" not in output  # the context is never reported on

    status, output = commit("jobs/sft.yaml", trainjob("sft", "torch-plain", nodes.format(3)))
    assert status == 1, output
    assert (
        "jobs/sft.yaml:8:3: TL201 [error] ClusterTrainingRuntime `torch-plain` has no job "
        "labelled `trainer.kubeflow.org/trainjob-ancestor-step: trainer`, so the controller "
        "silently drops `numNodes` set here"
    ) in output
    assert "TL302" not in output  # the job runs on the runtime's one node

    status, output = commit("jobs/sft.yaml", trainjob("sft", "torch-ckpt", nodes.format(1)))
    assert status == 0, output
    assert "Passed" in output and "not checked" not in output

    status, output = commit(".github/workflows/ci.yaml", "on: [push]\njobs: {}\n")
    assert status == 0, output
    assert "no Kubernetes object" in output  # said, but no failure

    dataset = "  initializer:\n    dataset:\n      storageUri: hf://tatsu-lab/alpaca\n"
    status, output = commit("jobs/tune.yaml", trainjob("tune", "torch-distributed", dataset))
    assert status == 1, output
    assert (
        "jobs/tune.yaml:9:5: TL206 [error] `spec.initializer.dataset` needs what "
        "ClusterTrainingRuntime `torch-distributed` lacks"
    ) in output


def test_a_commit_of_a_chart_template_or_a_kustomize_patch_is_no_failure(
    hooks: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    """What kustomize and Helm build from is no manifest as written: a commit that edits a
    chart's template (TL001 as written) or an overlay's patch of a TrainJob (TL009: no
    `runtimeRef`) passes, and the hook says why it checked nothing."""
    config, env = hooks
    repo = tmp_path / "project"
    for folder in ("chart/templates", "base", "overlays/prod"):
        (repo / folder).mkdir(parents=True)
    _git("init", "--quiet", cwd=repo)
    (repo / ".pre-commit-config.yaml").write_text(config)
    (repo / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: jobs\nversion: 0.1.0\n")
    (repo / "base" / "kustomization.yaml").write_text("resources: [sft.yaml]\n")
    (repo / "base" / "sft.yaml").write_text(trainjob("sft", "torch-distributed"))
    (repo / "overlays" / "prod" / "kustomization.yaml").write_text(
        "resources: [../../base]\npatches:\n  - path: sft.yaml\n")
    _git("add", ".", cwd=repo)
    _git("commit", "--quiet", "--no-verify", "-m", "the project before the hook", cwd=repo)
    subprocess.run(["pre-commit", "install"], cwd=repo, env=env, check=True, capture_output=True)
    template = trainjob("{{ .Release.Name }}-sft", "torch-distributed",
                        "  trainer:\n    numNodes: {{ .Values.nodes }}\n")
    patch = ("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
             "metadata:\n  name: sft\nspec:\n  trainer:\n    numNodes: 4\n")
    for path, text, told in (
        ("chart/templates/sft.yaml", template, "is part of the Helm chart in chart"),
        ("overlays/prod/sft.yaml", patch,
         "is a kustomize patch (named in overlays/prod/kustomization.yaml)"),
    ):
        (repo / path).write_text(text)
        _git("add", path, cwd=repo)
        done = subprocess.run(
            ["git", "commit", "-m", f"edit {path}"], cwd=repo, env=env, capture_output=True,
            text=True, timeout=300, check=False,
        )
        output = done.stdout + done.stderr
        assert done.returncode == 0, output
        assert f"trainlint: note: {path} {told}" in output and "TL0" not in output
