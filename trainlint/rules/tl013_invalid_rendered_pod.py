from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dotted, mappings
from trainlint.engine.context import Context
from trainlint.problem import Problem, Severity
from trainlint.render import Job
from trainlint.render.trainer import override_pods, rendered
from trainlint.render.tree import Origin
from trainlint.rule import rule

#: The keys of a volume that are no volume source.
NOT_SOURCES = frozenset({"name"})


@rule(
    "TL013", "invalid-rendered-pod",
    kinds={"TrainJob"}, severity=Severity.ERROR,
    remediation="Change the override or patch so that the merged pod is valid (one source per "
    "volume, `value` or `valueFrom` per variable).",
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Renders the JobSet (see `trainlint render`) of a TrainJob with overrides or patches,
    and checks each pod template they touch for what the API server's pod validation
    rejects and a merge produces from valid parts: a volume that ends up with two sources
    (the runtime's `emptyDir` and the patch's `persistentVolumeClaim` under one name) and
    an env variable with both `value` and `valueFrom`. Each problem is reported at the
    TrainJob key that caused it.

    ## Why is this bad?
    The controller merges overrides into the runtime's pod template key by key: a volume
    of the same name gets the patch's source beside the runtime's, an env variable the
    patch's `valueFrom` beside the runtime's `value`. Nothing checks the merged pod until
    the Job controller creates it, and the API server rejects it ("may not specify more
    than 1 volume type"): the TrainJob never runs, and shows only an event.

    ## When it stays silent
    On problems the TrainJob or its runtime has as written: the schema rules (TL005–TL010)
    check both against the Kubernetes schemas, and overrides and patches hold only core
    types, so a merge of valid parts stays valid to the schema; on pod templates no
    override or patch touches, and when the runtime is not among the checked files.

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
    targets = {name for _, _, names in override_pods(job, ctx.trainer_version) for name in names}
    if not targets:
        return
    render = rendered(job, ctx)
    if not render.complete:
        return
    for rendered_job in render.jobs:
        if rendered_job.name in targets:
            yield from _merged(job, rendered_job)


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
