from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trainlint.document import Manifest, dig, mapping, mappings
from trainlint.engine.context import Context
from trainlint.kinds import RUNTIME_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render import INITIALIZERS
from trainlint.render.trainer import named, rendered, trainer_of
from trainlint.rule import rule


def _lasting(pod_spec: dict[str, Any], templates: set[str], mount_names: set[str]) -> set[str]:
    """What outlives the initializer pod among the mounted volumes: `pvc:<claim>` or
    `template:<name>`."""
    found = set()
    for name in mount_names:
        volume = named(pod_spec.get("volumes"), name)
        claim = dig(volume[1], "persistentVolumeClaim", "claimName") if volume else None
        if isinstance(claim, str):
            found.add(f"pvc:{claim}")
        elif volume is None and name in templates:
            found.add(f"template:{name}")
    return found


def _mounted(container: dict[str, Any]) -> set[str]:
    return {str(mount.get("name")) for _, mount in mappings(container.get("volumeMounts"))}


def _serves_a_cache(container: dict[str, Any]) -> bool:
    """The data-cache initializer starts a cache service the trainer streams from."""
    env = mappings(container.get("env"))
    return any(variable.get("name") == "CACHE_IMAGE" for _, variable in env)


@rule(
    "TL304", "initializer-output-not-shared",
    kinds=RUNTIME_KINDS, severity=Severity.WARNING,
    remediation=(
        "Mount one PVC (or volumeClaimPolicies template) in the initializer and the trainer."
    ),
)
def check(runtime: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags a dataset or model initializer whose container writes to no persistent volume
    (PVC or `volumeClaimPolicies` template) that the trainer job also mounts: an
    `emptyDir`, or no volume at all. The data-cache initializer (recognised by its
    `CACHE_IMAGE` variable) serves the dataset over the network and is left alone.

    ## Why is this bad?
    The initializer runs in its own pod. What it downloads onto a pod-local volume is
    gone when it completes, so the trainer starts without the dataset or the model and
    fails, or trains on whatever the image contains.

    ## When it stays silent
    On the data-cache initializer (it serves the dataset over the network), when an
    initializer writes to a PVC the trainer job mounts, and on runtimes without a
    trainer job.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainingRuntime
    metadata:
      name: torch-with-init
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          replicatedJobs:
            - name: dataset-initializer
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer
                spec:
                  template:
                    spec:
                      containers:
                        - name: dataset-initializer
                          image: ghcr.io/kubeflow/trainer/dataset-initializer
            - name: node
              dependsOn:
                - name: dataset-initializer
                  status: Complete
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
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainingRuntime
    metadata:
      name: torch-with-init
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          volumeClaimPolicies:
            - templates:
                - metadata:
                    name: initializer
                  spec:
                    accessModes: [ReadWriteOnce]
                    resources:
                      requests:
                        storage: 20Gi
          replicatedJobs:
            - name: dataset-initializer
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer
                spec:
                  template:
                    spec:
                      containers:
                        - name: dataset-initializer
                          image: ghcr.io/kubeflow/trainer/dataset-initializer
                          volumeMounts:
                            - name: initializer
                              mountPath: /workspace
            - name: node
              dependsOn:
                - name: dataset-initializer
                  status: Complete
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
                          volumeMounts:
                            - name: initializer
                              mountPath: /workspace
    ```
    """
    render = rendered(runtime, ctx)
    trainer = trainer_of(render)
    if trainer is None:
        return
    spec = render.jobset.get("spec")
    templates = {
        name for _, policy in mappings(mapping(spec).get("volumeClaimPolicies"))
        for _, template in mappings(policy.get("templates"))
        for name in [dig(template, "metadata", "name")] if isinstance(name, str)
    }
    trainer_mounts = {
        name for container in trainer.containers() for name in _mounted(container.body)
    }
    shared = _lasting(trainer.pod_spec, templates, trainer_mounts)
    for job in render.jobs:
        kind = job.ancestor if job.ancestor in INITIALIZERS else job.name
        if kind not in INITIALIZERS or job is trainer:
            continue
        container = job.container(str(kind))
        if container is None or _serves_a_cache(container.body):
            continue
        if _lasting(job.pod_spec, templates, _mounted(container.body)) & shared:
            continue
        yield Problem(
            container.origin().path,
            f"the `{kind}` container writes to no persistent volume that trainer job "
            f"`{trainer.name}` also mounts: what it downloads is lost with its pod, so "
            "the trainer never sees it",
        )
