from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig, mapping
from trainlint.engine.context import Context
from trainlint.problem import Problem, Severity
from trainlint.render.trainer import trainer_container
from trainlint.rule import rule


@rule(
    "TL257", "partial-resources-per-node",
    kinds={"TrainJob"}, severity=Severity.WARNING, until="2.2",
    remediation="Repeat the runtime's cpu and memory in `resourcesPerNode`, or upgrade to v2.3+.",
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Up to v2.2, flags `spec.trainer.resourcesPerNode` that leaves out requests or limits
    the runtime's trainer container sets (typically a GPU limit without cpu and memory).

    ## Why is this bad?
    Up to v2.2 `resourcesPerNode` **replaces** the container's whole `resources` block
    (v2.3 merges it per key). The runtime's cpu and memory requests and limits vanish
    without a word: the pods lose their guaranteed cpu and memory, or their limits.

    ## When it stays silent
    From v2.3 (resources merge per key), when the TrainJob repeats every resource the
    runtime sets, and when the runtime is not among the checked files.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-sized
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
                          resources:
                            requests: {cpu: "8", memory: 64Gi}
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: run
    spec:
      runtimeRef:
        name: torch-sized
      trainer:
        resourcesPerNode:
          limits:
            nvidia.com/gpu: 1
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: run
    spec:
      runtimeRef:
        name: torch-sized
      trainer:
        resourcesPerNode:
          requests: {cpu: "8", memory: 64Gi}
          limits:
            nvidia.com/gpu: 1
    ```
    """
    runtime = ctx.runtime_for(job)
    given = dig(job.body, "spec", "trainer", "resourcesPerNode")
    if runtime is None or not isinstance(given, dict):
        return
    found = trainer_container(runtime)
    own = mapping(found[1].get("resources")) if found else {}
    erased = [
        f"{part}.{name}"
        for part in ("requests", "limits")
        for name in mapping(own.get(part))
        if name not in mapping(given.get(part))
    ]
    if erased:
        yield Problem(
            ("spec", "trainer", "resourcesPerNode"),
            f"`resourcesPerNode` replaces the trainer container's resources up to v2.2: "
            f"{', '.join(erased)} set by {runtime.describe()} are silently erased",
        )
