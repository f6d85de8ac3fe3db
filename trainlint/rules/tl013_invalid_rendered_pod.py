from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import KeyPath, Manifest, dotted, mapping, mappings
from trainlint.engine.context import Context
from trainlint.model.check import Flaw, embedded_issues, issues
from trainlint.problem import Problem, Severity
from trainlint.render import Container, Job
from trainlint.render.quantity import amount
from trainlint.render.trainer import override_pods, rendered
from trainlint.render.tree import Origin
from trainlint.rule import rule

#: What a replicatedJob's template is, in the Kubernetes schemas.
JOB_TEMPLATE = "io.k8s.api.batch.v1.JobTemplateSpec"
#: The keys of a volume that are no volume source.
NOT_SOURCES = frozenset({"name"})


@rule(
    "TL013", "invalid-rendered-pod",
    kinds={"TrainJob"}, severity=Severity.ERROR,
    remediation=(
        "Change the override, patch or resources so that the merged pod is valid (one source "
        "per volume, `value` or `valueFrom` per variable, requests within the limits)."
    ),
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Renders the JobSet (see `trainlint render`) of a TrainJob and checks what the merge
    of the TrainJob into its runtime makes of the pods, for what the API server rejects
    though each part is valid: a volume that ends up with two sources (the runtime's
    `emptyDir` and the patch's `persistentVolumeClaim` under one name), an env variable
    with both `value` and `valueFrom`, a request above the limit of the same resource
    (from v2.3 `resourcesPerNode` merges key by key into the runtime's resources), and
    each job template an override or patch touches against the Kubernetes schemas (a
    v2.3 patch of a job the runtime lacks appends a job with no `containers`). Each
    problem is reported at the TrainJob key that caused it.

    ## Why is this bad?
    The controller merges overrides into the runtime's pod template key by key: a volume
    of the same name gets the patch's source beside the runtime's, an env variable the
    patch's `valueFrom` beside the runtime's `value`, a container the TrainJob's cpu
    request beside the runtime's lower limit. Nothing checks the merged pod until the
    JobSet or the Job is created, and the API server rejects it ("may not specify more
    than 1 volume type"): the TrainJob never runs, and only an event says why (on the
    TrainJob where the JobSet is rejected, on the JobSet where its Job is).

    ## When it stays silent
    On problems the TrainJob or its runtime has as written: the schema rules (TL005–TL010)
    report them on the object; on what a plugin or a default put in the pods; on job
    templates no override or patch touches (only the ones they touch are walked against
    the schemas), and when the runtime is not among the checked files.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-scratch
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          replicatedJobs:
            - name: node
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
                          volumeMounts:
                            - name: ckpt
                              mountPath: /mnt/ckpt
                      volumes:
                        - name: ckpt
                          emptyDir: {}
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: run
    spec:
      runtimeRef:
        name: torch-scratch
      runtimePatches:
        - manager: example.com/storage
          trainingRuntimeSpec:
            template:
              spec:
                replicatedJobs:
                  - name: node
                    template:
                      spec:
                        template:
                          spec:
                            volumes:
                              - name: ckpt
                                persistentVolumeClaim:
                                  claimName: run-ckpt
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-scratch
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          replicatedJobs:
            - name: node
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
                          volumeMounts:
                            - name: ckpt
                              mountPath: /mnt/ckpt
                      volumes:
                        - name: ckpt
                          emptyDir: {}
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: run
    spec:
      runtimeRef:
        name: torch-scratch
      runtimePatches:
        - manager: example.com/storage
          trainingRuntimeSpec:
            template:
              spec:
                replicatedJobs:
                  - name: node
                    template:
                      spec:
                        template:
                          spec:
                            volumes:
                              - name: run-ckpt
                                persistentVolumeClaim:
                                  claimName: run-ckpt
                            containers:
                              - name: node
                                volumeMounts:
                                  - name: run-ckpt
                                    mountPath: /mnt/ckpt
    ```
    """
    render = rendered(job, ctx)
    if not render.complete:
        return
    targets = {name for _, _, names in override_pods(job, ctx.trainer_version) for name in names}
    for rendered_job in render.jobs:
        if rendered_job.name in targets:
            yield from _merged(job, rendered_job)
            yield from _against_schema(job, rendered_job, ctx)
        for kind in ("initContainers", "containers"):
            for container in rendered_job.containers(kind):
                yield from _requests_above_limits(job, container)

def _merged(job: Manifest, rendered_job: Job) -> Iterator[Problem]:
    """What the merge of an override into the runtime's pod breaks, key by key."""
    render = rendered_job.render
    for index, volume in mappings(rendered_job.pod_spec.get("volumes")):
        sources = [key for key in volume if key not in NOT_SOURCES]
        if len(sources) < 2:
            continue
        path = (*rendered_job.pod_path, "volumes", index)
        origins = {source: render.origin((*path, source)) for source in sources}
        mine = [source for source, at in origins.items() if at.manifest is job]
        theirs = [source for source, at in origins.items() if at.manifest is not job]
        if mine and theirs:
            yield Problem(origins[mine[0]].path, _two_sources(volume, rendered_job, mine, theirs,
                                                              origins))
    for container in rendered_job.containers():
        for index, variable in mappings(container.body.get("env")):
            if "value" in variable and variable.get("value") != "" and "valueFrom" in variable:
                value_at = container.origin("env", index, "value")
                from_at = container.origin("env", index, "valueFrom")
                if (value_at.manifest is job) != (from_at.manifest is job):
                    at = from_at if from_at.manifest is job else value_at
                    yield Problem(at.path, (
                        f"env `{variable.get('name')}` of container `{container.name}` ends up "
                        "with both `value` and `valueFrom` once merged: the API server rejects "
                        "the pods (\"may not be specified when `value` is not empty\"), so the "
                        "Job is never created"))


def _two_sources(volume: dict[str, object], rendered_job: Job, mine: list[str],
                 theirs: list[str], origins: dict[str, Origin]) -> str:
    runtime = origins[theirs[0]]
    where = runtime.manifest.describe() if runtime.manifest is not None else "the runtime"
    return (
        f"volume `{volume.get('name')}` of job `{rendered_job.name}` gets `{mine[0]}` here "
        f"beside the `{theirs[0]}` {where} gives it at `{dotted(runtime.path)}` (a merge "
        "keeps both): the API server rejects the pods (\"may not specify more than 1 volume "
        "type\"), so the Job is never created; give the volume another name"
    )


def _against_schema(job: Manifest, rendered_job: Job, ctx: Context) -> Iterator[Problem]:
    """The parts of a job template the TrainJob wrote, as merged, against the Kubernetes
    schemas: what the merge made invalid, at the TrainJob key that holds it (what the
    TrainJob has as written, the schema rules report on it). Only those parts are walked:
    what the runtime wrote is its own schema rules' to judge, and a runtime's value beside
    the TrainJob's is valid on both sides."""
    render = rendered_job.render
    template = (*rendered_job.path, "template")
    own: set[tuple[Flaw, KeyPath]] | None = None
    for path in render.tree.written_below(template, job):
        value = render.tree.get(path)
        for issue in embedded_issues(value, JOB_TEMPLATE, path, path[len(template):], "JobSet",
                                     ctx):
            at = render.origin(issue.path)
            if own is None:
                own = {(found.flaw, found.path) for found in issues(job, ctx)}
            if at.manifest is job and at.note is None and (issue.flaw, at.path) not in own:
                yield Problem(at.path, f"once merged into the JobSet the controller creates "
                              f"(see `trainlint render`), {issue.message}")


def _requests_above_limits(job: Manifest, container: Container) -> Iterator[Problem]:
    """A request above the limit of the same resource, when one of the two is the
    TrainJob's and the other the runtime's (v2.3 merges `resourcesPerNode` key by key)."""
    resources = mapping(container.body.get("resources"))
    limits = mapping(resources.get("limits"))
    for name, requested in mapping(resources.get("requests")).items():
        request, limit = amount(requested), amount(limits.get(name))
        if request is None or limit is None or request <= limit:
            continue
        request_at = container.origin("resources", "requests", name)
        limit_at = container.origin("resources", "limits", name)
        if (request_at.manifest is job) == (limit_at.manifest is job):
            continue  # not a merge of the TrainJob's and the runtime's
        mine, theirs = (request_at, limit_at) if request_at.manifest is job else (
            limit_at, request_at)
        yield Problem(mine.path, (
            f"once merged, container `{container.name}` of job `{container.job.name}` requests "
            f"`{name}: {requested}` but is limited to `{limits[name]}` (one from here, the other "
            f"from {theirs.describe()}): the API server rejects the pods (\"must be less than "
            f"or equal to {name} limit of {limits[name]}\"), so the Job is never created"))
