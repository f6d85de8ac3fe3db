from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig, mapping
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render import Job, script
from trainlint.render.trainer import framework, rendered, runtime_render
from trainlint.rule import rule

#: Kubernetes' default `backoffLimit`.
DEFAULT_BACKOFF_LIMIT = 6


@rule(
    "TL414", "default-backoff-limit-multi-node-torch",
    kinds=TRAINER_KINDS, severity=Severity.WARNING,
    remediation=(
        "Set `backoffLimit: 0` on the trainer job (and `failurePolicy.maxRestarts` to restart "
        "the whole JobSet)."
    ),
    preview=True,
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags the trainer job of a torch runtime that runs on more than one node (the
    runtime's `mlPolicy.numNodes`, or a TrainJob's `spec.trainer.numNodes`) and whose
    command runs `torchrun` with its default static rendezvous, when the job sets no
    `backoffLimit` and the JobSet has no `failurePolicy`. It is reported on the runtime
    when the runtime alone runs torchrun so on several nodes, else on the TrainJob, at what
    it brings: its `numNodes`, or its command (a runtime of two nodes that leaves the
    command to its TrainJobs).
    (With a `failurePolicy.maxRestarts` above 0, TL401 covers the same job.)

    ## Why is this bad?
    Kubernetes defaults `backoffLimit` to 6, and JobSet's default `restartPolicy:
    OnFailure` restarts a failed rank in place (`Never`: the Job starts it again in a new
    pod). Multi-node torchrun uses a static rendezvous, which a restarted rank cannot
    rejoin: each of the 6 retries hangs until the rendezvous or NCCL timeout before the
    TrainJob finally fails.

    ## When it stays silent
    When the trainer job sets `backoffLimit` (or `backoffLimitPerIndex`), the JobSet has
    a `failurePolicy`, the run is on one node, and when the command does not run
    torchrun with the static rendezvous (no command, or `--rdzv-backend c10d`): nothing
    then hangs on a restarted rank.

    ## Preview
    Upstream's own multi-node examples (`examples/yaml/01-multi-node.yaml`,
    `02-runtime-patches.yaml`) run torchrun's static rendezvous with the default
    `backoffLimit`. With JobSet's `restartPolicy: OnFailure`, the peers of a crashed rank
    fail on the NCCL timeout and restart too, so the retries may recover rather than hang:
    which one happens depends on the torch release and its timeouts, not on the manifest.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-4
    spec:
      mlPolicy:
        numNodes: 4
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

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-4
    spec:
      mlPolicy:
        numNodes: 4
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
                  backoffLimit: 0
                  template:
                    spec:
                      containers:
                        - name: node
                          image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
                          command: [torchrun, /workspace/train.py]
    ```
    """
    runtime = ctx.runtime_for(manifest) if manifest.kind == "TrainJob" else manifest
    if runtime is None or framework(runtime) != "torch":
        return
    render = rendered(manifest, ctx)
    trainer = render.trainer
    if trainer is None or "failurePolicy" in mapping(render.jobset.get("spec")):
        return
    if trainer.origin("template", "spec", "backoffLimit").note is None or (
        "backoffLimitPerIndex" in trainer.spec
    ):
        return  # set, not Kubernetes' default
    node = trainer.container("node")
    if node is None or not _hangs(trainer):
        return
    if manifest.kind != "TrainJob":
        template = trainer.origin("template")
        written = mapping(dig(runtime.body, *template.path))
        path = (*template.path, *(("spec",) if "spec" in written else ()))
    else:
        alone = runtime_render(runtime, ctx).trainer
        if alone is not None and _hangs(alone):
            return  # the runtime's own finding
        launcher = script.torchrun(script.read(node))
        at = trainer.pods_at if trainer.pods_at.manifest is manifest else (
            launcher[1] if launcher is not None else None)
        if at is None or at.manifest is not manifest:
            return
        path = at.path
    retried = "in a new pod" if trainer.pod_spec.get("restartPolicy") == "Never" else "in place"
    backend = script.flag(script.read(node), "rdzv_backend")
    given = "no `--rdzv-backend`" if backend is None else f"`--rdzv-backend {backend.value}`"
    yield Problem(
        path,
        f"trainer job `{trainer.name}` runs on {trainer.pods} torch nodes with `backoffLimit` "
        f"unset (Kubernetes defaults it to {DEFAULT_BACKOFF_LIMIT}) and no JobSet "
        f"`failurePolicy`: its command runs torchrun with the static rendezvous "
        f"({given}), so a rank the Job restarts {retried} (up to "
        f"{DEFAULT_BACKOFF_LIMIT} times) cannot rejoin it and each retry hangs until the "
        "rendezvous or NCCL timeout; set `backoffLimit: 0`",
    )


def _hangs(trainer: Job) -> bool:
    """Whether a trainer job runs torchrun's static rendezvous on several nodes."""
    node = trainer.container("node")
    return trainer.pods > 1 and node is not None and script.static_rendezvous(script.read(node))
