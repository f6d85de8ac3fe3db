from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from trainlint import roundtrip
from trainlint.document import KeyPath, Manifest, dig, mappings, string
from trainlint.engine.context import Context
from trainlint.problem import Edit, Fix, Problem, Severity
from trainlint.render.trainer import override_containers
from trainlint.rule import rule

#: Where each reserved container's variables belong instead.
DESTINATIONS = {
    "node": "spec.trainer.env",
    "dataset-initializer": "spec.initializer.dataset.env",
    "model-initializer": "spec.initializer.model.env",
}
DENIAL = "must not have envs for the dataset-initializer, model-initializer, node containers"


@rule(
    "TL202", "env-in-pod-overrides", kinds={"TrainJob"}, severity=Severity.ERROR,
    remediation="Move the variables to `spec.trainer.env` or `spec.initializer.*.env`.",
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Flags `env` on the `node`, `dataset-initializer` or `model-initializer` containers of
    `podSpecOverrides` (v2.0), `podTemplateOverrides` (v2.1) or `runtimePatches` (v2.2+):
    the field the release reads (the API server prunes the others, see TL007).

    ## Why is this bad?
    The Trainer admission webhook denies the TrainJob with "must not have envs for the
    dataset-initializer, model-initializer, node containers". These containers get their
    variables from `spec.trainer.env` and `spec.initializer.{dataset,model}.env`; overrides
    may only add volumes and mounts to them.

    ## When it stays silent
    On `env` of other containers, and on TrainJobs without overrides or patches.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef:
        name: torch-ckpt
      runtimePatches:
        - manager: example.com/ml-platform
          trainingRuntimeSpec:
            template:
              spec:
                replicatedJobs:
                  - name: node
                    template:
                      spec:
                        template:
                          spec:
                            containers:
                              - name: node
                                env:
                                  - name: CKPT_DIR
                                    value: /mnt/ckpt/sft-run-1
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef:
        name: torch-ckpt
      trainer:
        env:
          - name: CKPT_DIR
            value: /mnt/ckpt/sft-run-1
    ```
    """
    for path, container, _ in override_containers(job, ctx.trainer_version):
        name = string(container.get("name"))
        if name in DESTINATIONS and container.get("env"):
            destination = DESTINATIONS[name]
            yield Problem(
                (*path, "env"),
                f"`env` on container `{name}` in `{path[1]}`: the Trainer webhook denies "
                f'the TrainJob ("{DENIAL}"); these variables belong in `{destination}`',
                remediation=f"move the variables to `{destination}`",
                fix=_move_fix(job, path, container.get("env"), destination),
            )


def _move_fix(job: Manifest, container: KeyPath, env: object, destination: str) -> Fix:
    """Move the variables; a name already set at the destination with another value
    makes the fix unsafe, since the moved value replaces it."""
    target = tuple(destination.split("."))
    there = {
        item["name"]: item for _, item in mappings(dig(job.body, *target))
        if isinstance(item.get("name"), str)
    }
    clashes = sorted(
        item["name"] for _, item in mappings(env)
        if isinstance(item.get("name"), str) and there.get(item["name"], item) != item
    )
    title = f"move the variables to `{destination}`"
    if clashes:
        names = ", ".join(f"`{name}`" for name in clashes)
        title += f" (unsafe: {names} already set there with another value would be replaced)"
    return Fix(title, _move_env(container, target), safe=not clashes)


def _move_env(container_path: KeyPath, target: KeyPath) -> Edit:
    def edit(job: Any) -> None:
        container = roundtrip.at(job, container_path)
        moved, comment = roundtrip.take(container, "env")
        parent = roundtrip.ensure(job, target[:-1])
        existing = parent.get("env")
        if not existing:
            roundtrip.place(parent, "env", moved, comment)
            return
        roundtrip.keep_comment(parent, "env", comment)
        names = {item.get("name"): item for item in existing if isinstance(item, dict)}
        for item in moved:
            same = names.get(item.get("name")) if isinstance(item, dict) else None
            if same is None:
                existing.append(item)
            else:
                roundtrip.overwrite(same, item)

    return edit
