"""Types shared by the Trainer models: embedded metadata and the Kubernetes types they use."""

from __future__ import annotations

from typing import Annotated, Any

from trainlint.model.schema import Core, Model, Unchecked

_CORE = "io.k8s.api.core.v1."
EnvVar = Annotated[Any, Core(_CORE + "EnvVar")]
VolumeMount = Annotated[Any, Core(_CORE + "VolumeMount")]
Volume = Annotated[Any, Core(_CORE + "Volume")]
Toleration = Annotated[Any, Core(_CORE + "Toleration")]
Affinity = Annotated[Any, Core(_CORE + "Affinity")]
LocalObjectReference = Annotated[Any, Core(_CORE + "LocalObjectReference")]
SchedulingGate = Annotated[Any, Core(_CORE + "PodSchedulingGate")]
SecurityContext = Annotated[Any, Core(_CORE + "SecurityContext")]
PodSecurityContext = Annotated[Any, Core(_CORE + "PodSecurityContext")]
ResourceRequirements = Annotated[Any, Core(_CORE + "ResourceRequirements")]
PersistentVolumeClaim = Annotated[Any, Core(_CORE + "PersistentVolumeClaim")]
JobTemplateSpec = Annotated[Any, Core("io.k8s.api.batch.v1.JobTemplateSpec")]
MetricSpec = Annotated[Any, Core("io.k8s.api.autoscaling.v2.MetricSpec")]
ObjectMeta = Annotated[Any, Core("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", embedded=False)]
#: The API server does not take `status` from a create or update of these objects.
Status = Annotated[Any, Unchecked()]


class EmbeddedMeta(Model):
    """Object metadata inside a custom resource: only these keys are kept."""

    name: str | None = None
    namespace: str | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    finalizers: list[str] | None = None
