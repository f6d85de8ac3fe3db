from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render import Container, Render, script
from trainlint.render.checkpoint import (
    CheckpointOptions,
    claim_name,
    named_by_variables,
    storage,
    writers,
)
from trainlint.render.trainer import rendered
from trainlint.render.tree import first_on
from trainlint.rule import rule

#: The variables by which each framework plugin tells a node its rank.
RANKS = {"torch": "PET_NODE_RANK", "jax": "JAX_PROCESS_ID", "xgboost": "DMLC_TASK_ID"}
#: Storage every pod of the JobSet mounts the same: one PVC for all of them.
SHARED = ("persistentVolumeClaim", "volumeClaimPolicies")


@rule(
    "TL310", "pods-share-checkpoint-dir",
    kinds=TRAINER_KINDS, severity=Severity.WARNING,
    remediation=(
        "Give each pod its own directory (its completion index in the path), or run one pod."
    ),
    options=CheckpointOptions,
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Renders the JobSet (see `trainlint render`) and flags a job that runs several pods
    (`parallelism` or `replicas` above 1, or `numNodes`) without distributed training,
    whose container writes its checkpoint directory (see TL301) on one shared PVC: the
    same path for every pod.

    ## Why is this bad?
    Without a framework plugin that gives each pod a rank (`PET_NODE_RANK`, MPI's launcher,
    `JAX_PROCESS_ID`), the pods are independent copies of one program. Each writes the
    same checkpoint files on the same volume: they overwrite each other, and where the
    command shows a resume (`get_last_checkpoint`, `--resume`), a restarted pod resumes
    from whichever wrote last (the message says so only then).

    ## When it stays silent
    When the job runs one pod, when its pods train together (the runtime's torch, JAX,
    XGBoost, MPI or Flux plugin wires them, and the TrainJob has `spec.trainer`, or the
    command gives a launcher each node's rank, `--node-rank=$(JOB_COMPLETION_INDEX)`, or
    torchrun a master of its own), when the
    directory is on storage of each pod's own (`emptyDir`) or holds a per-pod variable
    (`$(POD_NAME)`, `$JOB_COMPLETION_INDEX`), on a mount whose folder of the volume is
    named by a variable the container does not spell out (`subPathExpr: $(POD_NAME)`),
    and when nothing is saved (see TL301).

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: sweep
    spec:
      template:
        spec:
          replicatedJobs:
            - name: node
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: trainer
                spec:
                  parallelism: 4
                  template:
                    spec:
                      containers:
                        - name: node
                          image: ghcr.io/example/sweep:1.0
                          env:
                            - name: CKPT_DIR
                              value: /mnt/ckpt/sweep
                          volumeMounts:
                            - name: ckpt
                              mountPath: /mnt/ckpt
                      volumes:
                        - name: ckpt
                          persistentVolumeClaim:
                            claimName: sweep-ckpt
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: sweep
    spec:
      template:
        spec:
          replicatedJobs:
            - name: node
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: trainer
                spec:
                  parallelism: 4
                  template:
                    spec:
                      containers:
                        - name: node
                          image: ghcr.io/example/sweep:1.0
                          env:
                            - name: INDEX  # the Job's completion index
                              valueFrom:
                                fieldRef:
                                  fieldPath: >-
                                    metadata.annotations['batch.kubernetes.io/job-completion-index']
                            - name: CKPT_DIR
                              value: /mnt/ckpt/sweep-$(INDEX)
                          volumeMounts:
                            - name: ckpt
                              mountPath: /mnt/ckpt
                      volumes:
                        - name: ckpt
                          persistentVolumeClaim:
                            claimName: sweep-ckpt
    ```
    """
    render = rendered(manifest, ctx)
    if not render.complete:
        return
    reported: set[int] = set()
    for container, directories in writers(render, ctx.options):
        job = container.job
        pods = job.pods * job.replicas
        if pods <= 1 or job.index in reported or _trains_together(render, container):
            continue
        for directory in directories:
            where = storage(container, directory.path)
            if where.kind not in SHARED or directory.varies or named_by_variables(
                    container, where):
                continue
            mount_at = where.mount.at if where.mount else None
            at = first_on(manifest, directory.at, job.pods_at, mount_at, where.volume_at)
            if at is None:
                continue
            claim = claim_name(container, where)
            on = f"PVC `{claim}`" if claim else f"the `{where.volume}` volumeClaimPolicies PVC"
            reported.add(job.index)
            resume = script.resumes(script.read(container))
            yield Problem(
                at.path,
                f"job `{job.name}` runs {pods} pods that each write checkpoint-dir "
                f"`{directory.path}` ({directory.origin}) on {on}, with no rank to tell them "
                "apart: they overwrite each other's checkpoints"
                + (f", and a restarted pod resumes from whichever saved last (`{resume}`)"
                   if resume else ""),
            )
            break


def _trains_together(render: Render, container: Container) -> bool:
    """Whether the job's pods are one distributed run: ranked by the framework plugin, or
    by the command itself (a launcher given each node's rank from a variable, `--node-rank
    $(JOB_COMPLETION_INDEX)`, `--machine_rank`, or torchrun a master of its own; not
    `--standalone`, each pod its own run)."""
    if render.framework in ("mpi", "flux"):
        return container.job.name in ("node", "launcher")
    variable = RANKS.get(render.framework)
    if variable is not None and variable in container.env:
        return True
    found = script.read(container)
    rank = script.flag(found, "node_rank", "machine_rank")
    return (rank is not None and "$" in str(rank.value)) or script.flag(
        found, "master_addr", "rdzv_endpoint") is not None
