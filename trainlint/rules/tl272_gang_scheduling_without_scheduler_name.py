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
#: What sets each gang plugin's scheduler when the runtime does not.
FALLBACK = {
    "coscheduling": "and nothing else sets it",
    "volcano": "and only a Volcano admission webhook on the cluster could set it",
}


@rule(
    "TL272", "gang-scheduling-without-scheduler-name",
    kinds=RUNTIME_KINDS, severity=Severity.WARNING,
    remediation="Set `schedulerName` in every replicatedJob's pod template to the gang scheduler.",
)
def check(runtime: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags a `podGroupPolicy` (`coscheduling`, or `volcano` from v2.1) when some
    replicatedJob's pod template sets no `schedulerName`.

    ## Why is this bad?
    The gang plugins create a PodGroup but never set the pods' scheduler. Pods without
    `schedulerName` go to the default scheduler, which ignores PodGroups: nodes start one
    by one and a partial gang holds GPUs while it waits for the rest.

    ## When it stays silent
    When every pod template names its scheduler, and on runtimes without a
    `podGroupPolicy` (Volcano only from v2.1).

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
        coscheduling:
          scheduleTimeoutSeconds: 120
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
        coscheduling:
          scheduleTimeoutSeconds: 120
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
                      schedulerName: scheduler-plugins-scheduler
                      containers:
                        - name: node
                          image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
    ```
    """
    missing: list[str] = []
    at: Origin | None = None
    plugin = ""
    for job in runtime_render(runtime, ctx).jobs:
        metadata = mapping(dig(job.spec, "template", "metadata"))
        grouped = next(((name, kind, key) for name, (kind, key) in GROUP_KEYS.items()
                        if key in mapping(metadata.get(kind))), None)
        if grouped is None or job.pod_spec.get("schedulerName"):
            continue  # no gang plugin grouped these pods, or they name their scheduler
        missing.append(job.name)
        if at is None:
            plugin, kind, key = grouped
            at = job.origin("template", "spec", "template", "metadata", kind, key)
    if at is not None and at.manifest is runtime:
        yield Problem(
            (*at.path, plugin),
            f"`podGroupPolicy.{plugin}` creates a PodGroup, but the pods of "
            f"{', '.join(f'`{name}`' for name in missing)} set no `schedulerName` "
            f"{FALLBACK[plugin]}: the default scheduler ignores the PodGroup and starts the "
            "nodes one by one, without gang scheduling",
        )
