from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig
from trainlint.engine.context import Context
from trainlint.problem import Problem, Related, Severity
from trainlint.render import TRAINER
from trainlint.render.trainer import rendered
from trainlint.rule import rule

IMAGE = ("spec", "trainer", "image")


@rule(
    "TL278", "mpi-workers-keep-runtime-image", kinds={"TrainJob"}, severity=Severity.WARNING,
    remediation=(
        "Use a runtime whose `node` job runs the same image (a runtime per image: a "
        "TrainJob's `runtimePatches` cannot set a container's image), and drop `image` here."
    ),
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Renders the JobSet the controller builds for a TrainJob on an MPI runtime (DeepSpeed's
    and MLX's included) and flags `spec.trainer.image` when the `node` job, whose pods run
    the other ranks, keeps another image.

    ## Why is this bad?
    The controller sets the TrainJob's image on the `node` container of the job labelled
    `trainer` only: on an MPI runtime, the launcher. The workers keep the runtime's image
    (kubeflow/trainer#2825, #4030, in every release so far). `mpirun` starts the ranks on
    the workers over SSH, in their image: the program, libraries and code that `image`
    adds are missing there, so those ranks fail to start, or run another version of the
    code than rank 0. Labelling the `node` job `trainer` as well gives it the image, but
    also the TrainJob's `command` and `args`, which then replace the workers' SSH server.

    ## When it stays silent
    When the `node` job runs the TrainJob's image (its runtime's, or it is labelled
    `trainer` too), on runtimes that are not MPI or have no `node` job, when the TrainJob
    sets no image, and when the runtime is not among the checked files.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: horovod-mnist
    spec:
      runtimeRef:
        name: deepspeed-distributed
      trainer:
        numNodes: 3
        image: registry.example.com/horovod-mnist:1.2
    ```

    Use instead:
    ```yaml
    # A runtime of its own, whose jobs both run the image.
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainingRuntime
    metadata:
      name: horovod-mnist
    spec:
      mlPolicy:
        numNodes: 3
        mpi: {mpiImplementation: OpenMPI, runLauncherAsNode: true}
      template:
        spec:
          replicatedJobs:
            - name: launcher
              template:
                metadata:
                  labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
                spec:
                  template:
                    spec:
                      containers:
                        - {name: node, image: registry.example.com/horovod-mnist:1.2}
            - name: node
              template:
                spec:
                  template:
                    spec:
                      containers:
                        - name: node
                          image: registry.example.com/horovod-mnist:1.2
                          command: [/usr/sbin/sshd, -De]
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: horovod-mnist
    spec:
      runtimeRef:
        kind: TrainingRuntime
        name: horovod-mnist
      trainer:
        numNodes: 3
    ```
    """
    image = dig(job.body, *IMAGE)
    render = rendered(job, ctx)
    workers = render.job_named("node")
    if render.framework != "mpi" or render.runtime is None or workers is None:
        return
    if not isinstance(image, str) or workers.ancestor == TRAINER or render.trainer is None:
        return
    container = workers.container("node")
    kept = None if container is None else container.body.get("image")
    if container is None or not isinstance(kept, str) or kept == image:
        return
    origin = container.origin("image")
    yield Problem(
        IMAGE,
        f"`image` reaches only job `{render.trainer.name}`, the one labelled `{TRAINER}`: the "
        f"pods of job `node`, where mpirun starts the other ranks, keep the image `{kept}` "
        f"of {render.runtime.describe()}: those ranks run in `{kept}`, not in `{image}`",
        related=() if origin.manifest is None else (
            Related(origin.manifest, origin.path, "the workers' image"),),
    )
