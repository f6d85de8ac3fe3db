from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from trainlint.document import Manifest, dig
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.options import check_no_empty_names
from trainlint.problem import Problem, Severity
from trainlint.render import Container
from trainlint.render.checkpoint import (
    CheckpointDir,
    CheckpointOptions,
    claim_name,
    claim_template,
    storage,
    writers,
)
from trainlint.render.trainer import pod_namespaces, rendered
from trainlint.render.tree import first_on
from trainlint.rule import rule


@dataclass(frozen=True)
class LocalStorageOptions(CheckpointOptions):
    """Checkpoint recognition, plus the provisioners whose volumes live on one node."""

    local_provisioners: tuple[str, ...] = (
        "kubernetes.io/no-provisioner", "rancher.io/local-path", "topolvm.io",
        "topolvm.cybozu.com", "openebs.io/local", "local.csi.openebs.io",
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        check_no_empty_names(self, "local_provisioners")


@rule(
    "TL303", "checkpoint-on-node-local-storage",
    kinds=TRAINER_KINDS, severity=Severity.WARNING,
    remediation="Put checkpoints on a network StorageClass (NFS, CephFS, a cloud file store).",
    options=LocalStorageOptions,
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Follows the trainer's checkpoint directory to its PVC (or `volumeClaimPolicies`
    template) and that claim's StorageClass, and flags a node-local provisioner
    (`kubernetes.io/no-provisioner`, `rancher.io/local-path`, TopoLVM, OpenEBS local).
    Only PVCs and StorageClasses among the inputs are judged.

    ## Why is this bad?
    A node-local volume exists on one node only. The pods that mount it are pinned to
    that node: a multi-node job cannot share it, and when the node fails or is drained
    the checkpoint is stranded and the restarted run stays Pending or starts from step 0.

    ## When it stays silent
    When the claim or its StorageClass is not among the checked files, on provisioners
    that are not node-local, and when the trainer saves nothing (see TL301).

    ## Options
    `local-provisioners`: provisioners treated as node-local. `env-name-parts`,
    `env-names`, `flags`: how a checkpoint directory is recognised.

    ## Example
    ```yaml
    apiVersion: storage.k8s.io/v1
    kind: StorageClass
    metadata:
      name: local-path
    provisioner: rancher.io/local-path
    ---
    apiVersion: v1
    kind: PersistentVolumeClaim
    metadata:
      name: train-ckpt
    spec:
      storageClassName: local-path
      accessModes: [ReadWriteOnce]
      resources:
        requests:
          storage: 100Gi
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainingRuntime
    metadata:
      name: torch-ckpt
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
                          env:
                            - name: CKPT_DIR
                              value: /mnt/ckpt
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
    apiVersion: storage.k8s.io/v1
    kind: StorageClass
    metadata:
      name: nfs
    provisioner: nfs.csi.k8s.io
    ---
    apiVersion: v1
    kind: PersistentVolumeClaim
    metadata:
      name: train-ckpt
    spec:
      storageClassName: nfs
      accessModes: [ReadWriteMany]
      resources:
        requests:
          storage: 100Gi
    ```
    """
    namespaces = pod_namespaces(manifest, ctx)
    render = rendered(manifest, ctx)
    for container, directories in writers(render, ctx.options):
        for directory in directories:
            yield from _local(manifest, ctx, container, directory, namespaces)


def _local(
    manifest: Manifest, ctx: Context, container: Container, directory: CheckpointDir,
    namespaces: list[str],
) -> Iterator[Problem]:
    where = storage(container, directory.path)
    classes: list[tuple[object, str]] = []
    claim = claim_name(container, where)
    for namespace in namespaces if claim else []:
        found = ctx.claim(namespace, str(claim))
        if found is not None:
            classes.append((dig(found.body, "spec", "storageClassName"), f"PVC `{claim}`"))
    template = claim_template(container.job.render, where.volume or "")
    if where.kind == "volumeClaimPolicies" and template is not None:
        name = dig(template[0], "spec", "storageClassName")
        classes.append((name, f"the `{where.volume}` volumeClaimPolicies template"))
    mount_at = where.mount.at if where.mount else None
    at = first_on(manifest, where.volume_at, mount_at, directory.at)
    for class_name, described in classes:
        storage_class = ctx.storage_class(class_name) if isinstance(class_name, str) else None
        provisioner = dig(storage_class.body, "provisioner") if storage_class else None
        if at is not None and provisioner in ctx.options.local_provisioners:
            yield Problem(
                at.path,
                f"checkpoint-dir `{directory.path}` is on {described}, StorageClass "
                f"`{class_name}` ({provisioner}), which lives on one node: the pods are "
                "pinned there, and if that node goes the checkpoint is stranded",
            )
            return
