from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, is_count, mapping
from trainlint.engine.context import Context
from trainlint.kinds import RUNTIME_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render.trainer import JOBS, TRAINER, ancestor, jobset, replicated_jobs
from trainlint.rule import rule

#: The `backoffLimit` JobSet requires of every job under `InPlaceRestart`.
MAX_BACKOFF_LIMIT = 2_147_483_647


@rule(
    "TL415", "in-place-restart-job-requirements",
    kinds=RUNTIME_KINDS, severity=Severity.ERROR, since="2.2",
    remediation=(
        "Set `backoffLimit: 2147483647` and `podReplacementPolicy: Failed` on every job, with "
        "`completions` equal to `parallelism`."
    ),
)
def check(runtime: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    With `failurePolicy.restartStrategy: InPlaceRestart`, flags each replicatedJob whose
    Job lacks `backoffLimit: 2147483647` or `podReplacementPolicy: Failed`, or sets
    `completions` and `parallelism` to different numbers (the trainer job's are set by
    the controller, so only other jobs are judged on them). That the `InPlaceRestart`
    feature gate is off by default is TL406.

    ## Why is this bad?
    The JobSet webhook rejects an `InPlaceRestart` JobSet unless every job meets these
    requirements, even with the feature gate on. Trainer accepts the runtime and the
    TrainJob; the JobSet is rejected only when the controller creates it, which shows
    only as an event on the TrainJob.

    ## When it stays silent
    On runtimes without `restartStrategy: InPlaceRestart`, and on the trainer job's
    completions and parallelism (the controller sets them).

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
    if mapping(jobset(runtime).get("failurePolicy")).get("restartStrategy") != "InPlaceRestart":
        return
    for index, job in replicated_jobs(runtime):
        template = mapping(job.get("template"))
        spec = mapping(template.get("spec"))
        unmet = []
        if spec.get("backoffLimit") != MAX_BACKOFF_LIMIT:
            unmet.append(f"`backoffLimit: {MAX_BACKOFF_LIMIT}`")
        if spec.get("podReplacementPolicy") != "Failed":
            unmet.append("`podReplacementPolicy: Failed`")
        counts = spec.get("completions"), spec.get("parallelism")
        if ancestor(job) != TRAINER and all(map(is_count, counts)) and counts[0] != counts[1]:
            unmet.append("`completions` equal to `parallelism`")
        if unmet:
            yield Problem(
                (*JOBS, index, "template", *(("spec",) if "spec" in template else ())),
                f"`restartStrategy: InPlaceRestart` needs {' and '.join(unmet)} on job "
                f"`{job.get('name')}`: the JobSet webhook rejects the JobSet when the TrainJob "
                "starts, which shows only as an event",
            )
