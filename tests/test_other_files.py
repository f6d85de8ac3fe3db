"""Other tools' YAML and JSON, as a pre-commit hook is handed them with a commit's
manifests: no finding, exit status 0. The same shapes in a file of Kubernetes objects, and
objects meant for Kubernetes that are broken, are reported where they are."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.test_cli import ENV
from tests.test_inputs import TIMEOUT, TRAINLINT
from trainlint.document import Span
from trainlint.loader import load

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
    # ksonnet's part metadata, YAML in JSON's style with a trailing comma; mongoimport's
    # relaxed JSON, a document a line; istio's release note template.
    "parts.yaml": '{"name": "x", "apiVersion": "0.0.1", "kind": "ksonnet.io/parts", '
                  '"keywords": ["a", "b",]}\n',
    "ratings.json": "{rating: 5, reviewer: 'a'}\n{rating: 4}\n",
    "releasenote.yaml": "apiVersion: release-notes/v2\nkind:\narea: traffic-management\n",
    # Templates of Python's `%` formatting (filled by Jsonnet) and Terraform's.
    "prometheus.yml": "global:\n  external_labels:\n    project_id: %(project-id)s\n",
    "values.yaml": "head:\n  labels:\n    a: b\n    ${indent(4, yamlencode(labels))}\n",
    # A `:` that ends a flow scalar, which kubectl's YAML reader takes (libyaml refuses).
    "serviceentry.yaml": "apiVersion: networking.istio.io/v1\nkind: ServiceEntry\n"
                         "metadata: {name: x}\nspec:\n  addresses: [1.2.3.4, 2001:db8::]\n",
    # YAML no YAML reader takes, of a text that shows nothing of an object: ytt's file
    # tests (input, `+++`, output), a parser's test input.
    "filetest.yml": "test1:\n- 1\n\n+++\n\ntest1:\n  - 1\n",
    "parser-case.yaml": "- { a: [b, c }\n",
    # ytt's templates: keys of both branches of an `#@ if`, an overlay's apiVersion alone.
    "values.yml": "#@ if data.values.enabled:\nreplicas: 3\n#@ else:\nreplicas: 1\n#@ end\n",
    "overlay.yml": '#@ load("@ytt:overlay", "overlay")\n#@overlay/match by=overlay.all\n---\n'
                   "apiVersion: networking.k8s.io/v1\n",
    # A tool's JSON output with a repeated key (JSON takes it); `feast init`'s `%NAME%`,
    # an `envsubst` line `$NAME`, a docs excerpt's `....`; Helm's provenance file, a
    # document after `...` with no `---`.
    "pvs.json": '{"report": [{"pv": [{"pv_name": "/dev/loop0", "pv_name": "/dev/loop0"}]}]}\n',
    "feature_store.yaml": "project: p\noffline_store:\n  type: redshift\n"
                          "  cluster_id: %REDSHIFT_CLUSTER_ID%\n",
    "devcluster.yaml": "stages:\n  - master:\n      config:\n        storage:\n$OPT_STORAGE\n"
                       "        log:\n          level: debug\n",
    "excerpt.yaml": "....\nspec:\n  provider:\n    conjur: {url: https://example.com}\n",
    "provenance.yaml": "apiVersion: v1\nname: hashtest\nversion: 1.2.3\n\n...\n"
                       "files:\n  hashtest-1.2.3.tgz: sha256:c6841b3a\n",
    # A key written twice with the same value (accelerate's config, an evaluation task):
    # nothing is lost whichever one a reader keeps.
    "accelerate.yaml": "debug: false\ndistributed_type: MULTI_GPU\ndebug: false\n",
    "task.yaml": "task: t\nmetadata:\n  canonical: [a, {b: 1}]\n  n: 2\n  canonical: [a, {b: 1}]\n"
                 "loss: .nan\nloss: .nan\n",
    # Keys written apart, which most readers take as two (`1` and `"1"`, `true` and `y`);
    # keys that are collections, which YAML takes.
    "keys.yaml": 'labels:\n  1: a\n  "1": b\n  true: c\n  y: d\n',
    "pairs.yaml": "? [cpu, gpu]\n: 2\n? [cpu, mem]\n: 1\n",
    # A quota manager's own JSON (a kind, metadata and a spec, no apiVersion); an API's
    # test suite naming the API it tests (openshift/api's, no kind nor metadata).
    "quota.json": '{"kind": "QuotaTree", "metadata": {"name": "t"}, "spec": {"nodes": {}}}\n',
    "dns.testsuite.yaml": "apiVersion: apiextensions.k8s.io/v1\nname: DNS\n"
                          "crd: dns.crd.yaml\ntests: {onCreate: []}\n",
    # Templates of Go's `fmt.Sprintf` and of `envsubst` inside a flow sequence.
    "userdata.yaml": "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n"
                     "  cluster:\n    name: %s\n    cidr: 10.100.0.0/16\n",
    "instance.yaml": "apiVersion: kro.run/v1alpha1\nkind: App\nmetadata: {name: a}\n"
                     "spec:\n  subnetIDs: [${SUBNET_IDS}]\n",
    # A kustomization with metadata (kustomize fills in its kind); a policy tool's rules
    # whose `kind` is a list.
    "kustomization.yml": "apiVersion: kustomize.config.k8s.io/v1beta1\n"
                         "metadata: {name: overlay}\nresources: [job.yaml]\n",
    "rules.yaml": "- kind: [Deployment, StatefulSet]\n  require: [resources.limits.memory]\n",
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
    with a control character (where it is, not at 1:1), a custom resource in YAML with
    metadata and a spec but its apiVersion misspelt."""
    (tmp_path / "a.yaml").write_text("kind: TrainJob\nmetadata: {name: sft}\n")
    (tmp_path / "b.yaml").write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nmetadata: {name: sft}\n")
    (tmp_path / "c.json").write_text(
        '{\n  // a comment\n  "apiVersion": "v1",\n  "kind": "ConfigMap",\n'
        '  "metadata": {"name": "a"}\n}\n')
    (tmp_path / "d.yaml").write_text(
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {k: "a\x7fb"}\n')
    # A custom resource in YAML whose apiVersion key is misspelt (an Argo Workflow's test).
    (tmp_path / "e.yaml").write_text(
        "dbapiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {generateName: w-}\n"
        "spec: {entrypoint: main}\n")
    assert check(tmp_path, "a.yaml", "b.yaml", "c.json", "d.yaml", "e.yaml") == (1, [
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
        "e.yaml:1:1: TL004 [warning] object has no `apiVersion` string: the API server "
        "rejects it, and no rule can tell what it is [not-a-kubernetes-object]",
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


def test_a_repeated_key_of_another_value_is_said_as_its_readers_take_it(
    tmp_path: Path,
) -> None:
    """In another tool's YAML a repeated key that changes its value loses the first where
    PyYAML reads it (a value written otherwise too: `1` is no `true`; flow YAML is no
    JSON, whose repeated names are taken); in an object, a list of
    objects or a part of one, kubectl keeps the last value (and reads `1` and `"1"` as
    one key), and a key written again as it was with its value loses nothing."""
    (tmp_path / "task.yaml").write_text(
        "group: core\nmetrics:\n  - acc\nmetrics:\n  - acc_norm\nflag: 1\nflag: true\n"
        "---\n{epochs: 3, lr: 0.1, epochs: 10}\n")
    (tmp_path / "map.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n"
        'data: {a: x, a: y, b: z, b: z, 1: p, "1": q, port: !!str 8080, port: 8080}\n---\n'
        "- {kind: TrainJob, metadata: {name: a, name: b}}\n---\nspec: {a: x, a: y}\n")
    assert check(tmp_path, "task.yaml", "map.yaml") == (1, [
        "map.yaml:4:14: TL002 [error] duplicate key `a`: kubectl silently keeps the last value "
        "(other tools keep the first, or refuse the file) [duplicate-key]",
        "map.yaml:4:38: TL002 [error] duplicate key `1`: kubectl silently keeps the last value "
        "(other tools keep the first, or refuse the file) [duplicate-key]",
        "map.yaml:4:64: TL002 [error] duplicate key `port`: kubectl silently keeps the last "
        "value (other tools keep the first, or refuse the file) [duplicate-key]",
        "map.yaml:6:1: TL004 [warning] document is a list of objects, not a Kubernetes "
        "object: kubectl rejects it; separate the objects with `---` or wrap them in a "
        "`kind: List` [not-a-kubernetes-object]",
        "map.yaml:6:40: TL002 [error] duplicate key `name`: kubectl silently keeps the last "
        "value (other tools keep the first, or refuse the file) [duplicate-key]",
        "map.yaml:8:14: TL002 [error] duplicate key `a`: kubectl silently keeps the last value "
        "(other tools keep the first, or refuse the file) [duplicate-key]",
        "task.yaml:4:1: TL002 [error] duplicate key `metrics` with another value: a program "
        "that reads it with PyYAML silently keeps the last value, and stricter parsers "
        "(go-yaml v3, js-yaml, ruamel.yaml) refuse the file [duplicate-key]",
        "task.yaml:7:1: TL002 [error] duplicate key `flag` with another value: a program "
        "that reads it with PyYAML silently keeps the last value, and stricter parsers "
        "(go-yaml v3, js-yaml, ruamel.yaml) refuse the file [duplicate-key]",
        "task.yaml:9:22: TL002 [error] duplicate key `epochs` with another value: a program "
        "that reads it with PyYAML silently keeps the last value, and stricter parsers "
        "(go-yaml v3, js-yaml, ruamel.yaml) refuse the file [duplicate-key]",
    ])


def test_an_anchor_defined_again_is_read_as_kubectl_reads_it(tmp_path: Path) -> None:
    """YAML lets a document define an anchor again (an alias refers to the latest), and
    kubectl reads it so; libyaml refuses it. The values and places are kubectl's."""
    text = ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  a: &x one\n"
            "  b: *x\n  c: &x two\n  d: *x\n  e: &x three\n  f: *x\n---\n"
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata: {g: &x four, h: *x}\n")
    loaded = load(text, "anchors.yaml")
    assert loaded.problems == []
    assert [manifest.body["data"] for manifest in loaded.manifests] == [
        {"a": "one", "b": "one", "c": "two", "d": "two", "e": "three", "f": "three"},
        {"g": "four", "h": "four"}]
    assert loaded.manifests[0].span(("data", "e")) == Span(9, 3, 9, 4)
    (tmp_path / "anchors.yaml").write_text(text)
    assert check(tmp_path, "anchors.yaml") == (0, [])
    # kubectl reads a text that opens with `{` as JSON, which has no anchors.
    (tmp_path / "anchors.json").write_text(
        '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, '
        '"data": {"a": &x "1", "b": &x "2"}}\n')
    status, found = check(tmp_path, "anchors.json")
    assert (status, [line.split(" [")[0] for line in found]) == (1, ["anchors.json:1:97: TL001"])


def test_what_only_kubernetes_refuses_is_said_of_its_objects(tmp_path: Path) -> None:
    """A key that is a collection in an object, and a tool's own shape beside objects,
    are said as before: kubectl refuses the file."""
    (tmp_path / "all.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  ? [a, b]\n  : c\n"
        "---\nkind: QuotaTree\nmetadata: {name: t}\nspec: {}\n")
    status, found = check(tmp_path, "all.yaml")
    assert (status, [line.split(" [")[0] for line in found]) == (1, [
        "all.yaml:5:5: TL001", "all.yaml:8:1: TL004"])
    assert "a mapping key must be a scalar for Kubernetes" in found[0]


def test_placeholders_and_keys_that_are_no_template_are_said(tmp_path: Path) -> None:
    """A shell's `${RANK}` inside a longer item of a flow list, and `%s` as an item of
    one, are no template: kubectl refuses the file. So does a key that is a collection in
    a custom resource without metadata, and a custom resource whose apiVersion is empty."""
    (tmp_path / "a.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        "    - {name: c, image: x, command: [sh, -c, python train.py --rank ${RANK}]}\n")
    (tmp_path / "b.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
        "    - {name: c, image: x, args: [printf, %s, hello]}\n")
    (tmp_path / "c.yaml").write_text(
        "apiVersion: ray.io/v1\nkind: RayJob\nspec:\n  ? [a, b]\n  : c\n")
    (tmp_path / "d.yaml").write_text(
        "apiVersion:\nkind: RayJob\nmetadata: {name: r}\nspec: {entrypoint: x}\n")
    status, found = check(tmp_path, "a.yaml", "b.yaml", "c.yaml", "d.yaml")
    assert (status, [line.split(" [")[0] for line in found]) == (1, [
        "a.yaml:6:69: TL001", "b.yaml:6:42: TL001", "c.yaml:4:5: TL001", "d.yaml:1:1: TL004"])


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


def test_templates_of_objects_sed_and_terraform_fill(tmp_path: Path) -> None:
    """A name in braces glued to a value (`{PREFIX}.16`, which `sed` fills) and a Terraform
    expression on a line of its own make a template of an object: a note, no finding."""
    (tmp_path / "service.yaml").write_text(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: bind\nspec:\n"
        "  clusterIP: {SERVICE_IP_PREFIX}.16\n")
    (tmp_path / "configmap.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels:\n    a: b\n"
        "    ${indent(4, yamlencode(labels))}\n")
    result = subprocess.run(
        [TRAINLINT, "check", "--isolated", "--no-cache", "--allow-empty", "service.yaml",
         "configmap.yaml"],
        cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT, check=False, env=ENV)
    assert result.returncode == 0 and ": TL" not in result.stdout
    assert [line.split(": this document")[0] for line in result.stderr.splitlines()
            if "is a template" in line] == [
        "trainlint: note: service.yaml:6:1", "trainlint: note: configmap.yaml:7:1"]


def test_a_manifest_in_utf16_is_read_and_fixed_in_utf16(tmp_path: Path) -> None:
    """kubectl reads a file that begins with UTF-16's byte order mark as UTF-16: so does
    trainlint, and a fix writes the file back in the same codec, its mark kept."""
    text = ("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: x\n"
            "spec:\n  runtimeRef: {name: torch-distributed}\n  trainer:\n"
            "    command: [\"torchrun train.py\"]\n")
    for name, codec in (("le.yaml", "utf-16-le"), ("be.yaml", "utf-16-be")):
        (tmp_path / name).write_bytes("\ufeff".encode(codec) + text.encode(codec))
    (tmp_path / "odd.yaml").write_bytes(b"\xff\xfe" + "kind: X\n".encode("utf-16-le") + b"a")
    status, found = check(tmp_path, "le.yaml", "be.yaml", "odd.yaml")
    assert (status, [line.split(" [")[0] for line in found]) == (1, [
        "be.yaml:8:15: TL417", "le.yaml:8:15: TL417", "odd.yaml:2:1: TL001", "odd.yaml:3:1: TL001"])
    assert "invalid UTF-16 bytes: the file begins with UTF-16's byte order mark" in found[2]
    fixed = subprocess.run(
        [TRAINLINT, "check", "--isolated", "--no-cache", "--fix", "--unsafe-fixes", "le.yaml"],
        cwd=tmp_path, capture_output=True, text=True, timeout=TIMEOUT, check=False, env=ENV)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert (tmp_path / "le.yaml").read_bytes() == "\ufeff".encode("utf-16-le") + text.replace(
        '["torchrun train.py"]', "[torchrun, train.py]").encode("utf-16-le")


#: Manifests broken as kubectl reads them, beside what now makes a template or another
#: tool's file: a placeholder or a comment on a line broken elsewhere, a tab, JSON with a
#: comma missing, a `:` before `[` in a flow scalar, a JSON manifest with a trailing comma
#: and no `metadata`, relaxed JSON Lines of Trainer objects, an apiVersion without a dot
#: beside `metadata`, a document after `...` with no `---`.
BROKEN = {
    "a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n"
              "\tformat: \"%(levelname)s %(message)s\"\n",
    "b.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: b}\nspec:\n  containers:\n"
              "    - image: x: v2  # built from {org}/trainer\n",
    "c.json": '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},\n'
              ' "data": {"path": "/ckpt/{epoch}.pt" "x": "y"}}\n',
    "d.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\ndata:\n"
              "  args: [--cfg=a:[1,2]]\n",
    "e.json": '{\n  "apiVersion": "v1",\n  "kind": "ConfigMap",\n  "data": {"a": "b"},\n}\n',
    "f.yaml": "{apiVersion: v1, kind: ConfigMap, metadata: {name: f}}\n"
              "{apiVersion: v1, kind: ConfigMap, metadata: {name: g}}\n",
    "g.yaml": "apiVersion: trainer/v1alpha1\nmetadata: {name: g}\nspec: {}\n",
    "h.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: h}\n...\n"
              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: i}\n",
    # A Windows variable glued to a path; a `$NAME` line before a tab; a CR-only file; a
    # `...` in a quoted value; a repeated key beside a Go action in a script.
    "i.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: i}\ndata:\n"
              "  path: %USERPROFILE%\\app\n",
    "j.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: j}\ndata:\n  run.sh: |\n"
              "    $CMD\n\techo done\n",
    "k.yaml": "apiVersion: v1\rkind: ConfigMap\rmetadata: {name: k}\rdata: {a: [}\r",
    "l.yaml": 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: l}\ndata:\n  a: "x\n...\n  y"\n',
    "m.yaml": "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: job}\n"
              "spec:\n  runtimeRef: {name: torch-distributed}\n  trainer:\n    numNodes: 2\n"
              '    command: [bash, -c, "echo {{ x }}"]\n    numNodes: 3\n',
    # A comment that starts `#@` but is no ytt annotation; JSON Lines, then a manifest.
    "n.yaml": "#@author jane\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: n}\n"
              "data: {a: [}\n",
    "o.yaml": '{"a": 1}\n{"b": 2}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: o}\n',
}


def test_broken_manifests_beside_templates_and_other_files_are_said(tmp_path: Path) -> None:
    for name, text in BROKEN.items():
        (tmp_path / name).write_text(text)
    status, found = check(tmp_path, *BROKEN)
    assert (status, [line.split(" [")[0] for line in found]) == (1, [
        "a.yaml:5:1: TL001", "b.yaml:6:15: TL001", "c.json:2:38: TL001", "d.yaml:5:17: TL001",
        "e.json:4:21: TL001", "f.yaml:2:1: TL001", "g.yaml:1:1: TL004", "h.yaml:5:1: TL001",
        "i.yaml:5:9: TL001", "j.yaml:7:1: TL001", "k.yaml:4:12: TL001", "l.yaml:6:1: TL001",
        "m.yaml:9:5: TL002", "n.yaml:5:12: TL001", "o.yaml:2:1: TL001"])
    assert found[7].endswith(
        "this document follows the end marker `...` of line 4 with no `---`: kubectl reads no "
        "further than `...` until the next `---`, so it is silently dropped [invalid-yaml]")


def test_what_kubectl_reads_and_libyaml_refuses_is_checked(tmp_path: Path) -> None:
    """libyaml refuses `[--bind=2001:db8::]`, and a tab that indents JSON; kubectl's reader
    takes the `:` as the value's, and reads the JSON: the objects, and those after them,
    are checked where they are (a scalar over two lines keeps its lines)."""
    (tmp_path / "tab.json").write_text(
        '\t{"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": '
        '{"name": "j"},\n\t "spec": {"runtimeRef": {"name": "torch-distributed"}, '
        '"trainer": {"numNode": 2}}}\n')
    (tmp_path / "two-lines.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata:\n  a: [x\n    y:, z]\n"
        '  tagged: [!t:, x]\n  mark: "\ue000"\n'
        "---\napiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: j}\n"
        "spec:\n  runtimeRef: {name: torch-distributed}\n  trainer:\n    numNode: 2\n")
    status, found = check(tmp_path, "tab.json", "two-lines.yaml")
    assert (status, [line.split(" [")[0] for line in found]) == (
        1, ["tab.json:2:69: TL006", "two-lines.yaml:16:5: TL006"])
    (tmp_path / "job.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hosts}\ndata:\n"
        "  note: [see http://docs:]\n---\n"
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: job}\n"
        "spec:\n  runtimeRef: {name: torch-distributed}\n  trainer:\n"
        "    args: [--bind=2001:db8::, --epochs=3]\n    numNode: 2\n")
    status, found = check(tmp_path, "job.yaml")
    assert (status, [line.split(" [")[0] for line in found]) == (1, ["job.yaml:14:5: TL006"])
