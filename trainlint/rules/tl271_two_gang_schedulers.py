from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig, mapping
from trainlint.engine.context import Context
from trainlint.kinds import RUNTIME_KINDS
from trainlint.problem import Problem, Severity
from trainlint.rule import rule


@rule(
    "TL271", "two-gang-schedulers",
    kinds=RUNTIME_KINDS, severity=Severity.WARNING, since="2.1",
    remediation="Keep one of `podGroupPolicy.coscheduling` and `podGroupPolicy.volcano`.",
)
def check(runtime: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags a `podGroupPolicy` that configures both `coscheduling` and `volcano`.

    ## Why is this bad?
    Nothing makes the two exclusive: the controller builds a PodGroup for each plugin,
    while a pod follows only one scheduler. One PodGroup is dead weight, and which one
    gangs the pods depends on the `schedulerName` alone.

    ## When it stays silent
    On a policy with one of the two schedulers.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-gang
    spec:
      mlPolicy:
        torch: {}
      podGroupPolicy:
        coscheduling:
          scheduleTimeoutSeconds: 120
        volcano: {}
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
                      schedulerName: volcano
                      containers:
                        - name: node
                          image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-gang
    spec:
      mlPolicy:
        torch: {}
      podGroupPolicy:
        volcano: {}
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
                      schedulerName: volcano
                      containers:
                        - name: node
                          image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
    ```
    """
    policy = mapping(dig(runtime.body, "spec", "podGroupPolicy"))
    if "coscheduling" in policy and "volcano" in policy:
        yield Problem(
            ("spec", "podGroupPolicy", "volcano"),
            "`podGroupPolicy` sets both `coscheduling` and `volcano`: the controller creates "
            "two PodGroups for the same pods, but the pods follow one scheduler only",
        )
