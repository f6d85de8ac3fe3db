from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, is_count, mapping, mappings
from trainlint.engine.context import Context
from trainlint.kinds import RUNTIME_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render import FAILURE_POLICY
from trainlint.render.trainer import runtime_render
from trainlint.rule import rule


@rule(
    "TL404", "failure-policy-without-max-restarts",
    kinds=RUNTIME_KINDS, severity=Severity.WARNING,
    remediation="Set `failurePolicy.maxRestarts` to the number of restarts a run may use.",
)
def check(runtime: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags a JobSet `failurePolicy` whose `maxRestarts` is missing or 0, unless one of its
    rules uses an `...AndIgnoreMaxRestarts` action.

    ## Why is this bad?
    `maxRestarts` defaults to 0. Any failure that is not matched by a rule triggers a
    restart, which is refused at once because the budget is spent: the JobSet fails with
    `ReachedMaxRestarts` on the first failure, as if there were no failurePolicy at all.

    ## When it stays silent
    On `maxRestarts` above 0, and when a rule uses an `...AndIgnoreMaxRestarts` action.

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
            restartStrategy: BlockingRecreate
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
            restartStrategy: BlockingRecreate
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
    restarts = policy.get("maxRestarts")
    if is_count(restarts) and restarts > 0:
        return
    actions = [str(item.get("action")) for _, item in mappings(policy.get("rules"))]
    if any(action.endswith("AndIgnoreMaxRestarts") for action in actions):
        return
    path = (*at.path, *(("maxRestarts",) if "maxRestarts" in policy else ()))
    yield Problem(
        path,
        "`failurePolicy` allows no restart (`maxRestarts` is "
        f"{'0' if 'maxRestarts' in policy else 'unset, so 0'}): the first Job failure fails "
        "the TrainJob with ReachedMaxRestarts, exactly as without a failurePolicy",
    )
