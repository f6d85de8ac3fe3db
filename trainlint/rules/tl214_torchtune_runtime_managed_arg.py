from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig
from trainlint.engine.context import Context
from trainlint.problem import Problem, Severity
from trainlint.render.trainer import is_torchtune
from trainlint.rule import rule

#: torchtune settings the runtime's own command fixes (its volume layout).
MANAGED = ("output_dir", "tokenizer.path", "checkpointer.checkpoint_dir", "tokenizer.merges_file")


@rule(
    "TL214", "torchtune-runtime-managed-arg", kinds={"TrainJob"}, severity=Severity.ERROR,
    since="2.3",
    remediation="Remove the argument: the runtime sets it to match the volumes it mounts.",
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    On a torchtune TrainJob (`command: [tune, run]` on a torch runtime), flags
    `spec.trainer.args` that set `output_dir`, `tokenizer.path`,
    `checkpointer.checkpoint_dir` or `tokenizer.merges_file`.

    ## Why is this bad?
    From v2.3 the Trainer webhook denies the TrainJob: "must not set immutable config
    "output_dir" in trainer args; it is managed by the runtime". The runtime points these
    at the volume its initializers fill.

    ## When it stays silent
    On other arguments, on TrainJobs that are not torchtune fine-tunes, and before v2.3.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torchtune-llama3.2-1b
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          replicatedJobs: []
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: tune-run-1
    spec:
      runtimeRef:
        name: torchtune-llama3.2-1b
      trainer:
        command: [tune, run]
        args:
          - output_dir=/mnt/out
          - epochs=2
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torchtune-llama3.2-1b
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          replicatedJobs: []
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: tune-run-1
    spec:
      runtimeRef:
        name: torchtune-llama3.2-1b
      trainer:
        command: [tune, run]
        args:
          - epochs=2
    ```
    """
    runtime = ctx.runtime_for(job)
    if runtime is None or not is_torchtune(job, runtime):
        return
    args = dig(job.body, "spec", "trainer", "args")
    for index, arg in enumerate(args if isinstance(args, list) else []):
        key = arg.partition("=")[0] if isinstance(arg, str) else None
        if key in MANAGED:
            yield Problem(
                ("spec", "trainer", "args", index),
                f"`{key}` is set by the torchtune runtime: the Trainer webhook denies the "
                f'TrainJob ("must not set immutable config "{key}" in trainer args; it is '
                'managed by the runtime")',
            )
