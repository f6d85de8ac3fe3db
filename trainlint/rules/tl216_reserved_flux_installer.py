from __future__ import annotations

from collections.abc import Iterator, Sequence

from trainlint.document import KeyPath, Manifest, dig, mappings
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
    (`mlPolicy.flux`), or added to that job by a TrainJob's `runtimePatches`; and a
    TrainJob on such a runtime (which may be the cluster's, or a context file's).

    ## Why is this bad?
    The Flux plugin injects its own `flux-installer` init container. The runtime itself is
    accepted, but the Trainer webhook denies every TrainJob that uses it: "InitContainer
    'flux-installer' is reserved".

    ## When it stays silent
    On other init containers, on runtimes that are not Flux, on a TrainJob whose runtime
    is not known, and before v2.2.

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
    found = named(dig(runtime.body, *JOBS), "node")
    own = [((*JOBS, found[0], *POD_SPEC), dig(found[1], *POD_SPEC))] if found else []
    if manifest.kind == "TrainJob":
        if any(_installers(own)):  # the runtime's own: said here too, as the webhook does
            yield Problem(
                ("spec", "runtimeRef"),
                f"{runtime.describe()} has an init container `{INSTALLER}` in its `node` job: "
                f'the Trainer webhook denies this TrainJob ("{DETAIL}")',
            )
        patches = override_pods(manifest, ctx.trainer_version)
        places = [(path, pod) for path, pod, targets in patches if "node" in targets]
        whose = "this TrainJob"
    else:
        places = own
        whose = "every TrainJob using this runtime"
    for path in _installers(places):
        yield Problem(
            path,
            f"init container `{INSTALLER}` in the `node` job of a Flux runtime: the "
            f'Trainer webhook denies {whose} ("{DETAIL}")',
        )


def _installers(places: Sequence[tuple[KeyPath, object]]) -> Iterator[KeyPath]:
    """Where the pods at `places` name an init container `flux-installer`."""
    for path, pod in places:
        for index, container in mappings(dig(pod, "initContainers")):
            if container.get("name") == INSTALLER:
                yield (*path, "initContainers", index, "name")
