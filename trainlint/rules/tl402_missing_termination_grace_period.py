from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from trainlint import roundtrip
from trainlint.document import KeyPath, Manifest
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.options import check_range
from trainlint.problem import Edit, Fix, Problem, Severity
from trainlint.render import POD_SPEC, script, sigterm
from trainlint.render.checkpoint import CheckpointOptions, writers
from trainlint.render.trainer import rendered, runtime_render
from trainlint.render.tree import Origin, first_on
from trainlint.rule import rule

#: Kubernetes' default `terminationGracePeriodSeconds`.
DEFAULT_GRACE = 30
#: The field is an int64.
MAX_GRACE = 2**63 - 1


@dataclass(frozen=True)
class GracePeriodOptions(CheckpointOptions):
    min_seconds: int = 60

    def __post_init__(self) -> None:
        super().__post_init__()
        # At or below the default, an unset grace period would be flagged though it is
        # enough, and the fix would shorten it.
        check_range(
            self, "min_seconds", DEFAULT_GRACE + 1, MAX_GRACE,
            f"a pod without the setting gets {DEFAULT_GRACE} s already",
        )


@rule(
    "TL402", "missing-termination-grace-period",
    kinds=TRAINER_KINDS, severity=Severity.WARNING,
    remediation="Set `terminationGracePeriodSeconds` in the trainer pod template.",
    options=GracePeriodOptions,
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags a checkpointing trainer pod (see TL301 for how the checkpoint directory is
    found) that saves on SIGTERM (its command installs a handler that does more than log
    and exit: `signal.signal(signal.SIGTERM, ...)`, `trap ... TERM`, Megatron's
    `--exit-signal-handler`) and whose
    `terminationGracePeriodSeconds` is unset (Kubernetes default: 30 s) or
    below the option `min-seconds` (default 60). From v2.3 a TrainJob may set it through
    `runtimePatches`; that value is taken into account.

    ## Why is this bad?
    On suspend, preemption, a JobSet restart or an expired `activeDeadlineSeconds`, the
    trainer gets SIGTERM and then only the grace period to write a final checkpoint. A
    large model's checkpoint takes longer than 30 s; a truncated one is useless or, worse,
    is picked up as the newest one on resume.

    ## When it stays silent
    When no checkpoint directory is found or nothing is saved (see TL301), when the
    command installs no SIGTERM handler (a mention is none: `timeout --signal=SIGTERM`,
    `os.kill(pid, signal.SIGTERM)`), or one that only logs and exits (a trap of `echo`
    and `exit` or of a function of the script that only does, `trap - TERM`, a Python
    handler of `print`, logging and `sys.exit`) where the exit runs nothing more (no EXIT
    trap that does more than remove files, no `finally` or `atexit`): nothing is saved
    on SIGTERM, however long the grace period; on a grace period at or above
    `min-seconds`, and when the runtime is not among the checked files.

    ## Options
    `min-seconds`: the least grace period accepted, more than Kubernetes' default of
    30 s (default 60). Also `env-name-parts`, `env-names`, `flags` as in TL301.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-ckpt
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
                          args: [--save, /mnt/ckpt/run, --exit-signal-handler]
                          volumeMounts:
                            - name: ckpt
                              mountPath: /mnt/ckpt
                      volumes:
                        - name: ckpt
                          persistentVolumeClaim:
                            claimName: train-ckpt
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-ckpt
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
                      terminationGracePeriodSeconds: 120
                      containers:
                        - name: node
                          image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
                          args: [--save, /mnt/ckpt/run, --exit-signal-handler]
                          volumeMounts:
                            - name: ckpt
                              mountPath: /mnt/ckpt
                      volumes:
                        - name: ckpt
                          persistentVolumeClaim:
                            claimName: train-ckpt
    ```
    """
    options: GracePeriodOptions = ctx.options
    runtime = ctx.runtime_for(manifest) if manifest.kind == "TrainJob" else manifest
    if runtime is None:
        return  # the grace period is the runtime's: unknown
    alone = writers(runtime_render(runtime, ctx), options)
    reported: set[int] = set()
    for container, directories in writers(rendered(manifest, ctx), options):
        job = container.job
        handling = sigterm.handles_sigterm(script.read(container))
        if job.index in reported or handling is None:
            continue  # nothing is saved on SIGTERM, however long the pod is given
        grace = job.pod_spec.get("terminationGracePeriodSeconds")
        grace_at = job.origin(*POD_SPEC, "terminationGracePeriodSeconds")
        written = grace_at.note is None
        if written and (not isinstance(grace, int) or grace >= options.min_seconds):
            continue
        handler, program = handling
        path = script.program_file(container, program) if program else None
        where = script.its_program(path) if path else (
            "the program it runs" if program in container.files.values() else "its command")
        first = directories[0]
        # Report where the gap was made: the grace setting or the pod; on a TrainJob
        # whose runtime does not checkpoint by itself, the directory the TrainJob brings.
        pod_at = job.origin(*POD_SPEC)
        at = first_on(manifest, grace_at if written else None, pod_at)
        if at is None and not alone:
            at = first_on(manifest, *(directory.at for directory in directories))
        if at is None:
            continue
        reported.add(job.index)
        setting = (
            f"`terminationGracePeriodSeconds: {grace}`" if written
            else f"no `terminationGracePeriodSeconds` (Kubernetes gives {DEFAULT_GRACE} s)"
        )
        who = "trainer job" if job is job.render.trainer else "job"
        yield Problem(
            at.path,
            f"{who} `{job.name}` checkpoints to `{first.path}` ({first.origin}) on "
            f"SIGTERM (`{handler}` in {where}) but has {setting}: that final checkpoint "
            "(on suspend, preemption, deadline) is cut short after "
            f"{grace if written else DEFAULT_GRACE} s",
            remediation=f"set `terminationGracePeriodSeconds: {options.min_seconds}` or more"
            + (" (a TrainJob can set it with runtimePatches)" if ctx.trainer_version >= (2, 3)
               else ""),
            fix=_grace_fix(at, grace_at if written else None, pod_at, options.min_seconds),
        )


def _grace_fix(at: Origin, grace_at: Origin | None, pod_at: Origin, seconds: int) -> Fix | None:
    """Set the grace period where it is written, or on the pod spec when the finding is
    on it; a TrainJob that only brings the checkpoint directory gets no fix (the grace
    period is the runtime's, or a new runtimePatch, a choice left to the user)."""
    if grace_at is not None and at == grace_at:
        pod_spec = at.path[:-1]
    elif at == pod_at:
        pod_spec = at.path
    else:
        return None
    return Fix(f"set `terminationGracePeriodSeconds: {seconds}`", _set_grace(pod_spec, seconds))


def _set_grace(pod_spec: KeyPath, seconds: int) -> Edit:
    def edit(manifest: Any) -> None:
        spec = roundtrip.ensure(manifest, pod_spec)
        roundtrip.put(spec, "terminationGracePeriodSeconds", seconds, first=True)

    return edit
