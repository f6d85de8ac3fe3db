from __future__ import annotations

import re
from collections.abc import Iterator

from trainlint.document import KeyPath, Manifest, mappings, sequence
from trainlint.engine.context import Context
from trainlint.kinds import RUNTIME_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render import FAILURE_POLICY
from trainlint.render.trainer import runtime_render
from trainlint.rule import rule

REASONS = frozenset({
    "BackoffLimitExceeded", "DeadlineExceeded", "FailedIndexes", "MaxFailedIndexesExceeded",
    "PodFailurePolicy",
})
RULE_NAME = re.compile(r"[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?")
_REJECTED = (
    "the JobSet webhook rejects the JobSet when a TrainJob starts, so it never runs and "
    "shows only a TrainJobResourcesCreationFailed event"
)


@rule(
    "TL409", "jobset-rejects-policy",
    kinds=RUNTIME_KINDS, severity=Severity.ERROR,
    remediation="Fix the failure-policy rule or the `dependsOn` the JobSet webhook refuses.",
)
def check(runtime: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Checks what the JobSet webhook refuses and Trainer lets through: failure-policy rules
    with an unknown `onJobFailureReasons` value, a rule name that is not 1–128 letters,
    digits, `_`, `,` or `:` starting with a letter, two rules with one name, and
    `dependsOn` on the first replicatedJob.

    ## Why is this bad?
    Trainer accepts the runtime, and the JobSet is validated only when the controller
    creates it for a TrainJob. The rejection shows only as an event: the TrainJob has no
    status and never starts.

    ## When it stays silent
    On reasons, names and `dependsOn` that JobSet accepts.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-rules
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          failurePolicy:
            maxRestarts: 3
            rules:
              - name: fail-on-deadline
                action: FailJobSet
                onJobFailureReasons: [Deadline]
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
      name: torch-rules
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          failurePolicy:
            maxRestarts: 3
            rules:
              - name: failOnDeadline
                action: FailJobSet
                onJobFailureReasons: [DeadlineExceeded]
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
    rules_path = (*FAILURE_POLICY, "rules")
    problems: list[tuple[KeyPath, str]] = []
    seen: set[str] = set()
    policy = render.failure_policy
    for index, item in mappings(policy.get("rules")):
        name = item.get("name")
        if isinstance(name, str):
            if len(name) > 128 or not RULE_NAME.fullmatch(name):
                problems.append((
                    (*rules_path, index, "name"),
                    f"rule name `{name}` must start with a letter and hold only letters, "
                    f"digits, `_`, `,` and `:` (at most 128): {_REJECTED}",
                ))
            elif name in seen:
                problems.append((
                    (*rules_path, index, "name"),
                    f"a second failure-policy rule is named `{name}`: {_REJECTED}",
                ))
            seen.add(name)
        for position, reason in enumerate(sequence(item.get("onJobFailureReasons"))):
            if isinstance(reason, str) and reason not in REASONS:
                problems.append((
                    (*rules_path, index, "onJobFailureReasons", position),
                    f"`{reason}` is not a Job failure reason ({', '.join(sorted(REASONS))}): "
                    f"{_REJECTED}",
                ))
    first = render.jobs[0] if render.jobs else None
    if first is not None and first.index == 0 and "dependsOn" in first.body:
        problems.append((
            (*first.path, "dependsOn"),
            f"the first replicatedJob `{first.name}` cannot have `dependsOn`: {_REJECTED}",
        ))
    for path, message in problems:
        at = render.origin(path)
        if at.manifest is runtime:
            yield Problem(at.path, message)
