from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from trainlint.document import Manifest, is_count
from trainlint.engine.context import Context
from trainlint.kinds import RUNTIME_KINDS
from trainlint.options import RuleOptions, check_range
from trainlint.problem import Problem, Severity
from trainlint.render import FAILURE_POLICY
from trainlint.render.trainer import runtime_render
from trainlint.rule import rule


@dataclass(frozen=True)
class MaxRestartsOptions(RuleOptions):
    #: The most JobSet restarts a run may plausibly need.
    max_restarts: int = 10

    def __post_init__(self) -> None:
        check_range(self, "max_restarts", 0, 2**31 - 1, "JobSet's maxRestarts is an int32")


@rule(
    "TL405", "excessive-max-restarts",
    kinds=RUNTIME_KINDS, severity=Severity.WARNING,
    remediation="Lower `failurePolicy.maxRestarts`, or raise the `max-restarts` option.",
    options=MaxRestartsOptions,
)
def check(runtime: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags a JobSet `failurePolicy.maxRestarts` above a threshold (option `max-restarts`,
    default 10).

    ## Why is this bad?
    Every restart recreates all the Jobs. That absorbs node churn, but a script that is
    simply broken crashes the same way each time: with a huge budget it loops for hours
    on the GPUs before the TrainJob finally fails.

    ## When it stays silent
    At or below the `max-restarts` option.

    ## Options
    `max-restarts`: the largest `maxRestarts` accepted without a finding (0 or more).

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-restart
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          failurePolicy:
            maxRestarts: 1000
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

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-restart
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          failurePolicy:
            maxRestarts: 5
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
    render = runtime_render(runtime, ctx)
    restarts = render.failure_policy.get("maxRestarts")
    limit = ctx.options.max_restarts
    at = render.origin((*FAILURE_POLICY, "maxRestarts"))
    if is_count(restarts) and restarts > limit and at.manifest is runtime:
        yield Problem(
            at.path,
            f"`maxRestarts: {restarts}` (above {limit}): a script that fails the same way "
            "every time is restarted that often, holding all its nodes, before the TrainJob "
            "fails",
        )
