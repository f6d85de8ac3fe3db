from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, mappings
from trainlint.engine.context import Context
from trainlint.problem import Problem, Severity
from trainlint.render import POD_SPEC
from trainlint.render.trainer import rendered
from trainlint.rule import rule


@rule(
    "TL282", "patch-volume-not-mounted",
    kinds={"TrainJob"}, severity=Severity.WARNING,
    remediation="Mount the volume in the container that needs it (its `volumeMounts`, in the "
    "same override or patch), or drop it.",
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Renders the JobSet the controller builds (see `trainlint render`) and flags a volume
    the TrainJob adds to a pod (`podSpecOverrides` in v2.0, `podTemplateOverrides` in
    v2.1, `runtimePatches` from v2.2) that no container or init container of that pod
    mounts (`volumeMounts`, `volumeDevices`).

    ## Why is this bad?
    A volume no container mounts changes nothing in the pod: the claim, the ConfigMap or
    the writable scratch space it was added for never reaches the program, and no error
    says so. Builders that write a volume's keys in another spelling than the API's
    (`persistent_volume_claim`) lose them on the way and send a name alone, which
    Kubernetes turns into an empty `emptyDir`: the mount the patch meant to add is missing
    as well.

    ## When it stays silent
    On volumes of the runtime (a TrainJob's patch may mount them), on a volume some
    container of the pod mounts, on a volume the TrainJob adds to a job its runtime does
    not have (TL208 says so), and when the runtime is not among the checked files.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft
    spec:
      runtimeRef:
        name: torch-distributed
      runtimePatches:
        - manager: example.com/platform
          trainingRuntimeSpec:
            template:
              spec:
                replicatedJobs:
                  - name: node
                    template:
                      spec:
                        template:
                          spec:
                            volumes:
                              - name: cache
                                emptyDir: {}
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft
    spec:
      runtimeRef:
        name: torch-distributed
      runtimePatches:
        - manager: example.com/platform
          trainingRuntimeSpec:
            template:
              spec:
                replicatedJobs:
                  - name: node
                    template:
                      spec:
                        template:
                          spec:
                            volumes:
                              - name: cache
                                emptyDir: {}
                            containers:
                              - name: node
                                volumeMounts:
                                  - name: cache
                                    mountPath: /root/.cache
    ```
    """
    render = rendered(job, ctx)
    if not render.complete:
        return
    for pod in render.jobs:
        volumes = pod.pod_spec.get("volumes")
        if not isinstance(volumes, list) or not volumes:
            continue
        mounted = pod.mounted("volumeMounts", "volumeDevices")
        for index, volume in mappings(volumes):
            name = volume.get("name")
            if not isinstance(name, str) or name in mounted:
                continue
            at = pod.origin(*POD_SPEC, "volumes", index)
            if at.manifest is not job:
                continue  # the runtime's own
            yield Problem(
                at.path,
                f"volume `{name}` that this TrainJob adds to the pods of job `{pod.name}` is "
                "mounted by none of their containers: it changes nothing in them",
            )
