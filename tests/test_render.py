"""The render against the upstream controller, case by case, and the `render` command.

`fixtures/render/*.yaml` hold cases ported from the unit tests of kubeflow/trainer's
controller (each names its test and tag): input objects, the releases the case holds for,
and the JobSet fields the upstream test asserts. Paths name a replicatedJob or a
container by name (`job[node].pod.containers[node].env`); an env list is compared as a
mapping of names to values, as the upstream tests sort it.

The golden outputs of `trainlint render examples/<name>/` are in
`fixtures/render/examples/<name>.expected.yaml`; refresh them with
`TRAINLINT_UPDATE_FIXTURES=1 python3 -m pytest tests/test_render.py`.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import ROOT, UPDATE, read_yaml
from trainlint.engine.index import Index
from trainlint.loader import load
from trainlint.release import parse_version
from trainlint.render.build import render
from trainlint.render.show import leaves

FIXTURES = ROOT / "fixtures" / "render"
_SEGMENT = re.compile(r"([^.\[\]]+)((?:\[[^\]]+\])*)")
ALIASES = {"pod": ("template", "spec", "template", "spec")}


def _cases() -> list[Any]:
    params = []
    for path in sorted(FIXTURES.glob("*.yaml")):
        for case in read_yaml(path)["cases"]:
            for release in case["releases"]:
                params.append(pytest.param(
                    case, str(release), id=f"{path.stem}:{case['name']}@v{release}"
                ))
    return params


def resolve(value: Any, path: str) -> tuple[bool, Any]:
    """(found, value) at a path such as `job[node].pod.containers[node].env`."""
    for key, selectors in _SEGMENT.findall(path):
        steps: list[str | int] = list(ALIASES.get(key, (key,)))
        if key == "job":
            steps = ["spec", "replicatedJobs"]
        for step in steps:
            if not isinstance(value, dict) or step not in value:
                return False, None
            value = value[step]
        for selector in re.findall(r"\[([^\]]+)\]", selectors):
            if isinstance(value, list) and selector.lstrip("-").isdigit():
                index = int(selector)
                if not -len(value) <= index < len(value):
                    return False, None
                value = value[index]
            elif isinstance(value, list):
                found = [item for item in value if isinstance(item, dict)
                         and item.get("name") == selector]
                if not found:
                    return False, None
                value = found[0]
            elif isinstance(value, dict) and selector in value:
                value = value[selector]
            else:
                return False, None
    return True, value


def _comparable(expected: Any, actual: Any) -> Any:
    """An env list compared with a mapping: names to values (or valueFrom)."""
    if isinstance(expected, dict) and isinstance(actual, list):
        return {item.get("name"): item.get("value", item.get("valueFrom")) for item in actual
                if isinstance(item, dict)}
    return actual


@pytest.mark.parametrize(("case", "release"), _cases())
def test_upstream_case(case: dict[str, Any], release: str) -> None:
    loaded = load(case["objects"], "case.yaml")
    assert loaded.problems == []
    index = Index(loaded.manifests)
    jobs = [manifest for manifest in loaded.manifests if manifest.kind == "TrainJob"]
    if jobs:
        result = render(jobs[0], index.runtime_for(jobs[0]), parse_version(release))
    else:
        runtimes = [m for m in loaded.manifests if m.kind.endswith("TrainingRuntime")]
        result = render(None, runtimes[0], parse_version(release))
    for path, expected in case.get("expect", {}).items():
        found, actual = resolve(result.jobset, path)
        assert found, f"{path} is not in the render"
        assert _comparable(expected, actual) == expected, path
    for path in case.get("absent", []):
        assert not resolve(result.jobset, path)[0], f"{path} should not be in the render"
    if "hostfile" in case:
        [(kind, _, data, _)] = result.extras
        assert (kind, data) == ("ConfigMap", {"hostfile": case["hostfile"]})
    for path, described in case.get("origins", {}).items():
        steps = _steps(result.jobset, path)
        assert result.origin(steps).describe() == described, path


def _steps(root: Any, path: str) -> tuple[str | int, ...]:
    """The key path of the render a fixture path names (for its origin)."""
    steps: list[str | int] = []
    value = root
    for key, selectors in _SEGMENT.findall(path):
        names: list[str | int] = (
            ["spec", "replicatedJobs"] if key == "job" else list(ALIASES.get(key, (key,)))
        )
        for step in names:
            steps.append(step)
            value = value[step]
        for selector in re.findall(r"\[([^\]]+)\]", selectors):
            position: str | int = selector
            if isinstance(value, list):
                position = int(selector) if selector.isdigit() else next(
                    index for index, item in enumerate(value) if item.get("name") == selector
                )
            steps.append(position)
            value = value[position]
    return tuple(steps)


def test_every_case_cites_its_upstream_test() -> None:
    count = 0
    for path in sorted(FIXTURES.glob("*.yaml")):
        for case in read_yaml(path)["cases"]:
            upstream = case["upstream"]
            assert re.fullmatch(r"v2\.[0-3]\.0", upstream["tag"]), case["name"]
            assert upstream["file"].endswith("_test.go") and upstream["test"].startswith("Test")
            assert upstream["case"], case["name"]
            count += 1
    assert count >= 30


EXAMPLES = sorted(path for path in (ROOT / "examples").iterdir() if path.is_dir())


@pytest.mark.parametrize("folder", EXAMPLES, ids=[path.name for path in EXAMPLES])
def test_render_of_examples(folder: Path) -> None:
    done = subprocess.run(
        ["trainlint", "render", "--isolated", f"examples/{folder.name}"],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )
    assert done.returncode == 0, done.stderr
    expected = FIXTURES / "examples" / f"{folder.name}.expected.yaml"
    if UPDATE:
        expected.parent.mkdir(parents=True, exist_ok=True)
        expected.write_text(done.stdout)
    assert done.stdout == expected.read_text()
    rendered = list(yaml.safe_load_all(done.stdout))
    assert rendered[0]["kind"] == "JobSet"


def test_render_json_names_every_value_origin(tmp_path: Path) -> None:
    done = subprocess.run(
        ["trainlint", "render", "--isolated", "--output-format", "json", "examples/finetune-fixed"],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )
    assert done.returncode == 0, done.stderr
    [document] = json.loads(done.stdout)
    env = "spec.replicatedJobs[0].template.spec.template.spec.containers[0].env[0].value"
    assert document["origins"][env]["object"]["kind"] == "TrainJob"
    assert document["origins"][env]["path"] == "spec.trainer.env[0].value"
    assert document["origins"][env]["line"] > 1


def _render_text(text: str, release: str = "2.3") -> Any:
    loaded = load(text, "case.yaml")
    index = Index(loaded.manifests)
    [job] = [manifest for manifest in loaded.manifests if manifest.kind == "TrainJob"]
    return render(job, index.runtime_for(job), parse_version(release))


_RUNTIME_AND_PATCH = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch}
spec:
  mlPolicy: {torch: {}}
  template:
    spec:
      replicatedJobs:
        - name: launcher
          template: {spec: {template: {spec: {containers: [{name: main, image: a}]}}}}
        - name: node
          template:
            metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
            spec: {template: {spec: {containers: [{name: node, image: b}]}}}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: job}
spec:
  runtimeRef: {name: torch}
  runtimePatches:
    - manager: example.com/tool
      trainingRuntimeSpec:
        template:
          spec:
            replicatedJobs:
              - name: worker
                template:
                  spec:
                    template: {spec: {containers: [{name: worker, env: [{name: A, value: b}]}]}}
"""


def test_v23_appends_a_job_a_patch_names_and_v22_ignores_it() -> None:
    appended = _render_text(_RUNTIME_AND_PATCH, "2.3")
    assert [job.name for job in appended.jobs] == ["launcher", "worker", "node"]
    worker = appended.job_named("worker")
    assert worker is not None and worker.containers()[0].body.get("image") is None
    origin = appended.origin((*worker.path, "name"))
    assert origin.describe() == (
        "TrainJob job spec.runtimePatches[0].trainingRuntimeSpec.template.spec."
        "replicatedJobs[0].name"
    )
    node = appended.job_named("node")
    assert node is not None
    assert appended.origin((*node.path, "name")).path[-3:] == ("replicatedJobs", 1, "name")
    ignored = _render_text(_RUNTIME_AND_PATCH, "2.2")
    assert [job.name for job in ignored.jobs] == ["launcher", "node"]


_TWO_TRAINER_JOBS = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: mpi}
spec:
  mlPolicy: {numNodes: 1, mpi: {runLauncherAsNode: true}}
  template: {spec: {replicatedJobs: [
    {name: launcher, template: {
      metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}},
      spec: {template: {spec: {containers: [{name: node, image: x}]}}}}},
    {name: node, template: {
      metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}},
      spec: {template: {spec: {containers: [{name: node, image: x}]}}}}}]}}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: job}
spec:
  runtimeRef: {name: mpi}
  trainer: {numNodes: 3}
"""


@pytest.mark.parametrize(("release", "nodes"), [("2.0", 1), ("2.1", 2), ("2.3", 2)])
def test_v20_gives_every_trainer_job_the_count_of_the_first(release: str, nodes: int) -> None:
    """v2.0's builder sets each job labelled trainer to the first one's count, after the
    MPI plugin has set `node`'s from the TrainJob; from v2.1 it leaves the counts be."""
    node = _render_text(_TWO_TRAINER_JOBS, release).job_named("node")
    assert node is not None and node.pods == nodes
    assert node.body["template"]["spec"]["parallelism"] == nodes


_NULLS_IN_A_PATCH = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch}
spec:
  mlPolicy: {torch: {}}
  template: {spec: {replicatedJobs: [{name: node, template: {
    metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}},
    spec: {template: {spec: {
      nodeSelector: {pool: gpu}, tolerations: [{key: gpu, operator: Exists}],
      containers: [{name: node, image: x, volumeMounts: [{name: data, mountPath: /data}]}],
      volumes: [{name: data, emptyDir: {}}]}}}}}]}}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: job}
spec:
  runtimePatches:
    - trainingRuntimeSpec: {template: {spec: {replicatedJobs: [{name: node, template: {
        spec: {template: {spec: {
          nodeSelector: null, tolerations: null,
          containers: [{name: node, volumeMounts: null}],
          volumes: [{name: data, emptyDir: null, persistentVolumeClaim: {claimName: d}}],
          affinity: {$patch: replace, nodeAffinity: {$retainKeys: [x]}}}}}}}]}}}
      manager: example.com/tool
  runtimeRef: {name: torch}
"""


@pytest.mark.parametrize("release", ["2.2", "2.3"])
def test_the_keys_a_patch_sets_to_null_leave_the_runtimes_values(release: str) -> None:
    """The API server drops a TrainJob's nulls and patch directives (no field of its
    schema): the controller never sees them."""
    rendered = _render_text(_NULLS_IN_A_PATCH, release)
    node = rendered.job_named("node")
    assert node is not None
    assert node.pod_spec["nodeSelector"] == {"pool": "gpu"}
    assert node.pod_spec["tolerations"] == [{"key": "gpu", "operator": "Exists"}]
    assert node.containers()[0].body["volumeMounts"] == [{"name": "data", "mountPath": "/data"}]
    assert node.pod_spec["volumes"] == [
        {"name": "data", "emptyDir": {}, "persistentVolumeClaim": {"claimName": "d"}}
    ]
    assert rendered.origin((*node.pod_path, "nodeSelector")).manifest is rendered.runtime
    assert node.pod_spec["affinity"] == {"nodeAffinity": {}}


def test_a_runtime_alone_renders_what_every_trainjob_inherits() -> None:
    loaded = load(_RUNTIME_AND_PATCH, "case.yaml")
    alone = render(None, loaded.manifests[0], (2, 3))
    node = alone.job_named("node")
    assert node is not None
    env = node.containers()[0].env
    assert env["PET_MASTER_ADDR"][1]["value"] == "<trainjob>-node-0-0.<trainjob>"
    assert alone.jobset["metadata"]["name"] == "<trainjob>"


def test_the_render_leaves_its_objects_as_they_were() -> None:
    import copy

    loaded = load(_RUNTIME_AND_PATCH, "case.yaml")
    before = [copy.deepcopy(manifest.body) for manifest in loaded.manifests]
    index = Index(loaded.manifests)
    for release in ("2.0", "2.1", "2.2", "2.3"):
        render(loaded.manifests[1], index.runtime_for(loaded.manifests[1]), parse_version(release))
        render(None, loaded.manifests[0], parse_version(release))
    assert [manifest.body for manifest in loaded.manifests] == before


def test_every_written_origin_holds_the_rendered_value() -> None:
    """On every upstream manifest, per release: a value the render says was written in an
    object is exactly what that object has at that key."""
    from tests.conftest import shared_or_skip
    from trainlint.document import dig

    corpus = shared_or_skip("corpus", "trainer")
    checked = 0
    for folder in sorted(corpus.iterdir()):
        manifests = [m for path in sorted(folder.glob("*.yaml"))
                     for m in load(path.read_text(), str(path)).manifests]
        index = Index(manifests)
        for release in ((2, 0), (2, 1), (2, 2), (2, 3)):
            for manifest in manifests:
                if manifest.kind == "TrainJob":
                    result = render(manifest, index.runtime_for(manifest), release)
                elif manifest.kind.endswith("TrainingRuntime"):
                    result = render(None, manifest, release)
                else:
                    continue
                for path, value in leaves(result.jobset):
                    origin = result.origin(path)
                    if origin.note is None and origin.manifest is not None:
                        assert dig(origin.manifest.body, *origin.path) == value, (path, origin)
                        checked += 1
    assert checked > 1000


def test_render_reports_an_unknown_runtime_and_renders_the_trainjob_alone(tmp_path: Path) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: alone}\n"
        "spec:\n  runtimeRef: {name: missing}\n  trainer:\n    env: [{name: CKPT_DIR, value: /c}]\n"
    )
    done = subprocess.run(["trainlint", "render", "--isolated", str(job)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert done.stderr == (
        f"{job}:5:3: TrainJob `alone`: its runtime is found neither among the inputs and "
        "context nor among the runtimes the release installs; only what the TrainJob says is "
        "rendered\n"
    )
    assert "value: /c  # TrainJob alone spec.trainer.env[0].value\n" in done.stdout
    missing = subprocess.run(["trainlint", "render", "--isolated", "--runtime", "x", str(job)],
                             capture_output=True, text=True, check=False)
    assert missing.returncode == 2
    assert "no runtime `x` among the inputs" in missing.stderr


def test_render_finds_the_runtime_in_the_context_or_among_those_the_release_installs(
    tmp_path: Path,
) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: tj}\n"
        "spec:\n  runtimeRef: {name: torch-distributed}\n"
    )
    bundled = subprocess.run(["trainlint", "render", "--isolated", str(job)],
                             capture_output=True, text=True, check=False)
    assert bundled.returncode == 0, bundled.stderr
    assert "# ClusterTrainingRuntime torch-distributed spec.template" in bundled.stdout
    alone = subprocess.run(
        ["trainlint", "render", "--isolated", "--no-bundled-runtimes", str(job)],
        capture_output=True, text=True, check=False,
    )
    assert alone.returncode == 1
    assert "ClusterTrainingRuntime" not in alone.stdout
    runtime = tmp_path / "context" / "runtime.yaml"
    runtime.parent.mkdir()
    runtime.write_text(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\n"
        "metadata: {name: torch-distributed}\nspec:\n  mlPolicy: {numNodes: 1, torch: {}}\n"
        "  template:\n    spec:\n      replicatedJobs:\n      - name: node\n        template:\n"
        "          metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}\n"
        "          spec:\n            template:\n              spec:\n                containers:\n"
        "                - {name: node, image: mine:1}\n"
    )
    context = subprocess.run(
        ["trainlint", "render", "--isolated", "--context", str(runtime.parent), str(job)],
        capture_output=True, text=True, check=False,
    )
    assert context.returncode == 0, context.stderr
    assert "image: mine:1  # ClusterTrainingRuntime torch-distributed" in context.stdout
    assert "tj" in context.stdout


def test_a_finding_on_a_rendered_pod_names_the_keys_of_other_objects_it_depends_on() -> None:
    """TL302 on a TrainJob: the PVC's access modes and the runtime's volume, where written."""
    from tests.conftest import lint_text

    text = """
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: ckpt, namespace: ml}
spec:
  accessModes: [ReadWriteOnce]
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainingRuntime
metadata: {name: torch, namespace: ml}
spec:
  mlPolicy: {torch: {}}
  template:
    spec:
      replicatedJobs:
        - name: node
          template:
            metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
            spec:
              template:
                spec:
                  containers: [{name: node, image: t, volumeMounts: [{name: ckpt, mountPath: /c}]}]
                  volumes: [{name: ckpt, persistentVolumeClaim: {claimName: ckpt}}]
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: run, namespace: ml}
spec:
  runtimeRef: {kind: TrainingRuntime, name: torch}
  trainer: {numNodes: 2}
"""
    [finding] = [f for f in lint_text(text) if f.code == "TL302"]
    assert finding.path == ("spec", "trainer", "numNodes")
    modes, volume = finding.related
    assert (modes.manifest.kind, modes.path) == ("PersistentVolumeClaim", ("spec", "accessModes"))
    assert volume.manifest.kind == "TrainingRuntime"
    assert volume.path == ("spec", "template", "spec", "replicatedJobs", 0, "template", "spec",
                           "template", "spec", "volumes", 0, "persistentVolumeClaim")


def test_the_tree_copies_what_it_changes_and_keeps_track_after_a_subtree_is_replaced() -> None:
    """What the tree keeps by path to build faster never outlives the value it found
    there: a replaced subtree, reordered items and a finished tree all stay right."""
    from trainlint.render.tree import Origin, Tree

    shared = {"a": {"b": [{"c": 1}, {"c": 2}]}}
    first, second, third = Origin(None, (), "one"), Origin(None, (), "two"), Origin(None, (), "3")
    tree = Tree(dict(shared), first)
    tree.put(("a", "b", 0, "c"), 10, second)
    assert shared == {"a": {"b": [{"c": 1}, {"c": 2}]}}  # shared data is never changed
    assert tree.get(("a", "b", 0, "c")) == 10
    tree.put(("a",), {"b": [{"c": 5}]}, third)  # replaces what was owned below
    tree.put(("a", "b", 0, "d"), 6, second)
    assert tree.root["a"] == {"b": [{"c": 5, "d": 6}]}
    assert tree.origin(("a", "b", 0, "c")) == third
    assert tree.origin(("a", "b", 0, "d")) == second
    tree.put(("a", "b", 1), {"c": 7}, first)
    tree.reorder(("a", "b"), [1, 0])
    tree.put(("a", "b", 0, "e"), 8, third)
    assert tree.root["a"]["b"] == [{"c": 7, "e": 8}, {"c": 5, "d": 6}]
    assert [tree.origin(("a", "b", index, "c")) for index in (0, 1)] == [first, third]
    assert tree.origin(("a", "b", 1, "d")) == second
    tree.put_items(("a", "b"), [(0, {"c": 9}, second), (2, {"c": 11}, first)])
    assert tree.root["a"]["b"] == [{"c": 9}, {"c": 5, "d": 6}, {"c": 11}]
    assert tree.origin(("a", "b", 0, "e")) == second
    tree.done()
    kept = tree.root["a"]["b"]
    tree.put(("a", "b", 1, "d"), 12, first)  # after `done`, a change copies
    assert kept[1] == {"c": 5, "d": 6}
    assert tree.get(("a", "b", 1, "d")) == 12
    assert tree.origin(("a", "b", 1, "d")) == first
    assert sorted(origin.note or "" for origin in tree.sources()) == sorted(
        ["one", "3", "two", "3", "one", "one"]  # root, a, b[0], b[1] and its d, b[2]
    )


def test_a_hostfile_stops_where_a_configmap_ends() -> None:
    """`numNodes: 99999999` is an int32 the CRD takes: the hostfile holds what a ConfigMap
    can (the API server refuses more), not a line per node, which filled the memory."""
    from trainlint.render.plugins import CONFIGMAP_BYTES

    [runtime] = load(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\n"
        "metadata: {name: mpi}\nspec:\n  mlPolicy: {numNodes: 1, mpi: {}}\n  template:\n"
        "    spec:\n      replicatedJobs:\n"
        "        - name: launcher\n          template:\n"
        "            metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}\n"
        "            spec: {template: {spec: {containers: [{name: node, image: mpi}]}}}\n"
        "        - name: node\n          template:\n"
        "            spec: {template: {spec: {containers: [{name: node, image: mpi}]}}}\n",
        "runtime.yaml",
    ).manifests
    [job] = load(
        "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: big}\n"
        "spec: {runtimeRef: {name: mpi}, trainer: {numNodes: 99999999}}\n", "job.yaml",
    ).manifests
    result = render(job, runtime, parse_version("2.3"))
    [hostfile] = [data["hostfile"] for kind, _, data, _ in result.extras if kind == "ConfigMap"]
    lines = hostfile.splitlines()
    assert lines[:2] == ["big-node-0-0.big slots=1", "big-node-0-1.big slots=1"]
    assert CONFIGMAP_BYTES - 40 < len(hostfile) <= CONFIGMAP_BYTES
