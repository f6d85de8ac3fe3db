from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trainlint.document import Manifest, Path, dotted
from trainlint.engine import Context
from trainlint.rule import Problem, Severity, rule

# The shape of the parts of each object that rules read: `{...}` a mapping (with the
# shapes of its keys), `[shape]` a list of that shape, `str` a string.
Shape = dict[str, Any] | list[Any] | type
_MAP: dict[str, Any] = {}
_CONTAINER: dict[str, Shape] = {
    "env": [_MAP], "volumeMounts": [_MAP], "command": [str], "args": [str],
}
_POD_SPEC: dict[str, Shape] = {
    "containers": [_CONTAINER], "initContainers": [_CONTAINER], "volumes": [_MAP],
}
_POD_TEMPLATE: dict[str, Shape] = {"metadata": {"labels": _MAP}, "spec": _POD_SPEC}
_JOB_TEMPLATE: dict[str, Shape] = {
    "metadata": {"labels": _MAP}, "spec": {"template": _POD_TEMPLATE},
}
_JOBSET: dict[str, Shape] = {
    "failurePolicy": _MAP,
    "replicatedJobs": [{"template": _JOB_TEMPLATE}],
    "volumeClaimPolicies": [{"templates": [{"metadata": _MAP, "spec": _MAP}]}],
}
_RUNTIME: dict[str, Shape] = {
    "metadata": {"labels": _MAP},
    "spec": {"mlPolicy": _MAP, "template": {"metadata": {"labels": _MAP}, "spec": _JOBSET}},
}
_OVERRIDE = {"targetJobs": [_MAP], **_POD_SPEC}
_TRAINJOB: dict[str, Shape] = {
    "metadata": _MAP,
    "spec": {
        "runtimeRef": _MAP,
        "trainer": {"env": [_MAP], "command": [str], "args": [str], "resourcesPerNode": _MAP},
        "initializer": {"dataset": _MAP, "model": _MAP},
        "podSpecOverrides": [_OVERRIDE],
        "podTemplateOverrides": [{"targetJobs": [_MAP], "metadata": _MAP, "spec": _POD_SPEC}],
        "runtimePatches": [
            {"trainingRuntimeSpec": {"template": {"metadata": _MAP, "spec": {
                "replicatedJobs": [{"template": _JOB_TEMPLATE}],
            }}}}
        ],
    },
}
SHAPES: dict[str, dict[str, Shape]] = {
    "TrainJob": _TRAINJOB,
    "TrainingRuntime": _RUNTIME,
    "ClusterTrainingRuntime": _RUNTIME,
    "PersistentVolumeClaim": {"metadata": _MAP, "spec": {"accessModes": [str]}},
}
_NAMES = {
    dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "a number",
    float: "a number",
}


@rule(
    "TL005", "wrong-type", kinds=set(SHAPES), severity=Severity.ERROR,
    fix="Write the field with the type the API expects.",
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Checks that the structural fields of TrainJobs, runtimes and PVCs (`spec`, the
    replicatedJobs and their templates, containers, env, volumes, overrides and patches)
    are mappings, lists or strings where the API expects them, including `null` values.

    ## Why is this bad?
    The API server rejects a field of the wrong type (`spec.trainer.env: Invalid type`)
    and drops a `null` one as if it were not written, so `spec: null` is a TrainJob with
    no spec. The other rules cannot read such a field either.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef:
        name: torch-ckpt
      trainer:
        env:
          CKPT_DIR: /mnt/ckpt
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef:
        name: torch-ckpt
      trainer:
        env:
          - name: CKPT_DIR
            value: /mnt/ckpt
    ```
    """
    yield from _walk(manifest.body, SHAPES[manifest.kind], ())


def _walk(value: Any, shape: Shape, path: Path) -> Iterator[Problem]:
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            yield _problem(value, dict, path)
            return
        for key, inner in shape.items():
            if key in value:
                yield from _walk(value[key], inner, (*path, key))
    elif isinstance(shape, list):
        if not isinstance(value, list):
            yield _problem(value, list, path)
            return
        for index, item in enumerate(value):
            yield from _walk(item, shape[0], (*path, index))
    elif not isinstance(value, shape):
        yield _problem(value, shape, path)


def _problem(value: Any, expected: type, path: Path) -> Problem:
    where = dotted(path)
    if value is None:
        return Problem(
            path,
            f"`{where}` is null, not {_NAMES[expected]}: the API server drops it as if it "
            "were not written",
        )
    found = _NAMES.get(type(value), f"a {type(value).__name__}")
    return Problem(
        path,
        f"`{where}` must be {_NAMES[expected]}, not {found}: the API server rejects the object",
    )

