"""What kustomize and Helm build from is not checked as written, and never the object a
look-up finds: kustomize patches (parts of objects) and Helm charts (templates, and Helm's
own files). Real kustomizations and charts, real files, the real command (and `kubectl
kustomize` where it is installed: what it makes of a patch is what trainlint checks)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from lsprotocol import types

from tests.lsp_session import Session
from tests.test_base import JOB, RUNTIME
from tests.test_lsp import RESOLVING, codes
from trainlint.config.builders import Builders, Built
from trainlint.config.files import followed

#: Parts of objects, as overlays write them: checked alone, the runtime's would have no
#: trainer job (TL201, and TrainJobs that name it would be told the same), the TrainJob's
#: no `runtimeRef` (TL009).
RUNTIME_PATCH = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-custom
spec:
  mlPolicy:
    numNodes: 2
"""
JOB_PATCH = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: sft
  namespace: ml
spec:
  trainer:
    numNodes: 4
"""


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A base and an overlay that sorts before it, patching the runtime and the TrainJob."""
    write(tmp_path, {
        "base/kustomization.yaml": "resources: [runtime.yaml, job.yaml]\n",
        "base/runtime.yaml": RUNTIME,
        "base/job.yaml": JOB,
        "a-overlay/kustomization.yaml": (
            "resources: [../base]\npatches:\n  - path: runtime-patch.yaml\n"
            "patchesStrategicMerge:\n  - patches/job.yaml\n"
        ),
        "a-overlay/runtime-patch.yaml": RUNTIME_PATCH,
        "a-overlay/patches/job.yaml": JOB_PATCH,
    })
    return tmp_path


def check(cwd: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["trainlint", "check", "--no-cache", "--output-format", "concise", *arguments],
        cwd=cwd, capture_output=True, text=True, timeout=60, check=False,
    )


def note(patch: str, kustomization: str) -> str:
    folder = Path(kustomization).parent.as_posix()
    return (
        f"trainlint: note: {patch} is a kustomize patch (named in {kustomization}), part of "
        "an object, so it is not checked alone: check what kustomize makes of it with "
        f"`kubectl kustomize {folder} | trainlint check -`\n"
    )


def chart_note(files: str, chart: str) -> str:
    """The note on `files` of a chart: a name, or how many."""
    if files[0].isdigit():
        what = (f"{files} are part of the Helm chart in {chart}, no manifests until Helm "
                "renders them, so they are not checked as written: check what Helm makes of "
                "them")
    else:
        what = (f"{files} is part of the Helm chart in {chart}, no manifest until Helm renders "
                "it, so it is not checked as written: check what Helm makes of it")
    return f"trainlint: note: {what} with `helm template {chart} | trainlint check -`\n"


NOTHING = (
    "trainlint: no file to check: every file was excluded, git-ignored or one that kustomize "
    "or Helm builds from, so nothing was checked (`--allow-empty` accepts this)\n"
)


def test_patches_are_neither_checked_nor_looked_up(repo: Path) -> None:
    """Checked as objects, the overlay's runtime patch would be the run's `torch-custom`
    (it is read first) and its TrainJob patch a TrainJob without a runtime."""
    result = check(repo, ".")
    assert (result.returncode, result.stdout) == (0, "All checks passed.\n")
    assert result.stderr == (
        "trainlint: note: 2 files are kustomize patches (named in a-overlay/kustomization.yaml)"
        ", parts of objects, so they are not checked alone: check what kustomize makes of them "
        "with `kubectl kustomize a-overlay | trainlint check -`\n"
    )
    (repo / "a-overlay" / "kustomization.yaml").unlink()  # now they are objects
    result = check(repo, ".")
    codes = [line.split(" ")[1] for line in result.stdout.splitlines()[:-1]]
    assert (result.returncode, sorted(codes)) == (1, ["TL009", "TL201", "TL201"])


def test_a_patch_in_the_context_is_never_looked_up(repo: Path) -> None:
    """The configuration's `context` holds the base and the overlay: the TrainJob checked
    alone finds the base's runtime, not the patch read before it."""
    (repo / ".trainlint.toml").write_text('context = ["a-overlay", "base"]\n')
    (repo / "jobs").mkdir()
    (repo / "base" / "job.yaml").rename(repo / "jobs" / "job.yaml")
    result = check(repo, "jobs/job.yaml")
    assert (result.returncode, result.stdout, result.stderr) == (0, "All checks passed.\n", "")


def test_render_says_what_it_left_out(repo: Path) -> None:
    """`render` of a patch alone: nothing to render, and how to render what it builds."""
    result = subprocess.run(["trainlint", "render", "a-overlay/patches/job.yaml"], cwd=repo,
                            capture_output=True, text=True, timeout=60, check=False)
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "trainlint: note: a-overlay/patches/job.yaml is a kustomize patch (named in "
        "a-overlay/kustomization.yaml), part of an object, so it is not rendered alone: "
        "render what kustomize makes of it with `kubectl kustomize a-overlay | trainlint "
        "render -`\nError: no TrainJob among the inputs\n")


def test_many_kustomizations_are_told_ten_at_most(tmp_path: Path) -> None:
    for number in range(12):
        write(tmp_path, {f"o{number:02d}/kustomization.yaml": "patches: [{path: p.yaml}]\n",
                         f"o{number:02d}/p.yaml": JOB_PATCH})
    result = check(tmp_path, "--allow-empty", ".")
    said = result.stderr.splitlines()  # the kustomizations themselves hold no object
    assert (result.returncode, len(said)) == (0, 12)
    assert said[0] == ("trainlint: no Kubernetes object (a document with `kind`) in 12 files,"
                       " so nothing was checked")
    assert said[1] == note("o00/p.yaml", "o00/kustomization.yaml").rstrip("\n")
    assert said[11] == "trainlint: note: and 2 more"


def test_a_patch_named_alone_is_told_as_such(repo: Path) -> None:
    """As a pre-commit hook names it: from its own folder, or the repository's."""
    overlay = repo / "a-overlay"
    result = check(overlay, "runtime-patch.yaml")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == note("runtime-patch.yaml", "kustomization.yaml") + NOTHING
    result = check(repo, "--allow-empty", "a-overlay/patches/job.yaml", "base/job.yaml",
                   "base/runtime.yaml")
    assert (result.returncode, result.stdout) == (0, "All checks passed.\n")
    assert result.stderr == note("a-overlay/patches/job.yaml", "a-overlay/kustomization.yaml")


def test_the_kustomizations_that_may_name_a_file(tmp_path: Path) -> None:
    """Those of its folder and the folders above it, under any of kustomize's names; one
    elsewhere only once read (a `../` path). A resource, an inline patch, or a file that
    a broken kustomization would name, is no patch."""
    write(tmp_path, {
        "app/Kustomization": (
            "resources: [deploy.yaml]\npatchesJson6902:\n"
            "  - {target: {kind: TrainJob, name: a}, path: json/ops.yaml}\n"
            "patchesStrategicMerge:\n  - |\n    kind: TrainJob\n    metadata: {name: a}\n"
        ),
        "app/component/kustomization.yaml": "kind: Component\npatches: [{path: part.yaml}]\n",
        "app/overlay/kustomization.yaml": "patches: [{path: ../../shared/part.yaml}]\n",
        "broken/kustomization.yaml": "patches: [{path: part.yaml}\n",
    })
    builders = Builders()
    root = str(tmp_path)
    assert builders.built(f"{root}/app/json/ops.yaml") == Built(
        "patch", f"{root}/app/Kustomization")
    assert builders.built(f"{root}/app/component/part.yaml") == Built(
        "patch", f"{root}/app/component/kustomization.yaml")
    for name in ("app/deploy.yaml", "app/component/other.yaml", "shared/part.yaml",
                 "broken/part.yaml"):
        assert builders.built(f"{root}/{name}") is None, name
    builders.read(f"{root}/app/overlay/kustomization.yaml")
    assert builders.built(f"{root}/shared/part.yaml") == Built(
        "patch", f"{root}/app/overlay/kustomization.yaml")


#: A chart's template, as Helm charts write them (and files their templates render with
#: `tpl`): no YAML until rendered (`did not find expected key`); and its Chart.yaml (TL004:
#: no `kind`).
TEMPLATE = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: {{ .Release.Name }}-finetune
  labels:
    {{- include "training.labels" . | nindent 4 }}
spec:
  runtimeRef:
    name: torch-distributed
  trainer:
    numNodes: {{ .Values.numNodes }}
"""


@pytest.fixture
def charts(tmp_path: Path) -> Path:
    """A chart with a subchart, a plain CRD folder, and a TrainJob beside them."""
    write(tmp_path, {
        "chart/Chart.yaml": "apiVersion: v2\nname: training\nversion: 0.1.0\n",
        "chart/values.yaml": "numNodes: 2\n",
        "chart/values-prod.yaml": "numNodes: 8\n",
        "chart/templates/trainjob.yaml": TEMPLATE,
        "chart/files/job.yaml": TEMPLATE,
        "chart/charts/sub/Chart.yaml": "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
        "chart/charts/sub/templates/runtime.yaml": RUNTIME_PATCH.replace(
            "numNodes: 2", "numNodes: {{ .Values.nodes }}"),
        "chart/crds/runtime.yaml": RUNTIME,
        "jobs/job.yaml": JOB,
    })
    return tmp_path


def test_a_helm_chart_is_not_checked_as_written(charts: Path) -> None:
    """Its templates and files (a subchart's are its own chart's) and Helm's own files are
    left out, said once a chart; its `crds/` are checked: the TrainJob beside the chart
    finds its runtime there."""
    result = check(charts, ".")
    assert (result.returncode, result.stdout) == (0, "All checks passed.\n")
    assert result.stderr == (
        chart_note("chart/charts/sub/templates/runtime.yaml", "chart/charts/sub")
        + chart_note("2 files", "chart")
    )
    (charts / "chart" / "Chart.yaml").rename(charts / "chart" / "Chart.yml")  # no chart now
    result = check(charts, "chart/templates", "chart/Chart.yml")
    assert result.stdout == "All checks passed.\n"  # Helm's `apiVersion: v2`: no object
    assert "chart/templates/trainjob.yaml:4:1: this document is a template" in (
        result.stderr)  # its Go actions tell it


def test_helms_own_files_named_alone_are_no_failure(charts: Path) -> None:
    """A commit of a chart's Chart.yaml and values: nothing to check, said once."""
    result = check(charts, "chart/Chart.yaml", "chart/values.yaml", "chart/values-prod.yaml")
    assert (result.returncode, result.stdout, result.stderr) == (2, "", NOTHING)
    builders = Builders()
    assert [builders.built(f"{charts}/chart/{name}") for name in (
        "Chart.yaml", "values-prod.yaml", "crds/runtime.yaml", "files/job.yaml",
    )] == [Built("helm", str(charts / "chart")), Built("helm", str(charts / "chart")),
           None, Built("chart", str(charts / "chart"))]


def test_a_kustomization_that_is_a_named_pipe_is_never_opened(repo: Path) -> None:
    """As any input that is no regular file: TL001, not a run that waits forever."""
    os.mkfifo(repo / "base" / "kustomization.yml")
    result = subprocess.run(
        ["trainlint", "check", "--no-cache", "--output-format", "concise", "base"], cwd=repo,
        capture_output=True, text=True, timeout=60, check=False)
    assert [line.split(" ")[:2] for line in result.stdout.splitlines()[:-1]] == [
        ["base/kustomization.yml:1:1:", "TL001"]]


def test_a_change_to_a_kustomization_or_a_chart_is_followed() -> None:
    """`check --watch` and the language server read the patches and charts again."""
    assert all(followed(f"overlay/{name}") for name in (
        "kustomization.yaml", "kustomization.yml", "Kustomization", "Chart.yaml"))


def test_the_editor_shows_nothing_on_a_patch_and_follows_its_kustomization(repo: Path) -> None:
    """The language server: no diagnostics on a patch, and the TrainJob's runtime is the
    base's; once the kustomization no longer names the patch, it is an object again (a
    runtime with no trainer job, TL201)."""
    session = Session(["trainlint", "lsp"], repo, capabilities=RESOLVING)
    try:
        patch = session.open("a-overlay/runtime-patch.yaml")
        job = session.open("base/job.yaml")
        assert (session.diagnostics(patch), session.diagnostics(job)) == ([], [])
        mark = session.count(patch)
        (repo / "a-overlay" / "kustomization.yaml").write_text("resources: [../base]\n")
        session.files_changed(("a-overlay/kustomization.yaml", types.FileChangeType.Changed))
        assert codes(session.diagnostics(patch, after=mark)) == ["TL201"]
        assert session.stop() == 0
    finally:
        if session.alive():
            session.stop()


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_what_kustomize_makes_of_the_patches_is_checked(repo: Path) -> None:
    """The command the note gives: the overlay's objects, patched, checked whole."""
    built = subprocess.run(["kubectl", "kustomize", "a-overlay"], cwd=repo, capture_output=True,
                           text=True, timeout=60, check=True).stdout
    assert "numNodes: 4" in built
    result = subprocess.run(
        ["trainlint", "check", "--no-cache", "--output-format", "concise", "-"], cwd=repo,
        input=built, capture_output=True, text=True, timeout=60, check=False,
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "All checks passed.\n", "")
