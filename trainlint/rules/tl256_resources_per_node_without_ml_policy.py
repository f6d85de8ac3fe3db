from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig, mapping, says_nothing
from trainlint.engine.context import Context
from trainlint.problem import Problem, Severity
from trainlint.rule import rule


@rule(
    "TL256", "resources-per-node-without-ml-policy",
    kinds={"TrainJob"}, severity=Severity.ERROR, since="2.3",
    remediation="Add an `mlPolicy` to the runtime, or set the resources in the runtime itself.",
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags `spec.trainer.resourcesPerNode` on a TrainJob whose runtime has no `mlPolicy`
    (from v2.3).

    ## Why is this bad?
    From v2.3 the controller applies `resourcesPerNode` while it reads the runtime's ML
    policy; a runtime without `mlPolicy` skips that step, and the resources are dropped
    with no error: the pods run with the runtime's resources, often without GPUs.

    ## When it stays silent
    On runtimes with an `mlPolicy`, on TrainJobs without `resourcesPerNode` or with an
    empty one (`{}`: nothing to drop), before v2.3, and when the runtime is not among the
    checked files.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: plain
    spec:
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
                          image: python:3.12
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: run
    spec:
      runtimeRef:
        name: plain
      trainer:
        resourcesPerNode:
          limits:
            nvidia.com/gpu: 1
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: plain
    spec:
      mlPolicy:
        numNodes: 1
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
                          image: python:3.12
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: run
    spec:
      runtimeRef:
        name: plain
      trainer:
        resourcesPerNode:
          limits:
            nvidia.com/gpu: 1
    ```
    """
    runtime = ctx.runtime_for(job)
    trainer = mapping(dig(job.body, "spec", "trainer"))
    if runtime is None or says_nothing(trainer.get("resourcesPerNode")):
        return
    if "mlPolicy" in mapping(runtime.body.get("spec")):
        return
    yield Problem(
        ("spec", "trainer", "resourcesPerNode"),
        f"{runtime.describe()} has no `mlPolicy`, so from v2.3 the controller silently drops "
        "`resourcesPerNode`: the pods run with the runtime's own resources",
    )
