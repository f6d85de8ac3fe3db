"""The runtimes each Trainer release installs: shipped as upstream wrote them, used for
a TrainJob whose runtime no input defines, read only then, never reported on."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import shared_or_skip
from trainlint import bundled
from trainlint.release import RELEASES

SOURCES = bundled.FOLDER / "SOURCES.md"
#: What `manifests/overlays/runtimes` installs at each tag (its kustomization files).
INSTALLED = {
    (2, 0): {"deepspeed-distributed", "mlx-distributed", "mpi-distributed", "torch-distributed",
             "torchtune-llama3.2-1b", "torchtune-llama3.2-3b"},
    (2, 1): {"deepspeed-distributed", "mlx-distributed", "torch-distributed",
             "torchtune-llama3.2-1b", "torchtune-llama3.2-3b", "torchtune-qwen2.5-1.5b"},
    (2, 2): {"deepspeed-distributed", "jax-distributed", "mlx-distributed", "torch-distributed",
             "xgboost-distributed", "torchtune-llama3.2-1b", "torchtune-llama3.2-3b",
             "torchtune-qwen2.5-1.5b"},
}
INSTALLED[(2, 3)] = INSTALLED[(2, 2)]
TRAINJOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: sft
spec:
  runtimeRef:
    name: torch-distributed
  trainer:
    image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
    command: [python, train.py]
"""
#: The upstream torch runtime has no dataset-initializer job, which the webhook requires.
WITH_DATASET = TRAINJOB + "  initializer:\n    dataset:\n      storageUri: hf://tatsu-lab/alpaca\n"


def _rows() -> list[list[str]]:
    return [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in SOURCES.read_text().splitlines()
        if re.match(r"\| v2\.\d\.0/", line)
    ]


def test_every_file_is_recorded_with_its_upstream_blob() -> None:
    """SOURCES.md names every bundled file, its tag, commit and path, and the file is
    byte for byte the upstream blob it names (git's own blob digest)."""
    rows = _rows()
    shipped = sorted(
        path.relative_to(bundled.FOLDER).as_posix() for path in bundled.FOLDER.rglob("*.yaml")
    )
    assert sorted(row[0] for row in rows) == shipped
    for file, tag, commit, upstream, blob in rows:
        data = (bundled.FOLDER / file).read_bytes()
        assert hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == blob, file
        assert file.startswith(f"{tag}/") and re.fullmatch(r"[0-9a-f]{40}", commit)
        assert upstream == f"manifests/base/runtimes/{file.removeprefix(tag + '/')}"
    license_text = (bundled.FOLDER / "LICENSE").read_text().split()
    assert license_text[:5] == ["Apache", "License", "Version", "2.0,", "January"]


def test_files_match_the_upstream_corpus_copies() -> None:
    for path in bundled.FOLDER.rglob("*.yaml"):
        tag, *rest = path.relative_to(bundled.FOLDER).parts
        copy = shared_or_skip(
            "corpus", "trainer", tag, "manifests__base__runtimes__" + "__".join(rest)
        )
        assert copy.read_bytes() == path.read_bytes(), path


@pytest.mark.parametrize("release", RELEASES, ids=[f"v{a}.{b}" for a, b in RELEASES])
def test_each_release_installs_its_runtimes(release: tuple[int, int]) -> None:
    found = bundled.runtimes(release)
    assert set(found) == INSTALLED[release]
    assert {runtime.kind for runtime in found.values()} == {"ClusterTrainingRuntime"}
    assert "torch-distributed-with-cache" not in found  # a separate overlay installs it


def _check(folder: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["trainlint", "check", "--no-cache", "--output-format", "concise", *arguments],
        cwd=folder, capture_output=True, text=True, timeout=60, check=False,
    )


@pytest.mark.parametrize("release", ["2.0", "2.1", "2.2", "2.3"])
def test_a_trainjob_on_a_runtime_the_release_installs(release: str, tmp_path: Path) -> None:
    """Clean, it passes with nothing said; wrong for that runtime, it is reported, on
    the TrainJob alone."""
    (tmp_path / "job.yaml").write_text(TRAINJOB)
    clean = _check(tmp_path, "--trainer-version", release, "job.yaml")
    assert (clean.returncode, clean.stderr) == (0, ""), clean.stdout + clean.stderr

    (tmp_path / "job.yaml").write_text(WITH_DATASET)
    wrong = _check(tmp_path, "--trainer-version", release, "job.yaml")
    assert wrong.returncode == 1, wrong.stdout + wrong.stderr
    assert wrong.stdout.splitlines()[:-1] == [
        "job.yaml:12:5: TL206 [error] `spec.initializer.dataset` needs what "
        "ClusterTrainingRuntime `torch-distributed` lacks: the Trainer webhook denies the "
        'TrainJob ("must have dataset-initializer job when trainJob is configured with '
        'input datasetConfig") [initializer-missing-in-runtime]'
    ]


def test_turned_off_the_trainjob_is_not_checked_against_it(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(WITH_DATASET)
    for off in (["--no-bundled-runtimes"], ["--config", "off.toml"]):
        (tmp_path / "off.toml").write_text("bundled-runtimes = false\n")
        result = _check(tmp_path, *off, "job.yaml")
        assert result.returncode == 0, result.stdout + result.stderr
        assert result.stderr == (
            "trainlint: 1 TrainJob not checked against its runtime (`torch-distributed`): "
            "add it with `--context` (or `--from-cluster`)\n"
        )


def test_a_runtime_of_the_run_wins_and_nothing_is_read(tmp_path: Path) -> None:
    """A run that defines the runtime it uses reads no bundled file; one that does not
    reads them once, and a run served from the cache reads none and parses nothing."""
    runtime = bundled.runtimes((2, 3))["torch-distributed"]
    own = (
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\n"
        "metadata: {name: torch-distributed}\nspec:\n  mlPolicy: {torch: {}}\n"
        "  template: {spec: {replicatedJobs: []}}\n---\n"
    )
    (tmp_path / "own.yaml").write_text(own + WITH_DATASET)
    (tmp_path / "job.yaml").write_text(WITH_DATASET)
    code = (
        "import sys\nfrom trainlint.cli import main\n"
        "try:\n    main(sys.argv[1:])\nexcept SystemExit as end:\n    print(end.code)\n"
        "print('trainlint.bundled' in sys.modules, 'yaml' in sys.modules)\n"
    )

    def run(*arguments: str) -> list[str]:
        result = subprocess.run(
            [sys.executable, "-c", code, "check", "--output-format", "concise", *arguments],
            cwd=tmp_path, capture_output=True, text=True, check=True,
        )
        return result.stdout.splitlines()

    *_, status, loaded = run("--no-cache", "own.yaml")
    assert (status, loaded) == ("1", "False True")  # TL206 against its own runtime
    cold = run("job.yaml")
    assert cold[-2:] == ["1", "True True"] and "TL206" in cold[0]
    assert run("job.yaml") == [*cold[:-1], "False False"]  # the last run again
    other = TRAINJOB.replace("name: sft", "name: other\n  namespace: ml")
    (tmp_path / "other.yaml").write_text(other)
    assert run("job.yaml", "other.yaml")[-3:] == [*cold[-3:-1], "True True"]
    assert run("job.yaml")[-1] == "False False"  # another run, but every entry still holds
    assert runtime.source.name == str(bundled.FOLDER / "v2.3.0" / "torch_distributed.yaml")
