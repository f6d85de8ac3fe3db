"""Partial runs: context files that checks refer to but that are never reported on, what a
run says of TrainJobs it could not check against their runtime, and runs with nothing
to check."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import lint_text
from trainlint.config.settings import Settings
from trainlint.webhook import admission
from trainlint.webhook.admission import Mode
from trainlint.webhook.store import Store

#: A runtime whose checkpoints go to a ReadWriteOnce PVC, and a runtime with no trainer
#: label; both with a problem of their own (no grace period: TL402) that is never shown.
RUNTIMES = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-ckpt
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
              template:
                spec:
                  containers:
                    - name: node
                      image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
                      args: [--output_dir, /ckpt/run]
                      volumeMounts:
                        - name: ckpt
                          mountPath: /ckpt
                  volumes:
                    - name: ckpt
                      persistentVolumeClaim:
                        claimName: ckpt
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: ckpt
spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: 10Gi
"""
TRAINJOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: sft
spec:
  runtimeRef:
    name: torch-ckpt
  trainer:
    numNodes: 3
"""
TL302 = (
    "jobs/sft.yaml:9:5: TL302 [error] trainer job `node` runs on 3 nodes but mounts PVC "
    "`default/ckpt` (volume `ckpt`), which allows only ReadWriteOnce: pods on other nodes "
    "cannot attach it and stay in ContainerCreating, so the job never starts "
    "[rwo-volume-multi-node]"
)
UNCHECKED = (
    "trainlint: 1 TrainJob not checked against its runtime (`torch-ckpt`): add it with "
    "`--context` (or `--from-cluster`)\n"
)


def _check(cwd: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["trainlint", "check", "--output-format", "concise", "--select", "TL3", *arguments],
        cwd=cwd, capture_output=True, text=True, timeout=60, check=False,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "platform").mkdir()
    (tmp_path / "platform" / "runtimes.yaml").write_text(RUNTIMES)
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "sft.yaml").write_text(TRAINJOB)
    return tmp_path


def test_alone_the_trainjob_is_not_checked_and_the_run_says_so(repo: Path) -> None:
    result = _check(repo, "jobs/sft.yaml")
    assert (result.returncode, result.stdout, result.stderr) == (
        0, "All checks passed.\n", UNCHECKED
    )


def test_context_on_the_command_line(repo: Path) -> None:
    """The TrainJob is checked against the runtime and PVC of the context; the runtime's
    own problems are not reported, nor counted."""
    result = _check(repo, "--context", "platform", "jobs/sft.yaml")
    assert (result.returncode, result.stderr) == (1, "")
    assert result.stdout.splitlines() == [TL302, "Found 1 problem (1 error)."]
    # Checked as an input, the runtime has findings of its own.
    assert "platform/runtimes.yaml" in _check(repo, "platform", "jobs").stdout


def test_a_context_runtime_that_makes_the_webhook_deny_trainjobs(tmp_path: Path) -> None:
    """What the Trainer webhook denies the TrainJob for, though the fault is its runtime's,
    is said on the TrainJob when the runtime is only context (the cluster's, a platform
    team's file): the runtime's own finding is not shown."""
    (tmp_path / "runtime.yaml").write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\n"
        "metadata: {name: torch-volcano}\nspec:\n  mlPolicy: {torch: {}}\n"
        "  podGroupPolicy: {volcano: {}}\n  template:\n    metadata:\n"
        "      annotations: {scheduling.volcano.sh/queue-name: ''}\n    spec:\n"
        "      replicatedJobs:\n        - name: node\n          template:\n"
        "            metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}\n"
        "            spec: {template: {spec: {containers: [{name: node, image: x}]}}}\n")
    (tmp_path / "job.yaml").write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: sft}\n"
        "spec:\n  runtimeRef: {name: torch-volcano}\n")
    result = subprocess.run(
        ["trainlint", "check", "--no-cache", "--output-format", "concise", "--select", "TL217",
         "--context", "runtime.yaml", "job.yaml"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False,
    )
    assert (result.returncode, result.stdout.splitlines()) == (1, [
        "job.yaml:5:3: TL217 [error] ClusterTrainingRuntime `torch-volcano` leaves "
        "`scheduling.volcano.sh/queue-name` empty and this TrainJob sets no queue: the Trainer "
        'webhook denies the TrainJob ("Volcano queue name must not be empty") '
        "[empty-volcano-queue-name]",
        "Found 1 problem (1 error).",
    ])


def test_context_in_the_configuration_is_relative_to_it(repo: Path) -> None:
    (repo / ".trainlint.toml").write_text('context = ["platform"]\n')
    for cwd, name in ((repo, "jobs/sft.yaml"), (repo / "jobs", "sft.yaml")):
        result = _check(cwd, "--no-cache", name)
        assert result.returncode == 1, result.stdout + result.stderr
        assert result.stdout.splitlines()[0] == TL302.replace("jobs/sft.yaml", name)
    shown = subprocess.run(
        ["trainlint", "config"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout
    assert f'context = ["{repo / "platform"}"]  # .trainlint.toml' in shown
    assert "bundled-runtimes = true  # default" in shown


def test_context_the_project_excludes_from_checking(repo: Path) -> None:
    (repo / ".trainlint.toml").write_text('context = ["platform"]\nexclude = ["platform/"]\n')
    result = _check(repo, "--no-cache", ".")
    assert result.stdout.splitlines() == [TL302, "Found 1 problem (1 error)."]


def test_a_context_path_that_does_not_exist_is_an_error(repo: Path) -> None:
    (repo / ".trainlint.toml").write_text('context = ["runtimes"]\n')
    result = _check(repo, "jobs/sft.yaml")
    assert result.returncode == 2
    assert result.stderr == (
        f"Error: {repo / 'runtimes'}: no such file or folder (named in `context`)\n"
    )


def test_a_context_file_given_as_input_is_checked(repo: Path) -> None:
    (repo / ".trainlint.toml").write_text('context = ["platform", "jobs"]\n')
    result = _check(repo, "--no-cache", "jobs/sft.yaml")
    assert result.stdout.splitlines() == [TL302, "Found 1 problem (1 error)."]


def test_context_is_cached_like_an_input(repo: Path) -> None:
    """A warm run serves the TrainJob from the cache; a change in the context checks it
    again, and so does a context that no longer holds the runtime."""
    (repo / ".trainlint.toml").write_text('context = ["platform"]\n')
    assert _check(repo, "jobs/sft.yaml").stdout.splitlines()[0] == TL302
    assert _check(repo, "jobs/sft.yaml").stdout.splitlines()[0] == TL302
    runtimes = repo / "platform" / "runtimes.yaml"
    runtimes.write_text(RUNTIMES.replace("ReadWriteOnce", "ReadWriteMany"))
    assert _check(repo, "jobs/sft.yaml").stdout == "All checks passed.\n"
    runtimes.write_text(RUNTIMES.replace("torch-ckpt", "torch-other"))
    result = _check(repo, "jobs/sft.yaml")
    assert (result.stdout, result.stderr) == ("All checks passed.\n", UNCHECKED)
    assert _check(repo, "jobs/sft.yaml").stderr == UNCHECKED  # served, and said again


def test_the_unchecked_trainjobs_are_counted_once(tmp_path: Path) -> None:
    jobs = [
        TRAINJOB.replace("sft", name).replace("torch-ckpt", runtime)
        for name, runtime in (("a", "torch-sft"), ("b", "torch-sft"), ("c", "jax-sft"))
    ]
    (tmp_path / "jobs.yaml").write_text("---\n".join(jobs))
    result = _check(tmp_path, "jobs.yaml")
    assert (result.returncode, result.stderr) == (0, (
        "trainlint: 3 TrainJobs not checked against their runtime (`jax-sft`, `torch-sft`): "
        "add it with `--context` (or `--from-cluster`)\n"
    ))
    # Opted in, TL102 reports each of them; the summary still counts them.
    opted = _check(tmp_path, "--extend-select", "TL102", "jobs.yaml")
    assert [line.split(" ", 2)[1] for line in opted.stdout.splitlines()[:-1]] == ["TL102"] * 3


def test_tl102_runs_only_where_named() -> None:
    text = TRAINJOB.replace("torch-ckpt", "torch-sft")
    for select, runs in ((("ALL",), False), (("TL1",), False), (("TL102",), True),
                         (("TL1", "runtime-not-among-inputs"), True)):
        found = [f.code for f in lint_text(text, Settings(select=select))]
        assert ("TL102" in found) == runs, select


def test_the_webhook_speaks_of_the_cluster() -> None:
    review = admission.Review(
        uid="u1", kind="TrainJob", operation="CREATE", namespace="team-a", name="sft",
        dry_run=False, object={
            "apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": "sft"}, "spec": {"runtimeRef": {"name": "torch-sft"}},
        },
    )
    settings = Settings(select=("TL102",), bundled_runtimes=False)
    decision = admission.decide(review, settings, Mode.ADVISE, Store().context_for)
    (finding,) = decision.findings
    assert finding.message == (
        "ClusterTrainingRuntime `torch-sft` is not in the cluster: this TrainJob was not "
        "checked against its runtime, so webhook denials that depend on the runtime "
        "(initializer jobs, override targets, framework checks) may still come"
    )
    assert decision.warnings[0].startswith(f"TL102: {finding.message[:60]}")


# --- nothing to check ---

WORKFLOW = "on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n"
FRAGMENT = "spec:\n  trainer:\n    numNodes: 2\n"


def test_no_kubernetes_object_is_no_pass(tmp_path: Path) -> None:
    (tmp_path / "ci.yaml").write_text(WORKFLOW)
    result = _check(tmp_path, "ci.yaml")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "trainlint: no Kubernetes object (a document with `kind`) in 1 file, so nothing was "
        "checked (`--allow-empty` accepts this)\n"
    )
    allowed = _check(tmp_path, "--allow-empty", "ci.yaml")
    assert (allowed.returncode, allowed.stdout, allowed.stderr) == (0, "All checks passed.\n", (
        "trainlint: no Kubernetes object (a document with `kind`) in 1 file, so nothing was "
        "checked\n"
    ))


def test_no_file_is_no_pass(tmp_path: Path) -> None:
    (tmp_path / ".trainlint.toml").write_text('exclude = ["*.yaml"]\n')
    (tmp_path / "job.yaml").write_text(TRAINJOB)
    for arguments in (["job.yaml"], ["."]):
        result = _check(tmp_path, *arguments)
        assert (result.returncode, result.stderr) == (2, (
            "trainlint: no file to check: every file was excluded or git-ignored, so nothing "
            "was checked (`--allow-empty` accepts this)\n"
        ))


def test_a_git_ignored_file_is_checked_when_named(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "--quiet", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("generated/\n")
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "sft.yaml").write_text(TRAINJOB.replace("torch-ckpt", "x"))
    walked = _check(tmp_path, ".")
    assert walked.returncode == 2 and "no file to check" in walked.stderr
    named = _check(tmp_path, "generated/sft.yaml")
    assert named.returncode == 0 and "1 TrainJob not checked" in named.stderr


#: What the notes on a template and on a fragment say after their place.
TEMPLATE_NOTE = (
    "this document is a template (`${...}`, `{{ ... }}`, `{% ... %}`, `#@`, `%(...)s`, "
    "`%s`, `{NAME}` or `...` where a value or a line goes), no object until they are "
    "filled, so nothing in it is checked: check the filled text (`... | trainlint check -`)"
)
FRAGMENT_NOTE = (
    "this document is part of an object (`metadata` or `spec`, but no `kind` and "
    "`apiVersion`), so nothing in it is checked (a fragment of a manifest?)"
)


def test_a_template_gets_a_note_not_findings(tmp_path: Path) -> None:
    """Templates, as NVIDIA/aicr's `envsubst` benchmarks and Kueue's clusterloader2 tests
    write them: a value that is a placeholder alone (checked as written: TL005, TL008,
    TL001), or a line that is one (TL001: no YAML until filled). A `${...}` inside a
    script is the container's own."""
    (tmp_path / "job.yaml").write_text(
        TRAINJOB.replace("name: sft", "name: sft\n  namespace: ${NAMESPACE}")
        .replace("numNodes: 3", "numNodes: ${WORKER_COUNT}"))
    (tmp_path / "lines.yaml").write_text(TRAINJOB.replace(
        "    numNodes: 3\n", "    numNodes: 3\n${EXTRA_TRAINER_FIELDS}\n    image: x\n"))
    (tmp_path / "script.yaml").write_text(TRAINJOB.replace(
        "numNodes: 3", 'numNodes: "3"\n    command: [sh, -c, "echo ${RANK:-0}"]'))
    # Go templates outside a chart (clusterloader2's, goreleaser's): a value that is an
    # action (TL001 as written: a mapping key must be a scalar), a line that is one.
    (tmp_path / "go.yaml").write_text(
        TRAINJOB.replace("name: sft", "name: {{ .Name }}") + "---\n"
        + TRAINJOB.replace("  trainer:\n", "  trainer:\n{{- if .Nodes }}\n"))
    # Templates of no Kubernetes object (volcano's Grafana dashboard and benchmark profile):
    # none of trainlint's, so not even a note.
    (tmp_path / "dashboard.json").write_text(
        '{"panels": [{"datasource": "${DS_PROMETHEUS}", "title": "Queue"}], "version": 1}\n')
    (tmp_path / "profile.yaml").write_text(
        "jobs: ${JOBS}\njobTemplate:\n  name: gang-test\n  minAvailable: ${MIN_AVAILABLE}\n")
    # A clusterloader2 config (Kueue's): lines of Go actions, no object's keys.
    (tmp_path / "config.yaml").write_text(
        '{{$MODE := DefaultParam .MODE "Indexed"}}\n{{$namespaces := DefaultParam .NS 1}}\n\n'
        "name: load\nnamespace:\n  number: {{$namespaces}}\nsteps:\n- name: start\n")
    result = subprocess.run(
        ["trainlint", "check", "--output-format", "concise", "--cache-dir", "cache", "config.yaml",
         "dashboard.json", "go.yaml", "job.yaml", "lines.yaml", "profile.yaml", "script.yaml"],
        cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    assert [line.split(" ")[:2] for line in result.stdout.splitlines()[:-1]] == [
        ["script.yaml:9:5:", "TL005"]]
    assert not any(name in result.stderr for name in ("config", "dashboard", "profile"))
    assert result.stderr.splitlines()[:4] == [
        f"trainlint: note: go.yaml:1:1: {TEMPLATE_NOTE}",
        f"trainlint: note: go.yaml:19:1: {TEMPLATE_NOTE}",
        f"trainlint: note: job.yaml:1:1: {TEMPLATE_NOTE}",
        f"trainlint: note: lines.yaml:10:1: {TEMPLATE_NOTE}"]


def test_a_docs_placeholder_is_silent_and_the_rest_is_checked(tmp_path: Path) -> None:
    """A guide's `<job-name>` and `<num-nodes>` are for the reader to write: no TL010, TL005
    or TL008 on them; what the rest says still counts (a v2.1 field, pruned on v2.3)."""
    (tmp_path / "guide.yaml").write_text(
        TRAINJOB.replace("name: sft", "name: <job-name>")
        .replace("numNodes: 3", "numNodes: <num-nodes>\n    resourcesPerNode:\n"
                 "      limits: {nvidia.com/gpu: <gpus>}")
        + "  podTemplateOverrides:\n    - targetJobs: [{name: <job-name>}]\n"
          "      spec: {serviceAccountName: <service-account>}\n")
    # Its runtime a placeholder too: no runtime to add with `--context`, so no note.
    (tmp_path / "other.yaml").write_text(TRAINJOB.replace("torch-ckpt", "<runtime-name>"))
    result = subprocess.run(
        ["trainlint", "check", "--no-cache", "--output-format", "concise", "guide.yaml",
         "other.yaml"], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    assert [line.split(" ")[:2] for line in result.stdout.splitlines()[:-1]] == [
        ["guide.yaml:12:3:", "TL007"]]
    assert result.stderr == UNCHECKED  # guide.yaml's runtime, named in full


def test_a_json_lines_dataset_is_no_manifest_gone_wrong(tmp_path: Path) -> None:
    """A dataset beside the manifests (opendatahub-io's fine-tuning tests keep one): YAML
    reads no further than its first line, which is no TL001; broken JSON still is."""
    (tmp_path / "data.json").write_text('{"text": "a", "label": 1}\n{"text": "b"}\n')
    (tmp_path / "broken.json").write_text(
        '{"apiVersion": "v1", "kind": "Pod",\n "metadata": {"name": "a"}\n')  # no `}`
    result = subprocess.run(
        ["trainlint", "check", "--no-cache", "--output-format", "concise", "data.json",
         "broken.json"], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    assert [line.split(" ")[:2] for line in result.stdout.splitlines()[:-1]] == [
        ["broken.json:3:1:", "TL001"]]


def test_a_fragment_gets_a_note(tmp_path: Path) -> None:
    (tmp_path / "snippet.yaml").write_text(WORKFLOW + "---\n" + FRAGMENT)
    (tmp_path / "sft.yaml").write_text(TRAINJOB.replace("torch-ckpt", "torch-distributed"))
    note = (
        "trainlint: note: snippet.yaml:6:1: " + FRAGMENT_NOTE + "\n"
    )
    for _ in range(2):  # the second time from the cache
        result = _check(tmp_path, "snippet.yaml", "sft.yaml")
        assert (result.returncode, result.stderr) == (0, note)
    alone = _check(tmp_path, "--no-cache", "snippet.yaml")
    assert alone.returncode == 2
    assert alone.stderr.startswith(note) and "no Kubernetes object" in alone.stderr
