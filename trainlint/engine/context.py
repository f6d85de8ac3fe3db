"""The Context: what a check may know besides its object."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from trainlint.config.defaults import DEFAULT_KUBERNETES_VERSION
from trainlint.document import Manifest
from trainlint.engine.index import Index
from trainlint.memo import PerObject, PerRun
from trainlint.release import TrainerVersion

T = TypeVar("T")


@dataclass(frozen=True)
class Context:
    """What a check may know besides the object: the release, the run, its options.

    Every look-up of the run's objects goes through here, and the index records each
    one while a cached run asks it to; a check never holds the index itself."""

    trainer_version: TrainerVersion
    _index: Index
    options: Any = None
    #: The cluster's Kubernetes minor release (`1.33`), for the schemas of core objects.
    kubernetes_version: str = DEFAULT_KUBERNETES_VERSION
    #: Device-plugin resource names beyond `trainlint.render.devices.CATALOGUE`: name → kind.
    device_resources: Mapping[str, str] = field(default_factory=dict)
    #: Whether a runtime the release installs stands in for one no object defines.
    bundled_runtimes: bool = True

    @property
    def bundled(self) -> TrainerVersion | None:
        """The release whose installed runtimes are known, None when they are not."""
        return self.trainer_version if self.bundled_runtimes else None

    def remember(
        self, memo: PerObject[T] | PerRun[T], of: Manifest, build: Callable[[], T],
        *what: Hashable,
    ) -> T:
        """What `build` derives from `of` (and `what`), worked out once and kept as long
        as `memo` says (`trainlint.memo`)."""
        if isinstance(memo, PerObject):
            return self._index.per_object(memo.name, what, of, build)
        return self._index.per_run(of, (memo.name, *what), build, recent=memo.recent)

    @property
    def where(self) -> str:
        """Where the objects of the run come from, as messages name it (`the cluster`)."""
        return self._index.where

    def runtime_key(self, job: Manifest) -> tuple[str, str, str]:
        """What a TrainJob's `spec.runtimeRef` names (kind, namespace, name): no look-up."""
        return self._index.runtime_key(job)

    def key_of(self, manifest: Manifest) -> tuple[str, str, str]:
        """What finds an object (kind, namespace unless cluster-scoped, name): a
        runtime's is its TrainJobs' `runtime_key`."""
        return self._index.key_of(manifest)

    def runtime_for(self, job: Manifest) -> Manifest | None:
        return self._index.runtime_for(job, self.bundled)

    def runtime_unknown(self, job: Manifest) -> bool:
        return self._index.runtime_unknown(job, self.bundled)

    def claim(self, namespace: str, name: str) -> Manifest | None:
        return self._index.claim(namespace, name)

    def storage_class(self, name: str) -> Manifest | None:
        return self._index.storage_class(name)

    def config_map(self, namespace: str, name: str) -> Manifest | None:
        return self._index.config_map(namespace, name)

    def custom_resource_definition(self, name: str) -> Manifest | None:
        """The CustomResourceDefinition of this name among the run's objects (a tree that
        ships its own CRDs serves what they define)."""
        return self._index.custom_resource_definition(name)

    def trainjobs_using(self, runtime: Manifest) -> list[Manifest]:
        return self._index.trainjobs_using(runtime)

    def runtimes_named(self, name: str) -> list[Manifest]:
        """Every runtime of the run with this name, of either kind, in any namespace."""
        return self._index.runtimes_named(name)

    def has_claims(self) -> bool:
        """Whether the run has any PersistentVolumeClaim, in any namespace."""
        return self._index.has_claims()

    def claims_named(self, name: str) -> list[Manifest]:
        """The PersistentVolumeClaims of the run with this name, in any namespace."""
        return self._index.claims_named(name)

    def previous(self, manifest: Manifest) -> Manifest | None:
        """The object before the change under check (an update), None for a new one."""
        return self._index.previous(manifest)

    @property
    def kubernetes_release(self) -> tuple[int, int]:
        """`kubernetes_version` as numbers: (1, 33)."""
        major, _, minor = self.kubernetes_version.partition(".")
        return int(major), int(minor or 0)
