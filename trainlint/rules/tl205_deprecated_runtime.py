from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig, mapping
from trainlint.engine.context import Context
from trainlint.problem import Problem, Severity
from trainlint.rule import rule

SUPPORT_LABEL = "trainer.kubeflow.org/support"
#: The deprecation policy page the warnings link to, by the release that moved it.
POLICY_URL = {
    (2, 1): "https://www.kubeflow.org/docs/components/trainer/operator-guides/runtime/"
    "#runtime-deprecation-policy",
    (2, 3): "https://trainer.kubeflow.org/en/latest/operator-guides/runtime.html"
    "#runtime-deprecation-policy",
}


@rule(
    "TL205", "deprecated-runtime", kinds={"ClusterTrainingRuntime", "TrainJob"},
    severity=Severity.WARNING, since="2.1",
    remediation="Move to a supported runtime before the next Trainer release removes this one.",
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Warns about a ClusterTrainingRuntime labelled `trainer.kubeflow.org/support: deprecated`,
    and about each TrainJob that references one, as the Trainer webhooks do from v2.1.

    ## Why is this bad?
    The cluster accepts both with a warning ("ClusterTrainingRuntime ... is deprecated and
    will be removed in a future release of Kubeflow Trainer"): after an upgrade the runtime
    is gone and every TrainJob that references it is denied.

    ## When it stays silent
    On runtimes without the deprecation label, and on a TrainJob whose runtime is not
    among the checked files.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-legacy
      labels:
        trainer.kubeflow.org/support: deprecated
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          replicatedJobs: []
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-distributed
    spec:
      mlPolicy:
        torch: {}
      template:
        spec:
          replicatedJobs: []
    ```
    """
    if manifest.kind == "TrainJob":
        runtime = ctx.runtime_for(manifest)
        if runtime is None or runtime.kind != "ClusterTrainingRuntime" or not _deprecated(runtime):
            return
        yield Problem(
            ("spec", "runtimeRef"),
            f"the cluster accepts the TrainJob with a warning (\"Referenced "
            f"{_notice(runtime, ctx)}\"); choose a supported runtime",
        )
    elif _deprecated(manifest):
        yield Problem(
            ("metadata", "labels", SUPPORT_LABEL),
            f"the cluster accepts the runtime with a warning (\"{_notice(manifest, ctx)}\"); "
            "move its TrainJobs to a supported runtime",
        )


def _deprecated(runtime: Manifest) -> bool:
    return mapping(dig(runtime.body, "metadata", "labels")).get(SUPPORT_LABEL) == "deprecated"


def _notice(runtime: Manifest, ctx: Context) -> str:
    url = next(url for since, url in reversed(POLICY_URL.items()) if ctx.trainer_version >= since)
    return (
        f'ClusterTrainingRuntime "{runtime.name}" is deprecated and will be removed in a future '
        f"release of Kubeflow Trainer. See runtime deprecation policy: {url}"
    )
