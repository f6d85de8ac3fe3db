"""The pre-commit hook, through the real pre-commit framework, from a clean clone."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT
from tests.test_suppression import RUNTIME

pytestmark = [
    pytest.mark.network,
    pytest.mark.skipif(
        os.environ.get("TRAINLINT_OFFLINE") == "1", reason="installs the hook from PyPI"
    ),
]

FIXED = RUNTIME.replace("emptyDir: {}", "persistentVolumeClaim: {claimName: train-ckpt}")


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _try_repo(hooks: Path, repo: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["pre-commit", "try-repo", str(hooks), "trainlint", "--files", "runtime.yaml"],
        cwd=repo, env=env, capture_output=True, text=True, timeout=300, check=False,
    )


def test_hook_manifest_declares_the_documented_hook() -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "trainlint"
    assert hook["entry"] == "trainlint check"
    assert hook["types_or"] == ["yaml", "json"]
    assert hook["require_serial"] is True
    assert hook.get("pass_filenames", True) is True


def test_hook_fails_on_a_finding_and_passes_after_the_fix(tmp_path: Path) -> None:
    clone = tmp_path / "trainlint"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    repo = tmp_path / "project"
    repo.mkdir()
    _git("init", "--quiet", cwd=repo)
    # The project's own configuration is honoured by the hook: one rule, so that rules
    # added later do not change what this test sees.
    (repo / ".trainlint.toml").write_text('select = ["TL301"]\n')
    (repo / "runtime.yaml").write_text(RUNTIME)
    _git("add", ".", cwd=repo)
    env = {
        key: value for key, value in os.environ.items()
        if not key.startswith(("GIT_", "PRE_COMMIT"))
    }
    env["PRE_COMMIT_HOME"] = str(tmp_path / "cache")

    failed = _try_repo(clone, repo, env)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "trainlint" in failed.stdout and "Failed" in failed.stdout
    assert "runtime.yaml:29:23: TL301 [error] checkpoint-dir `/mnt/ckpt/run`" in failed.stdout

    (repo / "runtime.yaml").write_text(FIXED)
    _git("add", ".", cwd=repo)
    passed = _try_repo(clone, repo, env)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout
    assert "TL301" not in passed.stdout
