from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trainlint.document import Manifest, dig, mappings
from trainlint.engine.context import Context
from trainlint.problem import Problem, Severity
from trainlint.render import POD_SPEC
from trainlint.render.trainer import runtime_render
from trainlint.rule import rule


@rule(
    "TL305", "fixed-claim-in-cluster-runtime",
    kinds={"ClusterTrainingRuntime"}, severity=Severity.WARNING,
    remediation=(
        "Use `volumeClaimPolicies` (v2.2+) for a PVC per TrainJob, or let each TrainJob add "
        "its own PVC through its overrides or patches."
    ),
)
def check(runtime: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags `persistentVolumeClaim.claimName` in the pod templates of a
    ClusterTrainingRuntime (each claim once).

    ## Why is this bad?
    A ClusterTrainingRuntime serves TrainJobs in every namespace, and a claim name is
    resolved in the TrainJob's namespace: in a namespace without that PVC the pods stay
    Pending, and every run of a namespace shares the one PVC, so what runs write at the
    same paths they overwrite (TL307 and TL308 say where checkpoints do).

    ## When it stays silent
    On TrainingRuntimes (namespaced: the claim is the namespace's), on
    `volumeClaimPolicies` templates, and on a claim the pods only read (the volume or
    every mount of it `readOnly`: a dataset the runs share as meant).

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-shared
    spec:
      mlPolicy:
        torch: {}
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
                          volumeMounts:
                            - name: workspace
                              mountPath: /workspace
                      volumes:
                        - name: workspace
                          persistentVolumeClaim:
                            claimName: workspace
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-shared
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          volumeClaimPolicies:
            - templates:
                - metadata:
                    name: workspace
                  spec:
                    accessModes: [ReadWriteOnce]
                    resources:
                      requests:
                        storage: 50Gi
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
                          volumeMounts:
                            - name: workspace
                              mountPath: /workspace
    ```
    """
    seen: set[str] = set()
    for job in runtime_render(runtime, ctx).jobs:
        for index, volume in mappings(job.pod_spec.get("volumes")):
            claim = dig(volume, "persistentVolumeClaim", "claimName")
            at = job.origin(*POD_SPEC, "volumes", index, "persistentVolumeClaim", "claimName")
            if (not isinstance(claim, str) or claim in seen or at.manifest is not runtime
                    or _read_only(job.pod_spec, volume)):
                continue
            seen.add(claim)
            yield Problem(
                at.path,
                f"every TrainJob using this ClusterTrainingRuntime mounts PVC `{claim}` of its "
                "own namespace: where it does not exist the pods stay Pending, and the runs of "
                "one namespace all share it",
            )


def _read_only(pod: dict[str, Any], volume: dict[str, Any]) -> bool:
    """Whether a pod only reads a claim (a shared dataset): the volume is `readOnly`, or
    each of its containers that mounts it does so read-only."""
    if dig(volume, "persistentVolumeClaim", "readOnly") is True:
        return True
    mounts = [mount for key in ("initContainers", "containers")
              for _, container in mappings(pod.get(key))
              for _, mount in mappings(container.get("volumeMounts"))
              if mount.get("name") == volume.get("name")]
    return bool(mounts) and all(mount.get("readOnly") is True for mount in mounts)
