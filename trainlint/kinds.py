"""The kinds trainlint knows by API group, and the kind rules dispatch on."""

from __future__ import annotations

from trainlint.document import Manifest

TRAINER_GROUP = "trainer.kubeflow.org"
#: The one apiVersion Trainer serves its kinds in (every release so far).
TRAINER_API = f"{TRAINER_GROUP}/v1alpha1"

TRAINER_KINDS = frozenset({"TrainJob", "TrainingRuntime", "ClusterTrainingRuntime"})
RUNTIME_KINDS = frozenset({"TrainingRuntime", "ClusterTrainingRuntime"})
#: The kinds rules look up by name, besides TrainJobs.
LOOKED_UP_KINDS = RUNTIME_KINDS | {
    "PersistentVolumeClaim", "StorageClass", "PriorityClass", "ConfigMap",
}
CLUSTER_SCOPED = frozenset({"ClusterTrainingRuntime", "StorageClass", "PriorityClass"})


def object_kind(manifest: Manifest) -> str:
    """The kind rules dispatch on: Trainer kinds count only in the version Trainer serves
    (the API server rejects any other, so nothing else is said of the object; TL011
    names the version)."""
    kind = manifest.kind
    if kind in TRAINER_KINDS and manifest.api_version != TRAINER_API:
        return ""
    return kind
