from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig, mapping
from trainlint.engine.context import Context
from trainlint.problem import Problem, Severity
from trainlint.render.trainer import rendered, runtime_render
from trainlint.rule import rule


@rule(
    "TL257", "partial-resources-per-node",
    kinds={"TrainJob"}, severity=Severity.WARNING, until="2.2",
    remediation="Repeat the runtime's cpu and memory in `resourcesPerNode`, or upgrade to v2.3+.",
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Up to v2.2, flags `spec.trainer.resourcesPerNode` that leaves out requests or limits
    the runtime sets on a container it replaces the resources of (typically a GPU limit
    without cpu and memory): the `node` container of the trainer job, and from v2.1 that
    of the `node` job of an MPI runtime that runs its launcher as a node.

    ## Why is this bad?
    Up to v2.2 `resourcesPerNode` **replaces** the container's whole `resources` block
    (v2.3 merges it per key). The runtime's cpu and memory requests and limits vanish
    without a word: the pods lose their guaranteed cpu and memory, or their limits.

    ## When it stays silent
    From v2.3 (resources merge per key), when the TrainJob repeats every resource the
    runtime sets, when no job carries the trainer label (the controller then applies
    `resourcesPerNode` nowhere; TL201 says so), and when the runtime is not among the
    checked files.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-sized
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
                          resources:
                            requests: {cpu: "8", memory: 64Gi}
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: run
    spec:
      runtimeRef:
        name: torch-sized
      trainer:
        resourcesPerNode:
          limits:
            nvidia.com/gpu: 1
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: run
    spec:
      runtimeRef:
        name: torch-sized
      trainer:
        resourcesPerNode:
          requests: {cpu: "8", memory: 64Gi}
          limits:
            nvidia.com/gpu: 1
    ```
    """
    render = rendered(job, ctx)
    runtime = render.runtime
    if runtime is None:
        return
    replaced = ("spec", "trainer", "resourcesPerNode")
    alone = runtime_render(runtime, ctx)
    given = mapping(dig(job.body, *replaced))
    erased: dict[str, None] = {}
    jobs: dict[str, None] = {}
    for container in render.containers():
        at = container.origin("resources")
        if at.manifest is not job or at.path != replaced or at.note is not None:
            continue  # not resources the TrainJob replaced
        before = alone.job_named(container.job.name)
        own = before.container(container.name) if before is not None else None
        resources = mapping(own.body.get("resources")) if own is not None else {}
        for part in ("requests", "limits"):
            for name in mapping(resources.get(part)):
                if name not in mapping(given.get(part)):
                    erased[f"{part}.{name}"] = None
                    jobs[container.job.name] = None
    if erased:
        where = f" on jobs {', '.join(f'`{name}`' for name in jobs)}" if len(jobs) > 1 else ""
        yield Problem(
            replaced,
            f"`resourcesPerNode` replaces the trainer container's resources up to v2.2: "
            f"{', '.join(erased)} set by {runtime.describe()}{where} are silently erased",
        )

