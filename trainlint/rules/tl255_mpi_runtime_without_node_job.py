from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trainlint.document import Manifest, dig
from trainlint.engine.context import Context
from trainlint.kinds import RUNTIME_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render import INITIALIZERS, script
from trainlint.render.trainer import (
    JOBS,
    PRE_RELEASE_NODE,
    ancestor,
    is_mpi,
    replicated_jobs,
    runtime_render,
)
from trainlint.rule import rule

#: Where the MPI plugin mounts the hostfile it writes.
PLUGIN_HOSTFILE = "/etc/mpi/hostfile"


@rule(
    "TL255", "mpi-runtime-without-node-job",
    kinds=RUNTIME_KINDS, severity=Severity.WARNING,
    remediation="Add a replicatedJob named `node` for the MPI workers.",
)
def check(runtime: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags an MPI runtime (`mlPolicy.mpi`) with no replicatedJob named `node`.

    ## Why is this bad?
    The MPI plugin finds the workers by the job name `node`: it sizes that job from
    `numNodes` and lists its pods in the hostfile. Without it `numNodes` is ignored and
    the hostfile holds no workers (or only the launcher): the job runs on one pod. A
    runtime whose launcher runs as a node (`runLauncherAsNode: true`) lists only the
    launcher, and its workers under another name get neither the SSH keys nor a place
    in the hostfile; the webhook refuses a TrainJob that sets more than one node (TL215).

    ## When it stays silent
    When a container's command gives `mpirun` its own hostfile (`-hostfile /tmp/hosts`,
    not the plugin's `/etc/mpi/hostfile`): the runtime then lists its workers itself. On
    a runtime of a launcher alone that runs as a node (`runLauncherAsNode: true`): the
    hostfile lists the launcher, a run of one pod, and the webhook refuses a TrainJob of
    more nodes (TL215).

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: mpi-custom
    spec:
      mlPolicy:
        mpi: {}
      template:
        spec:
          replicatedJobs:
            - name: launcher
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: trainer
                spec:
                  template:
                    spec:
                      containers:
                        - name: node
                          image: mpioperator/mpi-pi
            - name: worker
              template:
                spec:
                  template:
                    spec:
                      containers:
                        - name: node
                          image: mpioperator/mpi-pi
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: mpi-custom
    spec:
      mlPolicy:
        mpi: {}
      template:
        spec:
          replicatedJobs:
            - name: launcher
              template:
                metadata:
                  labels:
                    trainer.kubeflow.org/trainjob-ancestor-step: trainer
                spec:
                  template:
                    spec:
                      containers:
                        - name: node
                          image: mpioperator/mpi-pi
            - name: node
              template:
                spec:
                  template:
                    spec:
                      containers:
                        - name: node
                          image: mpioperator/mpi-pi
    ```
    """
    jobs = [job for _, job in replicated_jobs(runtime)]
    if not is_mpi(runtime) or any(job.get("name") == "node" for job in jobs):
        return
    workers = [job for job in jobs if job.get("name") not in ("launcher", *INITIALIZERS)
               and ancestor(job) not in INITIALIZERS]
    launcher_as_node = dig(runtime.body, "spec", "mlPolicy", "mpi", "runLauncherAsNode") is True \
        and any(job.get("name") == "launcher" for job in jobs)
    if not workers and launcher_as_node:
        return  # the hostfile lists the launcher; a TrainJob of more nodes is refused (TL215)
    if _own_hostfile(runtime, ctx):
        return  # the launcher lists its workers itself
    renamed = any(job.get("name") == PRE_RELEASE_NODE for job in workers)
    hint = f" (`{PRE_RELEASE_NODE}` is their job's name before v2.0.0)" if renamed else ""
    if launcher_as_node:
        yield Problem(
            JOBS,
            "this MPI runtime runs the launcher as a node and has no replicatedJob named "
            "`node`: the MPI plugin lists only the launcher in the hostfile and gives the pods "
            f"of {_named(workers)} no SSH keys, so they never take part, and the webhook "
            f"refuses a TrainJob that sets `numNodes` above 1{hint}",
        )
        return
    yield Problem(
        JOBS,
        "this MPI runtime has no replicatedJob named `node`: the MPI plugin sizes and lists "
        f"the workers by that name, so `numNodes` is ignored and the hostfile has no workers{hint}",
    )


#: How many jobs a message names before it counts the rest.
_NAMED = 3


def _named(jobs: list[dict[str, Any]]) -> str:
    """The jobs as a message names them: each name once, the first few."""
    names = list(dict.fromkeys(name for job in jobs if isinstance(name := job.get("name"), str)))
    if not names:
        return "its other jobs"
    shown = ", ".join(f"`{name}`" for name in names[:_NAMED])
    more = f" and {len(names) - _NAMED} more" if len(names) > _NAMED else ""
    return f"job {shown}" if len(names) == 1 else f"jobs {shown}{more}"


def _own_hostfile(runtime: Manifest, ctx: Context) -> bool:
    """Whether a container's command gives `mpirun` a hostfile of its own (not the one the
    plugin writes): the workers it lists are then the runtime's business."""
    for container in runtime_render(runtime, ctx).containers():
        found = script.hostfile(script.read(container))
        if found is not None and found != PLUGIN_HOSTFILE:
            return True
    return False
