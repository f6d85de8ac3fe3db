from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine.context import Context
from trainlint.problem import Problem, Severity
from trainlint.render.trainer import override_targets
from trainlint.rule import rule


@rule(
    "TL207", "duplicate-override-target", kinds={"TrainJob"}, severity=Severity.ERROR,
    until="2.0",
    remediation="Merge the `podSpecOverrides` entries that target the same job into one.",
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags a job named in `targetJobs` of more than one `podSpecOverrides` entry (v2.0).

    ## Why is this bad?
    The v2.0 Trainer webhook denies the TrainJob with `spec.podSpecOverrides: Duplicate
    value: "<job>"`. (From v2.1 a later entry wins instead.)

    ## When it stays silent
    On v2.1 and later (no `podSpecOverrides`), and on a job named once per override.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef:
        name: torch-distributed
      podSpecOverrides:
        - targetJobs:
            - name: node
          serviceAccountName: trainer
        - targetJobs:
            - name: node
          nodeSelector:
            gpu: a100
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
      podSpecOverrides:
        - targetJobs:
            - name: node
          serviceAccountName: trainer
          nodeSelector:
            gpu: a100
    ```
    """
    seen: set[str] = set()
    for path, name in override_targets(job, ctx.trainer_version):
        if path[1] != "podSpecOverrides":
            continue
        if name in seen:
            yield Problem(
                path,
                f"job `{name}` is already targeted by an earlier `podSpecOverrides` entry: the "
                f'Trainer webhook denies the TrainJob ("Duplicate value: "{name}"")',
            )
        seen.add(name)
