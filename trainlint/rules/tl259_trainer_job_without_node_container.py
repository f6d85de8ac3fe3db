from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig
from trainlint.engine.context import Context
from trainlint.kinds import RUNTIME_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render.trainer import JOBS, POD_SPEC, TRAINER, ancestor, named, replicated_jobs
from trainlint.rule import rule


@rule(
    "TL259", "trainer-job-without-node-container",
    kinds=RUNTIME_KINDS, severity=Severity.ERROR, until="2.0",
    remediation="Name the trainer job's main container `node`.",
)
def check(runtime: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    In v2.0, flags the job labelled `trainer.kubeflow.org/trainjob-ancestor-step: trainer`
    when none of its containers is named `node` (from v2.1 the runtime webhook denies it).

    ## Why is this bad?
    The controller writes the TrainJob's image, command, args, env, resources and the
    `PET_*` variables into the container named `node` only. v2.0 accepts the runtime and
    then drops all of them silently: every TrainJob runs the runtime's own command.

    ## When it stays silent
    From v2.1 (the webhook denies it, TL204), and on trainer jobs with a `node`
    container.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-custom
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
                        - name: trainer
                          image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-custom
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
    for index, job in replicated_jobs(runtime):
        containers = dig(job, *POD_SPEC, "containers")
        if ancestor(job) == TRAINER and named(containers, "node") is None:
            yield Problem(
                (*JOBS, index, *POD_SPEC, "containers"),
                f"trainer job `{job.get('name')}` has no container named `node`: v2.0 accepts "
                "it and silently drops every TrainJob's image, command, args, env, resources "
                "and PET_* variables",
            )

