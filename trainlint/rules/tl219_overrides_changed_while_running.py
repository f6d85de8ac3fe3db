from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig, is_count, mappings, string
from trainlint.engine.context import Context
from trainlint.problem import Problem, Severity
from trainlint.render.change import overrides, overrides_field, suspended
from trainlint.rule import rule


@rule(
    "TL219", "overrides-changed-while-running", kinds={"TrainJob"}, severity=Severity.ERROR,
    remediation=(
        "Suspend the TrainJob (`spec.suspend: true`) in the same or an earlier update, then "
        "change its overrides or patches."
    ),
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    On an update (`--base`, or the webhook's UPDATE requests), flags a change of
    `podSpecOverrides` (v2.0), `podTemplateOverrides` (v2.1) or `runtimePatches` (v2.2+)
    while the TrainJob runs: suspended neither before nor after the update (v2.2+; in
    v2.0–v2.1 the updated TrainJob must be suspended; in v2.2.0, too, while v2.2.1 accepts
    either), or while the stored TrainJob's status still counts active jobs. Entries
    compare as the webhook compares them, a patch's `time` stamp aside; where that needs
    the Go types (is an empty value unset?), trainlint takes them as unchanged.

    ## Why is this bad?
    The Trainer webhook denies the update: "RuntimePatches can only be modified when the
    TrainJob is suspended before or after the update" (the field's name in each release),
    and, while the JobSet still has active jobs, "RuntimePatches cannot be modified when
    the JobSet's ReplicatedJob <name> is still active". The pods of a running job cannot
    take the change.

    ## When it stays silent
    On a new TrainJob; when the overrides or patches compare equal (unset, null and empty
    alike; a patch's `time` aside); when the TrainJob is suspended as the release requires
    and the stored status shows no active job (a file usually has no status: then only the
    first check is made); and on a JobSet the webhook cannot read (J14), which nothing in
    the objects foretells.

    ## Example
    Before the change:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef:
        name: torch-distributed
      runtimePatches:
        - manager: acme.io/platform
          trainingRuntimeSpec: {template: {spec: {replicatedJobs: [
            {name: node, template: {spec: {template: {spec: {nodeSelector: {pool: a100}}}}}}]}}}
    ```
    After:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef:
        name: torch-distributed
      runtimePatches:
        - manager: acme.io/platform
          trainingRuntimeSpec: {template: {spec: {replicatedJobs: [
            {name: node, template: {spec: {template: {spec: {nodeSelector: {pool: h100}}}}}}]}}}
    ```

    Use instead: (suspended before the change, or in it)
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata: {name: sft-run-1}
    spec:
      runtimeRef: {name: torch-distributed}
      suspend: true
      runtimePatches:
        - manager: acme.io/platform
          trainingRuntimeSpec: {template: {spec: {replicatedJobs: [
            {name: node, template: {spec: {template: {spec: {nodeSelector: {pool: h100}}}}}}]}}}
    ```
    """
    stored = ctx.previous(job)
    release = ctx.trainer_version
    if stored is None or overrides(stored, release) == overrides(job, release):
        return
    field, name = overrides_field(release)
    path = ("spec", field)
    if release >= (2, 2):
        paused, when = suspended(stored) or suspended(job), "suspended before or after the update"
    else:
        paused, when = suspended(job), "suspended"
    if not paused:
        yield Problem(path, f"`spec.{field}` changed while the TrainJob runs: the Trainer webhook "
                            f'denies the update ("{name} can only be modified when the TrainJob '
                            f'is {when}"); set `spec.suspend: true` first')
        return
    for _, status in mappings(dig(stored.body, "status", "jobsStatus")):
        active = status.get("active")
        if is_count(active) and active > 0:
            replicated = string(status.get("name"))
            yield Problem(path, f"`spec.{field}` changed while the stored TrainJob's status "
                                f"counts {active} active job(s) of `{replicated}`: the Trainer "
                                f'webhook denies the update ("{name} cannot be modified when '
                                f"the JobSet's ReplicatedJob {replicated} is still active\"); "
                                "wait until the suspended jobs have stopped")
