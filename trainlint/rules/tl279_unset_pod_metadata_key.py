from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from typing import Any

from trainlint.document import Manifest, mapping
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Problem, Severity
from trainlint.release import format_version
from trainlint.render import JOBSET_KEYS, Container
from trainlint.render.trainer import rendered
from trainlint.render.tree import on_checked
from trainlint.rule import rule

#: A variable taken from the pod's own labels or annotations (the Downward API), by a key
#: with a name after its prefix (one without is no key: the API server refuses the pod).
_FIELD = re.compile(r"metadata\.(labels|annotations)\['([^'/]+/[^'/]+)'\]")
#: The domains whose keys only their controllers set: Trainer puts none of its own on pods
#: (v2.0 to v2.3: its labels are `pkg/constants`' ancestor and support labels, read from
#: runtimes; the pod labels it adds are the gang schedulers'), JobSet the keys below.
TRAINER_DOMAIN = "trainer.kubeflow.org/"
JOBSET_DOMAINS = ("jobset.sigs.k8s.io/", "alpha.jobset.sigs.k8s.io/")
#: The JobSet key that holds what a Trainer key is taken for: the JobSet is named after
#: its TrainJob.
_MEANT = {"trainer.kubeflow.org/trainjob-name": "jobset.sigs.k8s.io/jobset-name"}


@rule(
    "TL279", "unset-pod-metadata-key",
    kinds=TRAINER_KINDS, severity=Severity.WARNING,
    remediation=(
        "Read a key the pod has (`jobset.sigs.k8s.io/jobset-name` holds the TrainJob's "
        "name, `jobset.sigs.k8s.io/job-index` the Job's index), or set the label in the pod "
        "template."
    ),
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Renders the JobSet the controller builds (see `trainlint render`) and flags a
    container variable taken from the pod's own labels or annotations (`valueFrom.fieldRef`
    with `metadata.labels['...']` or `metadata.annotations['...']`) when the key is in
    Trainer's or JobSet's domain and nothing puts it on the pod: not the pod template
    (runtime, overrides and patches included), not the Trainer, which puts no key of its
    own domain on pods, and not JobSet, whose keys are known
    (`jobset.sigs.k8s.io/jobset-name`, `job-index`, `job-global-index`...).

    ## Why is this bad?
    The Downward API gives an empty string for a key the pod does not have: no error, no
    event. `TRAINJOB_NAME` read from a `trainer.kubeflow.org/trainjob-name` label (a key
    no Trainer release sets) is empty, and so is a `MASTER_ADDR` read from an annotation
    nothing writes; the program then names files, hosts or runs after nothing, or fails
    far from the cause.

    ## When it stays silent
    On keys of other domains (admission webhooks, schedulers and queues add their own),
    on a key written in a label or annotation anywhere in the object or its runtime, and
    on a TrainJob whose runtime is not among the checked files. A runtime that TrainJobs
    of the run use is judged on each of them (a patch may label their pods), at its
    `runtimeRef`.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-cache
    spec:
      mlPolicy:
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
                          env:
                            - name: TRAINJOB_NAME
                              valueFrom:
                                fieldRef:
                                  fieldPath: metadata.labels['trainer.kubeflow.org/trainjob-name']
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-cache
    spec:
      mlPolicy:
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
                          env:
                            - name: TRAINJOB_NAME
                              valueFrom:
                                fieldRef:
                                  fieldPath: metadata.labels['jobset.sigs.k8s.io/jobset-name']
    ```
    """
    render = rendered(manifest, ctx)
    if not render.complete:
        return
    written: set[str] | None = None
    for container in render.every_container():
        for index, variable in container.env.values():  # made once a render, shared
            if "valueFrom" not in variable:
                continue  # nearly every variable
            found = _FIELD.fullmatch(str(_field_path(variable)))
            if found is None or not found[2].startswith((TRAINER_DOMAIN, *JOBSET_DOMAINS)):
                continue
            where, key = found[1], found[2]
            if key in JOBSET_KEYS:
                continue
            if written is None:  # most objects read no such key: looked for only here
                written = _written_keys(render.job, render.runtime)
            if key in written:
                continue
            if render.job is None and ctx.trainjobs_using(manifest):
                return  # judged on each TrainJob of it (a patch may label its pods); looked
                # up only here: a runtime's findings then follow its TrainJobs' changes
            origin = container.origin("env", index, "valueFrom", "fieldRef", "fieldPath")
            message = _message(container, variable.get("name"), where, key, ctx.trainer_version)
            yield from on_checked(manifest, render.job, (origin,), message,
                                  "the runtime's variable")


def _field_path(variable: dict[str, Any]) -> object:
    return mapping(mapping(variable.get("valueFrom")).get("fieldRef")).get("fieldPath")


def _written_keys(*objects: Manifest | None) -> set[str]:
    """Every key of a `labels` or `annotations` mapping anywhere in the objects: a pod
    template, a patch's metadata, or somewhere a later release may copy to the pod."""
    found: set[str] = set()
    stack: list[Any] = [item.body for item in objects if item is not None]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                if key in ("labels", "annotations") and isinstance(item, dict):
                    found.update(str(name) for name in item)
                stack.append(item)
        elif isinstance(value, list):
            stack.extend(value)
    return found


def _message(
    container: Container, name: object, where: str, key: str, version: tuple[int, int]
) -> str:
    noun = "label" if where == "labels" else "annotation"
    release = f"Trainer {format_version(version)}"
    if key.startswith(TRAINER_DOMAIN):
        setter = f"not {release}, which puts no `{TRAINER_DOMAIN}` key on pods, nor JobSet"
    else:
        setter = f"and JobSet (the release {release} installs) has no such key"
    if key in _MEANT:
        hint = f"; `{_MEANT[key]}` holds the TrainJob's name (the JobSet is named after it)"
    else:
        close = difflib.get_close_matches(key, sorted(JOBSET_KEYS), n=1, cutoff=0.8)
        hint = f"; did you mean `{close[0]}`?" if close else ""
    return (f"`{name}` ({container.noun} `{container.name}` of job `{container.job.name}`) "
            f"reads the pod's {noun} `{key}`, which nothing puts on the pod (not its "
            f"template, {setter}): the variable is empty{hint}")
