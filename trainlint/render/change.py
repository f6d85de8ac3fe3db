"""What an update of a TrainJob changes, as the update checks downstream of the API server
see it: the Trainer webhook (overrides and patches), the JobSet webhook (the JobSet the
controller applies) and Kueue's webhook (the queue label).

The JobSet is compared through the TrainJob fields that feed its replicated jobs (the
trainer and initializer settings, and the overrides or patches per target job), not through
a rendered JobSet: a field feeds the JobSet the same way in the old and the new object, so a
change of the field is a change of the JobSet.
"""

from __future__ import annotations

from typing import Any

from trainlint.document import KeyPath, Manifest, dig, mapping, mappings, sequence, string
from trainlint.patches import PATCH_JOBS
from trainlint.release import TrainerVersion

#: The TrainJob field of each release that overrides the runtime's pod templates, and the
#: name its webhook messages give it.
OVERRIDES: dict[TrainerVersion, tuple[str, str]] = {
    (2, 0): ("podSpecOverrides", "PodSpecOverrides"),
    (2, 1): ("podTemplateOverrides", "PodTemplateOverrides"),
}
PATCHES = ("runtimePatches", "RuntimePatches")
#: The keys of one override (or patch) entry each release knows; others are pruned.
ENTRY_KEYS: dict[str, frozenset[str]] = {
    "podSpecOverrides": frozenset({
        "targetJobs", "serviceAccountName", "nodeSelector", "tolerations", "volumes",
        "initContainers", "containers", "schedulingGates"}),
    "podTemplateOverrides": frozenset({"targetJobs", "metadata", "spec"}),
    # `time` is the mutating webhook's stamp, not a setting: it changes with the patch.
    "runtimePatches": frozenset({"manager", "trainingRuntimeSpec"}),
}
#: The pod spec fields each kind of override writes that a suspended JobSet refuses to
#: change: all it knows but `nodeSelector`, `tolerations` and `schedulingGates` (the JobSet
#: webhook's list, with the pod template's labels and annotations), and, in runtime
#: patches, but those the CRD itself makes immutable (TL012's).
REFUSED_WHEN_SUSPENDED: dict[str, frozenset[str]] = {
    "podSpecOverrides": frozenset({"serviceAccountName", "volumes", "initContainers",
                                   "containers"}),
    "podTemplateOverrides": frozenset({"serviceAccountName", "affinity", "volumes",
                                       "initContainers", "containers", "imagePullSecrets"}),
    "runtimePatches": frozenset({"affinity"}),
}
JOB_METADATA = frozenset({"labels", "annotations"})
KUEUE_QUEUE = "kueue.x-k8s.io/queue-name"


def overrides_field(release: TrainerVersion) -> tuple[str, str]:
    """(field, name in webhook messages) of the release's overrides or patches."""
    return OVERRIDES.get(release, PATCHES)


def suspended(job: Manifest) -> bool:
    return dig(job.body, "spec", "suspend") is True


def settled(value: Any) -> Any:
    """The value as Go's semantic equality compares typed API objects, at worst as equal
    where it tells them apart: a field set to null, an empty list or map, `""`, `0` or
    `false` counts as unset (so is a field without a pointer in Go; a field with one
    differs, and a change to it is then missed rather than made up)."""
    if isinstance(value, dict):
        kept = {key: settled(item) for key, item in value.items()}
        return {key: item for key, item in kept.items() if not _unset(item)}
    if isinstance(value, list):
        return [settled(item) for item in value]
    return value


def _unset(value: Any) -> bool:
    return value is None or (not isinstance(value, bool) and value in ("", 0, [], {})) or (
        value is False)


def overrides(job: Manifest, release: TrainerVersion) -> list[Any]:
    """The overrides or patches of the release, each reduced to the keys it has."""
    field, _ = overrides_field(release)
    known = ENTRY_KEYS[field]
    return [settled({key: value for key, value in entry.items() if key in known})
            for _, entry in mappings(dig(job.body, "spec", field))]


def job_template_effects(job: Manifest, release: TrainerVersion) -> dict[str, tuple[KeyPath, Any]]:
    """What the overrides or patches write into each target job's template that a
    suspended JobSet refuses to change, by job name: (path of the first entry that targets
    it, the writes in order). Fields the CRD makes immutable are left to TL012."""
    field, _ = overrides_field(release)
    refused = REFUSED_WHEN_SUSPENDED[field]
    effects: dict[str, tuple[KeyPath, list[Any]]] = {}

    def add(name: str, path: KeyPath, write: dict[str, Any]) -> None:
        write = settled(write)
        if write:
            effects.setdefault(name, (path, []))[1].append(write)

    for index, entry in mappings(dig(job.body, "spec", field)):
        path: KeyPath = ("spec", field, index)
        if field == "runtimePatches":
            for position, target in mappings(dig(entry, *PATCH_JOBS)):
                template = mapping(target.get("template"))
                pod = mapping(dig(template, "spec", "template", "spec"))
                add(string(target.get("name")), (*path, *PATCH_JOBS, position), {
                    "metadata": _only(mapping(template.get("metadata")), JOB_METADATA),
                    "pod": _only(pod, refused),
                })
            continue
        pod = mapping(entry.get("spec")) if field == "podTemplateOverrides" else entry
        write = _only(pod, refused)
        for target in sequence(entry.get("targetJobs")):
            add(string(mapping(target).get("name")), path, write)
    return {name: (path, writes) for name, (path, writes) in effects.items()}


def _only(values: dict[str, Any], keys: frozenset[str]) -> dict[str, Any]:
    return {key: value for key, value in values.items() if key in keys}
