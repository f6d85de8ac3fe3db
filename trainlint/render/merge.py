"""The strategic merge patch the controller lays a TrainJob's overrides or patches with.

Kubernetes merges by the patch strategy of each Go field: a list with a merge key
(`containers` by `name`, `volumeMounts` by `mountPath`) merges item by item and appends
new items; any other list is atomic and the patch replaces it whole (`tolerations`,
`args`, the node-affinity terms); mappings merge key by key. The patches are the
controller's own typed objects re-encoded, so they carry no `$patch` or `$retainKeys`
directives and no nulls: the API server prunes both from a TrainJob (`build.pruned`
leaves the directives out; no `Manifest.body` holds a null).
"""

from __future__ import annotations

from typing import Any

from trainlint.document import KeyPath
from trainlint.render.tree import Origin, Tree, within

#: Go type → field → (type of its value, merge key of a merging list). A list field not
#: listed is atomic; a mapping field not listed merges with no merging lists inside.
#: From k8s.io/api (core/v1, batch/v1, meta/v1) and sigs.k8s.io/jobset `patchStrategy`
#: and `patchMergeKey` tags.
FIELDS: dict[str, dict[str, tuple[str, str | None]]] = {
    "JobSetSpec": {"replicatedJobs": ("ReplicatedJob", "name")},
    "ReplicatedJob": {"template": ("JobTemplateSpec", None), "dependsOn": ("", "name")},
    "JobTemplateSpec": {"metadata": ("ObjectMeta", None), "spec": ("JobSpec", None)},
    "JobSpec": {"template": ("PodTemplateSpec", None)},
    "PodTemplateSpec": {"metadata": ("ObjectMeta", None), "spec": ("PodSpec", None)},
    "ObjectMeta": {"ownerReferences": ("", "uid")},
    "PodSpec": {
        "volumes": ("", "name"), "initContainers": ("Container", "name"),
        "containers": ("Container", "name"), "ephemeralContainers": ("Container", "name"),
        "imagePullSecrets": ("", "name"), "hostAliases": ("", "ip"),
        "topologySpreadConstraints": ("", "topologyKey"), "schedulingGates": ("", "name"),
        "resourceClaims": ("", "name"),
    },
    "Container": {
        "ports": ("", "containerPort"), "env": ("", "name"), "volumeMounts": ("", "mountPath"),
        "volumeDevices": ("", "devicePath"),
    },
}


def merge(tree: Tree, path: KeyPath, patch: Any, at: Origin, kind: str) -> None:
    """Lay `patch` (written at `at`) over the value at `path` of `tree`, a `kind`."""
    current = tree.get(path)
    if not isinstance(patch, dict) or not isinstance(current, dict):
        tree.put(path, patch, at)
        return
    fields = FIELDS.get(kind, {})
    for key, value in patch.items():
        here, there = (*path, key), within(at, key)
        inner, merge_key = fields.get(key, ("", None))
        old = current.get(key)
        if old is None:
            tree.put(here, value, there)
        elif value == old and not isinstance(value, dict):
            continue  # the same value: it stays where it was first written
        elif isinstance(value, dict) and isinstance(old, dict):
            merge(tree, here, value, there, inner)
        elif isinstance(value, list) and isinstance(old, list) and merge_key is not None:
            _merge_list(tree, here, value, there, inner, merge_key)
        else:
            if isinstance(old, list):
                tree.replaced.append((here, old, tree.origin(here)))
            tree.put(here, value, there)
        current = tree.get(path)  # a change copied it


def _merge_list(
    tree: Tree, path: KeyPath, items: list[Any], at: Origin, kind: str, merge_key: str
) -> None:
    """Items with the key of an existing item merge into it; others are appended."""
    for position, item in enumerate(items):
        current = tree.get(path)
        there = within(at, position)
        key = item.get(merge_key) if isinstance(item, dict) else None
        found = next(
            (index for index, old in enumerate(current)
             if key is not None and isinstance(old, dict) and old.get(merge_key) == key),
            None,
        )
        if found is None:
            tree.put((*path, len(current)), item, there)
        else:
            merge(tree, (*path, found), item, there, kind)
