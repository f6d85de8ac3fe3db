from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, is_count
from trainlint.engine.context import Context
from trainlint.problem import Problem, Severity
from trainlint.render.trainer import rendered
from trainlint.rule import rule

MAX_NAME = 63
#: JobSet checks the longest pod name with the random suffix Kubernetes appends.
SUFFIX = "-abcde"


@rule(
    "TL410", "pod-name-too-long",
    kinds={"TrainJob"}, severity=Severity.ERROR,
    remediation="Shorten the TrainJob name.",
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Builds the longest pod name JobSet will create for each replicatedJob of the
    TrainJob's runtime, `<trainjob>-<job>-<job index>-<pod index>-xxxxx`, and flags the
    TrainJob when one exceeds 63 characters. With a `node` job on up to 10 nodes the
    TrainJob name may have 48 characters; with `dataset-initializer`, 33.

    ## Why is this bad?
    The TrainJob is accepted, but the JobSet webhook rejects the JobSet ("pod names
    generated for this JobSet will exceed 63 characters"). The TrainJob gets no status,
    only a `TrainJobResourcesCreationFailed` event, and never runs.

    ## When it stays silent
    When the runtime is not among the checked files, and on names whose longest pod name
    fits in 63 characters.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-distributed
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
                  template:
                    spec:
                      containers:
                        - name: node
                          image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: llama-3-8b-instruct-sft-alpaca-cleaned-lr2e-5-run-07
    spec:
      runtimeRef:
        name: torch-distributed
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: llama3-8b-sft-run-07
    spec:
      runtimeRef:
        name: torch-distributed
    ```
    """
    render = rendered(job, ctx)
    if not render.complete or not job.name or len(job.name) > MAX_NAME:
        return
    longest = ""
    for replicated in render.jobs:
        completions = replicated.spec.get("completions")
        pods = completions if is_count(completions) and completions > 0 else 1
        pod = f"{job.name}-{replicated.name}-{replicated.replicas - 1}-{pods - 1}{SUFFIX}"
        longest = max(longest, pod, key=len)
    if len(longest) > MAX_NAME:
        yield Problem(
            ("metadata", "name"),
            f"pods will be named like `{longest}` ({len(longest)} characters, over 63): the "
            "JobSet webhook rejects the JobSet, so the TrainJob never runs and shows only a "
            "TrainJobResourcesCreationFailed event",
        )
