"""TrainJob per Trainer release (reference §1.1, §2.2)."""

from __future__ import annotations

from typing import Annotated

from annotated_types import Ge, MaxLen, MinLen

from trainlint.model.common import (
    Affinity,
    EmbeddedMeta,
    EnvVar,
    LocalObjectReference,
    ObjectMeta,
    PodSecurityContext,
    ResourceRequirements,
    SchedulingGate,
    SecurityContext,
    Status,
    Toleration,
    Volume,
    VolumeMount,
)
from trainlint.model.node import Released
from trainlint.model.schema import Integer, Model, only

#: Limits that the v2.2 CRD introduced on many TrainJob fields.
_V22 = "2.2"
Env = Annotated[list[EnvVar] | None, only(_V22, None, MaxLen(128))]


class RuntimeRef(Model):
    name: Annotated[str, only("2.1", None, MinLen(1)), only(_V22, None, MaxLen(253))]
    api_group: Annotated[str, only(_V22, None, MaxLen(253))] = "trainer.kubeflow.org"
    kind: Annotated[str, only(_V22, None, MaxLen(253))] = "ClusterTrainingRuntime"


class InitializerSource(Model):
    storage_uri: Annotated[str | None, only(_V22, None, MaxLen(2048))] = None
    env: Env = None
    secret_ref: LocalObjectReference = None


class Initializer(Model):
    dataset: InitializerSource | None = None
    model: InitializerSource | None = None


Argument = Annotated[str, only(_V22, _V22, MaxLen(65536)), only("2.3", None, MaxLen(1048576))]
Arguments = Annotated[list[Argument] | None, only(_V22, None, MaxLen(128))]


class Trainer(Model):
    image: Annotated[str | None, only(_V22, None, MaxLen(500))] = None
    command: Arguments = None
    args: Arguments = None
    env: Env = None
    num_nodes: int | None = None
    resources_per_node: ResourceRequirements = None
    num_proc_per_node: Annotated[
        int | str | None,
        only(_V22, None, Integer(
            "strings such as `auto` were accepted only up to v2.1; write the number of "
            "processes, or leave it unset to let the runtime decide"
        )),
    ] = None


class TargetJob(Model):
    name: Annotated[str, only("2.1", "2.1", MinLen(1))]


class OverrideContainer(Model):
    name: Annotated[str, only("2.1", "2.1", MinLen(1))]
    env: list[EnvVar] | None = None
    volume_mounts: list[VolumeMount] | None = None


_OVERRIDES = (("2.0", "use `podSpecOverrides`"), ("2.1", "use `podTemplateOverrides`"),
              ("2.2", "use `runtimePatches`"))


class PodSpecOverride(Model):
    """v2.0: a flat pod spec override."""

    target_jobs: list[TargetJob]
    service_account_name: str | None = None
    node_selector: dict[str, str] | None = None
    tolerations: list[Toleration] | None = None
    volumes: list[Volume] | None = None
    init_containers: list[OverrideContainer] | None = None
    containers: list[OverrideContainer] | None = None
    scheduling_gates: list[SchedulingGate] | None = None


class PodTemplateSpecOverride(Model):
    service_account_name: str | None = None
    node_selector: dict[str, str] | None = None
    affinity: Affinity = None
    tolerations: list[Toleration] | None = None
    volumes: list[Volume] | None = None
    init_containers: list[OverrideContainer] | None = None
    containers: list[OverrideContainer] | None = None
    scheduling_gates: list[SchedulingGate] | None = None
    image_pull_secrets: list[LocalObjectReference] | None = None


class PodTemplateOverride(Model):
    """v2.1: metadata and a pod spec override."""

    target_jobs: list[TargetJob]
    metadata: EmbeddedMeta | None = None
    spec: PodTemplateSpecOverride | None = None


# --- runtimePatches (v2.2+) ---

Name253 = Annotated[str, MinLen(1), MaxLen(253)]


class PatchContainer(Model):
    name: Name253
    env: Annotated[list[EnvVar] | None, MaxLen(128)] = None
    volume_mounts: Annotated[list[VolumeMount] | None, MaxLen(128)] = None
    security_context: SecurityContext = None


class PatchPodSpec(Model):
    service_account_name: Annotated[str | None, MaxLen(253)] = None
    node_selector: dict[str, str] | None = None
    affinity: Affinity = None
    tolerations: Annotated[list[Toleration] | None, MaxLen(128)] = None
    volumes: Annotated[list[Volume] | None, MaxLen(128)] = None
    init_containers: Annotated[list[PatchContainer] | None, MaxLen(64)] = None
    containers: Annotated[list[PatchContainer] | None, MaxLen(64)] = None
    scheduling_gates: Annotated[list[SchedulingGate] | None, MaxLen(16)] = None
    image_pull_secrets: Annotated[list[LocalObjectReference] | None, MaxLen(64)] = None
    security_context: PodSecurityContext = None
    termination_grace_period_seconds: Annotated[
        int | None,
        Ge(0),
        Released("2.3", instead=(("2.0", "set it in the runtime's pod template"),)),
    ] = None


class PatchPodTemplate(Model):
    metadata: EmbeddedMeta | None = None
    spec: PatchPodSpec | None = None


class PatchJobSpec(Model):
    template: PatchPodTemplate | None = None


class PatchJobTemplate(Model):
    metadata: EmbeddedMeta | None = None
    spec: PatchJobSpec | None = None


class PatchReplicatedJob(Model):
    name: Name253
    template: PatchJobTemplate | None = None


class PatchJobSetSpec(Model):
    replicated_jobs: Annotated[list[PatchReplicatedJob] | None, MaxLen(100)] = None


class PatchJobSetTemplate(Model):
    metadata: EmbeddedMeta | None = None
    spec: PatchJobSetSpec | None = None


class PatchRuntimeSpec(Model):
    template: PatchJobSetTemplate | None = None


class RuntimePatch(Model):
    manager: Name253
    time: str | None = None
    training_runtime_spec: PatchRuntimeSpec | None = None


_META = (("2.2", "set it in `runtimePatches[].trainingRuntimeSpec.template.metadata`"),)


class TrainJobSpec(Model):
    runtime_ref: RuntimeRef
    initializer: Initializer | None = None
    trainer: Trainer | None = None
    labels: Annotated[dict[str, str] | None, Released("2.0", "2.1", instead=_META)] = None
    annotations: Annotated[
        dict[str, str] | None, Released("2.0", "2.1", instead=_META)
    ] = None
    pod_spec_overrides: Annotated[
        list[PodSpecOverride] | None, Released("2.0", "2.0", instead=_OVERRIDES)
    ] = None
    pod_template_overrides: Annotated[
        list[PodTemplateOverride] | None,
        Released("2.1", "2.1", instead=_OVERRIDES),
    ] = None
    runtime_patches: Annotated[
        list[RuntimePatch] | None,
        MaxLen(16),
        Released("2.2", instead=_OVERRIDES),
    ] = None
    suspend: bool = False
    active_deadline_seconds: Annotated[
        int | None, Ge(1), Released("2.2", instead=(("2.0", "upgrade Trainer to v2.2 or later "
                                                    "to use it"),))
    ] = None
    managed_by: Annotated[
        str, only(_V22, None, MaxLen(253))
    ] = "trainer.kubeflow.org/trainjob-controller"


class TrainJob(Model):
    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta = None
    spec: TrainJobSpec | None = None
    status: Status = None
