from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig, mappings
from trainlint.engine.context import Context
from trainlint.patches import domain_prefixed_path_errors
from trainlint.problem import Problem, Severity
from trainlint.rule import rule


@rule(
    "TL209", "runtime-patch-manager-not-domain-prefixed", kinds={"TrainJob"},
    severity=Severity.ERROR, since="2.2",
    remediation="Name the manager `<your domain>/<tool>`, e.g. `example.com/platform-team`.",
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Checks that each `spec.runtimePatches[].manager` is a domain-prefixed path, such as
    `example.com/platform-team`: a lowercase DNS subdomain, a slash, and a path.

    ## Why is this bad?
    The CRD accepts any string of up to 253 characters, but the Trainer webhook denies the
    TrainJob: "must be a domain-prefixed path (such as "acme.io/foo")". The manager names
    who owns a patch, so that users, Kueue and other controllers do not overwrite each
    other's entries.

    ## When it stays silent
    On managers that are a DNS subdomain, a slash and a path; on v2.0–v2.1 (no
    `runtimePatches`).

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef:
        name: torch-distributed
      runtimePatches:
        - manager: platform-team
          trainingRuntimeSpec: {}
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
      runtimePatches:
        - manager: example.com/platform-team
          trainingRuntimeSpec: {}
    ```
    """
    for index, patch in mappings(dig(job.body, "spec", "runtimePatches")):
        manager = patch.get("manager")
        if not isinstance(manager, str):
            continue
        for detail in domain_prefixed_path_errors(manager):
            yield Problem(
                ("spec", "runtimePatches", index, "manager"),
                f"manager `{manager}` is not a domain-prefixed path: the Trainer webhook denies "
                f'the TrainJob ("{detail}")',
            )
