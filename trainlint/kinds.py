"""The kinds trainlint knows by API group, and the kind rules dispatch on."""

from __future__ import annotations

from trainlint.document import Manifest

TRAINER_GROUP = "trainer.kubeflow.org"

TRAINER_KINDS = frozenset({"TrainJob", "TrainingRuntime", "ClusterTrainingRuntime"})
RUNTIME_KINDS = frozenset({"TrainingRuntime", "ClusterTrainingRuntime"})
#: The kinds rules look up by name, besides TrainJobs.
LOOKED_UP_KINDS = RUNTIME_KINDS | {"PersistentVolumeClaim", "StorageClass", "PriorityClass"}
CLUSTER_SCOPED = frozenset({"ClusterTrainingRuntime", "StorageClass", "PriorityClass"})


def object_kind(manifest: Manifest) -> str:
    """The kind rules dispatch on: Trainer kinds count only in the Trainer API group."""
    kind = manifest.kind
    if kind in TRAINER_KINDS and not manifest.api_version.startswith(f"{TRAINER_GROUP}/"):
        return ""
    return kind
