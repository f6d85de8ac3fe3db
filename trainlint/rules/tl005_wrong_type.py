from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine.context import Context
from trainlint.model.check import SCHEMA_KINDS, Flaw, problems
from trainlint.problem import Problem, Severity
from trainlint.rule import rule


@rule(
    "TL005", "wrong-type", kinds=set(SCHEMA_KINDS), severity=Severity.ERROR,
    remediation="Write the field with the type the API expects, or remove a null field.",
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Checks every field of TrainJobs, runtimes (with their JobSet, Job and Pod templates),
    PVCs and StorageClasses against the schema of the selected Trainer and Kubernetes
    releases: a mapping where a list belongs, a quoted number, a null value.

    ## Why is this bad?
    The API server rejects a field of the wrong type ("must be of type integer") and drops
    a null one as if it were not written, so `spec: null` is a TrainJob with no spec. Some
    types changed between releases: `spec.trainer.numProcPerNode: auto` was accepted up to
    v2.1 and is rejected from v2.2.

    ## When it stays silent
    On objects of kinds and API versions it has no schema for, on fields below an
    unknown one (TL006 reports that), and on a null list, map or scalar (`nodeSelector:
    null`, as a generator writes `None`): the API server drops it, to the same effect as
    not writing it (TL009 reports a required one). A null struct is reported: `torch:`
    with nothing after it most often stands for `torch: {}`, whose presence matters.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef:
        name: torch-distributed
      trainer:
        numNodes: "2"
        env:
          CKPT_DIR: /mnt/ckpt
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef:
        name: torch-distributed
      trainer:
        numNodes: 2
        env:
          - name: CKPT_DIR
            value: /mnt/ckpt
    ```
    """
    yield from problems(manifest, ctx, Flaw.WRONG_TYPE)
