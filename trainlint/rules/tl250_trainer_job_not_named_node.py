from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine.context import Context
from trainlint.kinds import RUNTIME_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render import script
from trainlint.render.trainer import (
    JOBS,
    RENDEZVOUS_FRAMEWORKS,
    TRAINER,
    ancestor,
    framework,
    rendered,
    replicated_jobs,
    trainer_container_of,
)
from trainlint.rule import rule


@rule(
    "TL250", "trainer-job-not-named-node",
    kinds=RUNTIME_KINDS, severity=Severity.ERROR,
    remediation="Name the trainer replicatedJob `node`.",
)
def check(runtime: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags a torch, JAX or XGBoost runtime whose job labelled
    `trainer.kubeflow.org/trainjob-ancestor-step: trainer` is not named `node`.

    ## Why is this bad?
    These plugins hard-code the rendezvous host as `<trainjob>-node-0-0.<trainjob>`
    (`PET_MASTER_ADDR`, `JAX_COORDINATOR_ADDRESS`, `DMLC_TRACKER_URI`). JobSet names pods
    after their replicatedJob, so with any other job name that host never exists: every
    node waits for a master that cannot be resolved until the rendezvous times out.

    ## When it stays silent
    On trainer jobs named `node`, on MPI and Flux runtimes, and on a torch runtime whose
    command gives torchrun its own master (`--master_addr`, `--rdzv_endpoint`): the
    injected `PET_MASTER_ADDR` is then unused.

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
            - name: trainer
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
    plugin = framework(runtime)
    if plugin not in RENDEZVOUS_FRAMEWORKS:
        return
    container = trainer_container_of(rendered(runtime, ctx))
    if plugin == "torch" and container is not None and script.own_rendezvous(
        script.read(container)
    ):
        return  # torchrun is given its own master: the injected PET_MASTER_ADDR is unused
    for index, job in replicated_jobs(runtime):
        name = job.get("name")
        if ancestor(job) == TRAINER and isinstance(name, str) and name != "node":
            yield Problem(
                (*JOBS, index, "name"),
                f"the {plugin} trainer job is named `{name}`, but the rendezvous host is always "
                "`<trainjob>-node-0-0.<trainjob>`: no pod has that name, so the nodes cannot "
                "reach the master and hang until the rendezvous times out",
            )
