from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import KeyPath, Manifest, dig, sequence
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Problem, Related, Severity
from trainlint.render import POD_SPEC, Job
from trainlint.render.checkpoint import claim_template
from trainlint.render.trainer import pod_namespaces, rendered
from trainlint.render.tree import Origin, first_on, within
from trainlint.rule import rule

SINGLE_NODE_MODES = frozenset({"ReadWriteOnce", "ReadWriteOncePod"})


@rule(
    "TL302", "rwo-volume-multi-node",
    kinds=TRAINER_KINDS, severity=Severity.ERROR,
    remediation="Use a ReadWriteMany PersistentVolumeClaim, or train on one node.",
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags a trainer job that runs on more than one node (TrainJob `spec.trainer.numNodes`,
    else the runtime's `mlPolicy.numNodes`) and mounts a PersistentVolumeClaim whose
    `accessModes` allow only `ReadWriteOnce` or `ReadWriteOncePod`: a PVC of the run, or a
    `volumeClaimPolicies` template. It is reported on the TrainJob when the TrainJob raises
    numNodes or adds the volume, else on the runtime. A PVC that is not among the inputs
    is not judged.

    ## Why is this bad?
    A ReadWriteOnce volume attaches to one node. Trainer pods on other nodes wait in
    `ContainerCreating` (multi-attach error) and the gang never starts, or only the pods
    on the first node run.

    ## When it stays silent
    On one node, on claims with `ReadWriteMany` or `ReadOnlyMany`, and on claims that
    are not among the checked files (their access modes are unknown).

    ## Example
    ```yaml
    apiVersion: v1
    kind: PersistentVolumeClaim
    metadata:
      name: train-ckpt
    spec:
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
        numNodes: 2
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
    spec:
      mlPolicy:
        numNodes: 2
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
    """
    namespaces = pod_namespaces(manifest, ctx)
    render = rendered(manifest, ctx)
    for job in render.jobs:
        if job.pods <= 1:
            continue
        for name in sorted(job.mounted()):
            for volume_at, described, modes in _single_node_claims(job, name, namespaces, ctx):
                at = volume_at if manifest.kind != "TrainJob" else first_on(
                    manifest, job.pods_at, volume_at
                )
                if at is None:
                    continue  # the runtime's own problem, reported on the runtime
                related = [Related(modes[0], modes[1], f"{described} allows only ReadWriteOnce")]
                if volume_at.manifest is not manifest and volume_at.manifest is not None:
                    related.append(Related(volume_at.manifest, volume_at.path,
                                           f"volume `{name}` is declared here"))
                who = f"trainer job `{job.name}`" if job is render.trainer else f"job `{job.name}`"
                yield Problem(
                    at.path,
                    f"{who} runs on {job.pods} nodes but mounts {described}, which allows "
                    "only ReadWriteOnce: pods on other nodes cannot attach it and stay in "
                    "ContainerCreating, so the job never starts",
                    related=tuple(related),
                )


def _single_node_claims(
    job: Job, name: str, namespaces: list[str], ctx: Context
) -> Iterator[tuple[Origin, str, tuple[Manifest, KeyPath]]]:
    """(where the volume is declared, description, where its access modes are written)
    of the volume `name` if it is RWO-only."""
    volumes = job.volumes()
    if name in volumes:
        index, volume = volumes[name]
        claim_name = dig(volume, "persistentVolumeClaim", "claimName")
        if not isinstance(claim_name, str):
            return
        at = job.origin(*POD_SPEC, "volumes", index, "persistentVolumeClaim")
        for namespace in namespaces:
            claim = ctx.claim(namespace, claim_name)
            if claim is not None and _single_node(dig(claim.body, "spec", "accessModes")):
                yield (at, f"PVC `{namespace}/{claim_name}` (volume `{name}`)",
                       (claim, ("spec", "accessModes")))
        return
    template = claim_template(job.render, name)
    if template is not None and _single_node(dig(template[0], "spec", "accessModes")):
        modes = within(template[1], "spec", "accessModes")
        if modes.manifest is not None:
            yield (modes, f"volume `{name}` from a volumeClaimPolicies template",
                   (modes.manifest, modes.path))




def _single_node(modes: object) -> bool:
    listed = [mode for mode in sequence(modes) if isinstance(mode, str)]
    return bool(listed) and all(mode in SINGLE_NODE_MODES for mode in listed)
