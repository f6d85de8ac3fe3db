from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trainlint.document import Manifest, mapping, mappings
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render import Container
from trainlint.render.checkpoint import (
    CheckpointDir,
    CheckpointOptions,
    Storage,
    ranks_of,
    relative_dirs,
    storage,
    writers,
)
from trainlint.render.trainer import OVERRIDES, rendered
from trainlint.render.tree import first_on
from trainlint.rule import rule

#: What happens to the checkpoint, by the storage it is on.
CONSEQUENCES = {
    "emptyDir": "it is deleted with the pod",
    "ephemeral": "its generic ephemeral claim is deleted with the pod",
    "hostPath": "it stays on one node, where a restarted pod may never land again",
    "container": "it is lost when the container restarts",
}


@rule(
    "TL301", "ephemeral-checkpoint-volume",
    kinds=TRAINER_KINDS, severity=Severity.ERROR,
    remediation="Mount a PersistentVolumeClaim at the checkpoint directory.",
    options=CheckpointOptions,
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Finds the checkpoint directory of every container the controller builds (env vars
    such as `CKPT_DIR`, flags such as `--output_dir`, torchtune-style `output_dir=` args),
    whatever its job or container is called, and checks the storage it lands on: an
    `emptyDir`, generic `ephemeral` or `hostPath` volume, or no volume at all. A TrainJob is
    judged on the JobSet the controller builds from it and its runtime (see
    `trainlint render`), its `spec.trainer` and the volumes its overrides or patches add
    included. A directory given relative to the image's working directory (no `cd`
    before it) is judged by the container's volumes: when each is pod-local, or there are
    none, no working directory can hold it past the pod.

    ## Why is this bad?
    Trainer has no checkpoint API: resuming works only if the checkpoint outlives the pod.
    On pod-local storage a restart, suspend or preemption finds nothing, and the run
    silently trains again from step 0.

    ## When it stays silent
    When no checkpoint directory is found, when the trainer's settings say it saves
    nothing (`save_strategy` `no`, `save_steps` not below `max_steps`), on a directory
    it reads weights from (torchtune's `checkpointer.checkpoint_dir`, a variable named
    as an input: `BASE_CHECKPOINT`, `PRETRAINED_CKPT`, `REF_CHECKPOINT`), when the
    directory is on a PVC or a volume of unknown kind, and on a TrainJob when the
    storage is the runtime's alone (reported there). Where the directory is on no volume
    because the overrides that would mount it are another release's (v2.1's
    `podTemplateOverrides` checked for v2.3), TL007 reports the field: the cause, whose
    fix brings the volume back (and often the script and data the pod needs to start).

    ## Options
    `env-name-parts`, `env-names`, `flags`: how a checkpoint directory is recognised.

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
          replicatedJobs:
            - name: node
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: trainer
                spec:
                  template:
                    spec:
                      terminationGracePeriodSeconds: 120
                      containers:
                        - name: node
                          image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
                          env:
                            - name: CKPT_DIR
                              value: /scratch/ckpt
                          volumeMounts:
                            - name: scratch
                              mountPath: /scratch
                      volumes:
                        - name: scratch
                          emptyDir: {}
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
          replicatedJobs:
            - name: node
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: trainer
                spec:
                  template:
                    spec:
                      terminationGracePeriodSeconds: 120
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
    """
    render = rendered(manifest, ctx)
    for container, directories in writers(render, ctx.options):
        for directory in directories:
            where = storage(container, directory.path)
            if where.kind not in CONSEQUENCES:
                continue
            mount_at = where.mount.at if where.mount else None
            at = first_on(manifest, where.volume_at, mount_at, directory.at)
            if at is None:
                continue  # the runtime's own problem, reported on the runtime
            if where.kind == "container" and _unread_mount(
                    manifest, container.name, directory.path, ctx.trainer_version):
                continue  # TL007's: the field that would mount it is pruned
            yield Problem(at.path, _message(directory, where),
                          remediation=_help(directory, where, container))
    if render.complete:
        for container in render.workload():
            yield from _relative(manifest, container, ctx.options)


def _relative(manifest: Manifest, given: Container, options: CheckpointOptions
              ) -> Iterator[Problem]:
    """A finding per checkpoint directory given relative to the image's working directory
    in a container whose every volume is pod-local (or that mounts none): wherever the
    working directory is, the checkpoint does not outlive the pod. (The container whose
    pods save what `given`'s command says: `ranks_of`.)"""
    directories = relative_dirs(given, options)
    container = ranks_of(given) if directories else None
    if container is None:
        return  # most containers: no volume looked at
    kinds: dict[str, None] = {}
    for _, mount in mappings(container.body.get("volumeMounts")):
        at = mount.get("mountPath")
        name = mount.get("name")
        kind = storage(container, at).kind if isinstance(at, str) and at.startswith("/") else None
        if kind not in CONSEQUENCES or kind == "container":
            return  # a volume that may hold the working directory and outlive the pod
        kinds[f"{kind} `{name}`"] = None
    held = ("it mounts no volume" if not kinds
            else f"it mounts only {', '.join(kinds)}")
    for directory in directories:
        at = first_on(manifest, directory.at)
        if at is not None:
            yield Problem(at.path, (
                f"checkpoint-dir `{directory.path}` ({directory.origin}) is relative to the "
                f"working directory of {container.noun} `{container.name}`, and {held}: "
                "wherever it lands, it does not outlive the pod, so a restarted run starts "
                "again from step 0"), remediation=_help(directory, Storage("container"),
                                                          container))


def _message(directory: CheckpointDir, where: Storage) -> str:
    if where.kind == "container":
        place = "on no volume (the container's own filesystem)"
    else:
        place = f"on {where.kind} volume `{where.volume}`"
    return (
        f"checkpoint-dir `{directory.path}` ({directory.origin}) is {place}: "
        f"{CONSEQUENCES[where.kind]}, so a restarted run starts again from step 0"
    )


def _unread_mount(job: Manifest, container: str, path: str, version: tuple[int, int]) -> bool:
    """Whether an overrides or patches field of another release in a TrainJob (which the
    release checked prunes) mounts a volume at `path` or above it in the container named
    `container`: why the directory is on no volume."""
    spec = mapping(job.body.get("spec"))
    read = OVERRIDES.get(version, "runtimePatches")
    for field in (*OVERRIDES.values(), "runtimePatches"):
        if field == read:
            continue
        for mount in _mounts(spec.get(field), container):
            at = mount.get("mountPath")
            if isinstance(at, str) and at and (
                    path == at or path.startswith(at.rstrip("/") + "/")):
                return True
    return False


def _mounts(value: object, container: str) -> Iterator[dict[str, Any]]:
    """The volume mounts of the containers named `container` anywhere in `value`."""
    if isinstance(value, list):
        for item in value:
            yield from _mounts(item, container)
    elif isinstance(value, dict):
        if value.get("name") == container:
            yield from (mount for _, mount in mappings(value.get("volumeMounts")))
        for item in value.values():
            yield from _mounts(item, container)


def _help(directory: CheckpointDir, where: Storage, container: Container) -> str:
    mount_path = where.mount_path or directory.path
    access = "RWX, since numNodes > 1" if container.job.pods > 1 else "RWX if numNodes > 1"
    return f"mount a PersistentVolumeClaim at {mount_path} ({access})"
