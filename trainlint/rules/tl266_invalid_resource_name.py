from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from trainlint.document import Manifest, dig, mapping
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.patches import SUBDOMAIN_FORMAT
from trainlint.problem import Problem, Severity
from trainlint.render.trainer import rendered
from trainlint.render.tree import first_on
from trainlint.rule import rule
from trainlint.suggest import closest

#: The resources a container may name without a domain (Kubernetes'
#: `IsStandardContainerResourceName`), besides `hugepages-<size>`.
STANDARD = ("cpu", "memory", "ephemeral-storage")
#: What a domain-less GPU name most likely meant.
DEVICES = {"gpu": "nvidia.com/gpu", "nvidia.com": "nvidia.com/gpu", "amd.com": "amd.com/gpu"}
#: The name part of a qualified name, and a DNS subdomain (its prefix), as Kubernetes'
#: `IsQualifiedName` reads them.
_NAME_PART = re.compile(r"(?:[A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_SUBDOMAIN = re.compile(SUBDOMAIN_FORMAT)
_SHAPE = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
          "with an alphanumeric character")


def refusal(name: str) -> str | None:
    """What the API server says of a container's resource named `name` (the first of its
    complaints), or None where it takes it (Kubernetes' `validateContainerResourceName`)."""
    if name.count("/") > 1:
        return f"a qualified name {_SHAPE}"
    prefix, slash, short = name.rpartition("/")
    found = (_prefix_refusal(prefix) if slash else None) or _name_refusal(short)
    if found is None and not slash and name not in STANDARD and not name.startswith("hugepages-"):
        return "must be a standard resource for containers"
    if found is None and slash and "kubernetes.io/" not in name and (
            name.startswith("requests.") or len(prefix) > 253 - len("requests.")):
        return "doesn't follow extended resource name standard"  # its quota's name is none
    return found


def _prefix_refusal(prefix: str) -> str | None:
    if not prefix:
        return "prefix part must be non-empty"
    if len(prefix) <= 253 and _SUBDOMAIN.fullmatch(prefix):
        return None
    return ("prefix part a lowercase RFC 1123 subdomain must consist of lower case "
            "alphanumeric characters, '-' or '.', and must start and end with an "
            "alphanumeric character")


def _name_refusal(short: str) -> str | None:
    if not short:
        return "name part must be non-empty"
    if len(short) > 63:
        return "name part must be no more than 63 characters"
    return None if _NAME_PART.fullmatch(short) else f"name part {_SHAPE}"


@rule(
    "TL266", "invalid-resource-name",
    kinds=TRAINER_KINDS, severity=Severity.ERROR,
    remediation=(
        "Name the resource as the device plugin does (`nvidia.com/gpu`), or use `cpu`, "
        "`memory`, `ephemeral-storage` or `hugepages-<size>`."
    ),
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Checks the names of the resources requested and limited in every container of a
    runtime, and in a TrainJob's `resourcesPerNode` as the controller merges it into the
    trainer's container, against what Kubernetes allows a container: `cpu`, `memory`,
    `ephemeral-storage`, `hugepages-<size>`, or a domain-prefixed name such as
    `nvidia.com/gpu`.

    ## Why is this bad?
    No schema checks the keys of `resources` or `resourcesPerNode`: Trainer accepts the
    TrainJob and builds the JobSet, and the API server rejects the Job when the JobSet
    controller creates it (`must be a standard resource for containers`). The Job never
    runs; the JobSet controller retries, and only a `JobCreationFailed` event on the JobSet
    says why (the TrainJob shows nothing).

    ## When it stays silent
    On the names Kubernetes takes; on a runtime's trainer container, the resources a
    TrainJob's `resourcesPerNode` brings are judged on the TrainJob.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: t5-large
    spec:
      runtimeRef:
        name: torch-distributed
      trainer:
        resourcesPerNode:
          limits:
            nvidia.com: "8"
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: t5-large
    spec:
      runtimeRef:
        name: torch-distributed
      trainer:
        resourcesPerNode:
          limits:
            nvidia.com/gpu: "8"
    ```
    """
    render = rendered(manifest, ctx)
    if not render.complete:  # what the TrainJob asks for is all there is to judge
        given = mapping(dig(manifest.body, "spec", "trainer", "resourcesPerNode"))
        for part in ("limits", "requests"):
            for name in _refused(mapping(given.get(part))):
                yield Problem(("spec", "trainer", "resourcesPerNode", part, name),
                              _message(name, part, "the trainer's container"))
        return
    for container in render.every_container():
        resources = mapping(container.body.get("resources"))
        for part in ("limits", "requests"):
            for name in _refused(mapping(resources.get(part))):
                at = first_on(manifest, container.origin("resources", part, name))
                if at is not None:
                    whose = f"{container.noun} `{container.name}`"
                    yield Problem(at.path, _message(name, part, whose))


def _refused(amounts: dict[str, Any]) -> Iterator[str]:
    return (name for name in amounts if refusal(name) is not None)


def _message(name: str, part: str, whose: str) -> str:
    guess = DEVICES.get(name) or closest(name, STANDARD)
    return (
        f"resource `{name}` in the {part} of {whose} is no name a container may have "
        f"(`{refusal(name)}`): the API server rejects the Job, so it never runs, and only a "
        "`JobCreationFailed` event on the JobSet says why"
        + (f"; did you mean `{guess}`?" if guess else "")
    )
