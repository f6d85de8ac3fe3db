from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig, mapping
from trainlint.engine.context import Context
from trainlint.kinds import RUNTIME_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render.trainer import WEBHOOK_VALIDATION_LABEL
from trainlint.rule import rule


@rule(
    "TL270", "webhook-validation-disabled",
    kinds=RUNTIME_KINDS, severity=Severity.WARNING, since="2.3",
    remediation=f"Remove the `{WEBHOOK_VALIDATION_LABEL}` label from runtimes you write yourself.",
    preview=True,
)
def check(runtime: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    From v2.3, flags a runtime labelled `trainer.kubeflow.org/webhook-validation: disabled`.

    ## Why is this bad?
    The label makes the runtime webhooks skip the object entirely. The built-in runtimes
    carry it, so a runtime copied from one inherits it: a trainer job without its `node`
    container or with `replicas: 2` is then accepted and fails silently later.

    ## When it stays silent
    On runtimes without the label, and before v2.3 (the label does nothing there).

    ## Preview
    The label is set on purpose: upstream's own runtimes carry it (the flux runtime, whose
    installer init container the webhooks would refuse, and the data-cache runtime). The
    finding names no mistake the webhooks would have denied, and the ones they deny (a
    trainer job without its `node` container, `replicas` other than 1) are reported by
    TL203, TL204 and TL259 whatever the label says.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: my-torch
      labels:
        trainer.kubeflow.org/webhook-validation: disabled
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
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: my-torch
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
    ```
    """
    labels = mapping(dig(runtime.body, "metadata", "labels"))
    if labels.get(WEBHOOK_VALIDATION_LABEL) == "disabled":
        yield Problem(
            ("metadata", "labels", WEBHOOK_VALIDATION_LABEL),
            f"`{WEBHOOK_VALIDATION_LABEL}: disabled` makes the runtime webhooks skip this "
            f"{runtime.kind}: mistakes they would deny (a trainer job without its `node` "
            "container, `replicas` other than 1) are accepted and fail silently later",
        )
