from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Problem, Related, Severity
from trainlint.render import POD_SPEC
from trainlint.render.trainer import pod_namespaces, rendered
from trainlint.rule import rule


@rule(
    "TL309", "claim-not-in-run",
    kinds=TRAINER_KINDS, severity=Severity.WARNING,
    remediation=(
        "Create the PersistentVolumeClaim in the namespace of the TrainJob, or fix `claimName`."
    ),
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    When the run holds PersistentVolumeClaims (so its storage is linted too), flags a
    trainer pod volume whose `persistentVolumeClaim.claimName` is not among them in the
    namespace the pods run in: the runtime's own, or for a ClusterTrainingRuntime the
    namespaces of the TrainJobs of the run that use it. It is reported on the object that
    declares the volume. A run without any PersistentVolumeClaim is not judged.

    ## Why is this bad?
    A pod whose PVC does not exist in its namespace is never scheduled: the trainer pods
    stay Pending, and a gang-scheduled job never starts. A PVC of the same name in another
    namespace does not count.

    ## When it stays silent
    When the run holds no PersistentVolumeClaim at all (the storage is not being
    linted), and on claims found in the namespace the pods run in.

    ## Example
    ```yaml
    apiVersion: v1
    kind: PersistentVolumeClaim
    metadata:
      name: train-ckpt
      namespace: default
    spec:
      accessModes: [ReadWriteMany]
      resources:
        requests:
          storage: 100Gi
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainingRuntime
    metadata:
      name: torch-ckpt
      namespace: ml
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
                            - name: ckpt
                              mountPath: /mnt/ckpt
                      volumes:
                        - name: ckpt
                          persistentVolumeClaim:
                            claimName: train-ckpt
    ```

    Use instead:
    ```yaml
    apiVersion: v1
    kind: PersistentVolumeClaim
    metadata:
      name: train-ckpt
      namespace: ml
    spec:
      accessModes: [ReadWriteMany]
      resources:
        requests:
          storage: 100Gi
    ```
    """
    render = rendered(manifest, ctx)
    for job in render.jobs:
        for name, (index, volume) in sorted(job.volumes().items()):
            claim = dig(volume, "persistentVolumeClaim", "claimName")
            if not isinstance(claim, str) or not claim:
                continue
            at = job.origin(*POD_SPEC, "volumes", index, "persistentVolumeClaim", "claimName")
            if at.manifest is not manifest:
                continue
            if not ctx.has_claims():
                return  # the run has no PVC: nothing says which exist
            pods = "the trainer pods" if job is render.trainer else f"the pods of job `{job.name}`"
            for namespace in pod_namespaces(manifest, ctx):
                if ctx.claim(namespace, claim) is not None:
                    continue
                namesakes = ctx.claims_named(claim)
                elsewhere = "`, `".join(sorted({namesake.namespace for namesake in namesakes}))
                where = f" (the run has it in namespace `{elsewhere}`)" if elsewhere else ""
                yield Problem(
                    at.path,
                    f"volume `{name}` mounts PVC `{claim}`, which is not among the run's "
                    f"PersistentVolumeClaims in namespace `{namespace}`{where}: {pods} "
                    "stay Pending until it exists there",
                    related=tuple(
                        Related(namesake, ("metadata", "namespace"),
                                f"PVC `{claim}` is in namespace `{namesake.namespace}`")
                        for namesake in namesakes
                    ),
                )
