from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig, mapping
from trainlint.engine.context import Context
from trainlint.kinds import RUNTIME_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render.trainer import runtime_render
from trainlint.rule import rule

#: The `backoffLimit` JobSet requires of every job under `InPlaceRestart`.
MAX_BACKOFF_LIMIT = 2_147_483_647


@rule(
    "TL415", "in-place-restart-job-requirements",
    kinds=RUNTIME_KINDS, severity=Severity.ERROR, since="2.2",
    remediation="Set `backoffLimit: 2147483647` and `podReplacementPolicy: Failed` on every job.",
)
def check(runtime: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    With `failurePolicy.restartStrategy: InPlaceRestart`, flags each replicatedJob whose
    Job lacks `backoffLimit: 2147483647` or `podReplacementPolicy: Failed`. (The webhook
    also wants `completions` equal to `parallelism`, but the controller sets both to the
    job's pod count.) That the `InPlaceRestart` feature gate is off by default is TL406.

    ## Why is this bad?
    The JobSet webhook rejects an `InPlaceRestart` JobSet unless every job meets these
    requirements, even with the feature gate on. Trainer accepts the runtime and the
    TrainJob; the JobSet is rejected only when the controller creates it, which shows
    only as an event on the TrainJob.

    ## When it stays silent
    On runtimes without `restartStrategy: InPlaceRestart`, and on `completions` and
    `parallelism`: the controller sets both of every job to its pod count.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-in-place
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          failurePolicy:
            maxRestarts: 3
            restartStrategy: InPlaceRestart
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
      name: torch-in-place
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          failurePolicy:
            maxRestarts: 3
            restartStrategy: InPlaceRestart
          replicatedJobs:
            - name: node
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: trainer
                spec:
                  backoffLimit: 2147483647
                  podReplacementPolicy: Failed
                  template:
                    spec:
                      containers:
                        - name: node
                          image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
    ```
    """
    render = runtime_render(runtime, ctx)
    policy = render.failure_policy
    if policy.get("restartStrategy") != "InPlaceRestart":
        return
    for job in render.jobs:
        template = job.origin("template")
        if template.manifest is not runtime:
            continue
        unmet = []
        # The webhook sees the JobSet before Kubernetes defaults its Jobs: a default
        # backoffLimit is none.
        written = job.origin("template", "spec", "backoffLimit").note is None
        if not written or job.spec.get("backoffLimit") != MAX_BACKOFF_LIMIT:
            unmet.append(f"`backoffLimit: {MAX_BACKOFF_LIMIT}`")
        if job.spec.get("podReplacementPolicy") != "Failed":
            unmet.append("`podReplacementPolicy: Failed`")
        if unmet:
            has_spec = "spec" in mapping(dig(runtime.body, *template.path))
            yield Problem(
                (*template.path, *(("spec",) if has_spec else ())),
                f"`restartStrategy: InPlaceRestart` needs {' and '.join(unmet)} on job "
                f"`{job.name}`: the JobSet webhook rejects the JobSet when the TrainJob "
                "starts, which shows only as an event",
            )
