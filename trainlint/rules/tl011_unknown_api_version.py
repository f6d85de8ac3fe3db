from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, mapping, mappings
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_API, TRAINER_KINDS
from trainlint.problem import Problem, Severity
from trainlint.rule import rule

#: Versions and groups users reach for by mistake, and why they are wrong (a version is
#: looked up before its group).
KNOWN_WRONG = {
    "kubeflow.org/v2alpha1": "the API of Trainer v2 before its first release (its group "
    "became `trainer.kubeflow.org` in kubeflow/trainer#2413 and its version `v1alpha1` in "
    "#2415), which no release serves",
    "kubeflow.org": "the Training Operator v1 group (PyTorchJob, TFJob...), which has no {kind}",
}


@rule(
    "TL011", "unknown-api-version", kinds={"", *TRAINER_KINDS}, severity=Severity.ERROR,
    remediation=f"Use `apiVersion: {TRAINER_API}`.",
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags TrainJobs, TrainingRuntimes and ClusterTrainingRuntimes whose `apiVersion` is not
    `trainer.kubeflow.org/v1alpha1`, the only version any Trainer v2 release serves:
    `trainer.kubeflow.org/v1`, or `kubeflow.org/v1` from the Training Operator v1.

    ## Why is this bad?
    The API server knows no such kind in that version and rejects the object ("no matches
    for kind"); no other check of trainlint applies to it either.

    ## When it stays silent
    On the served version `trainer.kubeflow.org/v1alpha1`, on kinds that are not
    Trainer kinds, and where a CustomResourceDefinition among the checked files or the
    context serves the kind in that version (a tree of Trainer's from before its first
    release, `kubeflow.org/v2alpha1`, ships the CRDs that serve it).

    ## Example
    ```yaml
    apiVersion: kubeflow.org/v1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef:
        name: torch-distributed
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef:
        name: torch-distributed
    ```
    """
    kind, version = manifest.kind, manifest.api_version
    if kind not in TRAINER_KINDS or not version or version == TRAINER_API:
        return
    group = version.rsplit("/", 1)[0] if "/" in version else ""
    if group and _served(
            ctx.custom_resource_definition(f"{kind.lower()}s.{group}"), kind, version):
        return
    if group == "trainer.kubeflow.org":
        why = f"Trainer serves `{kind}` only as `{TRAINER_API}`"
    elif (known := KNOWN_WRONG.get(version) or KNOWN_WRONG.get(group)) is not None:
        why = f"`{version}` is " + known.format(kind=kind)
    else:
        why = f"`{kind}` belongs to `{TRAINER_API}`"
    yield Problem(
        ("apiVersion",),
        f"`apiVersion: {version}` for a {kind}: {why}, so the API server rejects it "
        f'(no matches for kind "{kind}" in version "{version}"); use `{TRAINER_API}`',
    )


def _served(definition: Manifest | None, kind: str, version: str) -> bool:
    """Whether a CustomResourceDefinition (of the API Kubernetes still serves them in)
    serves `kind` in `version` (`group/name`)."""
    if definition is None or definition.api_version != "apiextensions.k8s.io/v1":
        return False
    spec = mapping(definition.body.get("spec"))
    group, name = version.rsplit("/", 1)
    return spec.get("group") == group and mapping(spec.get("names")).get("kind") == kind and any(
        served.get("name") == name and served.get("served") is True
        for _, served in mappings(spec.get("versions")))
