from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import KeyPath, Manifest, dig, mapping
from trainlint.engine.context import Context
from trainlint.problem import Problem, Severity
from trainlint.render.change import job_template_effects, overrides_field, settled, suspended
from trainlint.render.trainer import TRAINER, ancestor, replicated_jobs
from trainlint.rule import rule

#: The TrainJob settings that feed the JobSet's jobs, mutable in the CRD before v2.2.
JOB_SETTINGS = ("trainer", "initializer")
JOBSET_DENIAL = "`spec.replicatedJobs: field is immutable`"


@rule(
    "TL220", "jobset-refuses-template-change", kinds={"TrainJob"}, severity=Severity.ERROR,
    remediation=(
        "Change only labels, annotations, nodeSelector, tolerations and schedulingGates of a "
        "created TrainJob; for anything else, create a new TrainJob."
    ),
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    On an update (`--base`, or the webhook's UPDATE requests), flags a change that the
    Trainer accepts but that reaches the JobSet's jobs in a way the JobSet webhook refuses:
    once a JobSet exists, its `replicatedJobs` may change only while it is suspended, and
    then only the pod templates' labels, annotations, `nodeSelector`, `tolerations` and
    `schedulingGates`. Compared are the TrainJob fields that feed the jobs (the controller
    builds the JobSet from them the same way before and after): in overrides and patches,
    the pod spec fields other than those five (`affinity`, volumes, containers... as each
    release has them; runtime patches' fields that the CRD makes immutable are TL012's)
    and a patched job template's labels and annotations; before v2.2, also
    `spec.trainer` and `spec.initializer`, which the CRD makes immutable from v2.2.

    ## Why is this bad?
    The Trainer controller applies the JobSet only while the TrainJob (or the JobSet) is
    suspended, and the JobSet webhook rejects the update (`spec.replicatedJobs: field is
    immutable`): the TrainJob shows the new settings, the JobSet keeps the old ones, and
    the failure is only an event. A change to a running TrainJob (v2.0–v2.1 trainer
    settings) is not applied at all; the next suspension (Kueue preemption) then fails in
    the same way.

    ## When it stays silent
    On a new TrainJob; on changes of pod template labels, annotations, `nodeSelector`,
    `tolerations` and `schedulingGates`, of fields the schema does not know, and of
    JobSet metadata; on a running TrainJob's changed overrides (the Trainer webhook denies
    them first: TL219) and, from v2.2, on what the CRD makes immutable (TL012); and on
    `spec.trainer` when the runtime is known and has no job labelled as the trainer's (its
    JobSet takes nothing from it). It compares TrainJob fields, not rendered JobSets.

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
      suspend: true
    ```
    After: (an affinity patched in while queued)
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef:
        name: torch-distributed
      suspend: true
      runtimePatches:
        - manager: acme.io/platform
          trainingRuntimeSpec: {template: {spec: {replicatedJobs: [{name: node, template: {
            spec: {template: {spec: {affinity: {podAntiAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: zone}]}}}}}}}]}}}
    ```

    Use instead: (a node selector, which a suspended JobSet takes)
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata: {name: sft-run-1}
    spec:
      runtimeRef: {name: torch-distributed}
      suspend: true
      runtimePatches:
        - manager: acme.io/platform
          trainingRuntimeSpec: {template: {spec: {replicatedJobs: [{name: node, template: {
            spec: {template: {spec: {nodeSelector: {pool: h100}}}}}}]}}}
    ```
    """
    stored = ctx.previous(job)
    if stored is None:
        return
    release = ctx.trainer_version
    applied = suspended(stored) or suspended(job)
    changes: list[tuple[KeyPath, str]] = []
    if release < (2, 2):
        runtime = ctx.runtime_for(job)
        dropped = runtime is not None and not any(
            ancestor(replicated) == TRAINER for _, replicated in replicated_jobs(runtime))
        for setting in JOB_SETTINGS:
            if setting == "trainer" and dropped:
                continue  # the runtime's jobs take nothing from `spec.trainer` (TL201)
            before, after = (settled(mapping(dig(one.body, "spec", setting)))
                             for one in (stored, job))
            changes.extend((("spec", setting, key), f"`spec.{setting}.{key}`")
                           for key in sorted(before.keys() | after.keys())
                           if before.get(key) != after.get(key))
    if applied:  # otherwise the webhook denies a change of the overrides (TL219)
        before, after = job_template_effects(stored, release), job_template_effects(job, release)
        for name in sorted(before.keys() | after.keys()):
            if before.get(name, ((), []))[1] != after.get(name, ((), []))[1]:
                path = after[name][0] if name in after else ("spec", overrides_field(release)[0])
                changes.append((path, f"what the overrides write into job `{name}`"))
    for path, what in changes:
        if applied:
            message = (f"{what} changed: the controller applies it to the suspended JobSet, and "
                       f"the JobSet webhook refuses the update ({JOBSET_DENIAL}), as it lets "
                       "only labels, annotations, nodeSelector, tolerations and schedulingGates "
                       "of pod templates change; the JobSet keeps the old settings")
        else:
            message = (f"{what} changed on a running TrainJob: the controller leaves the running "
                       "JobSet as it is, and when the TrainJob is next suspended the JobSet "
                       f"webhook refuses the update ({JOBSET_DENIAL})")
        yield Problem(path, message)
