"""Other tools' YAML and JSON, as a pre-commit hook is handed them with a commit's
manifests: no finding, exit status 0. The same shapes in a file of Kubernetes objects, and
objects meant for Kubernetes that are broken, are reported where they are."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.test_cli import ENV
from tests.test_inputs import TIMEOUT, TRAINLINT

#: Files of other tools, each as such a tool writes it.
OTHER_FILES = {
    # Grafana provisioning, Drone CI, kustomize, prow, Zarf, Helm metadata under another name.
    "datasource.yml": "apiVersion: 1\ndatasources:\n  - name: Prometheus\n    type: prometheus\n",
    ".drone.yml": "kind: pipeline\ntype: docker\nname: default\nsteps:\n  - name: test\n",
    "kustomization.yaml": "kind: Kustomization\nresources: [deployment.yaml]\n",
    "labels.yaml": "kind:\n  - name: kind/bug\n    color: e11d21\n",
    "zarf.yaml": "kind: ZarfPackageConfig\nmetadata:\n  name: podinfo\ncomponents: []\n",
    "chart.json": '{\n  "apiVersion": "v2",\n  "name": "hello",\n  "version": "1.2.3"\n}\n',
    # A document that is one value: an Ansible Vault file, a version.
    "vault.yml": "$ANSIBLE_VAULT;1.2;AES256;dev\n6134643939623661\n",
    "version.json": "3\n",
    # JSON with comments and trailing commas.
    "tsconfig.json": (
        '{\n  // the compiler\'s options\n  "compilerOptions": {\n    "strict": true,\n'
        '    "paths": {"@/*": ["src/*"]}, /* aliases */\n  },\n}\n'
    ),
    # A Jinja template.
    "ports.yaml": '- name: web\n  port: 80\n{% include "port.j2" %}\n',
    # JSON that holds characters YAML refuses and JSON takes (DEL, a C1 control).
    "notebook.ipynb.json": '{"cells": [{"source": ["print(\'a\x7fb\\u0085\x85\')"]}]}\n',
}


def check(folder: Path, *names: str) -> tuple[int, list[str]]:
    """The exit status and the findings' lines of a run as the hook makes it."""
    result = subprocess.run(
        [TRAINLINT, "check", "--isolated", "--no-cache", "--allow-empty",
         "--output-format", "concise", *names],
        cwd=folder, capture_output=True, text=True, timeout=TIMEOUT, check=False, env=ENV,
    )
    return result.returncode, [line for line in result.stdout.splitlines() if ": TL" in line]


def test_other_tools_files_pass_the_hook(tmp_path: Path) -> None:
    for name, text in OTHER_FILES.items():
        (tmp_path / name).write_text(text)
    assert check(tmp_path, *OTHER_FILES) == (0, [])


def test_the_same_shapes_beside_kubernetes_objects_are_reported(tmp_path: Path) -> None:
    """In a file of objects, a document that is one value or a mapping with half of what
    makes an object is a mistake (kubectl refuses the file), whatever its `kind`."""
    (tmp_path / "all.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n"
        "just text\n---\n"
        "kind: pipeline\nname: default\n"
    )
    assert check(tmp_path, "all.yaml") == (1, [
        "all.yaml:5:1: TL004 [warning] document is a scalar, not a Kubernetes object: "
        "nothing in it is checked [not-a-kubernetes-object]",
        "all.yaml:7:1: TL004 [warning] object has no `apiVersion` string: the API server "
        "rejects it, and no rule can tell what it is [not-a-kubernetes-object]",
    ])


def test_objects_meant_for_kubernetes_are_reported_alone(tmp_path: Path) -> None:
    """A kind of Kubernetes' without its apiVersion, an apiVersion of Kubernetes' with
    `metadata` and no kind, a Kubernetes object in JSON with comments, a YAML manifest
    with a control character (where it is, not at 1:1)."""
    (tmp_path / "a.yaml").write_text("kind: TrainJob\nmetadata: {name: sft}\n")
    (tmp_path / "b.yaml").write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nmetadata: {name: sft}\n")
    (tmp_path / "c.json").write_text(
        '{\n  // a comment\n  "apiVersion": "v1",\n  "kind": "ConfigMap",\n'
        '  "metadata": {"name": "a"}\n}\n')
    (tmp_path / "d.yaml").write_text(
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {k: "a\x7fb"}\n')
    assert check(tmp_path, "a.yaml", "b.yaml", "c.json", "d.yaml") == (1, [
        "a.yaml:1:1: TL004 [warning] object has no `apiVersion` string: the API server "
        "rejects it, and no rule can tell what it is [not-a-kubernetes-object]",
        "b.yaml:1:1: TL004 [warning] object has no `kind` string: the API server rejects it, "
        "and no rule can tell what it is [not-a-kubernetes-object]",
        "c.json:2:3: TL001 [error] invalid JSON: a comment (`//`, `/* */`) or a comma before "
        "`}` or `]` is no JSON: kubectl and the API server reject this document "
        "[invalid-yaml]",
        "d.yaml:4:13: TL001 [error] invalid YAML: the character #x007f is not allowed "
        "(control characters are not allowed): kubectl and the API server reject this "
        "document [invalid-yaml]",
    ])


def test_json_with_characters_yaml_refuses_is_checked(tmp_path: Path) -> None:
    """kubectl reads such a JSON manifest: its rules run (here the schema's, on a field
    written wrong)."""
    (tmp_path / "job.json").write_text(
        '{"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",\n'
        ' "metadata": {"name": "sft", "annotations": {"note": "a\x7fb"}},\n'
        ' "spec": {"runtimeRef": {"name": "torch-distributed"}, "trainer": {"numNode": 2}}}\n')
    status, found = check(tmp_path, "job.json")
    assert (status, [line.split(" [")[0] for line in found]) == (1, ["job.json:3:68: TL006"])


def test_a_notebook_is_no_fragment_of_a_manifest(tmp_path: Path) -> None:
    """Its `metadata` is the notebook's (a kernel), not an object's: no note says it may
    be part of a manifest. A patch body with an object's `metadata` is one."""
    (tmp_path / "train.ipynb").write_text(
        '{"cells": [], "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4}\n')
    (tmp_path / "patch.yaml").write_text("metadata:\n  labels: {team: nlp}\n")
    result = subprocess.run(
        [TRAINLINT, "check", "--isolated", "--no-cache", "--allow-empty", "train.ipynb",
         "patch.yaml"], cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT,
        check=False, env=ENV)
    assert result.returncode == 0
    notes = [line for line in result.stderr.splitlines() if "part of an object" in line]
    assert [note.split(": ")[2] for note in notes] == ["patch.yaml:1:1"]


def test_what_still_makes_a_manifest_wrong_is_said(tmp_path: Path) -> None:
    """A Trainer kind with no apiVersion (even with nothing else), a list of TrainJobs, a
    duplicate key beside a chat template's `{% %}` (a value's, no template of the file), a
    DEL outside a JSON string (kubectl refuses it), a control character after non-ASCII
    text (placed by characters, not bytes)."""
    (tmp_path / "a.yaml").write_text("kind: TrainJob\nspec: {runtimeRef: {name: x}}\n")
    (tmp_path / "b.yaml").write_text("- kind: TrainJob\n  metadata: {name: a}\n")
    (tmp_path / "c.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: chat}\ndata:\n"
        '  template: "{% for m in messages %}<|im_start|>{% endfor %}"\n'
        "  template: again\n")
    (tmp_path / "d.json").write_text('{"apiVersion": "v1", \x7f"kind": "ConfigMap"}\n')
    (tmp_path / "e.yaml").write_text(
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: "日本語", b: "x\x01"}\n')
    status, found = check(tmp_path, "a.yaml", "b.yaml", "c.yaml", "d.json", "e.yaml")
    assert (status, [line.split(" [")[0] for line in found]) == (1, [
        "a.yaml:1:1: TL004", "b.yaml:1:1: TL004", "c.yaml:6:3: TL002", "d.json:1:22: TL001",
        "e.yaml:4:23: TL001"])


def test_a_config_map_volume_of_any_shape_is_no_crash(tmp_path: Path) -> None:
    """`items` whose key is a list or a mapping (the API server refuses the pod; TL013
    may say so), never a traceback."""
    (tmp_path / "run.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: code}\ndata: {train.py: 'print(1)'}\n"
        "---\napiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainingRuntime\n"
        "metadata: {name: rt}\nspec:\n  template:\n    spec:\n      replicatedJobs:\n"
        "        - name: node\n          template:\n            metadata:\n"
        "              labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}\n"
        "            spec:\n              template:\n                spec:\n"
        "                  containers: [{name: node, image: x, command: [python, /c/train.py],"
        " volumeMounts: [{name: c, mountPath: /c}]}]\n"
        "                  volumes: [{name: c, configMap: {name: code, items: [{key: [a], "
        "path: train.py}, {key: {a: b}, path: b.py}]}}]\n")
    status, found = check(tmp_path, "run.yaml")
    assert (status, [line.split(" [")[0] for line in found]) == (
        1, ["run.yaml:21:72: TL005", "run.yaml:21:100: TL005"])  # the keys are no strings


def test_json_that_yaml_reads_and_kubectl_does_not(tmp_path: Path) -> None:
    """A trailing comma, or a comment line, in a Kubernetes object written as JSON: YAML
    takes them, kubectl reads the text as JSON and refuses it."""
    (tmp_path / "a.json").write_text(
        '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"},}\n')
    (tmp_path / "b.json").write_text(
        '{\n  "apiVersion": "v1",\n  "kind": "ConfigMap",\n  "metadata": {"name": "b"},\n'
        '  // the data follows\n  "data": {"k": "https://example.com/x"}\n}\n')
    (tmp_path / "c.json").write_text(
        '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},'
        ' "data": {"glob": "/data/*, ]"}}\n')
    status, found = check(tmp_path, "a.json", "b.json", "c.json")
    assert (status, [line.split(" [")[0] for line in found]) == (
        1, ["a.json:1:68: TL001", "b.json:5:3: TL001"])
