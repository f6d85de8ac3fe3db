from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from trainlint.document import Manifest, Path, dig, mapping, mappings, sequence
from trainlint.engine import Context
from trainlint.model.check import TRAINER_API
from trainlint.rule import Problem, Severity, TrainerVersion, rule

# The CRDs' CEL rules (`x-kubernetes-validations`) that one object can break on its own;
# the `self == oldSelf` immutability rules need the stored object and are not here.
RFC_1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://.+$")
MANAGERS = ("trainer.kubeflow.org/trainjob-controller", "kueue.x-k8s.io/multikueue")
ONE_POLICY = "Only one of the policy can be configured"
POLICIES_V20 = ("torch", "mpi")
POLICIES_V22 = ("torch", "mpi", "jax", "xgboost", "flux")
TEMPLATE_SPEC: Path = ("spec", "template", "spec")


def _present(parent: dict[str, Any], key: str) -> bool:
    """CEL `has()`: the key is set (a null value is pruned before validation)."""
    return parent.get(key) is not None


def _problem(path: Path, kind: str, crd_message: str, what: str, advice: str) -> Problem:
    return Problem(path, f'{what}: the API server rejects the {kind} with "{crd_message}"; '
                         f"{advice}")


@rule(
    "TL010", "crd-validation-rule", kinds={"TrainJob", "TrainingRuntime", "ClusterTrainingRuntime"},
    severity=Severity.ERROR,
    fix="Change the object so that the CRD's validation rule holds (see the message).",
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Evaluates the validation rules (CEL `x-kubernetes-validations`) of the selected
    release's CRDs and reports them with the CRD's own message: one ML policy per runtime
    ("Only one of the policy can be configured"), RFC 1035 TrainJob names (v2.1+),
    `storageUri` URI form (v2.3+), `managedBy` values, torch `numProcPerNode` values
    (v2.0–v2.1), flux `numProcPerNode` ≥ 1 (v2.2+), `envInjection` container names
    (v2.3+), `startupPolicy: InOrder` with `dependsOn`, and namespaces in
    `volumeClaimPolicies` templates (v2.2+).

    ## Why is this bad?
    The API server rejects the object (HTTP 422 `Invalid`). For a runtime this surfaces
    only when the platform team applies it; for a TrainJob, only at submission.

    ## When it stays silent
    On objects that are not `trainer.kubeflow.org/v1alpha1`, and on rules whose inputs
    are missing or of the wrong type (the schema rules report those).

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-and-mpi
    spec:
      mlPolicy:
        numNodes: 2
        torch: {}
        mpi:
          numProcPerNode: 1
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-only
    spec:
      mlPolicy:
        numNodes: 2
        torch: {}
    ```
    """
    if manifest.api_version != TRAINER_API:
        return
    release, kind = ctx.trainer_version, manifest.kind
    checks = _trainjob(manifest.body, release) if kind == "TrainJob" else _runtime(
        manifest.body, release)
    for path, crd_message, what, advice in checks:
        yield _problem(path, kind, crd_message, what, advice)


Found = Iterator[tuple[Path, str, str, str]]


def _trainjob(body: dict[str, Any], release: TrainerVersion) -> Found:
    name = mapping(body.get("metadata")).get("name")
    if release >= (2, 1) and isinstance(name, str):
        if not RFC_1035.match(name):
            yield (("metadata", "name"), "metadata.name must match RFC 1035 DNS label format",
                   f"`{name}` is not an RFC 1035 label",
                   "use lower-case letters, digits and '-', starting with a letter")
        if len(name) > 63:
            yield (("metadata", "name"), "metadata.name must be no more than 63 characters",
                   f"the name has {len(name)} characters", "shorten it to 63")
    spec = mapping(body.get("spec"))
    managed_by = spec.get("managedBy")
    if isinstance(managed_by, str) and managed_by not in MANAGERS:
        yield (("spec", "managedBy"), "ManagedBy must be trainer.kubeflow.org/trainjob-controller"
               " or kueue.x-k8s.io/multikueue if set",
               f"`managedBy: {managed_by}` is not a known controller",
               f"remove it, or use `{MANAGERS[1]}` for MultiKueue")
    if release >= (2, 3):
        for source in ("dataset", "model"):
            uri = dig(spec, "initializer", source, "storageUri")
            if isinstance(uri, str) and uri and not URI.match(uri):
                yield (("spec", "initializer", source, "storageUri"),
                       "storageUri may be empty, or it must be a valid URI (scheme://...)",
                       f"`{uri}` is not a URI",
                       "write it with a scheme, such as `hf://org/name` or `s3://bucket/path`")


def _runtime(body: dict[str, Any], release: TrainerVersion) -> Found:
    policy = mapping(dig(body, "spec", "mlPolicy"))
    yield from _policies(policy, release)
    jobset = mapping(dig(body, *TEMPLATE_SPEC))
    order = dig(jobset, "startupPolicy", "startupPolicyOrder")
    depends = [index for index, job in mappings(jobset.get("replicatedJobs"))
               if _present(job, "dependsOn")]
    if order == "InOrder" and depends:
        yield ((*TEMPLATE_SPEC, "startupPolicy", "startupPolicyOrder"),
               "StartupPolicy and DependsOn APIs are mutually exclusive",
               f"`startupPolicyOrder: InOrder` with `dependsOn` on replicatedJobs[{depends[0]}]",
               "keep one of them (dependsOn orders jobs more precisely)")
    if release >= (2, 2):
        for index, claim_policy in mappings(jobset.get("volumeClaimPolicies")):
            for position, template in mappings(claim_policy.get("templates")):
                if dig(template, "metadata", "namespace"):
                    yield ((*TEMPLATE_SPEC, "volumeClaimPolicies", index, "templates", position,
                            "metadata", "namespace"),
                           "namespace cannot be set for VolumeClaimPolicies templates",
                           "a namespace on a claim template",
                           "remove it (the claims are created in the TrainJob's namespace)")


def _policies(policy: dict[str, Any], release: TrainerVersion) -> Found:
    base: Path = ("spec", "mlPolicy")
    names = POLICIES_V20 if release < (2, 2) else POLICIES_V22
    configured = [name for name in names if _present(policy, name)]
    if len(configured) > 1:
        yield ((*base, configured[1]), ONE_POLICY,
               f"`mlPolicy` sets {', '.join(configured[:-1])} and {configured[-1]}",
               "keep the one framework the runtime runs")
    torch = mapping(policy.get("torch"))
    if release < (2, 2):
        if _present(policy, "numNodes") and _present(torch, "elasticPolicy"):
            yield ((*base, "numNodes"),
                   "numNodes should not be set if torch.elasticPolicy is configured",
                   "`numNodes` beside `torch.elasticPolicy`", "remove one of them")
        procs = torch.get("numProcPerNode")
        if procs is not None and not _valid_torch_procs(procs):
            yield ((*base, "torch", "numProcPerNode"),
                   "NumProcPerNode must be equal to auto, cpu, gpu, or int value",
                   f"`numProcPerNode: {procs}` is not allowed",
                   "use auto, cpu, gpu or a positive number")
    if release >= (2, 2):
        procs = dig(policy, "flux", "numProcPerNode")
        if isinstance(procs, int) and not isinstance(procs, bool) and procs < 1:
            yield ((*base, "flux", "numProcPerNode"), "NumProcPerNode in fluxPolicy must be >= 1",
                   f"`numProcPerNode: {procs}`", "use 1 or more")
    if release >= (2, 3):
        targets = dig(torch, "envInjection", "targets")
        for index, target in mappings(targets):
            for position, name in enumerate(sequence(target.get("containerNames"))):
                if name == "node":
                    yield ((*base, "torch", "envInjection", "targets", index, "containerNames",
                            position),
                           "containerNames must not include the main node container because "
                           "PET_* envs are always injected into it",
                           "`node` among `containerNames`",
                           "remove it, the node container gets the variables anyway")


def _valid_torch_procs(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return value > 0
    return value in ("auto", "cpu", "gpu") or not isinstance(value, str)
