"""The JobSet the Trainer controller builds from a TrainJob and its runtime, per release.

`render(job, runtime, version)` (`trainlint.render.build`) follows the controller of that
release step by step: the runtime's JobSet template, the TrainJob's overrides or
patches merged as Kubernetes merges them, what the TrainJob fills in per ancestor label,
what the ML-policy plugin injects, and the defaults JobSet and Kubernetes apply. Every
value keeps its `Origin`, so a finding on the built pod points at the key a user edits.
A runtime renders on its own (`job` None): what every TrainJob that uses it inherits.

The render is plain data, shared with the objects it came from: read it, never change it.
It knows nothing of rules, the engine or any front end. It holds no reference cycle (a
job refers to its render weakly), so dropping a render frees it at once even with the
cycle collector off, as runs have it: keep the `Render` while its jobs are used.
"""

from __future__ import annotations

import posixpath
import weakref
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from trainlint.document import KeyPath, Manifest, is_count, mapping, mappings
from trainlint.render.tree import Located, Origin, Tree

__all__ = ["Container", "Job", "Origin", "Render"]

Version = tuple[int, int]
#: The label the controller reads a replicatedJob's role from, on its job template.
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
TRAINER = "trainer"
INITIALIZERS = ("dataset-initializer", "model-initializer")
#: Where the replicatedJobs are in a rendered JobSet, and a pod spec inside one of them.
JOBS: KeyPath = ("spec", "replicatedJobs")
POD_SPEC: KeyPath = ("template", "spec", "template", "spec")
#: The JobSet's failure policy, in a rendered JobSet.
FAILURE_POLICY: KeyPath = ("spec", "failurePolicy")
#: Every key JobSet (v0.8.2 to v0.12.0, the releases Trainer v2.0 to v2.3 install) names
#: in its API and controller: labels and annotations it puts on Jobs and pods, and those
#: a user sets for it. A key in none of them is on no pod.
JOBSET_KEYS = frozenset({
    "jobset.sigs.k8s.io/coordinator", "jobset.sigs.k8s.io/disable-in-place-restart",
    "jobset.sigs.k8s.io/global-replicas", "jobset.sigs.k8s.io/group-name",
    "jobset.sigs.k8s.io/group-replicas", "jobset.sigs.k8s.io/in-place-restart-attempt",
    "jobset.sigs.k8s.io/job-global-index", "jobset.sigs.k8s.io/job-group-index",
    "jobset.sigs.k8s.io/job-index", "jobset.sigs.k8s.io/job-key",
    "jobset.sigs.k8s.io/job-restart-attempt", "jobset.sigs.k8s.io/jobset-controller",
    "jobset.sigs.k8s.io/jobset-name", "jobset.sigs.k8s.io/jobset-uid",
    "jobset.sigs.k8s.io/priority", "jobset.sigs.k8s.io/replicatedjob-name",
    "jobset.sigs.k8s.io/replicatedjob-replicas", "jobset.sigs.k8s.io/restart-attempt",
    "alpha.jobset.sigs.k8s.io/exclusive-topology", "alpha.jobset.sigs.k8s.io/namespaced-job",
    "alpha.jobset.sigs.k8s.io/no-schedule", "alpha.jobset.sigs.k8s.io/node-selector",
})


def config_map_names(volume: dict[str, Any]) -> Iterator[str]:
    """The ConfigMaps a pod's volume shows (`configMap`, or a `projected` source)."""
    for source in _config_map_sources(volume):
        name = source.get("name")
        if isinstance(name, str) and name:
            yield name


def config_map_files(
    volume: dict[str, Any], config_maps: dict[str, dict[str, str]]
) -> dict[str, str]:
    """The text files a ConfigMap volume shows, by their path in it: each key, or the
    `path` its `items` give the keys they list."""
    found: dict[str, str] = {}
    for source in _config_map_sources(volume):
        data = config_maps.get(str(source.get("name")))
        if data is None:
            continue
        items = source.get("items")
        if isinstance(items, list):
            found.update((item["path"], data[item["key"]]) for _, item in mappings(items)
                         if isinstance(item.get("key"), str) and item["key"] in data
                         and isinstance(item.get("path"), str))
        else:
            found.update(data)
    return found


def _config_map_sources(volume: dict[str, Any]) -> list[dict[str, Any]]:
    if isinstance(volume.get("configMap"), dict):
        return [volume["configMap"]]
    sources = mapping(volume.get("projected")).get("sources")
    return [item["configMap"] for _, item in mappings(sources)
            if isinstance(item.get("configMap"), dict)]


class _Named:
    """Something of the render with a `name` key in its body."""

    body: dict[str, Any]

    @property
    def name(self) -> str:
        name = self.body.get("name")
        return name if isinstance(name, str) else ""


#: The two lists of a pod's containers, each with what messages call one of its items.
CONTAINER_NOUNS = {"containers": "container", "initContainers": "init container"}


@dataclass(eq=False)
class Container(_Named):
    """A container of a rendered pod template."""

    job: Job
    #: `containers` or `initContainers`.
    kind: str
    index: int
    body: dict[str, Any]

    @cached_property
    def path(self) -> KeyPath:
        return (*self.job.pod_path, self.kind, self.index)

    @property
    def noun(self) -> str:
        """What messages call it: `container` or `init container`."""
        return CONTAINER_NOUNS[self.kind]

    def origin(self, *keys: str | int) -> Origin:
        return self.job.render.tree.origin_below(self.path, self._located, keys)

    @cached_property
    def _located(self) -> Located:
        return self.job.render.tree.locate(self.path)

    @cached_property
    def env(self) -> dict[str, tuple[int, dict[str, Any]]]:
        """Its env variables by name, with their index (a later one wins, as in Kubernetes)."""
        return {
            item["name"]: (index, item) for index, item in mappings(self.body.get("env"))
            if isinstance(item.get("name"), str)
        }

    def strings(self, key: str) -> list[tuple[str, Origin]]:
        """The items of its `command` or `args`, each with its origin."""
        found = self._strings.get(key)
        if found is None:
            items = self.body.get(key)
            found = self._strings[key] = [
                (item, self.origin(key, index)) for index, item in enumerate(items)
                if isinstance(item, str)
            ] if isinstance(items, list) else []
        return found

    @cached_property
    def _strings(self) -> dict[str, list[tuple[str, Origin]]]:
        return {}

    @cached_property
    def files(self) -> dict[str, str]:
        """The text files its mounts show from the ConfigMaps the run knows
        (`Render.config_maps`), by absolute path: a whole ConfigMap (or its `items`) under
        the mount's path, or the one key a `subPath` names."""
        found: dict[str, str] = {}
        volumes = self.job.volumes()
        for _, mount in mappings(self.body.get("volumeMounts")):
            volume = volumes.get(str(mount.get("name")))
            path = mount.get("mountPath")
            if volume is None or not isinstance(path, str) or not path.startswith("/"):
                continue
            shown = config_map_files(volume[1], self.job.render.config_maps)
            sub = mount.get("subPath")
            if isinstance(sub, str) and sub:
                shown = {"": shown[sub]} if sub in shown else {}
            elif mount.get("subPathExpr"):
                continue  # a folder named by variables of the pod
            for name, text in shown.items():
                found[posixpath.normpath(posixpath.join(path, name))] = text
        return found


@dataclass(eq=False)
class Job(_Named):
    """A replicatedJob of the rendered JobSet: its pods, as the controller sizes them."""

    #: The render it belongs to, weakly (`render`): a strong reference would be a cycle.
    owner: weakref.ref[Render]
    index: int
    body: dict[str, Any]
    #: The ancestor label the controller read (`trainer`...), or None.
    ancestor: str | None
    #: Pods of one Job (its parallelism) and where that count was set.
    pods: int
    pods_at: Origin

    @property
    def render(self) -> Render:
        found = self.owner()
        if found is None:
            raise ReferenceError("a rendered job outlived its render: keep the Render")
        return found

    @cached_property
    def path(self) -> KeyPath:
        return (*JOBS, self.index)

    @cached_property
    def pod_path(self) -> KeyPath:
        return (*self.path, *POD_SPEC)

    @cached_property
    def spec(self) -> dict[str, Any]:
        """The Job spec (`template.spec`)."""
        return mapping(mapping(self.body.get("template")).get("spec"))

    @cached_property
    def pod_spec(self) -> dict[str, Any]:
        return mapping(mapping(self.spec.get("template")).get("spec"))

    @property
    def labels(self) -> dict[str, Any]:
        """The labels of its Job template, which JobSet gives the Job, not its pods."""
        return mapping(mapping(mapping(self.body.get("template")).get("metadata")).get("labels"))

    @property
    def pod_labels(self) -> dict[str, Any]:
        """The labels of its pod template (JobSet adds its own keys, `JOBSET_KEYS`)."""
        return mapping(mapping(mapping(self.spec.get("template")).get("metadata")).get("labels"))

    @property
    def replicas(self) -> int:
        replicas = self.body.get("replicas", 1)
        return replicas if is_count(replicas) else 1

    def containers(self, kind: str = "containers") -> list[Container]:
        """Its containers (or `initContainers`), made once: the render does not change."""
        made = self.render.made_containers  # kept there: kept here, they would be a cycle
        found = made.get((self.index, kind))
        if found is None:
            found = made[(self.index, kind)] = [
                Container(self, kind, index, body)
                for index, body in mappings(self.pod_spec.get(kind))
            ]
        return found

    def container(self, name: str) -> Container | None:
        return next((item for item in self.containers() if item.name == name), None)

    def every_container(self) -> list[Container]:
        """Its containers, then its init containers."""
        return [container for kind in CONTAINER_NOUNS for container in self.containers(kind)]

    def mounted(self, *keys: str) -> set[str]:
        """The names of the volumes its containers and init containers mount (their
        `volumeMounts`, or the lists `keys` name)."""
        return {
            mount["name"]
            for container in self.every_container()
            for key in keys or ("volumeMounts",)
            for _, mount in mappings(container.body.get(key))
            if isinstance(mount.get("name"), str)
        }

    def volumes(self) -> dict[str, tuple[int, dict[str, Any]]]:
        """The pod's volumes by name, with their index (shared: read only)."""
        return self._volumes

    @cached_property
    def _volumes(self) -> dict[str, tuple[int, dict[str, Any]]]:
        return {
            volume["name"]: (index, volume)
            for index, volume in mappings(self.pod_spec.get("volumes"))
            if isinstance(volume.get("name"), str)
        }

    def origin(self, *keys: str | int) -> Origin:
        return self.render.tree.origin_below(self.path, self._located, keys)

    @cached_property
    def _located(self) -> Located:
        return self.render.tree.locate(self.path)


@dataclass(eq=False)
class Render:
    """What the controller builds for one TrainJob on one runtime (or a runtime alone)."""

    #: The TrainJob, or None when the runtime is rendered on its own.
    job: Manifest | None
    #: The runtime, or None when it is unknown: the render then holds only what the
    #: TrainJob says, on the `node` job the controller would look for (`complete` False).
    runtime: Manifest | None
    version: Version
    tree: Tree
    #: The ML policy plugin that ran (`torch`, `mpi`, `jax`, `xgboost`, `flux`, or
    #: `plainml` for a runtime with none).
    framework: str
    jobs: list[Job] = field(default_factory=list)
    #: What the controller also creates beside the JobSet (the MPI hostfile ConfigMap),
    #: as (kind, name, data) with the origin of the data.
    extras: list[tuple[str, str, dict[str, Any], Origin]] = field(default_factory=list)
    #: The resources the plugins count GPUs and CPUs per node from, and where they are
    #: written: the TrainJob's `resourcesPerNode`, else the first `node` container of a
    #: job named `node` or labelled `trainer` (empty when there is none).
    sized_by: tuple[dict[str, Any], Origin] = ({}, Origin(None, ()))
    #: What a plugin injected and a TrainJob's value then replaced (the builder sets the
    #: TrainJob's env last): the rendered path, the injected item and its origin.
    replaced: list[tuple[KeyPath, dict[str, Any], Origin]] = field(default_factory=list)
    #: The text files of the ConfigMaps its pods mount, by ConfigMap name (its `data`),
    #: for those the run knows: what a command runs from them is read as its own.
    config_maps: dict[str, dict[str, str]] = field(default_factory=dict)
    #: What rules work out from the render (checkpoint directories...): see
    #: `trainlint.memo.PerValue`.
    memo: dict[tuple[Hashable, ...], Any] = field(default_factory=dict, repr=False)
    #: The containers of each job, by (job index, kind), made when first asked for.
    made_containers: dict[tuple[int, str], list[Container]] = field(
        default_factory=dict, repr=False
    )

    @property
    def jobset(self) -> dict[str, Any]:
        return self.tree.root

    @property
    def complete(self) -> bool:
        return self.runtime is not None

    @property
    def failure_policy(self) -> dict[str, Any]:
        """The JobSet's `failurePolicy` ({} where it has none)."""
        return mapping(mapping(self.jobset.get("spec")).get("failurePolicy"))

    def origin(self, path: KeyPath) -> Origin:
        """Where the value at `path` of the rendered JobSet came from."""
        return self.tree.origin(path)

    @property
    def trainer(self) -> Job | None:
        """The job the plugins treat as the trainer: the first labelled `trainer`."""
        return next((job for job in self.jobs if job.ancestor == TRAINER), None)

    def job_named(self, name: str) -> Job | None:
        return next((job for job in self.jobs if job.name == name), None)

    def containers(self, kind: str = "containers") -> Iterator[Container]:
        for job in self.jobs:
            yield from job.containers(kind)

    def every_container(self) -> Iterator[Container]:
        """Its containers, then its init containers."""
        for kind in CONTAINER_NOUNS:
            yield from self.containers(kind)

    def workload(self) -> Iterator[Container]:
        """The containers that run the training: those of every job but the
        initializers' (labelled or named so), which download."""
        for job in self.jobs:
            if job.ancestor not in INITIALIZERS and job.name not in INITIALIZERS:
                yield from job.containers()
