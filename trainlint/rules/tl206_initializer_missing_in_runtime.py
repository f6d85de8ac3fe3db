from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import KeyPath, Manifest, dig, mapping, mappings
from trainlint.engine.context import Context
from trainlint.problem import Problem, Related, Severity
from trainlint.render import POD_SPEC, Render
from trainlint.render.trainer import JOBS, rendered
from trainlint.rule import rule

#: `spec.initializer` key → (job and container name, what the webhook calls the input).
INITIALIZERS = {
    "dataset": ("dataset-initializer", "datasetConfig"),
    "model": ("model-initializer", "modelConfig"),
}
VOLUME = "initializer"


@rule(
    "TL206", "initializer-missing-in-runtime", kinds={"TrainJob"}, severity=Severity.ERROR,
    remediation="Use a runtime with the initializer job, or drop `spec.initializer`.",
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    For each of `spec.initializer.dataset` and `spec.initializer.model`, checks that the
    runtime has a replicatedJob **named** `dataset-initializer` (`model-initializer`), that
    the job has a container or init container of that name, and, from v2.3, that this
    container mounts a volume named `initializer` (the mount may also come from the
    TrainJob's own patches).

    ## Why is this bad?
    The Trainer webhook denies the TrainJob, for example "must have dataset-initializer job
    when trainJob is configured with input datasetConfig" or, from v2.3, "must have
    volumeMount with name - initializer in container dataset-initializer of the
    dataset-initializer job". The controller finds initializer jobs by name, not by label.

    ## When it stays silent
    When the TrainJob sets no initializer, and when its runtime is not among the checked
    files.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-plain
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          replicatedJobs:
            - name: node
              template:
                spec:
                  template:
                    spec:
                      containers:
                        - name: node
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef:
        name: torch-plain
      initializer:
        dataset:
          storageUri: hf://tatsu-lab/alpaca
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-plain
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          replicatedJobs:
            - name: dataset-initializer
              template:
                spec:
                  template:
                    spec:
                      containers:
                        - name: dataset-initializer
                          volumeMounts:
                            - name: initializer
                              mountPath: /workspace
            - name: node
              template:
                spec:
                  template:
                    spec:
                      containers:
                        - name: node
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef:
        name: torch-plain
      initializer:
        dataset:
          storageUri: hf://tatsu-lab/alpaca
    ```
    """
    runtime = ctx.runtime_for(job)
    if runtime is None:
        return
    initializer = mapping(dig(job.body, "spec", "initializer"))
    for key, (name, config) in INITIALIZERS.items():
        if not isinstance(initializer.get(key), dict):
            continue
        detail = _missing(rendered(job, ctx), name, config)
        if detail is not None:
            denial, remedy, lacking = detail
            yield Problem(
                ("spec", "initializer", key),
                f"`spec.initializer.{key}` needs what {runtime.describe()} lacks: the Trainer "
                f'webhook denies the TrainJob ("{denial}")',
                remediation=remedy,
                related=(Related(runtime, lacking, f"what {runtime.describe()} has instead"),),
            )


def _missing(render: Render, name: str, config: str) -> tuple[str, str, KeyPath] | None:
    """(denial, remedy, where in the runtime it is lacking) for the first thing the
    initializer lacks, or None.

    The webhook checks the runtime's template after the TrainJob's overrides or patches
    are merged into it, the JobSet the controller starts from: a job, container or mount
    that the TrainJob adds counts."""
    job = render.job_named(name)
    if job is None:
        return (
            f"must have {name} job when trainJob is configured with input {config}",
            f"add a replicatedJob named `{name}` to the runtime, or use a runtime that has one",
            JOBS,
        )
    written = job.origin(*POD_SPEC)
    pod_path = written.path if written.manifest is render.runtime else JOBS
    containers = [
        container for kind in ("containers", "initContainers")
        for container in job.containers(kind) if container.name == name
    ]
    if not containers:
        return (
            f"must have container with name - {name} in the {name} job",
            f"name the initializer container of job `{name}` `{name}`",
            pod_path,
        )
    mounts = [
        mount for container in containers if container.kind == "containers"
        for _, mount in mappings(container.body.get("volumeMounts"))
    ]
    if render.version >= (2, 3) and not any(mount.get("name") == VOLUME for mount in mounts):
        return (
            f"must have volumeMount with name - {VOLUME} in container {name} of the {name} job",
            f"mount a volume named `{VOLUME}` in container `{name}` of the runtime's `{name}` "
            "job (and in the trainer, to read what it downloads)",
            pod_path,
        )
    return None
