from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine.context import Context
from trainlint.kinds import RUNTIME_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render.trainer import (
    JOBS,
    MAIN_CONTAINERS,
    ancestor,
    replicated_jobs,
    runtime_verdict,
)
from trainlint.rule import rule

DETAIL = "always must be 1"


@rule(
    "TL203", "runtime-job-replicas-not-one",
    kinds=RUNTIME_KINDS, severity=Severity.ERROR,
    remediation="Remove `replicas` (it defaults to 1) and scale with `numNodes` instead.",
)
def check(runtime: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags `replicas` other than 1 on a replicatedJob labelled
    `trainer.kubeflow.org/trainjob-ancestor-step` (`trainer`, `dataset-initializer` or
    `model-initializer`), and, on v2.0, on the job named `launcher`.

    ## Why is this bad?
    The Trainer runtime webhook denies the runtime: "always must be 1". The node count comes
    from `numNodes` (Job parallelism), never from JobSet replicas. A TrainingRuntime
    update, or (v2.3+) a runtime labelled `trainer.kubeflow.org/webhook-validation:
    disabled`, is not checked by the webhook; the controller then forces 1 replica anyway,
    so the value only misleads.

    ## When it stays silent
    On `replicas: 1`, on jobs without an ancestor label (other than v2.0's `launcher`).

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
              replicas: 2
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: trainer
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-ckpt
    spec:
      mlPolicy:
        numNodes: 2
        torch: {}
      template:
        spec:
          replicatedJobs:
            - name: node
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: trainer
    ```
    """
    for index, job in replicated_jobs(runtime):
        replicas = job.get("replicas", 1)
        if replicas == 1 and not isinstance(replicas, bool):
            continue
        label = ancestor(job)
        if isinstance(label, str) and label in MAIN_CONTAINERS:
            why = f"job `{job.get('name')}` is labelled `{label}`"
        elif ctx.trainer_version == (2, 0) and job.get("name") == "launcher":
            why = "the v2.0 webhook checks the job named `launcher`"
        else:
            continue
        yield Problem(
            (*JOBS, index, "replicas"),
            f"`replicas: {replicas}` but {why}: "
            f"{runtime_verdict(runtime, ctx.trainer_version, DETAIL)}; set the node count "
            "with `numNodes`, the controller runs one replica of this job",
        )
