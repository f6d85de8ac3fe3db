from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, mapping, mappings
from trainlint.engine.context import Context
from trainlint.kinds import RUNTIME_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render import FAILURE_POLICY
from trainlint.render.trainer import runtime_render
from trainlint.rule import rule

RESTART_JOB_ACTIONS = frozenset({"RestartJob", "RestartJobAndIgnoreMaxRestarts"})


@rule(
    "TL406", "restart-needs-feature-gate",
    kinds=RUNTIME_KINDS, severity=Severity.WARNING, since="2.2",
    remediation="Enable the JobSet alpha feature gate on the cluster, or use `Recreate` and "
    "`RestartJobSet`.",
)
def check(runtime: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags `failurePolicy.restartStrategy: InPlaceRestart` (v2.2+) and failure-policy rules
    with the action `RestartJob` or `RestartJobAndIgnoreMaxRestarts` (v2.3+).

    ## Why is this bad?
    Trainer accepts them, but they are JobSet alpha features behind the `InPlaceRestart`
    and `RestartJob` feature gates, off by default. Without the gate the JobSet webhook
    rejects the JobSet when the controller creates it: the TrainJob never starts and
    shows only an event. `InPlaceRestart` also requires `backoffLimit: 2147483647`,
    `podReplacementPolicy: Failed` and `completions` equal to `parallelism` on every job.

    ## When it stays silent
    On other restart strategies and actions, and before v2.2 (v2.3 for the `RestartJob`
    actions).

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
            maxRestarts: 3
            rules:
              - name: restartFailedJob
                action: RestartJob
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
    render = runtime_render(runtime, ctx)
    policy = mapping(render.jobset.get("spec")).get("failurePolicy")
    at = render.origin(FAILURE_POLICY)
    if not isinstance(policy, dict) or at.manifest is not runtime:
        return
    path = at.path
    if policy.get("restartStrategy") == "InPlaceRestart":
        yield Problem(
            (*path, "restartStrategy"),
            "`restartStrategy: InPlaceRestart` needs the JobSet alpha feature gate "
            "`InPlaceRestart` (off by default): without it the JobSet is rejected when the "
            "TrainJob starts, which shows only as an event",
        )
    if ctx.trainer_version < (2, 3):
        return
    for index, item in mappings(policy.get("rules")):
        if str(item.get("action")) in RESTART_JOB_ACTIONS:
            yield Problem(
                (*path, "rules", index, "action"),
                f"action `{item['action']}` needs the JobSet alpha feature gate `RestartJob` "
                "(off by default): without it the JobSet is rejected when the TrainJob starts, "
                "which shows only as an event",
            )
