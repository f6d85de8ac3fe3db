from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dotted
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_API, TRAINER_KINDS
from trainlint.model.list_keys import repeated
from trainlint.problem import Problem, Severity
from trainlint.rule import rule


@rule(
    "TL014", "duplicate-list-key", kinds=TRAINER_KINDS, severity=Severity.ERROR,
    remediation="Keep one item of each key: merge the two, or remove one.",
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags an item of a list the selected release's CRD keys (`x-kubernetes-list-type:
    map` by its map keys, or `set`) whose key an earlier item of the list has: two
    variables named alike in `env`, two containers or volumes of one name in a runtime's
    pod template, two ports of one number and protocol (a protocol left out is `TCP`).

    ## Why is this bad?
    The API server refuses the object (`Duplicate value: ...`) when it is created or
    updated, whatever Kubernetes would do with a Pod holding the same list (for a Pod's
    own `env`, the last variable of a name wins, without a word): a GitOps sync or an SDK
    call fails, and the runtime or TrainJob does not exist.

    ## When it stays silent
    On lists the CRD does not key, on items whose key is not all written (TL009 says what
    is missing) or holds a placeholder of the docs (`<your-name>`), and on objects of
    another API version (TL011).

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft
    spec:
      runtimeRef:
        name: torch-distributed
      trainer:
        env:
          - name: NCCL_DEBUG
            value: INFO
          - name: NCCL_DEBUG
            value: WARN
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft
    spec:
      runtimeRef:
        name: torch-distributed
      trainer:
        env:
          - name: NCCL_DEBUG
            value: WARN
    ```
    """
    if manifest.api_version != TRAINER_API:
        return
    for item in repeated(manifest.kind, ctx.trainer_version, manifest.body):
        where = dotted(item.path[:-1])
        yield Problem(
            item.path,
            f"item {item.path[-1]} of `{where}` repeats the key of item {item.first}, in a "
            f"list that takes each key once: the API server rejects the {manifest.kind} "
            f"(`{dotted(item.path)}: Duplicate value: {item.shown}`)",
        )
