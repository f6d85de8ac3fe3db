from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig, mapping
from trainlint.engine.context import Context
from trainlint.kinds import RUNTIME_KINDS
from trainlint.problem import Problem, Severity
from trainlint.rule import rule


@rule(
    "TL503", "torch-elastic-policy-ignored",
    kinds=RUNTIME_KINDS, severity=Severity.WARNING, until="2.1",
    remediation=(
        "Remove `elasticPolicy`; use `numNodes` and the JobSet `failurePolicy.maxRestarts`."
    ),
)
def check(runtime: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Up to v2.1, flags `mlPolicy.torch.elasticPolicy`.

    ## Why is this bad?
    The API accepts it but no controller code reads it: training is not elastic, the
    node range is ignored, and its `maxRestarts` does not set any JobSet restart (the
    first failure still ends the run). v2.2 removes the field.

    ## When it stays silent
    From v2.2 (the field is gone: TL007 reports it).

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-elastic
    spec:
      mlPolicy:
        torch:
          elasticPolicy:
            minNodes: 1
            maxNodes: 4
            maxRestarts: 3
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
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-elastic
    spec:
      mlPolicy:
        numNodes: 2
        torch: {}
      template:
        spec:
          failurePolicy:
            maxRestarts: 3
          replicatedJobs:
            - name: node
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: trainer
                spec:
                  backoffLimit: 0
                  template:
                    spec:
                      containers:
                        - name: node
                          image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
    ```
    """
    if "elasticPolicy" in mapping(dig(runtime.body, "spec", "mlPolicy", "torch")):
        yield Problem(
            ("spec", "mlPolicy", "torch", "elasticPolicy"),
            "`torch.elasticPolicy` is accepted but never implemented: the node range is "
            "ignored and its `maxRestarts` restarts nothing, so the first failure ends the run",
        )
