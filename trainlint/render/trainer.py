"""What rules read of a runtime and a TrainJob as written, and the render they judge pods by.

The pods the controller builds are the render's (`rendered`: `trainlint.render`, every
value with its origin); this module has the rest: a runtime's replicatedJobs and trainer
job as written, the overrides and patches a TrainJob brings (for the admission checks, which
read them as written), and what the Trainer webhooks look at.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from trainlint.document import KeyPath, Manifest, dig, mapping, mappings
from trainlint.memo import PerObject, PerRun, per_value
from trainlint.patches import PATCH_JOBS
from trainlint.render import (
    ANCESTOR_LABEL,
    TRAINER,
    Container,
    Job,
    Render,
    config_map_names,
)
from trainlint.render.build import render

if TYPE_CHECKING:
    from trainlint.lookups import Lookups

__all__ = ["ANCESTOR_LABEL", "TRAINER"]

#: Containers the controller fills from the TrainJob, by ancestor.
MAIN_CONTAINERS = {
    TRAINER: "node",
    "dataset-initializer": "dataset-initializer",
    "model-initializer": "model-initializer",
}
JOBS: KeyPath = ("spec", "template", "spec", "replicatedJobs")
#: The JobSet spec inside a runtime.
JOBSET: KeyPath = JOBS[:-1]
#: From a replicatedJob to its pod spec.
POD_SPEC: KeyPath = ("template", "spec", "template", "spec")
#: The job the controller found by this name before v2.0.0, for the trainer and the MPI
#: workers alike: upstream's pull request 2548 read the ancestor label and named it `node`
#: instead, and runtimes written before still carry it.
PRE_RELEASE_NODE = "trainer-node"
#: The TrainJob field the controller reads its pod overrides from, per release.
OVERRIDES = {(2, 0): "podSpecOverrides", (2, 1): "podTemplateOverrides"}


@per_value
def replicated_jobs(runtime: Manifest) -> tuple[tuple[int, dict[str, Any]], ...]:
    return tuple(mappings(dig(runtime.body, *JOBS)))


def ancestor(job: dict[str, Any]) -> object:
    """The ancestor label of a replicatedJob, read where the controller reads it."""
    return mapping(dig(job, "template", "metadata", "labels")).get(ANCESTOR_LABEL)


def is_mpi(runtime: Manifest) -> bool:
    return "mpi" in mapping(dig(runtime.body, "spec", "mlPolicy"))


@per_value
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


def override_containers(
    job: Manifest, version: tuple[int, int]
) -> Iterator[tuple[KeyPath, dict[str, Any], list[str]]]:
    """(path, container, target job names) of every container in the overrides or patches
    the release reads: `podSpecOverrides` (v2.0), `podTemplateOverrides` (v2.1) or
    `runtimePatches` (v2.2+)."""
    for pod_path, pod, targets in override_pods(job, version):
        for index, container in mappings(pod.get("containers")):
            yield (*pod_path, "containers", index), container, targets


def override_pods(
    job: Manifest, version: tuple[int, int]
) -> Iterator[tuple[KeyPath, dict[str, Any], list[str]]]:
    """(path, pod-spec-like mapping, target job names) of each override or patch the
    release reads (those of other releases are pruned by the API server)."""
    spec = mapping(job.body.get("spec"))
    field_name = OVERRIDES.get(version, "runtimePatches")
    if field_name != "runtimePatches":
        pod_path: KeyPath = ("spec",) if field_name == "podTemplateOverrides" else ()
        for index, override in mappings(spec.get(field_name)):
            targets = [
                target["name"]
                for _, target in mappings(override.get("targetJobs"))
                if isinstance(target.get("name"), str)
            ]
            yield (("spec", field_name, index, *pod_path), mapping(dig(override, *pod_path)),
                   targets)
        return
    for index, patch in mappings(spec.get("runtimePatches")):
        for job_index, patched in mappings(dig(patch, *PATCH_JOBS)):
            name = patched.get("name")
            path = ("spec", "runtimePatches", index, *PATCH_JOBS, job_index, *POD_SPEC)
            yield path, mapping(dig(patched, *POD_SPEC)), [name] if isinstance(name, str) else []


# --- admission parity: what the Trainer webhooks look at ---

#: From v2.3 a runtime with this label bypasses the runtime webhooks entirely.
WEBHOOK_VALIDATION_LABEL = "trainer.kubeflow.org/webhook-validation"
#: The `mlPolicy` keys that select a framework plugin, in the order the API lists them.
FRAMEWORKS = ("torch", "mpi", "jax", "xgboost", "flux")


@per_value
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
    return pod_container_names(dig(job, *POD_SPEC), kind)


def pod_container_names(pod: object, kind: str = "containers") -> set[str]:
    """Names of the `containers` (or `initContainers`) of a pod spec (or a patch's)."""
    return {
        container["name"] for _, container in mappings(dig(pod, kind))
        if isinstance(container.get("name"), str)
    }


def override_targets(job: Manifest, version: tuple[int, int]) -> Iterator[tuple[KeyPath, str]]:
    """(path of the name, job name) of every job an override or patch the release reads
    targets."""
    spec = mapping(job.body.get("spec"))
    field_name = OVERRIDES.get(version, "runtimePatches")
    if field_name != "runtimePatches":
        for index, override in mappings(spec.get(field_name)):
            for target_index, target in mappings(override.get("targetJobs")):
                if isinstance(target.get("name"), str):
                    yield (
                        ("spec", field_name, index, "targetJobs", target_index, "name"),
                        target["name"],
                    )
        return
    for index, patch in mappings(spec.get("runtimePatches")):
        for job_index, patched in mappings(dig(patch, *PATCH_JOBS)):
            if isinstance(patched.get("name"), str):
                path: KeyPath = ("spec", "runtimePatches", index, *PATCH_JOBS, job_index, "name")
                yield path, patched["name"]


# --- the silent-failure catalogue ---

#: Frameworks whose nodes rendezvous at `<trainjob>-node-0-0.<trainjob>`.
RENDEZVOUS_FRAMEWORKS = frozenset({"torch", "jax", "xgboost"})


@per_value
def jobset(runtime: Manifest) -> dict[str, Any]:
    return mapping(dig(runtime.body, *JOBSET))


def pod_specs(runtime: Manifest) -> Iterator[tuple[KeyPath, dict[str, Any], dict[str, Any]]]:
    """(path of the pod spec, replicatedJob, pod spec) of every replicatedJob."""
    for index, job in replicated_jobs(runtime):
        yield (*JOBS, index, *POD_SPEC), job, mapping(dig(job, *POD_SPEC))


def job_metadata_path(index: int, job: dict[str, Any]) -> KeyPath:
    """Where a replicatedJob's labels belong: its `template.metadata`, or `template`."""
    has_metadata = dig(job, "template", "metadata") is not None
    return (*JOBS, index, "template", *(("metadata",) if has_metadata else ()))


@per_value
def trainer_container(runtime: Manifest) -> tuple[KeyPath, dict[str, Any]] | None:
    """(path, container) of the `node` container of the job labelled `trainer`."""
    for index, job in replicated_jobs(runtime):
        if ancestor(job) == TRAINER:
            pod_path = (*JOBS, index, *POD_SPEC)
            found = named(dig(job, *POD_SPEC, "containers"), "node")
            return ((*pod_path, "containers", found[0]), found[1]) if found else None
    return None


#: A TrainJob's render while it is checked, shared by all its rules.
_RENDER: PerObject[Render] = PerObject("render")
#: A runtime's render on its own, asked for by its rules and those of its TrainJobs: kept
#: while it is recently asked for, not for the whole run (a run of 3,333 runtimes kept
#: every one: files-10000 peaked at 186 MB, now 141 MB, with the same renders made).
_RUNTIME_RENDER: PerObject[Render] = PerObject("runtime-render")
_RUNTIME_RENDERED: PerRun[Render] = PerRun("runtime-render", recent=True)


def rendered(manifest: Manifest, ctx: Lookups) -> Render:
    """The render a rule judges: a TrainJob's on its runtime, or a runtime's on its own.

    A TrainJob's is worked out once while the object is checked and shared by all its
    rules (no other object's rules ask: what they need of it are its facts); a runtime's
    once per run (the runtime's rules, and those of every TrainJob that compares with what
    the runtime gives by itself, ask for it). Renders are shared: read only.
    """
    if manifest.kind != "TrainJob":
        return runtime_render(manifest, ctx)
    version = ctx.trainer_version
    return ctx.remember(
        _RENDER, manifest, lambda: _with_config_maps(
            render(manifest, ctx.runtime_for(manifest), version), lambda: manifest.namespace,
            ctx),
        version, ctx.bundled,
    )


def pod_namespaces(manifest: Manifest, ctx: Lookups) -> list[str]:
    """Where the pods of an object's TrainJobs run, and their PVCs and ConfigMaps are
    looked up: its own namespace, or for a ClusterTrainingRuntime the namespaces of the
    TrainJobs of the run that use it."""
    if manifest.kind != "ClusterTrainingRuntime":
        return [manifest.namespace]
    return sorted({job.namespace for job in ctx.trainjobs_using(manifest)})


def _pods_namespace(runtime: Manifest, ctx: Lookups) -> str | None:
    """The one namespace the pods of a runtime's TrainJobs run in (none where a cluster
    runtime's run in several)."""
    namespaces = pod_namespaces(runtime, ctx)
    return namespaces[0] if len(namespaces) == 1 else None


def _with_config_maps(
    built: Render, namespace: Callable[[], str | None], ctx: Lookups
) -> Render:
    """The render given the ConfigMaps its pods mount that the run knows
    (`Render.config_maps`), looked up in the namespace the pods run in (the TrainJob's,
    or `_pods_namespace`), which is asked only of a render that mounts one: a cluster
    runtime's namespace depends on its TrainJobs, whose every change would otherwise
    be one of its render's."""
    names = {name for job in built.jobs for _, volume in job.volumes().values()
             for name in config_map_names(volume)}
    where = namespace() if names else None
    if where is None:
        return built
    for name in sorted(names):
        found = ctx.config_map(where, name)
        if found is not None:
            built.config_maps[name] = {
                str(key): value for key, value in mapping(found.body.get("data")).items()
                if isinstance(value, str)
            }
    return built

def trainer_of(render: Render) -> Job | None:
    """The job meant to train: the one labelled `trainer`, else the job named like it
    (`launcher` for MPI, else `node`), which the TrainJob's settings miss."""
    fallback = "launcher" if render.framework == "mpi" else "node"
    return render.trainer or render.job_named(fallback)


def trainer_container_of(render: Render) -> Container | None:
    """The `node` container of the job meant to train (`trainer_of`): the one whose
    command is the trainer's."""
    job = trainer_of(render)
    return job.container("node") if job is not None else None


def runtime_render(runtime: Manifest, ctx: Lookups) -> Render:
    """The render of a runtime on its own: what every TrainJob that uses it inherits."""
    version = ctx.trainer_version
    return ctx.remember(  # one look-up of the run's renders per object checked
        _RUNTIME_RENDER, runtime,
        lambda: ctx.remember(
            _RUNTIME_RENDERED, runtime, lambda: _with_config_maps(
                render(None, runtime, version), lambda: _pods_namespace(runtime, ctx), ctx),
            version,
        ),
        version,
    )


#: The command that makes the torch plugin treat a TrainJob as a torchtune fine-tune.
TORCHTUNE_COMMAND = ["tune", "run"]


def is_torchtune(job: Manifest, runtime: Manifest) -> bool:
    """Whether the torch plugin applies its torchtune checks and recipes to this TrainJob."""
    command = dig(job.body, "spec", "trainer", "command")
    return framework(runtime) == "torch" and command == TORCHTUNE_COMMAND
