from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig, mapping
from trainlint.engine.context import Context
from trainlint.kinds import RUNTIME_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render.trainer import runtime_render
from trainlint.render.tree import Origin
from trainlint.rule import rule

#: Where each gang plugin marks the pods it groups (in their template's metadata).
GROUP_KEYS = {
    "coscheduling": ("labels", "scheduling.x-k8s.io/pod-group"),
    "volcano": ("annotations", "scheduling.k8s.io/group-name"),
}
#: The scheduler every pod goes to that names none.
DEFAULT_SCHEDULER = "default-scheduler"


@rule(
    "TL272", "gang-scheduling-without-scheduler-name",
    kinds=RUNTIME_KINDS, severity=Severity.WARNING,
    remediation="Set `schedulerName` in every replicatedJob's pod template to the gang scheduler.",
)
def check(runtime: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags a `podGroupPolicy` whose grouped pods do not all go to its gang scheduler. For
    `volcano` (from v2.1): some replicatedJob's pod template sets no `schedulerName`. For
    `coscheduling`: some pod templates name a scheduler of their own (the scheduler-plugins
    one, run as a second scheduler) and others name none.

    ## Why is this bad?
    The gang plugins create a PodGroup but never set the pods' scheduler. Pods without
    `schedulerName` go to the default scheduler: the Volcano scheduler is never that one,
    and where the Coscheduling plugin runs as a second scheduler, neither is it. The
    default scheduler ignores the PodGroup: those pods start one by one, and a partial
    gang holds GPUs while it waits for the rest.

    ## When it stays silent
    When every pod template names its scheduler, on runtimes without a `podGroupPolicy`
    (Volcano only from v2.1), and on `coscheduling` when no pod template names a scheduler
    other than `default-scheduler`: scheduler-plugins' recommended install runs the
    Coscheduling plugin inside the default scheduler, and admission webhooks (Slurm
    Bridge's, in the namespaces it manages) set the scheduler of such pods, so naming none
    is no evidence that the gang is lost.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-gang
    spec:
      mlPolicy:
        torch: {}
      podGroupPolicy:
        volcano: {}
      template:
        spec:
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
      name: torch-gang
    spec:
      mlPolicy:
        torch: {}
      podGroupPolicy:
        volcano: {}
      template:
        spec:
          replicatedJobs:
            - name: node
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: trainer
                spec:
                  template:
                    spec:
                      schedulerName: volcano
                      containers:
                        - name: node
                          image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
    ```
    """
    missing: list[str] = []
    named: dict[str, str] = {}  # job → the scheduler other than the default it names
    at: Origin | None = None
    plugin = ""
    for job in runtime_render(runtime, ctx).jobs:
        metadata = mapping(dig(job.spec, "template", "metadata"))
        grouped = next(((name, kind, key) for name, (kind, key) in GROUP_KEYS.items()
                        if key in mapping(metadata.get(kind))), None)
        if grouped is None:
            continue  # no gang plugin grouped these pods
        scheduler = job.pod_spec.get("schedulerName")
        if scheduler:
            if isinstance(scheduler, str) and scheduler != DEFAULT_SCHEDULER:
                named[job.name] = scheduler
            continue  # they name their scheduler
        missing.append(job.name)
        if at is None:
            plugin, kind, key = grouped
            at = job.origin("template", "spec", "template", "metadata", kind, key)
    if at is None or at.manifest is not runtime:
        return
    jobs = ", ".join(f"`{name}`" for name in missing)
    if plugin == "volcano":
        yield Problem(
            (*at.path, plugin),
            f"`podGroupPolicy.volcano` creates a PodGroup, but the pods of {jobs} set no "
            "`schedulerName` and only a Volcano admission webhook on the cluster could set "
            "it: the default scheduler ignores the PodGroup and starts the nodes one by one, "
            "without gang scheduling",
        )
    elif named:
        others = ", ".join(f"`{name}` name `{scheduler}`" for name, scheduler in named.items())
        yield Problem(
            (*at.path, plugin),
            f"`podGroupPolicy.coscheduling` creates a PodGroup, but the pods of {jobs} set no "
            f"`schedulerName` while those of {others}: they go to the default scheduler, "
            "which ignores the PodGroup and starts them on their own, so the gang is split",
        )
