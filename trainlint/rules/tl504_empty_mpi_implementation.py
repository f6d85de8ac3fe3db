from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig, mapping
from trainlint.engine.context import Context
from trainlint.kinds import RUNTIME_KINDS
from trainlint.problem import Problem, Severity
from trainlint.rule import rule


@rule(
    "TL504", "empty-mpi-implementation",
    kinds=RUNTIME_KINDS, severity=Severity.ERROR, since="2.1",
    remediation="Set `mpiImplementation: OpenMPI`, or leave the field out.",
)
def check(runtime: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    From v2.1, flags `mlPolicy.mpi.mpiImplementation: ""`.

    ## Why is this bad?
    The schema allows the empty string, but the MPI plugin supports only OpenMPI: every
    TrainJob on the runtime is accepted and then fails to reconcile ("MPI implementation
    ... doesn't supported"), with no pods created.

    ## When it stays silent
    On a set `mpiImplementation`, and before v2.1.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: mpi-custom
    spec:
      mlPolicy:
        mpi:
          mpiImplementation: ""
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

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: mpi-custom
    spec:
      mlPolicy:
        mpi:
          mpiImplementation: OpenMPI
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
    if mapping(dig(runtime.body, "spec", "mlPolicy", "mpi")).get("mpiImplementation") == "":
        yield Problem(
            ("spec", "mlPolicy", "mpi", "mpiImplementation"),
            "`mpiImplementation: \"\"` is accepted, but the MPI plugin supports only OpenMPI: "
            "every TrainJob on this runtime fails to reconcile and creates no pods",
        )
