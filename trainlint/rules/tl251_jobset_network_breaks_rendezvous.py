from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine.context import Context
from trainlint.kinds import RUNTIME_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render.trainer import JOBSET, RENDEZVOUS_FRAMEWORKS, framework, jobset
from trainlint.rule import rule


@rule(
    "TL251", "jobset-network-breaks-rendezvous",
    kinds=RUNTIME_KINDS, severity=Severity.ERROR,
    remediation=(
        "Remove `network.subdomain` and `network.enableDNSHostnames: false` from the runtime."
    ),
)
def check(runtime: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags a torch, JAX or XGBoost runtime whose JobSet `network` sets `subdomain` or
    `enableDNSHostnames: false`.

    ## Why is this bad?
    The nodes find their master at `<trainjob>-node-0-0.<trainjob>`: a pod hostname under a
    headless service named after the TrainJob. A custom subdomain moves the pods under
    another name, and without DNS hostnames there is no pod record at all, so the
    rendezvous host never resolves and the job hangs until the rendezvous times out.

    ## When it stays silent
    On runtimes without a `network` block, on `enableDNSHostnames: true`, and on MPI and
    Flux runtimes.

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
    ```
    """
    plugin = framework(runtime)
    network = jobset(runtime).get("network")
    if plugin not in RENDEZVOUS_FRAMEWORKS or not isinstance(network, dict):
        return
    path = (*JOBSET, "network")
    if network.get("subdomain"):
        yield Problem(
            (*path, "subdomain"),
            f"`network.subdomain: {network['subdomain']}` puts the pods under another DNS name, "
            f"but the {plugin} nodes look for the master at `<trainjob>-node-0-0.<trainjob>`: "
            "it never resolves, so the job hangs until the rendezvous times out",
        )
    if network.get("enableDNSHostnames") is False:
        yield Problem(
            (*path, "enableDNSHostnames"),
            "`network.enableDNSHostnames: false` gives the pods no DNS records, but the "
            f"{plugin} nodes look for the master at `<trainjob>-node-0-0.<trainjob>`: it "
            "never resolves, so the job hangs until the rendezvous times out",
        )
