"""`trainlint check --base REV` in a repository made with real git commits, through the
console script: objects pair with their state at REV in the file of the same path, or
wherever their file was when nothing else at REV or in the change has their name, and only
the changed ones are reported."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-custom
spec:
  mlPolicy:
    numNodes: 1
    torch: {}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata:
              labels:
                trainer.kubeflow.org/trainjob-ancestor-step: trainer
            spec:
              backoffLimit: 0
              template:
                spec:
                  containers:
                    - name: node
                      image: ghcr.io/acme/torch:2.5
"""
JOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: sft
  namespace: ml
spec:
  runtimeRef:
    name: torch-custom
  trainer:
    numNodes: 2
"""
#: A TrainJob the change leaves alone, with a finding of its own (no runtime kind).
UNTOUCHED = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: eval
  namespace: ml
spec:
  runtimeRef:
    name: torch-custom
    kind: Deployment
"""


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def init(repo: Path) -> None:
    repo.mkdir(exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "ci@example.com")
    git(repo, "config", "user.name", "CI")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """Commit 1: runtime, TrainJob and an untouched TrainJob. Commit 2: the TrainJob's file
    renamed and its `numNodes` changed (immutable from v2.2)."""
    init(tmp_path)
    (tmp_path / "runtimes").mkdir()
    (tmp_path / "runtimes" / "torch.yaml").write_text(RUNTIME)
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "sft.yaml").write_text(JOB)
    (tmp_path / "jobs" / "eval.yaml").write_text(UNTOUCHED)
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "first")
    git(tmp_path, "mv", "jobs/sft.yaml", "jobs/sft-run.yaml")
    (tmp_path / "jobs" / "sft-run.yaml").write_text(JOB.replace("numNodes: 2", "numNodes: 4"))
    git(tmp_path, "commit", "-q", "-am", "second")
    return tmp_path


def check(
    repo: Path, *args: str, cwd: Path | None = None, stdin: str | None = None
) -> tuple[int, str, str]:
    done = subprocess.run(
        ["trainlint", "check", "--isolated", "--output-format", "json", *args],
        cwd=cwd or repo, capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"},
        timeout=60, check=False, input=stdin,
    )
    return done.returncode, done.stdout, done.stderr


def findings(stdout: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads(stdout)
    return found


def test_the_immutable_edit_of_a_renamed_file_is_reported(repo: Path) -> None:
    status, stdout, _ = check(repo, "--base", "HEAD~1", ".")
    assert status == 1
    got = [(f["code"], f["file"], f["line"], f["message"]) for f in findings(stdout)]
    assert got == [(
        "TL012", "jobs/sft-run.yaml", 9,
        '`spec.trainer` changed: the API server rejects the update of the TrainJob with '
        '"field is immutable" (CRD rule `self == oldSelf`); keep the stored value, or delete '
        "the TrainJob and create it again (under a new name, to keep the old run's history)",
    )]


def test_base_all_reports_every_object_and_plain_check_no_update(repo: Path) -> None:
    _, stdout, _ = check(repo, "--base", "HEAD~1", "--base-all", ".")
    assert sorted((f["code"], f["file"]) for f in findings(stdout)) == [
        ("TL012", "jobs/sft-run.yaml"), ("TL101", "jobs/eval.yaml"),
    ]
    _, stdout, _ = check(repo, ".")  # without --base there is no previous object
    assert [(f["code"], f["file"]) for f in findings(stdout)] == [("TL101", "jobs/eval.yaml")]


def test_the_release_decides_what_is_immutable(repo: Path) -> None:
    """`spec.trainer` is mutable in the v2.1 CRD; the JobSet then refuses the change when
    the TrainJob is next suspended (TL220)."""
    _, stdout, _ = check(repo, "--base", "HEAD~1", "--trainer-version", "2.1", ".")
    assert [(f["code"], f["line"]) for f in findings(stdout)] == [("TL220", 10)]


def test_a_new_object_has_nothing_to_compare(repo: Path) -> None:
    (repo / "jobs" / "new.yaml").write_text(JOB.replace("name: sft", "name: fresh"))
    _, stdout, _ = check(repo, "--base", "HEAD", ".")
    assert [(f["code"], f["file"]) for f in findings(stdout)] == []
    # The runtime's file did not change: it is only looked up, and the TrainJobs find it.
    _, stdout, _ = check(repo, "--base", "HEAD~1", "jobs/new.yaml", "jobs/sft-run.yaml",
                         "runtimes/torch.yaml")
    assert [(f["code"], f["file"]) for f in findings(stdout)] == [("TL012", "jobs/sft-run.yaml")]


def test_no_repository_or_unknown_revision_is_a_usage_error(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (outside / "job.yaml").write_text(JOB)
    status, stdout, stderr = check(repo, "--base", "HEAD", "job.yaml", cwd=outside)
    assert (status, stdout) == (2, "")
    assert stderr == f"Error: --base HEAD: {outside} is not in a git repository\n"
    status, stdout, stderr = check(repo, "--base", "origin/main", ".")
    assert (status, stdout) == (2, "")
    assert stderr == (f"Error: --base origin/main: no such revision in {repo} "
                      "(a remote branch needs `git fetch`)\n")
    status, _, stderr = check(repo, "--base-all", ".")
    assert status == 2 and "--base-all needs --base REV" in stderr


@pytest.mark.parametrize("kustomization", ["kustomization.yaml", "Kustomization"])
def test_a_patch_at_the_base_is_no_objects_previous_state(repo: Path, kustomization: str) -> None:
    """An overlay's patch of the TrainJob, committed at the base: paired with it (the last
    of its name), the TrainJob's `spec.trainer` would differ from the patch's. What the
    base's kustomization names as a patch is left out of the base; a real change still
    shows."""
    (repo / "overlay").mkdir()
    (repo / "overlay" / kustomization).write_text(
        "resources: [../jobs/sft-run.yaml]\npatches:\n  - path: sft.yaml\n")
    (repo / "overlay" / "sft.yaml").write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
        "metadata: {name: sft, namespace: ml}\nspec:\n  trainer: {numNodes: 8}\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "an overlay")
    job = repo / "jobs" / "sft-run.yaml"
    labelled = "  namespace: ml\n  labels: {a: b}\n"
    job.write_text(job.read_text().replace("  namespace: ml\n", labelled))
    assert check(repo, "--base", "HEAD", "jobs/sft-run.yaml")[:2] == (0, "[]\n")
    job.write_text(job.read_text().replace("numNodes: 4", "numNodes: 8"))
    status, stdout, _ = check(repo, "--base", "HEAD", "jobs/sft-run.yaml")
    assert (status, [f["code"] for f in findings(stdout)]) == (1, ["TL012"])


@pytest.fixture
def overlays(repo: Path) -> Path:
    """A commit of two overlays' TrainJob of one name and no namespace, each in its own
    file (`numNodes` 2 and 8): the name is no object's alone."""
    for env, nodes in (("dev", 2), ("prod", 8)):
        (repo / "envs" / env).mkdir(parents=True)
        (repo / "envs" / env / "job.yaml").write_text(
            JOB.replace("  namespace: ml\n", "").replace("numNodes: 2", f"numNodes: {nodes}"))
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "overlays")
    return repo


def test_overlays_of_one_name_pair_by_path(overlays: Path) -> None:
    assert check(overlays, "--base", "HEAD", "envs/")[:2] == (0, "[]\n")
    assert check(overlays, "--base", "HEAD", "--base-all", "envs/")[:2] == (0, "[]\n")


def test_an_edit_of_one_overlay_is_judged_against_its_own_file(overlays: Path) -> None:
    """dev's `numNodes` made prod's: a change all the same; prod, left alone, is silent."""
    dev = overlays / "envs" / "dev" / "job.yaml"
    dev.write_text(dev.read_text().replace("numNodes: 2", "numNodes: 8"))
    status, stdout, _ = check(overlays, "--base", "HEAD", "--base-all", "envs/")
    assert (status, [(f["code"], f["file"]) for f in findings(stdout)]) == (
        1, [("TL012", "envs/dev/job.yaml")])


def test_an_overlay_git_finds_renamed_pairs_with_its_old_file(overlays: Path) -> None:
    """Moved with its text mostly kept, prod's TrainJob (one of two of its name at the
    base) is paired through git's rename detection: its updates are judged."""
    git(overlays, "mv", "envs/prod", "envs/production")
    job = overlays / "envs" / "production" / "job.yaml"
    job.write_text(job.read_text().replace("numNodes: 8", "numNodes: 16").replace(
        "name: torch-custom\n", "name: torch-custom\n    kind: Deployment\n"))
    _, stdout, _ = check(overlays, "--base", "HEAD", "envs/")
    assert [(f["code"], f["line"]) for f in findings(stdout)] == [
        ("TL012", 6), ("TL101", 8), ("TL012", 9)]
    assert {f["file"] for f in findings(stdout)} == {"envs/production/job.yaml"}


def test_an_overlay_moved_past_recognition_has_no_pairing(overlays: Path) -> None:
    """Moved and rewritten (as JSON: git sees no rename), prod's TrainJob is one of two of
    its name at the base: which one it was is a guess, so it is new: no update judged
    (`numNodes` changed), its findings reported."""
    git(overlays, "rm", "-rq", "envs/prod")
    (overlays / "envs" / "production").mkdir()
    (overlays / "envs" / "production" / "job.json").write_text(json.dumps({
        "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
        "metadata": {"name": "sft"},
        "spec": {"runtimeRef": {"name": "torch-custom", "kind": "Deployment"},
                 "trainer": {"numNodes": 16}}}))
    git(overlays, "add", ".")
    _, stdout, _ = check(overlays, "--base", "HEAD", "envs/")
    assert [(f["code"], f["file"]) for f in findings(stdout)] == [
        ("TL101", "envs/production/job.json")]


def test_a_copy_of_an_object_is_new(repo: Path) -> None:
    """The copy of an unchanged TrainJob with a finding is not it: its finding is reported,
    whether or not the original's file is checked (a hook is given the new file only)."""
    (repo / "jobs" / "eval-copy.yaml").write_text(UNTOUCHED)
    for paths in ([".", "jobs/"], ["jobs/eval-copy.yaml"]):
        status, stdout, _ = check(repo, "--base", "HEAD", *paths)
        assert (status, [(f["code"], f["file"]) for f in findings(stdout)]) == (
            1, [("TL101", "jobs/eval-copy.yaml")])


def test_an_object_moved_out_of_a_checked_file_still_pairs(repo: Path) -> None:
    """Split: the TrainJob leaves the runtime's file for its own, with its `numNodes`
    changed; the file it was in is checked and no longer holds it."""
    (repo / "runtimes" / "torch.yaml").write_text(f"{RUNTIME}---\n{JOB}")
    git(repo, "rm", "-q", "jobs/sft-run.yaml")
    git(repo, "commit", "-qam", "together")
    (repo / "runtimes" / "torch.yaml").write_text(RUNTIME)
    (repo / "jobs" / "sft.yaml").write_text(JOB.replace("numNodes: 2", "numNodes: 4"))
    _, stdout, _ = check(repo, "--base", "HEAD", ".")
    assert [(f["code"], f["file"]) for f in findings(stdout)] == [("TL012", "jobs/sft.yaml")]


def test_the_repository_is_the_checked_paths(repo: Path, tmp_path: Path) -> None:
    """From a folder of no repository, and from another repository whose HEAD~1 has the
    TrainJob as it is now: the checked folder's repository decides."""
    other = tmp_path.parent / f"{tmp_path.name}-other"
    init(other)
    (other / "jobs").mkdir()
    (other / "jobs" / "sft-run.yaml").write_text(JOB.replace("numNodes: 2", "numNodes: 4"))
    git(other, "add", ".")
    git(other, "commit", "-q", "-m", "first")
    git(other, "commit", "-q", "--allow-empty", "-m", "second")
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    for cwd in (outside, other):
        for path in (repo, repo / "jobs", repo / "jobs" / "sft-run.yaml"):
            status, stdout, stderr = check(repo, "--base", "HEAD~1", str(path), cwd=cwd)
            assert (status, [f["code"] for f in findings(stdout)]) == (1, ["TL012"]), stderr
    status, stdout, stderr = check(repo, "--base", "HEAD", "jobs/", str(other), cwd=repo)
    assert (status, stdout) == (2, "")
    assert stderr == (f"Error: --base HEAD: the paths are in two git repositories, {repo} "
                      f"(jobs/) and {other} ({other}): check each on its own\n")


def test_standard_input_and_no_path_are_the_current_folders(repo: Path) -> None:
    job = (repo / "jobs" / "sft-run.yaml").read_text()
    for args in (["-", "--stdin-filename", "jobs/sft-run.yaml"], []):
        status, stdout, _ = check(repo, "--base", "HEAD~1", *args, stdin=job)
        assert (status, [f["code"] for f in findings(stdout)]) == (1, ["TL012"])
