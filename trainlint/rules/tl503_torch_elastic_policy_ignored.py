from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig, is_count, mapping
from trainlint.engine.context import Context
from trainlint.kinds import RUNTIME_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render.trainer import runtime_render
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
    node range is ignored, and its `maxRestarts` sets no JobSet restart (what restarts a
    failed run is the JobSet's `failurePolicy` and the Jobs' `backoffLimit`, as the
    finding says; with neither, the first failure ends it). v2.2 removes the field.

    ## When it stays silent
    From v2.2 (the field is gone: TL007 reports it), and beside `mlPolicy.numNodes`: the
    API server then refuses the runtime (TL010).

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
    policy = mapping(dig(runtime.body, "spec", "mlPolicy"))
    if "elasticPolicy" not in mapping(policy.get("torch")) or "numNodes" in policy:
        return
    yield Problem(
        ("spec", "mlPolicy", "torch", "elasticPolicy"),
        "`torch.elasticPolicy` is accepted but never implemented: the node range is "
        f"ignored and its `maxRestarts` restarts nothing ({_restarts(runtime, ctx)})",
    )


def _restarts(runtime: Manifest, ctx: Context) -> str:
    """What does restart a failed run of the runtime, as the render has it."""
    render = runtime_render(runtime, ctx)
    restarts = render.failure_policy.get(
        "maxRestarts")
    if is_count(restarts) and restarts > 0:
        return f"the JobSet's `failurePolicy.maxRestarts: {restarts}` restarts the run"
    trainer = render.trainer
    if trainer is not None:
        limit = trainer.spec.get("backoffLimit")
        if is_count(limit) and limit > 0:
            unset = trainer.origin("template", "spec", "backoffLimit").note is not None
            return (f"job `{trainer.name}` retries a failed pod up to {limit} times, its "
                    f"`backoffLimit`{' as Kubernetes defaults it' if unset else ''}")
    return "nothing restarts the run: its first failure ends it"
