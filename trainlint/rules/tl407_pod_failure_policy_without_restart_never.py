from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine.context import Context
from trainlint.kinds import RUNTIME_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render import POD_SPEC
from trainlint.render.trainer import runtime_render
from trainlint.rule import rule

NEEDS_NEVER = ("podFailurePolicy", "backoffLimitPerIndex")


@rule(
    "TL407", "pod-failure-policy-without-restart-never",
    kinds=RUNTIME_KINDS, severity=Severity.ERROR,
    remediation="Set `restartPolicy: Never` in the pod template of that job.",
)
def check(runtime: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags a replicatedJob whose Job sets `podFailurePolicy` or `backoffLimitPerIndex` while
    its pod template does not set `restartPolicy: Never`.

    ## Why is this bad?
    Kubernetes allows both fields only with `restartPolicy: Never`, and JobSet defaults an
    empty `restartPolicy` to `OnFailure`. Trainer accepts the runtime, then the API server
    rejects the Job when the JobSet controller creates it: the run never starts, and the
    only trace is a JobSet event.

    ## When it stays silent
    When the pod template sets `restartPolicy: Never`, and on Jobs without
    `podFailurePolicy` or `backoffLimitPerIndex`.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-pfp
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
                  podFailurePolicy:
                    rules:
                      - action: FailJob
                        onExitCodes:
                          operator: In
                          values: [42]
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
      name: torch-pfp
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
                  podFailurePolicy:
                    rules:
                      - action: FailJob
                        onExitCodes:
                          operator: In
                          values: [42]
                  template:
                    spec:
                      restartPolicy: Never
                      containers:
                        - name: node
                          image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
    ```
    """
    for job in runtime_render(runtime, ctx).jobs:
        restart = job.pod_spec.get("restartPolicy")
        if restart == "Never":
            continue
        written = job.origin(*POD_SPEC, "restartPolicy").note is None
        for key in NEEDS_NEVER:
            at = job.origin("template", "spec", key)
            if key in job.spec and at.manifest is runtime:
                setting = f"`restartPolicy: {restart}`" if written else "no `restartPolicy`"
                yield Problem(
                    at.path,
                    f"job `{job.name}` sets `{key}` with {setting} (JobSet defaults it "
                    "to OnFailure): Kubernetes allows it only with `restartPolicy: Never`, so "
                    "the Job is rejected at creation and the run never starts",
                )
