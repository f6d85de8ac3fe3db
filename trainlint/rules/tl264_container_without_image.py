from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, mapping
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render import TRAINER, Container
from trainlint.render.trainer import rendered, trainer_of
from trainlint.rule import rule


@rule(
    "TL264", "container-without-image",
    kinds=TRAINER_KINDS, severity=Severity.ERROR,
    remediation=(
        "Give the container an image in the runtime (or `spec.trainer.image` for the trainer)."
    ),
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Renders the JobSet the controller builds (see `trainlint render`) and flags every
    container and init container that ends up without an image: one of the runtime's
    that nothing fills, or the trainer's `node` container when neither the runtime nor the
    TrainJob's `spec.trainer.image` gives one.

    ## Why is this bad?
    No webhook looks at images: the TrainJob is accepted, and the API server rejects the
    pods when the Job is created (`spec.template.spec.containers[0].image: Required
    value`) when the JobSet controller creates the Job. The Job never runs; the JobSet
    controller retries, and only a `JobCreationFailed` event on the JobSet says why (the
    TrainJob shows nothing).

    ## When it stays silent
    On the trainer's `node` container of a runtime (every TrainJob may bring the image;
    TL201 says when the runtime's trainer label is missing, so that it cannot), on
    containers a TrainJob's override or patch adds under a name the runtime lacks (TL208
    reports those), and when the TrainJob's runtime is not among the checked files.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-with-sidecar
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
                        - name: log-shipper
                          args: [--follow, /var/log/train]
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-with-sidecar
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
                        - name: log-shipper
                          image: fluent/fluent-bit:3.2
                          args: [--follow, /var/log/train]
    ```
    """
    render = rendered(manifest, ctx)
    if not render.complete:
        return
    for container in render.every_container():
        image = container.body.get("image")
        if isinstance(image, str) and image.strip():
            continue
        declared = container.origin("name")
        filled = _filled_by_trainjob(container)
        if manifest.kind != "TrainJob":
            meant = trainer_of(render) is container.job and container.name == "node"
            if filled or meant or declared.manifest is not manifest:
                continue  # the TrainJob's image (TL201 says when the label is missing)
            yield Problem(declared.path[:-1], _message(container, "every TrainJob using "
                                                       "this runtime"))
        elif filled:
            trainer = mapping(mapping(manifest.body.get("spec")).get("trainer"))
            path = ("spec", "trainer") if trainer else ("spec", "runtimeRef")
            yield Problem(path, _message(
                container, "this TrainJob (it sets no `spec.trainer.image` and the "
                "runtime gives none)"))


def _filled_by_trainjob(container: Container) -> bool:
    """Whether the container is one the controller gives the TrainJob's image."""
    return (container.kind == "containers" and container.name == "node"
            and container.job.ancestor == TRAINER)


def _message(container: Container, whose: str) -> str:
    noun = container.noun
    return (
        f"{noun} `{container.name}` of job `{container.job.name}` has no image: the API "
        f"server rejects the Job of {whose} (`image: Required value`), so it never runs, "
        "and only a `JobCreationFailed` event on the JobSet says why"
    )
