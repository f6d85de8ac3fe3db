from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine.context import Context
from trainlint.kinds import RUNTIME_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render.trainer import (
    ANCESTOR_LABEL,
    JOBS,
    TRAINER,
    ancestor,
    framework,
    replicated_jobs,
)
from trainlint.rule import rule


@rule(
    "TL253", "several-trainer-jobs",
    kinds=RUNTIME_KINDS, severity=Severity.ERROR,
    remediation="Label exactly one replicatedJob as the trainer.",
)
def check(runtime: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags every replicatedJob labelled `trainer.kubeflow.org/trainjob-ancestor-step:
    trainer` after the first one.

    ## Why is this bad?
    The controller gives the TrainJob's image, command, args and env to every job so
    labelled (v2.0-v2.3), but the torch plugin's variables (`PET_*`) to the first only:
    an MPI worker labelled like its launcher runs the launcher's `mpirun` in place of
    its sshd, and a second torch job runs the trainer without the variables that tell
    torchrun the nodes and the master.

    ## When it stays silent
    On the first trainer job, and on runtimes with one.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: mpi-custom
    spec:
      mlPolicy:
        mpi: {}
      template:
        spec:
          replicatedJobs:
            - name: launcher
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: trainer
                spec:
                  template:
                    spec:
                      containers:
                        - name: node
                          image: mpioperator/mpi-pi
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
                          image: mpioperator/mpi-pi
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: mpi-custom
    spec:
      mlPolicy:
        mpi: {}
      template:
        spec:
          replicatedJobs:
            - name: launcher
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: trainer
                spec:
                  template:
                    spec:
                      containers:
                        - name: node
                          image: mpioperator/mpi-pi
            - name: node
              template:
                spec:
                  template:
                    spec:
                      containers:
                        - name: node
                          image: mpioperator/mpi-pi
    ```
    """
    first = None
    for index, job in replicated_jobs(runtime):
        if ancestor(job) != TRAINER:
            continue
        if first is None:
            first = job.get("name")
            continue
        torch = (f", while the torch plugin's variables (`PET_*`) go to `{first}` only"
                 if framework(runtime) == "torch" else "")
        yield Problem(
            (*JOBS, index, "template", "metadata", "labels", ANCESTOR_LABEL),
            f"job `{job.get('name')}` is a second trainer job (after `{first}`): a TrainJob's "
            f"image, command, args and env go to it as they go to `{first}`, so it runs the "
            f"trainer's program in place of its own{torch}",
        )
