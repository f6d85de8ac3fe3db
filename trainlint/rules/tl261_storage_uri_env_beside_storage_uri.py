from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig, mapping, mappings
from trainlint.engine.context import Context
from trainlint.problem import Problem, Severity
from trainlint.rule import rule


@rule(
    "TL261", "storage-uri-env-beside-storage-uri",
    kinds={"TrainJob"}, severity=Severity.ERROR,
    remediation="Keep `storageUri` and remove the `STORAGE_URI` variable.",
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags a `STORAGE_URI` variable in `spec.initializer.dataset.env` or
    `spec.initializer.model.env` whose value differs from the `storageUri` beside it.

    ## Why is this bad?
    The controller writes `storageUri` into `STORAGE_URI` first and then upserts `env`,
    so the variable silently wins: the initializer downloads another dataset or model
    than the one `storageUri` names.

    ## When it stays silent
    When `storageUri` is unset, or `STORAGE_URI` has the same value.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: run
    spec:
      runtimeRef:
        name: torchtune-llama3.2-1b
      initializer:
        dataset:
          storageUri: hf://tatsu-lab/alpaca
          env:
            - name: STORAGE_URI
              value: hf://yahma/alpaca-cleaned
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: run
    spec:
      runtimeRef:
        name: torchtune-llama3.2-1b
      initializer:
        dataset:
          storageUri: hf://yahma/alpaca-cleaned
    ```
    """
    for kind in ("dataset", "model"):
        initializer = mapping(dig(job.body, "spec", "initializer", kind))
        uri = initializer.get("storageUri")
        if not isinstance(uri, str) or not uri:
            continue
        for index, variable in mappings(initializer.get("env")):
            if variable.get("name") == "STORAGE_URI" and variable.get("value") != uri:
                yield Problem(
                    ("spec", "initializer", kind, "env", index),
                    f"`STORAGE_URI` here overrides `storageUri: {uri}`: the env is applied "
                    f"after it, so the {kind} initializer silently fetches what the "
                    "variable holds instead",
                )
