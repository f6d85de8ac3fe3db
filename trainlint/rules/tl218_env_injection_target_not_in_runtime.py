from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig, mappings, sequence
from trainlint.engine.context import Context
from trainlint.kinds import RUNTIME_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render.trainer import JOBS, container_names, named
from trainlint.rule import rule

TARGETS = ("spec", "mlPolicy", "torch", "envInjection", "targets")


@rule(
    "TL218", "env-injection-target-not-in-runtime",
    kinds=RUNTIME_KINDS, severity=Severity.ERROR, since="2.3",
    remediation="Name a job and containers the runtime's template defines.",
)
def check(runtime: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Checks that each `mlPolicy.torch.envInjection.targets[]` entry names a replicatedJob
    of the runtime (`jobName`) and containers or init containers of that job
    (`containerNames`: the controller looks among the containers, then the init
    containers).

    ## Why is this bad?
    The runtime itself is accepted, but the Trainer webhook denies every TrainJob that uses
    it: "envInjection target podSet "<job>" container "<name>" not found in runtime
    template".

    ## When it stays silent
    On targets that name jobs and containers or init containers of the runtime, and
    before v2.3.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-sidecar
    spec:
      mlPolicy:
        torch:
          envInjection:
            targets:
              - jobName: node
                containerNames: [metrics]
      template:
        spec:
          replicatedJobs:
            - name: node
              template:
                spec:
                  template:
                    spec:
                      containers:
                        - name: node
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-sidecar
    spec:
      mlPolicy:
        torch:
          envInjection:
            targets:
              - jobName: node
                containerNames: [metrics]
      template:
        spec:
          replicatedJobs:
            - name: node
              template:
                spec:
                  template:
                    spec:
                      containers:
                        - name: node
                        - name: metrics
    ```
    """
    jobs = dig(runtime.body, *JOBS)
    for index, target in mappings(dig(runtime.body, *TARGETS)):
        job_name = target.get("jobName")
        found = named(jobs, job_name) if isinstance(job_name, str) else None
        known = container_names(found[1]) | container_names(found[1], "initContainers") \
            if found else set()
        for position, container in enumerate(sequence(target.get("containerNames"))):
            if not isinstance(container, str) or container in known:
                continue
            where = f"job `{job_name}`" if found else f"the runtime (no job `{job_name}`)"
            yield Problem(
                (*TARGETS, index, "containerNames", position),
                f"envInjection target container `{container}` is not in {where}: the Trainer "
                f'webhook denies every TrainJob using this runtime ("envInjection target '
                f'podSet "{job_name}" container "{container}" not found in runtime '
                'template")',
            )
