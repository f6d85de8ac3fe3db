from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig, mappings
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render.trainer import JOBS, POD_SPEC, framework, named, override_pods
from trainlint.rule import rule

INSTALLER = "flux-installer"
DETAIL = "InitContainer 'flux-installer' is reserved"


@rule(
    "TL216", "reserved-flux-installer",
    kinds=TRAINER_KINDS, severity=Severity.ERROR,
    since="2.2",
    remediation="Rename the init container: the Flux plugin adds its own `flux-installer`.",
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags an init container named `flux-installer` in the `node` job of a Flux runtime
    (`mlPolicy.flux`), or added to that job by a TrainJob's `runtimePatches`.

    ## Why is this bad?
    The Flux plugin injects its own `flux-installer` init container. The runtime itself is
    accepted, but the Trainer webhook denies every TrainJob that uses it: "InitContainer
    'flux-installer' is reserved".

    ## When it stays silent
    On other init containers, on runtimes that are not Flux, and before v2.2.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: flux-distributed
    spec:
      mlPolicy:
        flux: {}
      template:
        spec:
          replicatedJobs:
            - name: node
              template:
                spec:
                  template:
                    spec:
                      initContainers:
                        - name: flux-installer
                          image: ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: flux-distributed
    spec:
      mlPolicy:
        flux: {}
      template:
        spec:
          replicatedJobs:
            - name: node
              template:
                spec:
                  template:
                    spec:
                      initContainers:
                        - name: fetch-data
                          image: busybox:1.36
    ```
    """
    runtime = ctx.runtime_for(manifest) if manifest.kind == "TrainJob" else manifest
    if runtime is None or framework(runtime) != "flux":
        return
    if manifest.kind == "TrainJob":
        patches = override_pods(manifest, ctx.trainer_version)
        places = [(path, pod) for path, pod, targets in patches if "node" in targets]
        whose = "this TrainJob"
    else:
        found = named(dig(runtime.body, *JOBS), "node")
        places = [((*JOBS, found[0], *POD_SPEC), dig(found[1], *POD_SPEC))] if found else []
        whose = "every TrainJob using this runtime"
    for path, pod in places:
        for index, container in mappings(dig(pod, "initContainers")):
            if container.get("name") == INSTALLER:
                yield Problem(
                    (*path, "initContainers", index, "name"),
                    f"init container `{INSTALLER}` in the `node` job of a Flux runtime: the "
                    f'Trainer webhook denies {whose} ("{DETAIL}")',
                )
