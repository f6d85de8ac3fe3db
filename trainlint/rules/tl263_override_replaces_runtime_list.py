from __future__ import annotations

import json
from collections.abc import Iterator

from trainlint.document import Manifest, dotted
from trainlint.engine.context import Context
from trainlint.problem import Problem, Severity
from trainlint.render import JOBS, POD_SPEC
from trainlint.render.trainer import rendered
from trainlint.rule import rule

#: What a lost item of a replaced list means for the pods, by the list's key.
CONSEQUENCES = {
    "tolerations": "the pods no longer tolerate that taint and stay Pending on nodes that "
    "carry it",
    "nodeSelectorTerms": "the pods no longer require that node term",
    "requiredDuringSchedulingIgnoredDuringExecution": "the pods lose that scheduling rule",
    "preferredDuringSchedulingIgnoredDuringExecution": "the pods lose that scheduling "
    "preference",
}


@rule(
    "TL263", "override-replaces-runtime-list",
    kinds={"TrainJob"}, severity=Severity.WARNING,
    remediation=(
        "Repeat the runtime's items in the override or patch, or set the list in the runtime."
    ),
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags a list in the TrainJob's `podSpecOverrides` (v2.0), `podTemplateOverrides`
    (v2.1) or `runtimePatches` (v2.2+) that replaces, rather than merges with, the list
    the runtime sets, and drops items of it: `tolerations`, the terms of `affinity`, and
    any other list Kubernetes merges whole.

    ## Why is this bad?
    The controller lays the overrides over the runtime with a strategic merge patch.
    Lists with a merge key (`containers`, `volumes`, `env`) merge item by item, but
    `tolerations` and the affinity terms are atomic: the TrainJob's list replaces the
    runtime's whole. A TrainJob that adds one toleration silently drops the runtime's
    GPU toleration, and its pods stay Pending on the GPU nodes.

    ## When it stays silent
    When the TrainJob's list keeps every item of the runtime's (it repeats them), when
    the runtime sets no such list, and when the runtime is not among the checked files.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-gpu
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
                      tolerations:
                        - key: nvidia.com/gpu
                          operator: Exists
                          effect: NoSchedule
                      containers:
                        - name: node
                          image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: run
    spec:
      runtimeRef:
        name: torch-gpu
      runtimePatches:
        - manager: example.com/queues
          trainingRuntimeSpec:
            template:
              spec:
                replicatedJobs:
                  - name: node
                    template:
                      spec:
                        template:
                          spec:
                            tolerations:
                              - key: example.com/spot
                                operator: Exists
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-gpu
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
                      tolerations:
                        - key: nvidia.com/gpu
                          operator: Exists
                          effect: NoSchedule
                      containers:
                        - name: node
                          image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: run
    spec:
      runtimeRef:
        name: torch-gpu
      runtimePatches:
        - manager: example.com/queues
          trainingRuntimeSpec:
            template:
              spec:
                replicatedJobs:
                  - name: node
                    template:
                      spec:
                        template:
                          spec:
                            tolerations:
                              - key: nvidia.com/gpu
                                operator: Exists
                                effect: NoSchedule
                              - key: example.com/spot
                                operator: Exists
    ```
    """
    render = rendered(job, ctx)
    if not render.complete:
        return
    for path, old, old_at in render.tree.replaced:
        new = render.tree.get(path)
        at = render.origin(path)
        if old_at.manifest is job or at.manifest is not job or not isinstance(new, list):
            continue  # a list the TrainJob replaced with its own
        lost = [item for item in old if item not in new]
        if not lost:
            continue
        key = str(path[-1])
        job_name = _job_name(render.jobset, path)
        consequence = CONSEQUENCES.get(key, "the pods lose what it set")
        yield Problem(
            at.path,
            f"`{dotted(path[len(JOBS) + 1 + len(POD_SPEC):]) or key}` here replaces the "
            f"list {render.runtime.describe() if render.runtime else 'the runtime'} sets on "
            f"job `{job_name}` (Kubernetes merges it whole, not item by item): "
            f"{_shown(lost[0])}{' and more' if len(lost) > 1 else ''} is dropped, so "
            f"{consequence}",
            remediation=f"repeat the runtime's `{key}` items in this list",
        )


def _job_name(jobset: dict[str, object], path: tuple[str | int, ...]) -> str:
    jobs = jobset.get("spec")
    index = path[len(JOBS)] if len(path) > len(JOBS) else None
    if isinstance(jobs, dict) and isinstance(index, int):
        listed = jobs.get("replicatedJobs")
        if isinstance(listed, list) and 0 <= index < len(listed):
            item = listed[index]
            if isinstance(item, dict):
                return str(item.get("name"))
    return "?"


def _shown(item: object) -> str:
    return f"`{json.dumps(item, separators=(', ', ': '))}`"
