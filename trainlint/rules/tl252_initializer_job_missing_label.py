from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine.context import Context
from trainlint.kinds import RUNTIME_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render.trainer import ANCESTOR_LABEL, ancestor, job_metadata_path, replicated_jobs
from trainlint.rule import rule

INITIALIZERS = ("dataset-initializer", "model-initializer")


@rule(
    "TL252", "initializer-job-missing-label",
    kinds=RUNTIME_KINDS, severity=Severity.WARNING,
    remediation=f"Label the job template `{ANCESTOR_LABEL}: <job name>`.",
)
def check(runtime: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags a replicatedJob named `dataset-initializer` or `model-initializer` whose job
    template does not carry the ancestor label of the same value.

    ## Why is this bad?
    The webhook finds initializer jobs by name, so a TrainJob with `spec.initializer` is
    accepted; but the controller injects `storageUri` (as `STORAGE_URI`), `env` and
    `secretRef` only into jobs carrying the label. The initializer silently downloads the
    runtime's default dataset or model, or nothing.

    ## When it stays silent
    On jobs of other names, and on initializer jobs labelled as themselves.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-init
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
                          image: ghcr.io/kubeflow/trainer/dataset-initializer
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-init
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          replicatedJobs:
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
    """
    for index, job in replicated_jobs(runtime):
        name = job.get("name")
        if name in INITIALIZERS and ancestor(job) != name:
            yield Problem(
                job_metadata_path(index, job),
                f"job `{name}` lacks `{ANCESTOR_LABEL}: {name}` on its job template: a "
                f"TrainJob's `spec.initializer.{name.split('-')[0]}` storageUri, env and "
                "secretRef are silently not injected, so it fetches the runtime's default",
            )
