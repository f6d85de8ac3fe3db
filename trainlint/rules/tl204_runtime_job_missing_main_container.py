from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine.context import Context
from trainlint.kinds import RUNTIME_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render.trainer import (
    JOBS,
    MAIN_CONTAINERS,
    POD_SPEC,
    ancestor,
    container_names,
    replicated_jobs,
    runtime_verdict,
)
from trainlint.rule import rule

DETAIL = "must contain the required container for the ancestor: "


@rule(
    "TL204", "runtime-job-missing-main-container",
    kinds=RUNTIME_KINDS, severity=Severity.ERROR, since="2.1",
    remediation=(
        "Name the main container of the job after its ancestor step (`node` for `trainer`)."
    ),
)
def check(runtime: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Checks that a replicatedJob labelled `trainer.kubeflow.org/trainjob-ancestor-step` has a
    container (init containers do not count) with the name the controller fills: `node`
    for `trainer`, `dataset-initializer` and `model-initializer` for the initializers.

    ## Why is this bad?
    From v2.1 the Trainer runtime webhook denies the runtime: "must contain the required
    container for the ancestor: trainer". When the webhook does not check the runtime (a
    TrainingRuntime update, or from v2.3 the label
    `trainer.kubeflow.org/webhook-validation: disabled`), the controller finds no container
    to fill: the TrainJob's image, command, env and resources, or the initializer's
    storageUri, are dropped silently.

    ## When it stays silent
    On jobs without an ancestor label, or with a value that is not an ancestor, and
    before v2.1.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-ckpt
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
      name: torch-ckpt
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
        label = ancestor(job)
        if not isinstance(label, str) or label not in MAIN_CONTAINERS:
            continue
        required = MAIN_CONTAINERS[label]
        if required in container_names(job):
            continue
        verdict = runtime_verdict(runtime, ctx.trainer_version, DETAIL + label)
        yield Problem(
            (*JOBS, index, *POD_SPEC, "containers"),
            f"job `{job.get('name')}` is labelled `{label}` but has no container named "
            f"`{required}`: {verdict}; the controller fills only a container of that name "
            "from the TrainJob",
            remediation=f"rename the main container of job `{job.get('name')}` to `{required}`",
        )
