from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import KeyPath, Manifest, mapping, mappings, sequence
from trainlint.engine.context import Context
from trainlint.kinds import RUNTIME_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render import FAILURE_POLICY
from trainlint.render.trainer import runtime_render
from trainlint.rule import rule


@rule(
    "TL408", "policy-targets-unknown-job",
    kinds=RUNTIME_KINDS, severity=Severity.ERROR,
    remediation="Name only replicatedJobs of this runtime in `targetReplicatedJobs`.",
)
def check(runtime: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags names in `successPolicy.targetReplicatedJobs` and
    `failurePolicy.rules[].targetReplicatedJobs` that are not replicatedJobs of the runtime.

    ## Why is this bad?
    Trainer does not check them, but the JobSet webhook does when the controller creates
    the JobSet: it is rejected ("does not appear in .spec.ReplicatedJobs"), the TrainJob
    never starts and has no status, only a `TrainJobResourcesCreationFailed` event.

    ## When it stays silent
    On names of replicatedJobs of the runtime.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-success
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          successPolicy:
            operator: All
            targetReplicatedJobs: [trainer]
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
      name: torch-success
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          successPolicy:
            operator: All
            targetReplicatedJobs: [node]
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
    """
    render = runtime_render(runtime, ctx)
    names = {job.name for job in render.jobs}
    spec = mapping(render.jobset.get("spec"))
    lists: list[tuple[KeyPath, object]] = [
        (("spec", "successPolicy", "targetReplicatedJobs"),
         mapping(spec.get("successPolicy")).get("targetReplicatedJobs"))
    ]
    for index, item in mappings(mapping(spec.get("failurePolicy")).get("rules")):
        lists.append(((*FAILURE_POLICY, "rules", index, "targetReplicatedJobs"),
                      item.get("targetReplicatedJobs")))
    for path, targets in lists:
        for position, target in enumerate(sequence(targets)):
            at = render.origin((*path, position))
            if isinstance(target, str) and target not in names and at.manifest is runtime:
                yield Problem(
                    at.path,
                    f"`{target}` is not a replicatedJob of this runtime: the JobSet webhook "
                    "rejects the JobSet when a TrainJob starts, so it never runs and shows "
                    "only a TrainJobResourcesCreationFailed event",
                )
