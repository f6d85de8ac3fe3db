"""The Context: what a check may know besides its object."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from trainlint.config.defaults import DEFAULT_KUBERNETES_VERSION
from trainlint.document import Manifest
from trainlint.engine.index import Index
from trainlint.release import TrainerVersion

T = TypeVar("T")


@dataclass(frozen=True)
class Context:
    """What a check may know besides the object: the release, the run, its options."""

    trainer_version: TrainerVersion
    index: Index
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

    def per_object(self, of: Manifest, what: tuple[Any, ...], build: Callable[[], T]) -> T:
        """What `build` derives from `of` (named `what`), worked out once while `of` is
        checked and shared by all its rules (its render, its schema issues). The entry
        holds `of`, so an id reused after it is freed never finds it."""
        key = (id(of), *what)
        kept: tuple[Manifest, T] | None = self.index.memo.get(key)
        if kept is None or kept[0] is not of:
            kept = self.index.memo[key] = (of, build())
        return kept[1]

    def per_run(
        self, of: Manifest, what: tuple[Any, ...], build: Callable[[], T],
        summary: Iterable[tuple[str, ...]] | None = None, *, recent: bool = False,
    ) -> T:
        """What `build` derives from `of`, worked out once per run (`Index.derived`)."""
        return self.index.derived(of, what, build, summary, recent=recent)

    def runtime_for(self, job: Manifest) -> Manifest | None:
        return self.index.runtime_for(job, self.bundled)

    def runtime_unknown(self, job: Manifest) -> bool:
        return self.index.runtime_unknown(job, self.bundled)

    def claim(self, namespace: str, name: str) -> Manifest | None:
        return self.index.claim(namespace, name)

    def storage_class(self, name: str) -> Manifest | None:
        return self.index.storage_class(name)

    def trainjobs_using(self, runtime: Manifest) -> list[Manifest]:
        return self.index.trainjobs_using(runtime)

    def trainjobs_in(self, namespace: str) -> list[Manifest]:
        return self.index.trainjobs_in(namespace)

    def previous(self, manifest: Manifest) -> Manifest | None:
        """The object before the change under check (an update), None for a new one."""
        return self.index.previous(manifest)

    @property
    def kubernetes_release(self) -> tuple[int, int]:
        """`kubernetes_version` as numbers: (1, 33)."""
        major, _, minor = self.kubernetes_version.partition(".")
        return int(major), int(minor or 0)
