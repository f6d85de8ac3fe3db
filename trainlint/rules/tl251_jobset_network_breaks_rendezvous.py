from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render import rendezvous
from trainlint.render.trainer import JOBSET, jobset
from trainlint.rule import rule


@rule(
    "TL251", "jobset-network-breaks-rendezvous",
    kinds=TRAINER_KINDS, severity=Severity.ERROR,
    remediation=(
        "Remove `network.subdomain` and `network.enableDNSHostnames: false` from the runtime."
    ),
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags a torch, JAX or XGBoost runtime whose JobSet `network` sets `subdomain` or
    `enableDNSHostnames: false`, when its trainer looks for a master: it runs torchrun,
    or more than one node. On a TrainJob, when its own command or `numNodes` is what does.

    ## Why is this bad?
    The nodes find their master at `<trainjob>-node-0-0.<trainjob>`: a pod hostname under a
    headless service named after the TrainJob. A custom subdomain moves the pods under
    another name, and without DNS hostnames there is no pod record at all, so the
    rendezvous host never resolves and the job hangs until the rendezvous times out.

    ## When it stays silent
    On runtimes without a `network` block, on `enableDNSHostnames: true`, on MPI and
    Flux runtimes; on a single node that starts no torchrun, or no command at all (the
    TrainJobs bring it: reported on those that run torchrun or several nodes); on a torch
    trainer that gives torchrun its own master (`--master_addr`, `--rdzv_endpoint`); and
    on a TrainJob whose runtime is not among the checked files.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-custom
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          network:
            enableDNSHostnames: false
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
                          command: [torchrun, /workspace/train.py]
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-custom
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          network:
            publishNotReadyAddresses: true
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
                          command: [torchrun, /workspace/train.py]
    ```
    """
    site = rendezvous.runtime_of(manifest, ctx)
    network = jobset(site[0]).get("network") if site is not None else None
    if site is None or not isinstance(network, dict):
        return
    runtime, plugin = site
    path = (*JOBSET, "network")
    breaks = []  # where, what is set, what it does
    if network.get("subdomain"):
        breaks.append(((*path, "subdomain"), f"`network.subdomain: {network['subdomain']}`",
                       "puts the pods under another DNS name"))
    if network.get("enableDNSHostnames") is False:
        breaks.append(((*path, "enableDNSHostnames"), "`network.enableDNSHostnames: false`",
                       "gives the pods no DNS records"))
    found = rendezvous.seeker_in(manifest, runtime, plugin, ctx) if breaks else None
    if found is None:
        return
    for at, what, effect in breaks:
        consequence = (
            f"the {plugin} trainer looks for the master at `<trainjob>-node-0-0.<trainjob>` "
            f"and {found.why}: it never resolves, so the job hangs until the rendezvous "
            "times out"
        )
        if manifest is runtime:
            yield Problem(at, f"{what} {effect}, but {consequence}")
        else:
            yield Problem(found.at.path, f"{runtime.kind} `{runtime.name}` sets {what}, which "
                          f"{effect}, but {consequence}")
