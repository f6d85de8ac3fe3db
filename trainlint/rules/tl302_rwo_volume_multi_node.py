from __future__ import annotations

from collections.abc import Iterator

from trainlint.checkpoint import claim_namespaces, first_on
from trainlint.document import Manifest, dig, sequence
from trainlint.engine import Context
from trainlint.rule import Problem, Related, Severity, rule
from trainlint.trainer import At, TrainerPod, pod_for

SINGLE_NODE_MODES = frozenset({"ReadWriteOnce", "ReadWriteOncePod"})


@rule(
    "TL302", "rwo-volume-multi-node",
    kinds={"TrainingRuntime", "ClusterTrainingRuntime", "TrainJob"}, severity=Severity.ERROR,
    fix="Use a ReadWriteMany PersistentVolumeClaim, or train on one node.",
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
    pod = pod_for(manifest, ctx)
    namespaces = claim_namespaces(manifest, ctx)
    if pod is None or pod.nodes <= 1:
        return
    nodes_at = pod.num_nodes.at if pod.num_nodes else None
    for name in sorted(pod.mounted):
        for volume_at, described, modes in _single_node_claims(pod, name, namespaces, ctx):
            at = volume_at if manifest.kind != "TrainJob" else first_on(
                manifest, nodes_at, volume_at
            )
            if at is None:
                continue  # the runtime's own problem, reported on the runtime
            related = [Related(*modes, f"{described} allows only ReadWriteOnce")]
            if volume_at.manifest is not manifest:
                related.append(Related(*volume_at, f"volume `{name}` is declared here"))
            yield Problem(
                at.path,
                f"trainer job `{pod.job_name}` runs on {pod.nodes} nodes but mounts "
                f"{described}, which allows only ReadWriteOnce: pods on other nodes cannot "
                "attach it and stay in ContainerCreating, so the job never starts",
                related=tuple(related),
            )


def _single_node_claims(
    pod: TrainerPod, name: str, namespaces: list[str], ctx: Context
) -> Iterator[tuple[At, str, At]]:
    """(where the volume is declared, description, where its access modes are written)
    of the volume `name` if it is RWO-only."""
    volume = pod.volumes.get(name)
    if volume is not None:
        claim_name = dig(volume.value, "persistentVolumeClaim", "claimName")
        if not isinstance(claim_name, str):
            return
        at = At(volume.at.manifest, (*volume.at.path, "persistentVolumeClaim"))
        for namespace in namespaces:
            claim = ctx.claim(namespace, claim_name)
            if claim is not None and _single_node(dig(claim.body, "spec", "accessModes")):
                modes = At(claim, ("spec", "accessModes"))
                yield at, f"PVC `{namespace}/{claim_name}` (volume `{name}`)", modes
        return
    template = pod.claim_templates.get(name)
    if template is not None and _single_node(dig(template.value, "spec", "accessModes")):
        at = At(template.at.manifest, (*template.at.path, "spec", "accessModes"))
        yield at, f"volume `{name}` from a volumeClaimPolicies template", at


def _single_node(modes: object) -> bool:
    listed = [mode for mode in sequence(modes) if isinstance(mode, str)]
    return bool(listed) and all(mode in SINGLE_NODE_MODES for mode in listed)
