from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine.context import Context
from trainlint.kinds import RUNTIME_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render.trainer import JOBSET, jobset
from trainlint.rule import rule


@rule(
    "TL411", "ttl-recreates-finished-run",
    kinds=RUNTIME_KINDS, severity=Severity.ERROR,
    since="2.1", until="2.3",
    remediation="Remove `ttlSecondsAfterFinished`; delete finished TrainJobs instead.",
)
def check(runtime: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    From v2.1 to v2.3, flags `ttlSecondsAfterFinished` in the runtime's JobSet spec.

    ## Why is this bad?
    When the TTL deletes the finished JobSet, the Trainer controller sees a TrainJob
    without its JobSet and creates it again: the training runs again from the start, with
    a fresh `maxRestarts` budget. In v2.1 this happens to completed and failed TrainJobs;
    in v2.2 and v2.3 to failed ones, in an endless loop.

    ## When it stays silent
    On JobSets without `ttlSecondsAfterFinished`, and outside v2.1–v2.3.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-ttl
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          ttlSecondsAfterFinished: 3600
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
      name: torch-ttl
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
    ```
    """
    if "ttlSecondsAfterFinished" not in jobset(runtime):
        return
    which = "completed or failed" if ctx.trainer_version < (2, 2) else "failed"
    yield Problem(
        (*JOBSET, "ttlSecondsAfterFinished"),
        f"when the TTL deletes the JobSet of a {which} TrainJob, the controller recreates "
        "it: the training runs again from the start with a fresh restart budget"
        + (", in an endless loop" if which == "failed" else ""),
    )
