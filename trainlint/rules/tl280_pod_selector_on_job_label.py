from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trainlint.document import Manifest, mapping, mappings, sequence
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render import JOBSET_KEYS, POD_SPEC, Job, Render
from trainlint.render.trainer import rendered
from trainlint.render.tree import Origin, on_checked
from trainlint.rule import rule

#: The pod's scheduling terms that select other pods by label, and what missing every pod
#: does to each: (path from the pod spec to the list, key of the term in an item, effect).
_TERMS: tuple[tuple[tuple[str, ...], tuple[str, ...], str], ...] = (
    (("affinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution"), (),
     "keeps no two of its pods apart: several may be placed in one `{topology}`"),
    (("affinity", "podAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution"),
     ("podAffinityTerm",), "keeps no two of its pods apart: several may be placed in one "
     "`{topology}`"),
    (("affinity", "podAffinity", "requiredDuringSchedulingIgnoredDuringExecution"), (),
     "holds its pods Pending unless another pod of the namespace carries the label: the "
     "scheduler lets the first pod of a group through only when it matches its own term"),
    (("affinity", "podAffinity", "preferredDuringSchedulingIgnoredDuringExecution"),
     ("podAffinityTerm",), "brings none of its pods together"),
    (("topologySpreadConstraints",), (),
     "counts none of its pods: they are not spread across `{topology}`"),
)


@rule(
    "TL280", "pod-selector-on-job-label",
    kinds=TRAINER_KINDS, severity=Severity.WARNING,
    remediation=(
        "Put the label on the pod template (`template.spec.template.metadata.labels`), or "
        "select by a label JobSet puts on every pod (`jobset.sigs.k8s.io/jobset-name`, "
        "`jobset.sigs.k8s.io/replicatedjob-name`)."
    ),
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Renders the JobSet the controller builds (see `trainlint render`) and flags a pod
    affinity or anti-affinity term, or a topology spread constraint, whose `labelSelector`
    requires a label (`key: value`, `In` or `Exists`) that a replicatedJob's Job template
    carries (`replicatedJobs[].template.metadata.labels`, where Trainer's runtimes write
    `trainer.kubeflow.org/trainjob-ancestor-step`) and no pod template of the JobSet does.

    ## Why is this bad?
    JobSet (v0.8 to v0.12, the releases Trainer v2.0 to v2.3 install) gives a Job the
    labels of its template and its pods those of the pod template, with its own keys
    added to both; the Job controller copies no label of the Job to its pods. A selector
    on a Job's label matches none of the TrainJob's pods, and the scheduler says nothing:
    an anti-affinity meant to place one pod per node keeps nothing apart (two pods share
    a node, its GPUs or its network), a spread constraint spreads nothing, and a required
    affinity leaves the pods Pending.

    ## When it stays silent
    On a selector that any pod template of the JobSet satisfies (runtime, overrides and
    patches included), on keys JobSet puts on pods itself, on `NotIn` and `DoesNotExist`
    (which every pod without the label matches), on a term that looks in other
    namespaces (`namespaces`, `namespaceSelector`), on a label no Job template carries
    (it may be another workload's), and on a TrainJob whose runtime is not among the
    checked files. A runtime that TrainJobs of the run use is judged on each of them (a
    patch may label their pods), at its `runtimeRef`.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-spread
    spec:
      mlPolicy:
        numNodes: 2
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
                      affinity:
                        podAntiAffinity:
                          requiredDuringSchedulingIgnoredDuringExecution:
                            - labelSelector:
                                matchLabels:
                                  trainer.kubeflow.org/trainjob-ancestor-step: trainer
                              topologyKey: kubernetes.io/hostname
                      containers:
                        - name: node
                          image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-spread
    spec:
      mlPolicy:
        numNodes: 2
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
                      affinity:
                        podAntiAffinity:
                          requiredDuringSchedulingIgnoredDuringExecution:
                            - labelSelector:
                                matchLabels:
                                  jobset.sigs.k8s.io/replicatedjob-name: node
                              topologyKey: kubernetes.io/hostname
                      containers:
                        - name: node
                          image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
    ```
    """
    render = rendered(manifest, ctx)
    if not render.complete:
        return
    job_labels = _job_labels(render)
    if not job_labels:
        return  # nearly every runtime: its Jobs carry the ancestor label only, unselected
    pod_labels: list[dict[str, Any]] | None = None
    for job in render.jobs:
        for origin, term, key, topology, effect in _terms(job):
            if key not in job_labels or key in JOBSET_KEYS:
                continue
            if pod_labels is None:
                pod_labels = [item.pod_labels for item in render.jobs]
            if any(_matches(term, labels) for labels in pod_labels):
                continue
            if render.job is None and ctx.trainjobs_using(manifest):
                return  # judged on each TrainJob of it (a patch may label its pods)
            message = (
                f"the pods of job `{job.name}` select pods by the label `{key}`, which "
                f"the JobSet puts only on its Jobs (a replicatedJob's "
                f"`template.metadata.labels`), never on their pods: the term matches none "
                f"of the TrainJob's pods and {effect.format(topology=topology)}"
            )
            yield from on_checked(manifest, render.job, (origin,), message,
                                  "the runtime's term")


def _job_labels(render: Render) -> set[str]:
    """The label keys of the JobSet's Job templates."""
    return {str(key) for job in render.jobs for key in job.labels}


def _terms(job: Job) -> Iterator[tuple[Origin, dict[str, Any], str, str, str]]:
    """Each label a scheduling term of the job's pods requires, with where it is
    written, the term's selector, its topology key and what a selector matching no pod
    does."""
    for path, inner, effect in _TERMS:
        listed: Any = job.pod_spec
        for key in path:
            listed = mapping(listed).get(key)
        for index, item in mappings(listed):
            term = mapping(item.get(inner[0])) if inner else item
            if term.get("namespaces") or "namespaceSelector" in term:
                continue
            selector = mapping(term.get("labelSelector"))
            topology = str(term.get("topologyKey", ""))
            at: tuple[str | int, ...] = (*path, index, *inner, "labelSelector")
            for label in mapping(selector.get("matchLabels")):
                yield (job.origin(*POD_SPEC, *at, "matchLabels", label), selector, str(label),
                       topology, effect)
            for position, expression in mappings(selector.get("matchExpressions")):
                if expression.get("operator") in ("In", "Exists"):
                    yield (job.origin(*POD_SPEC, *at, "matchExpressions", position, "key"),
                           selector, str(expression.get("key")), topology, effect)


def _matches(selector: dict[str, Any], labels: dict[str, Any]) -> bool:
    """Whether pod labels satisfy a label selector (each of its requirements)."""
    for key, value in mapping(selector.get("matchLabels")).items():
        if key not in labels or str(labels[key]) != str(value):
            return False
    for _, expression in mappings(selector.get("matchExpressions")):
        name, operator = str(expression.get("key")), expression.get("operator")
        values = [str(value) for value in sequence(expression.get("values"))]
        present = name in labels
        if operator == "In" and not (present and str(labels[name]) in values):
            return False
        if operator == "NotIn" and present and str(labels[name]) in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True
