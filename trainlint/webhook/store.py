"""The cluster as the rules see it: runtimes, claims and storage classes held in memory.

Both context sources (the watch-backed cluster caches and `--context-dir`) fill one Store;
a request only reads it, so no API call ever sits on the request path.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Any

from trainlint.document import Manifest, Source, mapping
from trainlint.engine.index import Index
from trainlint.kinds import CLUSTER_SCOPED, RUNTIME_KINDS, object_kind

#: The kinds a request may need, in the order their caches are reported.
KINDS = ("TrainingRuntime", "ClusterTrainingRuntime", "PersistentVolumeClaim", "StorageClass")
Key = tuple[str, str]


class Store:
    """Objects by kind and (namespace, name); a kind is `synced` once fully listed."""

    def __init__(self, kinds: Iterable[str] = KINDS) -> None:
        self._objects: dict[str, dict[Key, Manifest]] = {kind: {} for kind in kinds}
        self.synced: dict[str, bool] = dict.fromkeys(self._objects, False)
        self._refs = Index(())

    def replace(self, kind: str, bodies: Iterable[dict[str, Any]]) -> None:
        """A full listing: everything of the kind, swapped in at once."""
        fresh: dict[Key, Manifest] = {}
        for body in bodies:
            manifest = self._manifest(kind, body)
            fresh[self._key(kind, manifest)] = manifest
        self._objects[kind] = fresh
        self.synced[kind] = True

    def put(self, kind: str, body: dict[str, Any]) -> None:
        manifest = self._manifest(kind, body)
        self._objects[kind][self._key(kind, manifest)] = manifest

    def delete(self, kind: str, body: dict[str, Any]) -> None:
        self._objects[kind].pop(self._key(kind, Manifest(body, Source("", ""))), None)

    def objects(self) -> Iterator[Manifest]:
        """Every object held, kind by kind."""
        for objects in self._objects.values():
            yield from objects.values()

    def sizes(self) -> dict[str, int]:
        return {kind: len(objects) for kind, objects in self._objects.items()}

    def get(self, kind: str, namespace: str, name: str) -> Manifest | None:
        return self._objects[kind].get(("" if kind in CLUSTER_SCOPED else namespace, name))

    def context_for(self, manifest: Manifest) -> list[Manifest]:
        """What the rules may ask about `manifest`: a TrainJob's runtime, the claims it or
        its runtime names, and the storage classes."""
        if object_kind(manifest) != "TrainJob":
            return []
        kind, namespace, name = self._refs.runtime_key(manifest)
        runtime = self.get(kind, namespace, name) if kind in RUNTIME_KINDS else None
        related = [runtime] if runtime is not None else []
        names = [*claim_names(manifest.body), *(_stored_claims(runtime) if runtime else ())]
        for claim_name in dict.fromkeys(names):
            claim = self.get("PersistentVolumeClaim", manifest.namespace, claim_name)
            if claim is not None:
                related.append(claim)
        related.extend(self._objects["StorageClass"].values())
        return related

    def _manifest(self, kind: str, body: dict[str, Any]) -> Manifest:
        metadata = {k: v for k, v in mapping(body.get("metadata")).items() if k != "managedFields"}
        body = {**body, "metadata": metadata}
        # Positions are never asked for in the webhook: no text is kept.
        name = f"{kind}/{metadata.get('namespace', '')}/{metadata.get('name', '')}"
        return Manifest(body, Source(name, ""))

    @staticmethod
    def _key(kind: str, manifest: Manifest) -> Key:
        return "" if kind in CLUSTER_SCOPED else manifest.namespace, manifest.name


@lru_cache(maxsize=4096)
def _stored_claims(runtime: Manifest) -> tuple[str, ...]:
    """The claim names of a stored runtime, found once: a watch event replaces the object
    (a new Manifest) when it changes. Bounded, so replaced ones age out."""
    return tuple(claim_names(runtime.body))


def claim_names(value: object) -> Iterator[str]:
    """Every `claimName` in an object, wherever the volumes sit."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            name = item.get("claimName")
            if isinstance(name, str):
                yield name
            children: Iterable[Any] = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        stack.extend(reversed([child for child in children if isinstance(child, dict | list)]))
