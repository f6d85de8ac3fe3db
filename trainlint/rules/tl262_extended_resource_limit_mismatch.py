from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trainlint.document import KeyPath, Manifest, dig, mapping
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render.trainer import rendered
from trainlint.render.tree import first_on
from trainlint.rule import rule


def _extended(name: str) -> bool:
    """Extended resources (`nvidia.com/gpu`): domain-prefixed, outside `kubernetes.io`."""
    domain = name.split("/", 1)[0] if "/" in name else ""
    return bool(domain) and domain != "kubernetes.io" and not domain.endswith(".kubernetes.io")


def _mismatches(requests: dict[str, Any], limits: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(resource, what is wrong) for extended resources whose request is not its limit."""
    for name, amount in requests.items():
        if not _extended(name):
            continue
        if name not in limits:
            yield name, "is requested without a limit"
        elif str(limits[name]) != str(amount):
            yield name, f"is requested as {amount} but limited to {limits[name]}"


def _message(name: str, what: str) -> str:
    return (
        f"extended resource `{name}` {what}: the API server rejects the Job (requests must "
        "equal limits for resources that cannot be overcommitted), so it is never created, "
        "and only a `JobCreationFailed` event on the JobSet says why"
    )


@rule(
    "TL262", "extended-resource-limit-mismatch",
    kinds=TRAINER_KINDS, severity=Severity.ERROR,
    remediation=(
        "Set extended resources such as `nvidia.com/gpu` in `limits` (requests default to them)."
    ),
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags extended resources (`nvidia.com/gpu`, `amd.com/gpu`...) that are requested
    without a limit, or whose request differs from the limit: in any container of a
    runtime, or in a TrainJob's `resourcesPerNode` (from v2.3 merged over the runtime's
    trainer container, as the controller does).

    ## Why is this bad?
    Extended resources cannot be overcommitted: the API server rejects a pod whose
    request is not equal to its limit, and a Job whose pod template holds one. Trainer
    accepts the TrainJob; the JobSet controller's Job is rejected, the controller retries,
    and only a `JobCreationFailed` event on the JobSet says why (the TrainJob shows
    nothing).

    ## When it stays silent
    On requests equal to limits, on limits without requests (requests default to them),
    and on resources that are not extended: `cpu`, `memory`, `ephemeral-storage`,
    `hugepages-*` and `kubernetes.io/` names.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: run
    spec:
      runtimeRef:
        name: torch-distributed
      trainer:
        resourcesPerNode:
          requests:
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
        name: torch-distributed
      trainer:
        resourcesPerNode:
          limits:
            nvidia.com/gpu: 1
    ```
    """
    render = rendered(manifest, ctx)
    if not render.complete:  # what the TrainJob asks for is all there is to judge
        given = mapping(dig(manifest.body, "spec", "trainer", "resourcesPerNode"))
        path: KeyPath = ("spec", "trainer", "resourcesPerNode")
        for name, what in _mismatches(mapping(given.get("requests")), mapping(given.get("limits"))):
            part = "requests" if name in mapping(given.get("requests")) else "limits"
            yield Problem((*path, part, name), _message(name, what))
        return
    for kind in ("initContainers", "containers"):
        for container in render.containers(kind):
            resources = mapping(container.body.get("resources"))
            for name, what in _mismatches(
                mapping(resources.get("requests")), mapping(resources.get("limits"))
            ):
                at = first_on(
                    manifest, container.origin("resources", "requests", name),
                    container.origin("resources", "limits", name),
                )
                if at is not None:
                    yield Problem(at.path, _message(name, what))
