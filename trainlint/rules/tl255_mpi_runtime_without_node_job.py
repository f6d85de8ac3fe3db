from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine import Context
from trainlint.rule import Problem, Severity, rule
from trainlint.trainer import JOBS, is_mpi, replicated_jobs


@rule(
    "TL255", "mpi-runtime-without-node-job",
    kinds={"TrainingRuntime", "ClusterTrainingRuntime"}, severity=Severity.WARNING,
    fix="Add a replicatedJob named `node` for the MPI workers.",
)
def check(runtime: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags an MPI runtime (`mlPolicy.mpi`) with no replicatedJob named `node`.

    ## Why is this bad?
    The MPI plugin finds the workers by the job name `node`: it sizes that job from
    `numNodes` and lists its pods in the hostfile. Without it `numNodes` is ignored and
    the hostfile holds no workers (or only the launcher): the job runs on one pod.

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
            - name: worker
              template:
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
    if not is_mpi(runtime) or any(job.get("name") == "node" for _, job in replicated_jobs(runtime)):
        return
    yield Problem(
        JOBS,
        "this MPI runtime has no replicatedJob named `node`: the MPI plugin sizes and lists "
        "the workers by that name, so `numNodes` is ignored and the hostfile has no workers",
    )
