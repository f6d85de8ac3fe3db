from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig, mapping
from trainlint.engine.context import Context
from trainlint.kinds import RUNTIME_KINDS, TRAINER_GROUP
from trainlint.problem import Problem, Related, Severity
from trainlint.rule import rule

REF = ("spec", "runtimeRef")
#: The text after the API server's NotFound error in the webhook's denial, per kind.
MUST_EXIST = "must be created before the TrainJob is created"


@rule(
    "TL101", "unresolved-runtime-ref", kinds={"TrainJob"}, severity=Severity.ERROR,
    remediation="Point `spec.runtimeRef` at a runtime that exists where the TrainJob can see it.",
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Checks that `spec.runtimeRef` names a runtime the Trainer can resolve: the kind is
    `ClusterTrainingRuntime` (the default when `kind` is omitted) or `TrainingRuntime` in
    the API group `trainer.kubeflow.org`, and, when a runtime of that name is among the
    checked files, it is of the referenced kind and (for a TrainingRuntime) in the
    TrainJob's own namespace.

    ## Why is this bad?
    The Trainer admission webhook denies the TrainJob: "unsupported runtime: <Kind>.<group>"
    for another kind or group, and "specified trainingRuntime must be created before the
    TrainJob is created" (or the clusterTrainingRuntime variant) when the lookup misses,
    which is what happens when the kind is left to its default for a namespaced
    TrainingRuntime, or when the TrainingRuntime lives in another namespace.

    ## When it stays silent
    When the runtime is among the checked files as referenced, and when no runtime of
    that name is there at all (TL102 says so).

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainingRuntime
    metadata:
      name: torch-sft
      namespace: team-a
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
      name: sft-run-1
      namespace: team-a
    spec:
      runtimeRef:
        name: torch-sft
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainingRuntime
    metadata:
      name: torch-sft
      namespace: team-a
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
      name: sft-run-1
      namespace: team-a
    spec:
      runtimeRef:
        kind: TrainingRuntime
        name: torch-sft
    ```
    """
    ref = mapping(dig(job.body, *REF))
    name = ref.get("name")
    if not isinstance(name, str) or not name:
        return
    kind = ref.get("kind") or "ClusterTrainingRuntime"
    group = ref.get("apiGroup") or TRAINER_GROUP
    if not isinstance(kind, str) or not isinstance(group, str):
        return  # a type error, reported by the schema rules
    if kind not in RUNTIME_KINDS or group != TRAINER_GROUP:
        key = "kind" if kind not in RUNTIME_KINDS else "apiGroup"
        yield Problem(
            (*REF, key),
            f"`spec.runtimeRef` names a {kind} in API group `{group}`: the Trainer webhook "
            f'denies the TrainJob ("unsupported runtime: {kind}.{group}"); a TrainJob runs '
            "only on a ClusterTrainingRuntime or a TrainingRuntime of `trainer.kubeflow.org`",
            remediation="use `kind: ClusterTrainingRuntime` or `kind: TrainingRuntime` and "
            "`apiGroup: trainer.kubeflow.org`",
        )
        return
    if ctx.runtime_for(job) is not None:
        return
    found = ctx.runtimes_named(name)
    denial = _denial(str(kind), name)
    path = (*REF, "kind") if "kind" in ref else REF
    other = next((other for other in found if other.kind != kind), None)
    if other is not None:
        default = "" if "kind" in ref else " (the default when `kind` is omitted)"
        yield Problem(
            path,
            f"`spec.runtimeRef` asks for a {kind} `{name}`{default}, but `{name}` is a "
            f'{other.kind}: the Trainer webhook denies the TrainJob ("{denial}")',
            remediation=f"set `spec.runtimeRef.kind: {other.kind}`",
            related=(Related(other, ("kind",), f"`{name}` is a {other.kind}"),),
        )
        return
    elsewhere = sorted(
        (other for other in found if other.kind == "TrainingRuntime"),
        key=lambda other: other.namespace,
    )
    if kind == "TrainingRuntime" and elsewhere:
        namespace = elsewhere[0].namespace
        yield Problem(
            REF,
            f"TrainingRuntime `{name}` is in namespace `{namespace}`, but a TrainJob can "
            f"only use a TrainingRuntime of its own namespace `{job.namespace}`: the Trainer "
            f'webhook denies the TrainJob ("{denial}")',
            remediation=f"create the TrainingRuntime in `{job.namespace}`, or make it a "
            "ClusterTrainingRuntime",
            related=(Related(elsewhere[0], ("metadata", "namespace"),
                             f"TrainingRuntime `{name}` is in namespace `{namespace}`"),),
        )


def _denial(kind: str, name: str) -> str:
    """The webhook's denial for a runtime it cannot get: the NotFound error, then its note."""
    resource = f"{kind.lower()}s.{TRAINER_GROUP}"
    noun = kind[0].lower() + kind[1:]
    return f'{resource} "{name}" not found: specified {noun} {MUST_EXIST}'
