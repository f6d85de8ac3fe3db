from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig
from trainlint.engine.context import Context
from trainlint.problem import Problem, Severity
from trainlint.render.trainer import runtime_render
from trainlint.rule import rule


@rule(
    "TL281", "empty-command-replaces-runtime",
    kinds={"TrainJob"}, severity=Severity.ERROR,
    remediation="Leave out `command` (or `args`) to keep the runtime's, or give the list in "
    "full.",
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags `spec.trainer.command` or `spec.trainer.args` written as an empty list (as code
    that builds TrainJobs often writes them) when the runtime's trainer container has a
    command or args of its own.

    ## Why is this bad?
    The controller gives the trainer container the TrainJob's list whenever it is set,
    and an empty list is set (Trainer v2.0 to v2.3: `if command != nil`): the runtime's
    `torchrun ...` is replaced by nothing. A container with an empty command runs its
    image's entrypoint, with whatever args are left: the training the runtime describes
    never starts, and no error says why.

    ## When it stays silent
    On a list with items, on a key left out, when the runtime's trainer container has
    no list of its own to lose, when its trainer job lacks the ancestor label (the
    TrainJob's lists reach no container: TL201's), and when the runtime is not among the
    checked files.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-sft
    spec:
      mlPolicy:
        numNodes: 1
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
                          image: ghcr.io/example/sft:1.0
                          command: [torchrun, /app/sft.py]
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft
    spec:
      runtimeRef:
        name: torch-sft
      trainer:
        command: []
        args: [--epochs, "3"]
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-sft
    spec:
      mlPolicy:
        numNodes: 1
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
                          image: ghcr.io/example/sft:1.0
                          command: [torchrun, /app/sft.py]
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft
    spec:
      runtimeRef:
        name: torch-sft
      trainer:
        args: [--epochs, "3"]
    ```
    """
    trainer = dig(job.body, "spec", "trainer")
    if not isinstance(trainer, dict) or not any(trainer.get(key) == [] for key in KEYS):
        return  # nearly every TrainJob
    runtime = ctx.runtime_for(job)
    labelled = runtime_render(runtime, ctx).trainer if runtime is not None else None
    container = labelled.container("node") if labelled is not None else None
    if labelled is None or container is None:
        return
    for key in KEYS:
        given = container.body.get(key)
        if trainer.get(key) == [] and isinstance(given, list) and given:
            shown = " ".join(str(word) for word in given[:4]) + (" ..." if len(given) > 4 else "")
            what = ("the pod runs its image's entrypoint instead" if key == "command"
                    else "the command runs without them")
            yield Problem(
                ("spec", "trainer", key),
                f"`spec.trainer.{key}` is an empty list, which the controller sets in place "
                f"of the runtime's `{shown}` (trainer job `{labelled.name}`): {what}",
            )


KEYS = ("command", "args")
