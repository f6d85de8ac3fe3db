from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trainlint.document import Manifest, dig, mapping, mappings
from trainlint.engine.context import Context
from trainlint.problem import Problem, Related, Severity
from trainlint.render import TRAINER, Container
from trainlint.render.quantity import amount
from trainlint.render.trainer import rendered
from trainlint.rule import rule

TRAINER_PATH = ("spec", "trainer")


@rule(
    "TL278", "mpi-workers-miss-trainer-settings", kinds={"TrainJob"},
    severity=Severity.WARNING,
    remediation=(
        "Use a runtime whose `node` job runs the same image, resources and variables (a "
        "runtime per image: `runtimePatches` cannot set a container's image or resources), "
        "or set `runLauncherAsNode: true`, with which resources and variables reach it."
    ),
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Renders the JobSet the controller builds for a TrainJob on an MPI runtime (DeepSpeed's
    and MLX's included) and flags `spec.trainer.image`, `resourcesPerNode` or `env` that
    the `node` job, whose pods run the other ranks, does not get: its `node` container
    keeps another image, lacks a resource the TrainJob asks for, or a variable it sets.

    ## Why is this bad?
    The controller sets the TrainJob's image, command and args on the `node` container of
    the job labelled `trainer` only: on an MPI runtime, the launcher. Its resources and
    variables go there too, and to the `node` job only when the runtime runs the launcher
    as a node (`runLauncherAsNode`, from v2.1; kubeflow/trainer#2825, #4030). `mpirun`
    starts the ranks on the workers over SSH, in the workers' pods: with the runtime's
    image the program, libraries and code the TrainJob's image adds are missing there;
    without the resources the ranks run without the GPUs asked for; without the variables,
    without their settings. Labelling the `node` job `trainer` as well gives it the image,
    but also the TrainJob's `command` and `args`, which then replace the workers' SSH
    server.

    ## When it stays silent
    When the `node` job gets each of them (or the runtime gives it the same image,
    resources and variables), on runtimes that are not MPI or have no `node` job, and
    when the runtime is not among the checked files.

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
    render = rendered(job, ctx)
    workers = render.job_named("node")
    launcher = render.trainer
    if render.framework != "mpi" or render.runtime is None or workers is None:
        return
    container = workers.container("node")
    if container is None or launcher is None or launcher.container("node") is None:
        return  # without a `node` container the launcher takes none of them either
    trainer = mapping(dig(job.body, *TRAINER_PATH))
    missed = _missed(trainer, container, render.runtime.describe())
    if not missed:
        return
    keys = ", ".join(f"`{key}`" for key, _ in missed)
    origin = container.origin()
    yield Problem(
        (*TRAINER_PATH, missed[0][0]),
        f"{keys} of `spec.trainer` reach{'es' * (len(missed) == 1)} only job "
        f"`{launcher.name}` (labelled `{TRAINER}`), not job `node`, where mpirun starts the "
        f"other ranks: its pods run {', '.join(run for _, run in missed)}",
        related=() if origin.manifest is None else (
            Related(origin.manifest, origin.path, "the workers' container"),),
    )


def _missed(
    trainer: dict[str, Any], container: Container, runtime: str
) -> list[tuple[str, str]]:
    """Each key of `trainer` whose value the workers' container does not have, with how
    the workers run instead."""
    missed = []
    image, kept = trainer.get("image"), container.body.get("image")
    if isinstance(image, str) and isinstance(kept, str) and _reference(kept) != _reference(image):
        missed.append(("image", f"the image `{kept}` of {runtime}"))
    resources = mapping(container.body.get("resources"))
    limits = mapping(resources.get("limits"))
    # A request not written is the limit (Kubernetes defaults one to the other).
    have = {"limits": limits, "requests": {**limits, **mapping(resources.get("requests"))}}
    asked = mapping(trainer.get("resourcesPerNode"))
    other = [  # by name, however the TrainJob orders them
        (f"no `{name}` {kind[:-1]}" if had is None else f"a `{name}` {kind[:-1]} of {had}")
        + f" ({value} asked for)"
        for kind in have
        for name, value in sorted(mapping(asked.get(kind)).items())
        if amount(had := have[kind].get(name)) != amount(value)
    ]
    if other:
        missed.append(("resourcesPerNode", f"with {', '.join(other)}"))
    unset = [name for _, item in mappings(trainer.get("env"))
             if isinstance(name := item.get("name"), str)
             and _variable(container.env.get(name, (0, {}))[1]) != _variable(item)]
    if unset:
        names = ", ".join(f"`{name}`" for name in unset)
        missed.append(("env", f"without the variable{'s' * (len(unset) > 1)} {names}"))
    return missed


def _reference(image: str) -> str:
    """An image as the container runtime pulls it: `pytorch/pytorch` is
    `docker.io/pytorch/pytorch:latest`, `busybox` `docker.io/library/busybox:latest`."""
    first, slash, _ = image.partition("/")
    if not slash or not ("." in first or ":" in first or first == "localhost"):
        image = f"docker.io/{image}"
    registry, _, path = image.partition("/")
    if registry == "docker.io" and "/" not in path:
        image = f"docker.io/library/{path}"
    tail = image.rpartition("/")[2]
    return image if ":" in tail or "@" in tail else f"{image}:latest"


def _variable(item: dict[str, Any]) -> dict[str, Any]:
    """A variable as Kubernetes reads it: an empty `value` is none."""
    return {key: value for key, value in item.items() if value not in ("", None)}
