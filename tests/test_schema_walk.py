"""The schema walk: it agrees with jsonschema on Kubernetes types, and no shape of input
makes it raise."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import lint_text
from trainlint.config.defaults import DEFAULT_KUBERNETES_VERSION
from trainlint.config.settings import Settings
from trainlint.model import k8s
from trainlint.model.check import Issue, _Walker
from trainlint.release import RELEASES

POD_TEMPLATE = "io.k8s.api.core.v1.PodTemplateSpec"
SCHEMA_RULES = ("TL005", "TL006", "TL007", "TL008", "TL009", "TL010", "TL011")


def pod_template() -> dict[str, Any]:
    """A trainer pod template as runtimes carry it."""
    container = {
        "name": "node", "image": "pytorch/pytorch:2.7.1", "command": ["torchrun", "train.py"],
        "ports": [{"containerPort": 29500, "protocol": "TCP"}],
        "resources": {"limits": {"nvidia.com/gpu": 8, "memory": "64Gi"}},
        "volumeMounts": [{"name": "ckpt", "mountPath": "/ckpt"}],
    }
    volume = {"name": "ckpt", "persistentVolumeClaim": {"claimName": "ckpt"}}
    return {"metadata": {"labels": {"app": "sft"}},
            "spec": {"containers": [container], "volumes": [volume]}}


def mutations() -> list[dict[str, Any]]:
    """A valid pod template and variants, each with one kind of mistake."""
    edits: list[Callable[[dict[str, Any]], object]] = [
        lambda t: t,
        lambda t: t["spec"]["containers"][0].update(imagee="x"),
        lambda t: t["spec"]["containers"][0]["ports"][0].update(containerPort="29500"),
        lambda t: t["spec"]["containers"][0].update(command="torchrun"),
        lambda t: t["spec"]["containers"][0].pop("name"),
        lambda t: t["spec"].update(restartPolicy=None),
        lambda t: t["spec"]["volumes"][0].update(persistentVolumeClaim={"claimName": 3}),
        lambda t: t["spec"]["containers"][0]["resources"]["limits"].update(cpu=1.5),
        lambda t: t["spec"].update(containers={"name": "node"}),
        lambda t: t["spec"].update(hostNetwork="true"),
    ]
    variants = []
    for edit in edits:
        template = copy.deepcopy(pod_template())
        edit(template)
        variants.append(template)
    return variants


@pytest.mark.parametrize("version", k8s.versions())
def test_each_definition_read_alone_is_the_whole_files(version: str) -> None:
    """The definitions a run needs are parsed alone, from where the index of the mapped
    file puts them: in every installed version, each is the one the whole file holds, and
    the index finds every one."""
    definitions = k8s._definitions(version)
    found = k8s._places(version)
    assert found is not None and set(found[1]) == set(definitions)
    assert all(k8s._read(version, name) == value for name, value in definitions.items())


def test_walk_agrees_with_jsonschema_on_pod_templates() -> None:
    import jsonschema  # type: ignore[import-untyped]  # no stubs; a kubernetes-validate dependency

    version = k8s.resolve_version(DEFAULT_KUBERNETES_VERSION)
    definitions = k8s._definitions(version)
    validator = jsonschema.Draft202012Validator(
        {"$defs": definitions, "$ref": f"#/$defs/{POD_TEMPLATE}"}
    )
    node = k8s.converter(version).definition(POD_TEMPLATE, embedded=False)
    verdicts = []
    for template in mutations():
        found: list[Issue] = []
        _Walker("Pod", RELEASES[-1], version, found).walk(template, node, [], core=True)
        verdicts.append((not found, validator.is_valid(template)))
    assert verdicts[0] == (True, True)
    assert [ours for ours, _ in verdicts] == [theirs for _, theirs in verdicts]
    assert sum(ours for ours, _ in verdicts) == 3  # the valid one, a null and a float limit


HOSTILE_SPECS = ["null", "[]", "[a, b]", "'spec'", "4", "{template: []}", "{mlPolicy: 3}",
                 "{runtimeRef: [x]}", "{trainer: {numNodes: '4', env: {A: b}}}",
                 "{template: {spec: {replicatedJobs: {node: {}}}}}",
                 "{template: {spec: {replicatedJobs: [null, 3, {template: []}]}}}",
                 "{runtimePatches: [{trainingRuntimeSpec: {template: {spec: "
                 "{replicatedJobs: [{template: {spec: {template: {spec: []}}}}]}}}}]}"]


@pytest.mark.parametrize("kind", ["TrainJob", "TrainingRuntime", "PersistentVolumeClaim"])
@pytest.mark.parametrize("spec", HOSTILE_SPECS)
def test_hostile_shapes_yield_findings_not_crashes(kind: str, spec: str) -> None:
    api = "v1" if kind == "PersistentVolumeClaim" else "trainer.kubeflow.org/v1alpha1"
    text = f"apiVersion: {api}\nkind: {kind}\nmetadata: {{name: x}}\nspec: {spec}\n"
    for release in RELEASES:
        findings = lint_text(text, Settings(trainer_version=release, select=SCHEMA_RULES))
        # Kubernetes' own schemas allow null for optional fields; the CRDs prune it.
        nullable = kind == "PersistentVolumeClaim" and spec == "null"
        assert bool(findings) != nullable, (release, text)
        assert all(finding.span.line >= 4 for finding in findings)


def test_tl201_names_as_dropped_exactly_the_fields_of_the_trainer_api() -> None:
    """TL201 lists what the controller drops; a key outside the API is TL006's typo."""
    from trainlint.model.trainjob import Trainer
    from trainlint.options import kebab
    from trainlint.rules.tl201_trainer_job_missing_ancestor_label import TRAINER_FIELDS

    camel = {
        "".join(part.capitalize() if index else part
                for index, part in enumerate(kebab(name).split("-")))
        for name in Trainer.model_fields
    }
    assert camel == set(TRAINER_FIELDS)


#: A runtime with no trainer label, and three TrainJobs of it that set `spec.trainer`.
RUNTIME_AND_JOBS = "\n---\n".join([
    "{apiVersion: trainer.kubeflow.org/v1alpha1, kind: ClusterTrainingRuntime,"
    " metadata: {name: plain}, spec: {template: {spec: {replicatedJobs: [{name: node,"
    " template: {spec: {template: {spec: {containers: [{name: node, image: busybox}]}}}}}]}}}}",
    *(f"{{apiVersion: trainer.kubeflow.org/v1alpha1, kind: TrainJob, metadata: {{name: j{index}}},"
      " spec: {runtimeRef: {name: plain}, trainer: {image: busybox}}}" for index in range(3)),
])


def test_each_object_is_walked_once_per_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """The TrainJobs of a runtime ask for the runtime's schema issues too (TL201): they
    are kept with the runtime, not walked again for each TrainJob."""
    from trainlint.model import check

    walked: list[str] = []
    real = check.root

    def root(kind: str, *rest: Any) -> Any:
        walked.append(kind)
        return real(kind, *rest)

    monkeypatch.setattr(check, "root", root)
    findings = lint_text(RUNTIME_AND_JOBS)
    assert "TL201" in {finding.code for finding in findings}
    assert sorted(walked) == ["ClusterTrainingRuntime", "TrainJob", "TrainJob", "TrainJob"]
