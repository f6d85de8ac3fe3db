"""The trainer job and pod as the Trainer controller builds them from a runtime and a TrainJob.

Each value keeps where it came from (`At`: object and key path), so a rule can report a
problem on the object, and at the key, that caused it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, TypeGuard

from trainlint.document import (
    Manifest,
    Path,
    dig,
    mapping,
    mappings,
    once_per_object,
    sequence,
)

if TYPE_CHECKING:
    from trainlint.engine import Context

ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
TRAINER = "trainer"
#: Containers the controller fills from the TrainJob, by ancestor.
MAIN_CONTAINERS = {
    TRAINER: "node",
    "dataset-initializer": "dataset-initializer",
    "model-initializer": "model-initializer",
}
JOBS: Path = ("spec", "template", "spec", "replicatedJobs")
#: The JobSet spec inside a runtime.
JOBSET: Path = JOBS[:-1]
#: From a runtime patch to the replicatedJobs it patches.
PATCH_JOBS: tuple[str, ...] = ("trainingRuntimeSpec", "template", "spec", "replicatedJobs")
#: From a replicatedJob to its pod spec.
POD_SPEC: Path = ("template", "spec", "template", "spec")


class At(NamedTuple):
    """Where a value was written: the object and the key path inside it (named tuples:
    a trainer pod makes a pair for every env variable, mount and argument)."""

    manifest: Manifest
    path: Path


class Value(NamedTuple):
    value: Any
    at: At


@once_per_object
def replicated_jobs(runtime: Manifest) -> tuple[tuple[int, dict[str, Any]], ...]:
    return tuple(mappings(dig(runtime.body, *JOBS)))


def ancestor(job: dict[str, Any]) -> object:
    """The ancestor label of a replicatedJob, read where the controller reads it."""
    return mapping(dig(job, "template", "metadata", "labels")).get(ANCESTOR_LABEL)


def is_mpi(runtime: Manifest) -> bool:
    return "mpi" in mapping(dig(runtime.body, "spec", "mlPolicy"))


@once_per_object
def trainer_job(runtime: Manifest) -> tuple[int, dict[str, Any]] | None:
    """The job the controller treats as the trainer: labelled `trainer`, else named `node`
    (`launcher` for MPI)."""
    jobs = replicated_jobs(runtime)
    for index, job in jobs:
        if ancestor(job) == TRAINER:
            return index, job
    fallback = "launcher" if is_mpi(runtime) else "node"
    return next(((index, job) for index, job in jobs if job.get("name") == fallback), None)


def named(items: object, name: str) -> tuple[int, dict[str, Any]] | None:
    """The first mapping of a list whose `name` is `name`."""
    return next(
        ((index, item) for index, item in mappings(items) if item.get("name") == name), None
    )


def override_containers(job: Manifest) -> Iterator[tuple[Path, dict[str, Any], list[str]]]:
    """(path, container, target job names) of every container in the TrainJob's
    `podSpecOverrides` (v2.0), `podTemplateOverrides` (v2.1) or `runtimePatches` (v2.2+),
    whichever are present."""
    for pod_path, pod, targets in override_pods(job):
        for index, container in mappings(pod.get("containers")):
            yield (*pod_path, "containers", index), container, targets


def override_pods(job: Manifest) -> Iterator[tuple[Path, dict[str, Any], list[str]]]:
    """(path, pod-spec-like mapping, target job names) of each override or patch."""
    spec = mapping(job.body.get("spec"))
    for field_name, pod_path in (("podSpecOverrides", ()), ("podTemplateOverrides", ("spec",))):
        for index, override in mappings(spec.get(field_name)):
            targets = [
                target["name"]
                for _, target in mappings(override.get("targetJobs"))
                if isinstance(target.get("name"), str)
            ]
            yield (("spec", field_name, index, *pod_path), mapping(dig(override, *pod_path)),
                   targets)
    for index, patch in mappings(spec.get("runtimePatches")):
        for job_index, patched in mappings(dig(patch, *PATCH_JOBS)):
            name = patched.get("name")
            path = ("spec", "runtimePatches", index, *PATCH_JOBS, job_index, *POD_SPEC)
            yield path, mapping(dig(patched, *POD_SPEC)), [name] if isinstance(name, str) else []


@dataclass
class TrainerPod:
    """The trainer job's pod: main container, volumes and settings, each with its origin."""

    job_name: str
    #: Where the pod spec is (to report a missing setting).
    pod_at: At
    namespace: str
    #: The main container's env variables by name (a later one wins, as in Kubernetes).
    env: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: The lists they came from, in order: (object, path, list). A TrainJob may set dozens
    #: of variables and rules report few, so where one was written is found on demand.
    env_lists: list[tuple[Manifest, Path, list[Any]]] = field(default_factory=list)
    command: list[Value] = field(default_factory=list)
    args: list[Value] = field(default_factory=list)
    #: Main-container volumeMounts, by mountPath.
    mounts: dict[str, Value] = field(default_factory=dict)
    volumes: dict[str, Value] = field(default_factory=dict)
    #: `volumeClaimPolicies` templates: JobSet creates a PVC for each and mounts it by name.
    claim_templates: dict[str, Value] = field(default_factory=dict)
    #: Names of volumes mounted by any container of the pod.
    mounted: set[str] = field(default_factory=set)
    grace: Value | None = None
    num_nodes: Value | None = None
    #: False when the runtime is unknown: absent mounts or volumes prove nothing.
    complete: bool = True
    #: What rules derive from the pod (its checkpoint directories...), by how they did.
    derived: dict[tuple[Any, ...], Any] = field(default_factory=dict, repr=False)

    def copy(self) -> TrainerPod:
        """A copy to lay a TrainJob over, with nothing derived yet."""
        return TrainerPod(
            self.job_name, self.pod_at, self.namespace, env=dict(self.env),
            env_lists=list(self.env_lists), command=list(self.command), args=list(self.args),
            mounts=dict(self.mounts), volumes=dict(self.volumes),
            claim_templates=dict(self.claim_templates), mounted=set(self.mounted),
            grace=self.grace, num_nodes=self.num_nodes, complete=self.complete,
        )

    def variable_at(self, variable: dict[str, Any]) -> At:
        """Where an env variable of `env` was written."""
        for manifest, path, variables in reversed(self.env_lists):
            for index, item in enumerate(variables):
                if item is variable:
                    return At(manifest, (*path, index))
        raise ValueError("not a variable of this pod")

    @property
    def nodes(self) -> int:
        count = self.num_nodes.value if self.num_nodes else 1
        return count if isinstance(count, int) and not isinstance(count, bool) else 1


def runtime_pod(runtime: Manifest) -> TrainerPod | None:
    """The trainer pod of a runtime on its own, or None without a trainer job."""
    found = trainer_job(runtime)
    if found is None:
        return None
    index, job = found
    job_path = (*JOBS, index)
    pod_path = (*job_path, *POD_SPEC)
    pod_spec = mapping(dig(job, *POD_SPEC))
    pod = TrainerPod(str(job.get("name", "")), At(runtime, pod_path), runtime.namespace)
    container = named(pod_spec.get("containers"), "node")
    if container is not None:
        at = (*pod_path, "containers", container[0])
        _add_container(pod, container[1], runtime, at)
    for kind in ("containers", "initContainers"):
        for _, other in mappings(pod_spec.get(kind)):
            pod.mounted.update(_mount_names(other))
    _add_volumes(pod, pod_spec, runtime, pod_path)
    policies = (*JOBSET, "volumeClaimPolicies")
    for policy_index, policy in mappings(dig(runtime.body, *policies)):
        for template_index, template in mappings(policy.get("templates")):
            name = dig(template, "metadata", "name")
            if isinstance(name, str):
                path = (*policies, policy_index, "templates", template_index)
                pod.claim_templates[name] = Value(template, At(runtime, path))
    if "terminationGracePeriodSeconds" in pod_spec:
        pod.grace = _value(pod_spec, "terminationGracePeriodSeconds", runtime, pod_path)
    if "numNodes" in mapping(dig(runtime.body, "spec", "mlPolicy")):
        pod.num_nodes = _value(
            dig(runtime.body, "spec", "mlPolicy"), "numNodes", runtime, ("spec", "mlPolicy")
        )
    return pod


def trainjob_pod(
    job: Manifest, runtime: Manifest | None, base: TrainerPod | None, version: tuple[int, int]
) -> TrainerPod:
    """The trainer pod of a TrainJob: its `spec.trainer` and overrides laid over a copy of
    `base`, the runtime's own pod (`runtime_pod`).

    Without the runtime the pod holds only what the TrainJob itself says (`complete` False).
    """
    pod = base.copy() if base is not None else None
    if pod is None:
        name = "launcher" if runtime is not None and is_mpi(runtime) else "node"
        pod = TrainerPod(name, At(job, ("spec",)), job.namespace, complete=runtime is not None)
    pod.namespace = job.namespace
    trainer = mapping(dig(job.body, "spec", "trainer"))
    trainer_path = ("spec", "trainer")
    _add_env(pod, trainer.get("env"), job, trainer_path)
    for key in ("command", "args"):
        if isinstance(trainer.get(key), list):
            setattr(pod, key, _strings(trainer[key], job, (*trainer_path, key)))
    if "numNodes" in trainer:
        pod.num_nodes = _value(trainer, "numNodes", job, trainer_path)
    for pod_path, override, targets in override_pods(job):
        if pod.job_name not in targets:
            continue
        _add_volumes(pod, override, job, pod_path)
        for index, container in mappings(override.get("containers")):
            mount_names = _mount_names(container)
            pod.mounted.update(mount_names)
            if container.get("name") == "node":
                _add_mounts(pod, container, job, (*pod_path, "containers", index))
        if version >= (2, 3) and "terminationGracePeriodSeconds" in override:
            pod.grace = _value(override, "terminationGracePeriodSeconds", job, pod_path)
    return pod


def _value(parent: dict[str, Any], key: str, manifest: Manifest, path: Path) -> Value:
    return Value(parent[key], At(manifest, (*path, key)))


def _strings(items: object, manifest: Manifest, path: Path) -> list[Value]:
    return [
        Value(item, At(manifest, (*path, index)))
        for index, item in enumerate(sequence(items))
        if isinstance(item, str)
    ]


def _mount_names(container: dict[str, Any]) -> set[str]:
    return {
        mount["name"] for _, mount in mappings(container.get("volumeMounts"))
        if isinstance(mount.get("name"), str)
    }


def _add_container(
    pod: TrainerPod, container: dict[str, Any], manifest: Manifest, path: Path
) -> None:
    _add_env(pod, container.get("env"), manifest, path)
    pod.command = _strings(container.get("command"), manifest, (*path, "command"))
    pod.args = _strings(container.get("args"), manifest, (*path, "args"))
    _add_mounts(pod, container, manifest, path)


def _add_env(pod: TrainerPod, variables: object, manifest: Manifest, path: Path) -> None:
    """The named env variables under `path` (a later one wins, as in Kubernetes)."""
    if not isinstance(variables, list):
        return
    pod.env_lists.append((manifest, (*path, "env"), variables))
    env = pod.env
    for variable in variables:
        if isinstance(variable, dict):
            name = variable.get("name")
            if isinstance(name, str):
                env[name] = variable


def _add_mounts(pod: TrainerPod, container: dict[str, Any], manifest: Manifest, path: Path) -> None:
    for index, mount in mappings(container.get("volumeMounts")):
        if isinstance(mount.get("mountPath"), str) and isinstance(mount.get("name"), str):
            at = At(manifest, (*path, "volumeMounts", index))
            pod.mounts[mount["mountPath"].rstrip("/") or "/"] = Value(mount, at)
            pod.mounted.add(mount["name"])


def _add_volumes(pod: TrainerPod, pod_spec: dict[str, Any], manifest: Manifest, path: Path) -> None:
    for index, volume in mappings(pod_spec.get("volumes")):
        if isinstance(volume.get("name"), str):
            pod.volumes[volume["name"]] = Value(volume, At(manifest, (*path, "volumes", index)))


# --- admission parity: what the Trainer webhooks look at ---

#: From v2.3 a runtime with this label bypasses the runtime webhooks entirely.
WEBHOOK_VALIDATION_LABEL = "trainer.kubeflow.org/webhook-validation"
#: The `mlPolicy` keys that select a framework plugin, in the order the API lists them.
FRAMEWORKS = ("torch", "mpi", "jax", "xgboost", "flux")


@once_per_object
def framework(runtime: Manifest) -> str | None:
    """The framework plugin a runtime selects (`torch`, `mpi`...), or None."""
    policy = mapping(dig(runtime.body, "spec", "mlPolicy"))
    for name in FRAMEWORKS:
        if name in policy:
            return name
    return None


def runtime_verdict(runtime: Manifest, version: tuple[int, int], detail: str) -> str:
    """What the runtime webhooks do with a runtime they should deny with `detail`.

    They validate a TrainingRuntime on create only, and from v2.3 skip any runtime with the
    opt-out label; trainlint checks all of these the same way."""
    labels = mapping(dig(runtime.body, "metadata", "labels"))
    if version >= (2, 3) and labels.get(WEBHOOK_VALIDATION_LABEL) == "disabled":
        return (
            f"no webhook stops it because the runtime carries `{WEBHOOK_VALIDATION_LABEL}: "
            f'disabled` (it would deny it with "{detail}")'
        )
    verdict = f'the Trainer webhook denies it ("{detail}")'
    if runtime.kind == "TrainingRuntime":
        verdict += ", but only on create: an update of a TrainingRuntime is never checked"
    return verdict


def container_names(job: dict[str, Any], kind: str = "containers") -> set[str]:
    """Names of the `containers` (or `initContainers`) of a replicatedJob's pod."""
    return {
        container["name"] for _, container in mappings(dig(job, *POD_SPEC, kind))
        if isinstance(container.get("name"), str)
    }


def override_targets(job: Manifest) -> Iterator[tuple[Path, str]]:
    """(path of the name, job name) of every job an override or patch targets."""
    spec = mapping(job.body.get("spec"))
    for field_name in ("podSpecOverrides", "podTemplateOverrides"):
        for index, override in mappings(spec.get(field_name)):
            for target_index, target in mappings(override.get("targetJobs")):
                if isinstance(target.get("name"), str):
                    yield (
                        ("spec", field_name, index, "targetJobs", target_index, "name"),
                        target["name"],
                    )
    for index, patch in mappings(spec.get("runtimePatches")):
        for job_index, patched in mappings(dig(patch, *PATCH_JOBS)):
            if isinstance(patched.get("name"), str):
                path: Path = ("spec", "runtimePatches", index, *PATCH_JOBS, job_index, "name")
                yield path, patched["name"]


# --- the silent-failure catalogue ---

#: Frameworks whose nodes rendezvous at `<trainjob>-node-0-0.<trainjob>`.
RENDEZVOUS_FRAMEWORKS = frozenset({"torch", "jax", "xgboost"})


@once_per_object
def jobset(runtime: Manifest) -> dict[str, Any]:
    return mapping(dig(runtime.body, *JOBSET))


def pod_specs(runtime: Manifest) -> Iterator[tuple[Path, dict[str, Any], dict[str, Any]]]:
    """(path of the pod spec, replicatedJob, pod spec) of every replicatedJob."""
    for index, job in replicated_jobs(runtime):
        yield (*JOBS, index, *POD_SPEC), job, mapping(dig(job, *POD_SPEC))


def job_metadata_path(index: int, job: dict[str, Any]) -> Path:
    """Where a replicatedJob's labels belong: its `template.metadata`, or `template`."""
    has_metadata = dig(job, "template", "metadata") is not None
    return (*JOBS, index, "template", *(("metadata",) if has_metadata else ()))


@once_per_object
def trainer_container(runtime: Manifest) -> tuple[Path, dict[str, Any]] | None:
    """(path, container) of the `node` container of the job labelled `trainer`."""
    for index, job in replicated_jobs(runtime):
        if ancestor(job) == TRAINER:
            pod_path = (*JOBS, index, *POD_SPEC)
            found = named(dig(job, *POD_SPEC, "containers"), "node")
            return ((*pod_path, "containers", found[0]), found[1]) if found else None
    return None


def pod_for(manifest: Manifest, ctx: Context) -> TrainerPod | None:
    """The trainer pod a rule judges: a TrainJob's over its runtime, or a runtime's own.

    Built once per object and run, as most checkpoint and storage rules ask for it; the
    pod is shared, so rules only read it.
    """
    key = ("trainer-pod", id(manifest), ctx.trainer_version)
    if key not in ctx.index.memo:
        if manifest.kind == "TrainJob":
            runtime = ctx.runtime_for(manifest)
            base = None if runtime is None else _runtime_pod(runtime, ctx)
            ctx.index.memo[key] = trainjob_pod(manifest, runtime, base, ctx.trainer_version)
        else:
            ctx.index.memo[key] = _runtime_pod(manifest, ctx)
    pod: TrainerPod | None = ctx.index.memo[key]
    return pod


def _runtime_pod(runtime: Manifest, ctx: Context) -> TrainerPod | None:
    """`runtime_pod`, built once per runtime and run: the runtime's own rules and those of
    every TrainJob that uses it start from the same pod."""
    return ctx.index.derived(runtime, ("runtime-pod",), lambda: runtime_pod(runtime))


def job_pod(job: Manifest, ctx: Context) -> TrainerPod:
    """`pod_for` a TrainJob, which always has one (its own, when the runtime is unknown)."""
    pod = pod_for(job, ctx)
    assert pod is not None
    return pod


def is_count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


#: The command that makes the torch plugin treat a TrainJob as a torchtune fine-tune.
TORCHTUNE_COMMAND = ["tune", "run"]


def is_torchtune(job: Manifest, runtime: Manifest) -> bool:
    """Whether the torch plugin applies its torchtune checks and recipes to this TrainJob."""
    command = dig(job.body, "spec", "trainer", "command")
    return framework(runtime) == "torch" and command == TORCHTUNE_COMMAND


#: A runtime patch's `manager`, checked as apimachinery does.
SUBDOMAIN_FORMAT = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
PATH_FORMAT = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+"
#: apimachinery's texts, as the webhook prints them.
SUBDOMAIN_ERROR = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    f"regex used for validation is '{SUBDOMAIN_FORMAT}')"
)
PATH_ERROR = f"Invalid path (regex used for validation is '{PATH_FORMAT}')"
NOT_PREFIXED = 'must be a domain-prefixed path (such as "acme.io/foo")'


def domain_prefixed_path_errors(value: str) -> list[str]:
    """apimachinery's `IsDomainPrefixedPath`, which the Trainer webhook applies to a runtime
    patch's `manager`: the details of its errors, in its order."""
    if not value:
        return ["Required value"]
    host, slash, path = value.partition("/")
    if not slash or not host or not path:
        return [NOT_PREFIXED]
    errors = []
    if len(host) > 253:
        errors.append("must be no more than 253 characters")
    if not re.fullmatch(SUBDOMAIN_FORMAT, host):
        errors.append(SUBDOMAIN_ERROR)
    if not re.fullmatch(PATH_FORMAT, path):
        errors.append(PATH_ERROR)
    return errors
