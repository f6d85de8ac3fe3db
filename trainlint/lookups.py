"""What a check may look up besides its object, as the floors below the engine know it.

The render's helpers and the schema checks take a `Lookups`; the engine's `Context` is
the one they are given (`trainlint.engine.context`), so nothing below the engine imports it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Protocol, TypeVar

from trainlint.document import Manifest
from trainlint.memo import PerObject, PerRun
from trainlint.release import TrainerVersion

T = TypeVar("T")


class Lookups(Protocol):
    @property
    def trainer_version(self) -> TrainerVersion: ...
    @property
    def kubernetes_version(self) -> str: ...
    @property
    def kubernetes_release(self) -> tuple[int, int]: ...
    @property
    def bundled(self) -> TrainerVersion | None: ...

    def runtime_for(self, job: Manifest) -> Manifest | None: ...
    def config_map(self, namespace: str, name: str) -> Manifest | None: ...
    def trainjobs_using(self, runtime: Manifest) -> list[Manifest]: ...
    def previous(self, manifest: Manifest) -> Manifest | None: ...

    def remember(
        self, memo: PerObject[T] | PerRun[T], of: Manifest, build: Callable[[], T],
        *what: Hashable,
    ) -> T:
        """What `build` derives from `of` (and `what`), kept as long as `memo` says."""
        ...
