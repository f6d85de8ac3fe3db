from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trainlint.document import Manifest, Path, dig, mapping
from trainlint.engine import Context
from trainlint.rule import Problem, Severity, rule
from trainlint.trainer import trainer_container


@rule(
    "TL258", "gpu-resource-not-a-count",
    kinds={"TrainingRuntime", "ClusterTrainingRuntime", "TrainJob"}, severity=Severity.WARNING,
    since="2.1",
    fix="Keep one GPU count resource (`nvidia.com/gpu`) among the trainer's resources.",
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Looks at the trainer's resources (the runtime's `node` container, or a TrainJob's
    `resourcesPerNode`) for resource names containing `gpu` that are not a GPU count
    (HAMi's `nvidia.com/gpumem`, `nvidia.com/gpucores`), or several names containing `gpu`.

    ## Why is this bad?
    The controller takes the GPUs per node from the first resource whose name contains
    `gpu`, in random map order. A memory size or a core percentage then becomes the GPU
    count: a wrong number of MPI slots, XGBoost workers or torchtune devices.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: run
    spec:
      runtimeRef:
        name: mpi-distributed
      trainer:
        resourcesPerNode:
          limits:
            nvidia.com/gpu: 1
            nvidia.com/gpumem: 8192
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: run
    spec:
      runtimeRef:
        name: mpi-distributed
      trainer:
        resourcesPerNode:
          limits:
            nvidia.com/gpu: 1
    ```
    """
    if manifest.kind == "TrainJob":
        resources: Any = dig(manifest.body, "spec", "trainer", "resourcesPerNode")
        path: Path = ("spec", "trainer", "resourcesPerNode")
    else:
        found = trainer_container(manifest)
        if found is None:
            return
        resources, path = found[1].get("resources"), (*found[0], "resources")
    for part in ("limits", "requests"):
        names = [name for name in mapping(mapping(resources).get(part)) if "gpu" in name]
        odd = [name for name in names if _not_a_count(name)]
        if odd:
            yield Problem(
                (*path, part, odd[0]),
                f"`{odd[0]}` is not a GPU count but its name contains `gpu`: the controller "
                "may read it as the GPUs per node, which sizes MPI slots, XGBoost workers and "
                "torchtune devices",
            )
        elif len(names) > 1:
            yield Problem(
                (*path, part, names[1]),
                f"several resources contain `gpu` ({', '.join(names)}): the controller reads "
                "the GPUs per node from one of them in random order",
            )


def _not_a_count(name: str) -> bool:
    """`nvidia.com/gpumem`, `nvidia.com/gpucores`: `gpu` in the name, but not the count."""
    last = name.rsplit("/", 1)[-1]
    return "gpu" in last and last != "gpu"
