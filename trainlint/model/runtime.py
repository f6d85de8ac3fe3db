"""TrainingRuntime and ClusterTrainingRuntime (identical schemas), with the embedded JobSet
spec, per Trainer release (reference §1.2, §2.2)."""

from __future__ import annotations

from typing import Annotated, Literal

from annotated_types import Ge, MaxLen, MinLen
from pydantic import Field

from trainlint.model.common import (
    EmbeddedMeta,
    JobTemplateSpec,
    MetricSpec,
    ObjectMeta,
    PersistentVolumeClaim,
)
from trainlint.model.node import Released
from trainlint.model.schema import Enum, MinProperties, Model, Required, only

# --- the JobSet spec (vendored JobSet v0.8.2 in v2.0 … v0.12.0 in v2.3) ---


_ACTIONS = ("FailJobSet", "RestartJobSet", "RestartJobSetAndIgnoreMaxRestarts")


class FailurePolicyRule(Model):
    name: str
    action: Annotated[
        str,
        only("2.0", "2.2", Enum(_ACTIONS)),
        only("2.3", None, Enum((*_ACTIONS, "RestartJob", "RestartJobAndIgnoreMaxRestarts"))),
    ]
    on_job_failure_reasons: list[str] | None = None
    on_job_failure_message_patterns: Annotated[list[str] | None, Released("2.1")] = None
    target_replicated_jobs: list[str] | None = None


class FailurePolicy(Model):
    max_restarts: int | None = None
    restart_strategy: Annotated[
        str,
        only("2.0", "2.1", Enum(("Recreate", "BlockingRecreate"))),
        only("2.2", None, Enum(("Recreate", "BlockingRecreate", "InPlaceRestart"))),
    ] = "Recreate"
    rules: list[FailurePolicyRule] | None = None


class SuccessPolicy(Model):
    operator: Literal["All", "Any"]
    target_replicated_jobs: list[str] | None = None


class StartupPolicy(Model):
    startup_policy_order: Literal["AnyOrder", "InOrder"]


class Network(Model):
    enable_dns_hostnames: bool | None = Field(None, alias="enableDNSHostnames")
    subdomain: str | None = None
    publish_not_ready_addresses: bool | None = None


class Coordinator(Model):
    replicated_job: str
    job_index: int | None = None
    pod_index: int | None = None


class DependsOn(Model):
    name: str
    status: Literal["Ready", "Complete"]


class ReplicatedJob(Model):
    name: str
    group_name: Annotated[str, Released("2.1")] = "default"
    template: JobTemplateSpec
    replicas: int = 1
    depends_on: Annotated[
        list[DependsOn] | None, only("2.0", "2.0", MaxLen(1)), only("2.1", None, MaxLen(5))
    ] = None


class RetentionPolicy(Model):
    when_deleted: Literal["Delete", "Retain"] = "Delete"


class VolumeClaimPolicy(Model):
    templates: Annotated[list[PersistentVolumeClaim] | None, MaxLen(50)] = None
    retention_policy: RetentionPolicy | None = None


class JobSetSpec(Model):
    replicated_jobs: list[ReplicatedJob] | None = None
    network: Network | None = None
    success_policy: SuccessPolicy | None = None
    failure_policy: FailurePolicy | None = None
    startup_policy: StartupPolicy | None = None
    suspend: bool | None = None
    coordinator: Coordinator | None = None
    managed_by: str | None = None
    ttl_seconds_after_finished: Annotated[int | None, Ge(0)] = None
    volume_claim_policies: Annotated[
        list[VolumeClaimPolicy] | None,
        MaxLen(50),
        Released("2.2", instead=(("2.0", "create the PVCs yourself and mount them by name"),)),
    ] = None


class JobSetTemplate(Model):
    metadata: EmbeddedMeta | None = None
    spec: JobSetSpec | None = None


# --- ML policies ---


class ElasticPolicy(Model):
    max_restarts: int | None = None
    min_nodes: int | None = None
    max_nodes: int | None = None
    metrics: list[MetricSpec] | None = None


class EnvInjectionTarget(Model):
    job_name: Annotated[str, MinLen(1), MaxLen(253)]
    container_names: Annotated[list[Annotated[str, MaxLen(63)]], MinLen(1), MaxLen(8)]


class EnvInjection(Model):
    targets: Annotated[list[EnvInjectionTarget] | None, MaxLen(16)] = None


class TorchPolicy(Model):
    num_proc_per_node: Annotated[
        int | str,
        Released("2.0", "2.1", instead=(("2.2", "set `trainer.numProcPerNode` in TrainJobs"),)),
    ] = "auto"
    elastic_policy: Annotated[
        ElasticPolicy | None,
        Released("2.0", "2.1", instead=(("2.2", "remove it (it was never implemented)"),)),
    ] = None
    env_injection: Annotated[
        EnvInjection | None,
        Released("2.3", instead=(("2.0", "upgrade Trainer to v2.3 or later to use it"),)),
    ] = None


class MPIPolicy(Model):
    num_proc_per_node: int = 1
    mpi_implementation: Annotated[
        str, only("2.0", "2.0", Enum(("OpenMPI",))), only("2.1", None, Enum(("OpenMPI", "")))
    ] = "OpenMPI"
    ssh_auth_mount_path: Annotated[str, only("2.2", None, MaxLen(4096))] = "/root/.ssh"
    run_launcher_as_node: bool = False


class EmptyPolicy(Model):
    """`jax: {}` and `xgboost: {}`: the policy has no settings."""


class FluxPolicy(Model):
    num_proc_per_node: int = 1


_NEW_POLICY = (("2.0", "upgrade Trainer to v2.2 or later to use it"),)


class MLPolicy(Model):
    num_nodes: int | None = None
    torch: TorchPolicy | None = None
    mpi: MPIPolicy | None = None
    jax: Annotated[EmptyPolicy | None, Released("2.2", instead=_NEW_POLICY)] = None
    xgboost: Annotated[
        EmptyPolicy | None, Released("2.2", instead=_NEW_POLICY)
    ] = None
    flux: Annotated[FluxPolicy | None, Released("2.2", instead=_NEW_POLICY)] = None


class Coscheduling(Model):
    schedule_timeout_seconds: int = 60


class NetworkTopology(Model):
    mode: Literal["hard", "soft"] = "hard"
    highest_tier_allowed: int = 1


class Volcano(Model):
    network_topology: NetworkTopology | None = None


class PodGroupPolicy(Model):
    coscheduling: Coscheduling | None = None
    volcano: Annotated[
        Volcano | None,
        Released("2.1", instead=(("2.0", "upgrade Trainer to v2.1 or later to use it"),)),
    ] = None


class RuntimeSpec(Model):
    ml_policy: MLPolicy | None = None
    pod_group_policy: PodGroupPolicy | None = None
    template: Annotated[
        JobSetTemplate | None, only("2.0", "2.0", Required()), only("2.1", None, MinProperties(1))
    ] = None


class TrainingRuntime(Model):
    """Also the schema of ClusterTrainingRuntime."""

    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta = None
    spec: Annotated[RuntimeSpec | None, only("2.1", None, MinProperties(1))] = None
