from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine.context import Context
from trainlint.model.check import SCHEMA_KINDS, Flaw, problems
from trainlint.problem import Problem, Severity
from trainlint.rule import rule


@rule(
    "TL009", "missing-required-field", kinds=set(SCHEMA_KINDS), severity=Severity.ERROR,
    remediation="Add the field the schema requires.",
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags mappings that lack a field their schema requires: `spec.runtimeRef` of a
    TrainJob, `name` and `template` of a replicatedJob, `name` and `action` of a failure
    policy rule, `containers` of a pod spec, `manager` of a runtime patch. The finding is
    on the mapping that should hold the field.

    ## Why is this bad?
    The API server rejects the object (`Required value`). Inside a runtime the rejection
    comes only when the runtime is applied, long after the TrainJobs that use it were
    written. What a Trainer object's embedded Kubernetes types require is what the
    release's CRD requires: a pod condition's `status` in a Job's `podFailurePolicy` up to
    v2.1 (whatever the cluster's Kubernetes), not from v2.2 (made from Kubernetes 1.35's
    types; a Job without it gets `True`).

    ## When it stays silent
    On kinds it has no schema for, and on a mapping whose own type is already wrong
    (TL005).

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      trainer:
        numNodes: 2
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
    ```
    """
    yield from problems(manifest, ctx, Flaw.MISSING_REQUIRED)
