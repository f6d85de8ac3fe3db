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
    "CustomResourceDefinition",
}
CLUSTER_SCOPED = frozenset({
    "ClusterTrainingRuntime", "StorageClass", "PriorityClass", "CustomResourceDefinition",
})
#: Kinds a YAML document names only as a Kubernetes object (others, `pipeline`,
#: `Kustomization`, `ZarfPackageConfig`, are other tools' files): those of Trainer, JobSet,
#: Kueue and the core objects a training run is made of.
KUBERNETES_KINDS = TRAINER_KINDS | LOOKED_UP_KINDS | {
    "Pod", "Job", "CronJob", "JobSet", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet",
    "Service", "Secret", "PersistentVolume", "Namespace", "ServiceAccount", "Role",
    "RoleBinding", "ClusterRole", "ClusterRoleBinding", "Ingress", "NetworkPolicy",
    "ResourceQuota", "LimitRange", "PodDisruptionBudget", "HorizontalPodAutoscaler",
    "CustomResourceDefinition", "LocalQueue", "ClusterQueue", "ResourceFlavor", "Workload",
    "PodGroup",
}


def object_kind(manifest: Manifest) -> str:
    """The kind rules dispatch on: Trainer kinds count only in the version Trainer serves
    (the API server rejects any other, so nothing else is said of the object; TL011
    names the version)."""
    kind = manifest.kind
    if kind in TRAINER_KINDS and manifest.api_version != TRAINER_API:
        return ""
    return kind
