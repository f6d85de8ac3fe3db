from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig
from trainlint.engine.context import Context
from trainlint.problem import Problem, Severity
from trainlint.render import Container, script
from trainlint.render.trainer import (
    RENDEZVOUS_FRAMEWORKS,
    framework,
    rendered,
    trainer_container_of,
)
from trainlint.rule import rule


@rule(
    "TL254", "trainjob-without-trainer",
    kinds={"TrainJob"}, severity=Severity.ERROR,
    remediation=(
        "Add `spec.trainer` (even just `numNodes`) so that the framework variables are set."
    ),
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags a TrainJob without `spec.trainer` whose runtime runs torch, JAX or XGBoost on
    more than one node (`mlPolicy.numNodes`), or uses the Flux policy.

    ## Why is this bad?
    The framework plugins inject `PET_*`, `JAX_*` or `DMLC_*` and the rendezvous port only
    when `spec.trainer` is set. Without it the nodes get no rendezvous settings: they
    fail to meet or train as independent single-node runs. The Flux plugin reads
    `spec.trainer.command` unguarded, and the reconcile fails.

    ## When it stays silent
    When the TrainJob has `spec.trainer`, its runtime runs on one node or is not among
    the checked files, and when a torch runtime's command gives torchrun its own
    `--nnodes` and master: it then reads no `PET_*`.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-multi
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
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: run
    spec:
      runtimeRef:
        name: torch-multi
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: run
    spec:
      runtimeRef:
        name: torch-multi
      trainer:
        numNodes: 2
    ```
    """
    runtime = ctx.runtime_for(job)
    if runtime is None or isinstance(dig(job.body, "spec", "trainer"), dict):
        return
    plugin = framework(runtime)
    render = rendered(job, ctx)
    nodes = render.trainer.pods if render.trainer is not None else 1
    container = trainer_container_of(render)
    if plugin == "flux" and ctx.trainer_version >= (2, 2):
        consequence = "the Flux plugin reads `spec.trainer.command` and the reconcile fails"
    elif plugin in RENDEZVOUS_FRAMEWORKS and nodes > 1:
        if plugin == "torch" and container is not None and _wires_itself(container):
            return  # torchrun is given its own node count and master: no PET_* is read
        consequence = (
            f"its {nodes} nodes get no {plugin} rendezvous variables, so they never meet "
            "or train as independent single-node runs"
        )
    else:
        return
    yield Problem(
        ("spec",),
        f"this TrainJob has no `spec.trainer` on {runtime.describe()}: {consequence}",
    )


def _wires_itself(container: Container) -> bool:
    """Whether the trainer's command gives torchrun the node count and the rendezvous
    host itself (`--nnodes`, `--master_addr` or `--rdzv_endpoint`)."""
    found = script.read(container)
    return script.own_rendezvous(found) is not None and script.flag(found, "nnodes") is not None
