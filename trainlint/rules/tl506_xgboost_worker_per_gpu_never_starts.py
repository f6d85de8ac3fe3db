from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render import devices, script
from trainlint.render.trainer import rendered
from trainlint.render.tree import on_checked
from trainlint.rule import rule


@rule(
    "TL506", "xgboost-worker-per-gpu-never-starts",
    kinds=TRAINER_KINDS, severity=Severity.WARNING, since="2.2",
    remediation=(
        "Start one XGBoost worker per GPU in each pod, each with the rank "
        "`DMLC_TASK_ID` × GPUs per node + its GPU's index; or give each pod one GPU."
    ),
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Renders the JobSet the controller builds (see `trainlint render`) for an XGBoost
    runtime whose trainer asks for several GPUs per node, and flags a command that reads
    `DMLC_TASK_ID` as its worker's rank and `DMLC_NUM_WORKER` as the workers to wait for,
    and starts no workers of its own (no processes or pools, Dask, background jobs,
    `LOCAL_RANK` or `CUDA_VISIBLE_DEVICES` in it): one worker per pod.

    ## Why is this bad?
    The XGBoost plugin counts a worker per GPU: `DMLC_NUM_WORKER` is the nodes times the
    GPUs per node (8 for 2 nodes of 4 GPUs). But `DMLC_TASK_ID` is the pod's completion
    index, 0 to nodes − 1. A command that starts one worker per pod with that rank, as
    the Trainer's own XGBoost guide does, has rank 0 start a `RabitTracker` for 8 workers
    while 2 connect: the tracker waits, and the job hangs with its GPUs held until a
    deadline ends it. Nothing fails.

    ## When it stays silent
    With one GPU per node or none (a worker per node), or GPU resources of different
    quantities (the controller picks one at random: TL258), on a command that starts
    workers of its own, or does not read both variables where trainlint can see it (a
    script in the image is not read; a name in a comment is no read), on runtimes of
    other frameworks, and on a TrainJob whose runtime is not among the checked files.
    A runtime that TrainJobs of the run use is judged on each of them (its resources may
    change the count), at its `runtimeRef` where the GPUs and command are the runtime's.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: churn-gpu
    spec:
      runtimeRef:
        name: xgboost-distributed
      trainer:
        numNodes: 2
        resourcesPerNode:
          limits:
            nvidia.com/gpu: 4
        command:
          - python
          - -c
          - |
            import os
            from xgboost.tracker import RabitTracker
            rank = int(os.environ["DMLC_TASK_ID"])
            workers = int(os.environ["DMLC_NUM_WORKER"])
            if rank == 0:
                RabitTracker(host_ip="0.0.0.0", n_workers=workers).start()
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: churn-gpu
    spec:
      runtimeRef:
        name: xgboost-distributed
      trainer:
        numNodes: 8
        resourcesPerNode:
          limits:
            nvidia.com/gpu: 1
        command:
          - python
          - -c
          - |
            import os
            from xgboost.tracker import RabitTracker
            rank = int(os.environ["DMLC_TASK_ID"])
            workers = int(os.environ["DMLC_NUM_WORKER"])
            if rank == 0:
                RabitTracker(host_ip="0.0.0.0", n_workers=workers).start()
    ```
    """
    render = rendered(manifest, ctx)
    trainer = render.trainer
    if not render.complete or render.framework != "xgboost" or trainer is None:
        return
    container = trainer.container("node")
    if container is None or "DMLC_NUM_WORKER" not in container.env:
        return
    index, variable = container.env["DMLC_NUM_WORKER"]
    pods = trainer.pods * trainer.replicas
    workers = str(variable.get("value"))
    random = devices.controller_gpu_count(render.sized_by[0]) is None
    if not workers.isdigit() or int(workers) <= pods or random:
        return  # a worker per node, or a count the controller picks at random (TL258)
    found = script.read(container)
    rank = script.task_rank(found)
    if rank is None:
        return
    if render.job is None and ctx.trainjobs_using(manifest):
        return  # judged on each TrainJob of it, whose resources may change the count
    read_at = next((at for word, at in found.words if rank in word), None)
    message = (
        f"`DMLC_NUM_WORKER` is {workers}, a worker per GPU, but `DMLC_TASK_ID` is the "
        f"index of the pod ({f'0 to {pods - 1}' if pods > 1 else 'always 0'}), and the "
        "command takes it as its one worker's "
        f"rank (`{rank}`): rank 0's tracker waits for {workers} workers while {pods} "
        f"connect{'s' * (pods == 1)}, and the job hangs")
    yield from on_checked(manifest, render.job, (container.origin("env", index), read_at),
                          message, "the runtime's GPUs")
