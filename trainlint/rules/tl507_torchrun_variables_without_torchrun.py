from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Problem, Severity, listed
from trainlint.render import script
from trainlint.render.trainer import rendered
from trainlint.render.tree import on_checked
from trainlint.rule import rule


@rule(
    "TL507", "torchrun-variables-without-torchrun",
    kinds=TRAINER_KINDS, severity=Severity.WARNING,
    remediation=(
        "Start the program with `torchrun` (it reads the plugin's `PET_*` variables), as the "
        "Kubeflow SDK starts a training function; or read `PET_NODE_RANK`, `PET_NNODES`, "
        "`PET_MASTER_ADDR` and `PET_MASTER_PORT` in the program."
    ),
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Renders the JobSet the controller builds (see `trainlint render`) for a torch runtime,
    and flags a trainer command that runs an inline Python program with `python` itself
    (`python -c`, `python - <<EOF`, a `.py` file its script writes, also from base64
    text: `echo aW1w... | base64 -d > train.py`) when the program
    cannot do without a variable only torchrun sets: it reads `os.environ["RANK"]`,
    converts `os.getenv("WORLD_SIZE")` with no default, or calls `init_process_group`
    with torch's default `env://` rendezvous, which reads `RANK`, `WORLD_SIZE`,
    `MASTER_ADDR` and `MASTER_PORT`.

    ## Why is this bad?
    The torch plugin sets only `PET_NNODES`, `PET_NPROC_PER_NODE`, `PET_NODE_RANK`,
    `PET_MASTER_ADDR` and `PET_MASTER_PORT` in the trainer's container, in every release.
    torchrun reads them and gives each worker it starts its `RANK`, `LOCAL_RANK`,
    `WORLD_SIZE`, `MASTER_ADDR`... A program started without it has none of those: every
    pod fails at once (`KeyError: 'RANK'`, or "environment variable RANK expected, but not
    set"), after the pods were scheduled and the image pulled, and again on each retry
    until the Job's `backoffLimit` is used up. (A variable the image sets, `ENV RANK=0`,
    is not seen here: hence a warning.)

    ## When it stays silent
    When the program is not in the manifest (`python train.py` runs a file of the image,
    which is not read); when the container sets the variable (`env`, in the runtime or in
    `spec.trainer.env`), takes variables from `envFrom`, has no `command` of its own (the
    image's entrypoint may be a launcher), or its script sets it (`export RANK=...`); when
    the command has anything that may launch the program or give it variables (torchrun,
    `python -m torch.distributed.run`, `accelerate launch`, `deepspeed`, `mpirun`, `srun`,
    `llamafactory-cli`, `tune run`, `source`, `eval`, or a program that starts processes:
    `subprocess`, `mp.spawn`...); on a read with a default (`os.environ.get("RANK", "0")`),
    in a `try`, under a test of the environment (`if "RANK" in os.environ`), or in a
    function the program never calls; on `init_process_group` given a `store` or another
    `init_method`; on runtimes of other frameworks (MPI, JAX and XGBoost set variables of
    their own), and on a TrainJob whose runtime is not among the checked files. A runtime
    that TrainJobs of the run use is judged on each of them (a TrainJob may replace its
    command or set the variables), at its `runtimeRef` where the command is the runtime's.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: mnist-ddp
    spec:
      runtimeRef:
        name: torch-distributed
      trainer:
        numNodes: 2
        command:
          - python
          - -c
          - |
            import os
            import torch.distributed as dist
            rank = int(os.environ["RANK"])
            dist.init_process_group(backend="nccl")
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: mnist-ddp
    spec:
      runtimeRef:
        name: torch-distributed
      trainer:
        numNodes: 2
        command:
          - bash
          - -c
          - |
            cat > /tmp/train.py <<EOF
            import os
            import torch.distributed as dist
            rank = int(os.environ["RANK"])
            dist.init_process_group(backend="nccl")
            EOF
            torchrun /tmp/train.py
    ```
    """
    render = rendered(manifest, ctx)
    trainer = render.trainer
    if not render.complete or render.framework != "torch" or trainer is None:
        return
    container = trainer.container("node")
    if container is None or not container.body.get("command") or container.body.get("envFrom"):
        return  # the image's entrypoint may launch it; variables of unknown names
    found = script.read(container)
    if not found.programs or script.launcher(found) is not None:
        return
    if render.job is None and ctx.trainjobs_using(manifest):
        return  # judged on each TrainJob of it, which may replace the command
    unset = script.TORCHRUN_SETS - container.env.keys() - script.assigned(found)
    for code, at in found.programs:
        needs = [need for need in script.environ_needs(code) if need.name in unset]
        if not needs:
            continue
        names = list(dict.fromkeys(f"`{need.name}`" for need in needs))
        pets = [f"`{name}`" for name in container.env if name.startswith("PET_")]
        message = (
            f"the inline Python program runs without torchrun and needs {listed(names)} "
            f"(first at `{needs[0].text}`), which the container does not have: the torch "
            f"plugin sets only {listed(pets) if pets else '`PET_*` variables'}, from which "
            f"torchrun makes {'it' if len(names) == 1 else 'them'} for each worker, so every "
            f"pod fails with `{needs[0].error}`")
        yield from on_checked(manifest, render.job, (at,), message, "the runtime's command")
        return
