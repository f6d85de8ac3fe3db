from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, mapping
from trainlint.engine.context import Context
from trainlint.problem import Problem, Severity
from trainlint.render import devices
from trainlint.render.trainer import rendered
from trainlint.rule import rule


@rule(
    "TL265", "process-count-from-resources",
    kinds={"TrainJob"}, severity=Severity.ERROR,
    remediation="Set `spec.trainer.numProcPerNode` to the GPUs per node, or put the GPU count in "
    "`resourcesPerNode`.",
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Renders the JobSet (see `trainlint render`) and compares, on a torch runtime, the
    `PET_NPROC_PER_NODE` the controller derives from `resourcesPerNode` with the GPUs the
    trainer pods actually get. It flags a TrainJob whose `resourcesPerNode` names no GPU
    while the pods keep the runtime's GPUs (v2.3 merges `resourcesPerNode` into the
    runtime's resources key by key), or whose GPUs the release does not count (v2.0 reads
    `requests` only).

    ## Why is this bad?
    With `numProcPerNode` unset, the torch plugin counts GPUs in the TrainJob's
    `resourcesPerNode` alone, not in the pod: when that has no GPU key it falls back to
    the CPU count (or 1), and `torchrun` starts that many processes on a node with eight
    GPUs. The run trains on one GPU per node, silently, at a fraction of the speed paid
    for.

    ## When it stays silent
    When `numProcPerNode` is set (the count is then what you asked for), when the pods get
    no GPU the catalogue knows (see `device-resources`), on runtimes other than torch,
    when `spec.trainer` is absent (no `PET_*` at all: TL254), and when the runtime is not
    among the checked files.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-8gpu
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
                            limits:
                              nvidia.com/gpu: 8
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: run
    spec:
      runtimeRef:
        name: torch-8gpu
      trainer:
        resourcesPerNode:
          requests:
            memory: 512Gi
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-8gpu
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
                            limits:
                              nvidia.com/gpu: 8
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: run
    spec:
      runtimeRef:
        name: torch-8gpu
      trainer:
        resourcesPerNode:
          requests:
            memory: 512Gi
          limits:
            nvidia.com/gpu: 8
    ```
    """
    render = rendered(job, ctx)
    trainer = render.trainer
    node = trainer.container("node") if trainer is not None else None
    if render.framework != "torch" or node is None or not render.complete:
        return
    found = node.env.get("PET_NPROC_PER_NODE")
    if found is None:
        return
    index, variable = found
    derived = node.origin("env", index, "value")
    if derived.path[-1:] != ("resourcesPerNode",) or derived.manifest is not job:
        return  # asked for (numProcPerNode), or not from this TrainJob's resources
    processes = devices.whole(variable.get("value"))
    gpus = _gpus(node.body.get("resources"), ctx)
    if processes is None or gpus is None or processes >= gpus[1]:
        return
    name, count, written = gpus
    why = (
        "v2.0 counts processes from `resourcesPerNode.requests`, which names no GPU"
        if ctx.trainer_version == (2, 0)
        else "the torch plugin counts GPUs in `resourcesPerNode` alone, which names none, "
        "so it counts CPUs"
    )
    yield Problem(
        derived.path,
        f"PET_NPROC_PER_NODE becomes {processes} ({why}), but the trainer pods get {count} "
        f"GPUs (`{name}: {written}`): torchrun starts {processes} process"
        f"{'es' if processes != 1 else ''} per node and {count - processes} of the GPUs sit "
        "idle",
    )


def _gpus(resources: object, ctx: Context) -> tuple[str, int, object] | None:
    """The first GPU resource of the pod, by the device catalogue, its count and its
    quantity as written (`4000m` is 4)."""
    parts = mapping(resources)
    for part in ("limits", "requests"):
        for name, quantity in mapping(parts.get(part)).items():
            count = devices.whole(quantity)
            if devices.kind(str(name), ctx.device_resources) == "gpu" and count:
                return str(name), count, quantity
    return None
