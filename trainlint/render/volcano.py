"""Where Trainer's Volcano plugin (v2.1+) reads the queue of the PodGroup it creates: the
`scheduling.volcano.sh/queue-name` annotation of the runtime's JobSet template, which a
TrainJob overrides in `spec.annotations` (v2.1) or in its runtime patches' template
metadata (v2.2+). Nothing else is read: the same annotation on a runtime's own metadata,
on a job or pod template, or on a TrainJob's metadata leaves the PodGroup without a queue,
and Volcano gives it the default one."""

from __future__ import annotations

from trainlint.document import KeyPath, Manifest, dig, mapping, mappings
from trainlint.patches import PATCH_JOBS

QUEUE = "scheduling.volcano.sh/queue-name"
#: A runtime's JobSet template annotations.
TEMPLATE_ANNOTATIONS: KeyPath = ("spec", "template", "metadata", "annotations")
#: A TrainJob's runtime patches (v2.2+).
PATCHES: KeyPath = ("spec", "runtimePatches")


def uses_volcano(runtime: Manifest) -> bool:
    return "volcano" in mapping(dig(runtime.body, "spec", "podGroupPolicy"))


def queue_places(manifest: Manifest, version: tuple[int, int]) -> list[KeyPath]:
    """The annotation maps of `manifest` (a runtime or a TrainJob) that the plugin reads
    the queue from, on Trainer `version`."""
    if manifest.kind != "TrainJob":
        return [TEMPLATE_ANNOTATIONS]
    if version <= (2, 1):
        return [("spec", "annotations")]
    template = PATCH_JOBS[:2]
    return [(*PATCHES, index, *template, "metadata", "annotations")
            for index, _ in mappings(dig(manifest.body, *PATCHES))]
