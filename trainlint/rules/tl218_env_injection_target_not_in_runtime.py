from __future__ import annotations

from collections.abc import Callable, Iterator

from trainlint.document import Manifest, dig, mappings, sequence
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render.trainer import (
    JOBS,
    container_names,
    named,
    override_pods,
    pod_container_names,
)
from trainlint.rule import rule

TARGETS = ("spec", "mlPolicy", "torch", "envInjection", "targets")


@rule(
    "TL218", "env-injection-target-not-in-runtime",
    kinds=TRAINER_KINDS, severity=Severity.ERROR, since="2.3",
    remediation="Name a job and containers the runtime's template defines.",
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Checks that each `mlPolicy.torch.envInjection.targets[]` entry names a replicatedJob
    of the runtime (`jobName`) and containers or init containers of that job
    (`containerNames`: the controller looks among the containers, then the init
    containers); and a TrainJob on a runtime where one does not (which may be the
    cluster's, or a context file's), once its own `runtimePatches` are merged.

    ## Why is this bad?
    The runtime itself is accepted, but the Trainer webhook denies every TrainJob that uses
    it and does not add the container in its `runtimePatches`: "envInjection target podSet
    "<job>" container "<name>" not found in runtime template".

    ## When it stays silent
    On targets that name jobs and containers or init containers of the runtime (or of a
    TrainJob's patches, for that TrainJob), on a TrainJob whose runtime is not known, and
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
    if manifest.kind == "TrainJob":
        yield from _on_trainjob(manifest, ctx)
        return
    jobs = dig(manifest.body, *JOBS)
    for index, position, job_name, container in _missing(
            manifest, lambda name: _containers(jobs, name)):
        where = f"job `{job_name}`" if named(jobs, job_name) else \
            f"the runtime (no job `{job_name}`)"
        yield Problem(
            (*TARGETS, index, "containerNames", position),
            f"envInjection target container `{container}` is not in {where}: the Trainer "
            "webhook denies every TrainJob using this runtime whose `runtimePatches` do not "
            f"add it ({_detail(job_name, container)})",
        )


def _on_trainjob(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """The targets of a TrainJob's runtime that name no container of the runtime's job,
    nor one the TrainJob's patches give it (the webhook looks once they are merged)."""
    runtime = ctx.runtime_for(job)
    if runtime is None:
        return
    jobs = dig(runtime.body, *JOBS)
    patched: dict[str, set[str]] = {}
    for _, pod, targets in override_pods(job, ctx.trainer_version):
        names = pod_container_names(pod) | pod_container_names(pod, "initContainers")
        for target in targets:
            patched.setdefault(target, set()).update(names)

    def known(name: str) -> set[str]:
        return _containers(jobs, name) | patched.get(name, set())

    for _, _, job_name, container in _missing(runtime, known):
        where = f"container `{container}` of job `{job_name}`, which is not there" \
            if named(jobs, job_name) or job_name in patched else \
            f"container `{container}` of a job `{job_name}` it does not have"
        yield Problem(
            ("spec", "runtimeRef"),
            f"{runtime.describe()} injects env into {where}: the Trainer webhook denies this "
            f"TrainJob ({_detail(job_name, container)})",
        )


def _containers(jobs: object, name: str) -> set[str]:
    """The names of the containers and init containers of job `name` of `jobs`."""
    found = named(jobs, name)
    return container_names(found[1]) | container_names(found[1], "initContainers") \
        if found else set()


def _missing(
    runtime: Manifest, known: Callable[[str], set[str]]
) -> Iterator[tuple[int, int, str, str]]:
    """Each target container the `known` containers of its job lack: the target's place,
    the container's place in it, the job, the container."""
    for index, target in mappings(dig(runtime.body, *TARGETS)):
        job_name = target.get("jobName")
        if not isinstance(job_name, str):
            continue
        names = known(job_name)
        for position, container in enumerate(sequence(target.get("containerNames"))):
            if isinstance(container, str) and container not in names:
                yield index, position, job_name, container


def _detail(job_name: str, container: str) -> str:
    return f'"envInjection target podSet "{job_name}" container "{container}" not found in ' \
        'runtime template"'
