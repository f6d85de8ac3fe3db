from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trainlint import roundtrip
from trainlint.document import KeyPath, Manifest, dig, is_count, mapping
from trainlint.engine.context import Context
from trainlint.kinds import RUNTIME_KINDS
from trainlint.problem import Edit, Fix, Problem, Severity
from trainlint.render.trainer import runtime_render
from trainlint.rule import rule


@rule(
    "TL401", "backoff-limit-fights-max-restarts",
    kinds=RUNTIME_KINDS, severity=Severity.WARNING,
    remediation="Set `backoffLimit: 0` so that `failurePolicy.maxRestarts` alone owns restarts.",
)
def check(runtime: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags replicatedJobs whose Job `backoffLimit` is unset (Kubernetes defaults it to 6) or
    above 0 in a runtime whose JobSet `failurePolicy.maxRestarts` is above 0.
    `restartStrategy: InPlaceRestart` is left alone: it requires the maximum backoffLimit.

    ## Why is this bad?
    Each JobSet restart recreates the Jobs with a fresh backoffLimit budget, so a failing
    rank is tried about (maxRestarts+1)×(backoffLimit+1) times before the TrainJob fails:
    28 with `maxRestarts: 3` and the default. With a static multi-node rendezvous, an
    in-place retry of one rank cannot rejoin the group and hangs until the timeout, so
    most of those attempts are slow failures.

    ## When it stays silent
    On `backoffLimit: 0`, on `backoffLimitPerIndex: 0` (the per-index limit then decides:
    a failed index fails at once, whatever `backoffLimit` defaults to), on runtimes
    without `failurePolicy.maxRestarts` above 0, and with `restartStrategy:
    InPlaceRestart` (which requires the maximum backoffLimit).

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-ckpt
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          failurePolicy:
            maxRestarts: 3
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
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-ckpt
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          failurePolicy:
            maxRestarts: 3
          replicatedJobs:
            - name: node
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: trainer
                spec:
                  backoffLimit: 0
                  template:
                    spec:
                      containers:
                        - name: node
                          image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
    ```
    """
    render = runtime_render(runtime, ctx)
    policy = render.failure_policy
    restarts = policy.get("maxRestarts")
    if not is_count(restarts) or restarts <= 0 or policy.get("restartStrategy") == "InPlaceRestart":
        return
    for job in render.jobs:
        limit = job.spec.get("backoffLimit")
        limit_at = job.origin("template", "spec", "backoffLimit")
        template = job.origin("template")
        if template.manifest is not runtime:
            continue
        has_spec = "spec" in mapping(dig(runtime.body, *template.path))
        per_index = job.spec.get("backoffLimitPerIndex")
        if is_count(per_index):  # each index is retried that often; `backoffLimit` is moot
            if per_index == 0:
                continue
            yield Problem(
                job.origin("template", "spec", "backoffLimitPerIndex").path,
                f"job `{job.name}` sets `backoffLimitPerIndex: {per_index}` while "
                f"`failurePolicy.maxRestarts` is {restarts}: a failing index is tried up to "
                f"{(restarts + 1) * (per_index + 1):,} times, and an in-place retry of one "
                "rank cannot rejoin a multi-node rendezvous",
                fix=Fix("set `backoffLimitPerIndex: 0`",
                        _zero(template.path, "backoffLimitPerIndex")),
            )
            continue
        if limit_at.note is not None and is_count(limit):
            setting = f"leaves `backoffLimit` unset (Kubernetes defaults it to {limit})"
            path = (*template.path, *(("spec",) if has_spec else ()))
        elif is_count(limit) and limit > 0 and limit_at.manifest is runtime:
            setting = f"sets `backoffLimit: {limit}`"
            path = limit_at.path
        else:
            continue
        yield Problem(
            path,
            f"job `{job.name}` {setting} while `failurePolicy.maxRestarts` is "
            f"{restarts}: a failing job is tried up to {(restarts + 1) * (limit + 1):,} times, "
            "and an in-place retry of one rank cannot rejoin a multi-node rendezvous",
            # A job with no `spec` has no pod either: one holding only the limit is refused
            # (`template: Required value`), so it is left to whoever writes the pod.
            fix=Fix("set `backoffLimit: 0`", _zero(template.path, "backoffLimit"))
            if has_spec else None,
        )

def _zero(template: KeyPath, key: str) -> Edit:
    def edit(runtime: Any) -> None:
        roundtrip.put(roundtrip.ensure(runtime, (*template, "spec")), key, 0, first=True)

    return edit

