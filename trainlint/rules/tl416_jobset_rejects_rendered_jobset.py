from __future__ import annotations

import re
from collections.abc import Iterator

from trainlint.document import KeyPath, Manifest, dig, mapping, mappings
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render import Render
from trainlint.render.trainer import rendered
from trainlint.render.tree import Origin
from trainlint.rule import rule

DNS_1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
DNS_1123 = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?")
REJECTED = (
    "the JobSet webhook rejects the JobSet when a TrainJob starts, so it never runs and "
    "shows only a TrainJobResourcesCreationFailed event"
)
#: A finding of the webhook: where, what it says, and whether it needs the TrainJob's name.
Found = tuple[Origin, str, bool]


@rule(
    "TL416", "jobset-rejects-rendered-jobset",
    kinds=TRAINER_KINDS, severity=Severity.ERROR,
    remediation=(
        "Fix the `dependsOn`, job name, `groupName`, `coordinator` or `volumeClaimPolicies` "
        "the JobSet webhook refuses."
    ),
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Renders the JobSet the controller creates (see `trainlint render`) and runs on it the
    JobSet webhook's checks that no Trainer webhook makes: a `dependsOn` on a job that does
    not come before, a replicatedJob whose name makes Job names that are no DNS label (a
    capital letter, `_` or `.`), a `groupName` that is no DNS label, a `coordinator` that
    names no pod of the JobSet (or whose address is too long for a label), and
    `volumeClaimPolicies` whose template names clash, are no DNS names, make too long a PVC
    name, are mounted by no container, or are also the name of a pod volume.

    ## Why is this bad?
    The Trainer accepts the TrainJob; the JobSet webhook rejects the JobSet the controller
    then creates. Nothing runs, and the only trace is a `TrainJobResourcesCreationFailed`
    event on the TrainJob. Checks that depend on the TrainJob's name (the coordinator's
    address, the PVC names) fail for some TrainJobs of a runtime and not for others.

    ## When it stays silent
    On a TrainJob, for what its runtime gets wrong by itself (reported on the runtime),
    unless it depends on the TrainJob's name; on the first job's `dependsOn` (TL409); on
    releases whose JobSet has no such check (`groupName` from v2.1, the coordinator's
    address and `volumeClaimPolicies` from v2.2); and when the runtime is not among the
    checked files.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-staged
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          replicatedJobs:
            - name: model-initializer
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: model-initializer
                spec:
                  template:
                    spec:
                      containers:
                        - name: model-initializer
                          image: ghcr.io/kubeflow/trainer/model-initializer
            - name: node
              dependsOn:
                - name: dataset-initializer
                  status: Complete
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: trainer
                spec:
                  template:
                    spec:
                      containers:
                        - name: node
                          image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
            - name: dataset-initializer
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer
                spec:
                  template:
                    spec:
                      containers:
                        - name: dataset-initializer
                          image: ghcr.io/kubeflow/trainer/dataset-initializer
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-staged
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          replicatedJobs:
            - name: model-initializer
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: model-initializer
                spec:
                  template:
                    spec:
                      containers:
                        - name: model-initializer
                          image: ghcr.io/kubeflow/trainer/model-initializer
            - name: dataset-initializer
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: dataset-initializer
                spec:
                  template:
                    spec:
                      containers:
                        - name: dataset-initializer
                          image: ghcr.io/kubeflow/trainer/dataset-initializer
            - name: node
              dependsOn:
                - name: dataset-initializer
                  status: Complete
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: trainer
                spec:
                  template:
                    spec:
                      containers:
                        - name: node
                          image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
    ```
    """
    render = rendered(manifest, ctx)
    if not render.complete:
        return
    is_job = manifest.kind == "TrainJob"
    for at, detail, named in [*_depends_on(render), *_job_names(render), *_group_names(render),
                              *_coordinator(render), *_claim_templates(render)]:
        if named and not is_job:
            continue  # what a TrainJob's name decides is reported on the TrainJob
        if not named and at.manifest is not manifest:
            continue
        yield Problem(("metadata", "name") if named else at.path, f"{detail}: {REJECTED}")


def _depends_on(render: Render) -> Iterator[Found]:
    """`dependsOn` may name only a job at or before it (the first job may not have one)."""
    seen: set[str] = set()
    for position, job in enumerate(render.jobs):
        seen.add(job.name)
        if position == 0:
            continue  # TL409 reports any dependsOn of the first job
        items = list(mappings(job.body.get("dependsOn")))
        if render.version == (2, 0):
            items = items[:1]  # JobSet v0.8 looks at the first only
        for index, item in items:
            name = item.get("name")
            if isinstance(name, str) and name not in seen:
                yield (job.origin("dependsOn", index, "name"),
                       f"replicatedJob `{job.name}` depends on `{name}`, which does not come "
                       "before it (\"replicatedJob: "
                       f"{job.name} cannot depend on replicatedJob: {name}\")", False)


#: What a replicatedJob's name may hold for `<jobset>-<name>-<index>` to be a DNS-1035 label.
_JOB_NAME = re.compile(r"[-a-z0-9]+")


def _job_names(render: Render) -> Iterator[Found]:
    """The Jobs of a replicatedJob are named `<jobset>-<name>-<index>`, which must be a
    DNS-1035 label: a name with a capital, `_` or `.` fails it whatever the TrainJob's
    name (whether it is too long depends on that name, and is left alone)."""
    for job in render.jobs:
        if isinstance(job.name, str) and job.name and not _JOB_NAME.fullmatch(job.name):
            yield (job.origin("name"), f"replicatedJob `{job.name}` names its Jobs "
                   f"`<trainjob>-{job.name}-0`, which is no DNS-1035 label (lower case "
                   "letters, digits and `-`)", False)


def _group_names(render: Render) -> Iterator[Found]:
    if render.version < (2, 1):
        return
    for job in render.jobs:
        group = job.body.get("groupName")
        if not isinstance(group, str):
            continue
        if len(group) > 63:
            yield (job.origin("groupName"), f"`groupName: {group}` is too long (\".spec."
                   "replicatedJob[].groupName is too long, must be less than 63 characters\")",
                   False)
        elif not DNS_1035.fullmatch(group):
            yield (job.origin("groupName"), f"`groupName: {group}` is not a DNS-1035 label "
                   "(lower case letters, digits and `-`, starting with a letter)", False)


def _coordinator(render: Render) -> Iterator[Found]:
    spec = mapping(render.jobset.get("spec"))
    coordinator = spec.get("coordinator")
    if not isinstance(coordinator, dict):
        return
    at = render.origin(("spec", "coordinator"))
    name = coordinator.get("replicatedJob")
    job = render.job_named(name) if isinstance(name, str) else None
    if job is None:
        yield at, f"the coordinator names replicatedJob `{name}`, which the JobSet lacks", False
        return
    job_index, pod_index = coordinator.get("jobIndex", 0), coordinator.get("podIndex", 0)
    completions = job.spec.get("completions")
    if not isinstance(job_index, int) or not 0 <= job_index < job.replicas:
        yield (render.origin(("spec", "coordinator", "jobIndex")), f"coordinator job index "
               f"{job_index} is invalid for replicatedJob {job.name}", False)
    elif job.spec.get("completionMode") != "Indexed" or not isinstance(completions, int):
        yield (at, "job for coordinator pod must be indexed completion mode, and completions "
               "number must be set", False)
    elif not isinstance(pod_index, int) or not 0 <= pod_index < completions:
        yield (render.origin(("spec", "coordinator", "podIndex")), f"coordinator pod index "
               f"{pod_index} is invalid for replicatedJob {job.name} job index {job_index} "
               f"(it has {completions} pods)", False)
    elif render.version >= (2, 2) and render.job is not None:
        subdomain = dig(spec, "network", "subdomain") or render.jobset["metadata"]["name"]
        endpoint = f"{render.jobset['metadata']['name']}-{job.name}-{job_index}-{pod_index}."
        endpoint += str(subdomain)
        if len(endpoint) > 63 or not LABEL_VALUE.fullmatch(endpoint):
            yield (at, f"the coordinator's address `{endpoint}` is no valid label value "
                   f"({len(endpoint)} characters, at most 63): the TrainJob's name is too "
                   "long for it", True)


def _claim_templates(render: Render) -> Iterator[Found]:
    if render.version < (2, 2):
        return
    policies: KeyPath = ("spec", "volumeClaimPolicies")
    seen: set[str] = set()
    for index, policy in mappings(dig(render.jobset, *policies)):
        for position, template in mappings(policy.get("templates")):
            name = dig(template, "metadata", "name")
            if not isinstance(name, str):
                continue
            at = render.origin((*policies, index, "templates", position, "metadata", "name"))
            if name in seen:
                yield at, f"template `{name}` is named twice (names must be unique for " \
                    "VolumeClaimPolicies template)", False
            seen.add(name)
            if len(name) > 253 or not DNS_1123.fullmatch(name):
                yield at, f"template name `{name}` is not a DNS-1123 subdomain", False
            yield from _mounts_of(render, name, at)
            if render.job is not None:
                claim = f"{name}-{render.jobset['metadata']['name']}"
                if len(claim) > 63:
                    yield (at, f"the PVC JobSet makes from template `{name}` would be named "
                           f"`{claim}` ({len(claim)} characters, at most 63): "
                           "\"VolumeClaimPolicies template name is too long\"", True)


def _mounts_of(render: Render, name: str, at: Origin) -> Iterator[Found]:
    """The template must be mounted by some container, and be no pod volume's name."""
    mounted = False
    for job in render.jobs:
        for index, volume in mappings(job.pod_spec.get("volumes")):
            if volume.get("name") == name:
                yield (render.origin((*job.pod_path, "volumes", index, "name")),
                       f"volume `{name}` of job `{job.name}` has the name of a "
                       f"volumeClaimPolicies template (\"volume name conflicts with "
                       f"VolumeClaimPolicy template name: {name}\")", False)
        for kind in ("initContainers", "containers"):
            for container in job.containers(kind):
                mounts = mappings(container.body.get("volumeMounts"))
                mounted = mounted or any(mount.get("name") == name for _, mount in mounts)
    if not mounted:
        yield (at, f"no container mounts template `{name}` (\"replicatedJob containers don't "
               f"have a matching volumeMount: {name} from VolumeClaimPolicies\")", False)

