from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trainlint import roundtrip
from trainlint.document import KeyPath, Manifest, dig, mapping
from trainlint.engine.context import Context
from trainlint.model.check import SCHEMA_KINDS, Flaw, Issue, issues
from trainlint.problem import Edit, Fix, Problem, Severity
from trainlint.rule import rule


@rule(
    "TL006", "unknown-field", kinds=set(SCHEMA_KINDS), severity=Severity.ERROR,
    remediation="Fix the field's name (see the suggestion) or remove it.",
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags fields that no schema of the selected Trainer release has (or, inside Pod and Job
    templates, PVCs and StorageClasses, no Kubernetes schema has), and suggests the nearest
    known name: `numNode` → `numNodes`. `--fix --unsafe-fixes` renames the key when exactly
    one known name is that close and the mapping does not have it yet (a container's
    `resources` under `spec.trainer` means `resourcesPerNode`). A field written one floor
    off is told where it belongs instead: a runtime's `podGroupPolicy` in a TrainJob's
    `spec`; a pod's `nodeSelector` or a container's `volumeMounts` under `spec.trainer`
    (the runtime's pod template, and the release's patch field where it takes the key); a
    Job's `backoffLimit` or a pod's `hostIPC` directly in a runtime's JobSet spec.

    ## Why is this bad?
    Unknown fields of a custom resource are pruned silently: under the default
    `fieldValidation=Warn` the API server accepts the object and drops the field with a
    warning that GitOps tools and SDKs never show. A typo in `numNodes` trains on one node.
    (A recent `kubectl` asks for strict validation: the object is refused, and the apply
    fails on a field that this finding names before it reaches the cluster.)
    An object whose every field is pruned is left empty, and the schema's defaults then
    decide: Volcano's `networkTopology` written with keys of its own becomes `mode: hard`
    (the message names the defaults).

    ## When it stays silent
    On kinds and API versions it has no schema for, and on fields that exist in another
    release (TL007 reports those).

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
        numNode: 4
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
        numNodes: 4
    ```
    """
    for issue in issues(manifest, ctx):
        if issue.flaw is Flaw.UNKNOWN_FIELD:
            yield Problem(issue.path, issue.message, fix=_rename_fix(manifest, issue))


def _rename_fix(manifest: Manifest, issue: Issue) -> Fix | None:
    """Rename the key to the one known name it is a typo of. Unsafe: the value, pruned so
    far, starts to take effect. None when several names are as close, or when the mapping
    already has the name (which value was meant is then unclear)."""
    parent, old = issue.path[:-1], issue.path[-1]
    if issue.match is None or not isinstance(old, str):
        return None
    if issue.match in mapping(dig(manifest.body, *parent)):
        return None
    return Fix(f"rename `{old}` to `{issue.match}`", _rename(parent, old, issue.match), safe=False)


def _rename(parent: KeyPath, old: str, new: str) -> Edit:
    def edit(node: Any) -> None:
        roundtrip.rename(roundtrip.at(node, parent), old, new)

    return edit
