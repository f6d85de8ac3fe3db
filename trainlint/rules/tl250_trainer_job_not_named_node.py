from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render import rendezvous
from trainlint.render.trainer import JOBS, TRAINER, ancestor, replicated_jobs
from trainlint.rule import rule


@rule(
    "TL250", "trainer-job-not-named-node",
    kinds=TRAINER_KINDS, severity=Severity.ERROR,
    remediation="Name the trainer replicatedJob `node`.",
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags a torch, JAX or XGBoost runtime whose job labelled
    `trainer.kubeflow.org/trainjob-ancestor-step: trainer` is not named `node`, when its
    trainer looks for a master: it runs torchrun, or more than one node. On a TrainJob,
    when its own command or `numNodes` is what does.

    ## Why is this bad?
    These plugins hard-code the rendezvous host as `<trainjob>-node-0-0.<trainjob>`
    (`PET_MASTER_ADDR`, `JAX_COORDINATOR_ADDRESS`, `DMLC_TRACKER_URI`). JobSet names pods
    after their replicatedJob, so with any other job name that host never exists: every
    node waits for a master that cannot be resolved until the rendezvous times out.
    torchrun resolves the host even on one node.

    ## When it stays silent
    On trainer jobs named `node`, on runtimes with another job named `node` (its first
    pod is the host; a second trainer job is TL253's), on MPI and Flux runtimes; on a
    single node that starts no torchrun (`python train.py`, `llamafactory-cli train` on
    one GPU: nothing asks for the host), or no command at all (the TrainJobs bring it:
    reported on those that run torchrun or several nodes); on a torch trainer whose
    command gives torchrun its own master (`--master_addr`, `--rdzv_endpoint`): the
    injected `PET_MASTER_ADDR` is then unused; and on a TrainJob whose runtime is not
    among the checked files.

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
          replicatedJobs:
            - name: trainer
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
    if site is None:
        return
    runtime, plugin = site
    jobs = replicated_jobs(runtime)
    misnamed = next((
        (index, name) for index, job in jobs
        if ancestor(job) == TRAINER and isinstance(name := job.get("name"), str)
        and name != "node"
    ), None)
    if any(job.get("name") == "node" for _, job in jobs):
        return  # `<trainjob>-node-0-0` is a pod (a second trainer job is TL253's)
    found = rendezvous.seeker_in(manifest, runtime, plugin, ctx) if misnamed else None
    if misnamed is None or found is None:
        return
    index, name = misnamed
    consequence = (
        f"the rendezvous host is always `<trainjob>-node-0-0.<trainjob>` and {found.why}: "
        "no pod has that name, so the nodes cannot reach the master and hang until the "
        "rendezvous times out"
    )
    if manifest is runtime:
        yield Problem((*JOBS, index, "name"),
                      f"the {plugin} trainer job is named `{name}`, but {consequence}")
    else:
        yield Problem(found.at.path, f"{runtime.kind} `{runtime.name}` names its {plugin} "
                      f"trainer job `{name}`, but {consequence}")
