from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig, mappings
from trainlint.engine import Context
from trainlint.rule import Problem, Related, Severity, rule
from trainlint.trainer import (
    JOBS,
    POD_SPEC,
    container_names,
    named,
    override_pods,
    override_targets,
)

#: What the webhook calls each kind of container.
NOUNS = {"initContainers": "initContainer", "containers": "container"}


@rule(
    "TL208", "override-target-not-in-runtime", kinds={"TrainJob"}, severity=Severity.ERROR,
    fix="Target only jobs and containers the runtime defines, by their exact names.",
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Checks every job that `podSpecOverrides` (v2.0), `podTemplateOverrides` (v2.1) or
    `runtimePatches` (v2.2+) target, and every container and init container they name,
    against the runtime itself.

    ## Why is this bad?
    Overrides can only adjust what the runtime has. The Trainer webhook denies the TrainJob:
    "must not have targetJob that doesn't exist in the runtime job template" (v2.0–v2.1),
    "must not have replicated job that doesn't exist in the runtime job template" (v2.2+),
    "must not have container that doesn't exist in the runtime job node". The webhook
    compares with the template after merging the override, so an unknown container (and,
    from v2.3, an unknown job) may be appended instead of denied: the Pod then has a
    container without an image, and the Job is never created.

    ## When it stays silent
    When the runtime is not among the checked files, and on targets it has.

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
                spec:
                  template:
                    spec:
                      containers:
                        - name: node
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef:
        name: torch-ckpt
      runtimePatches:
        - manager: example.com/platform
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
                              - name: trainer
                                volumeMounts:
                                  - name: ckpt
                                    mountPath: /ckpt
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
                spec:
                  template:
                    spec:
                      containers:
                        - name: node
    ---
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: TrainJob
    metadata:
      name: sft-run-1
    spec:
      runtimeRef:
        name: torch-ckpt
      runtimePatches:
        - manager: example.com/platform
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
                                volumeMounts:
                                  - name: ckpt
                                    mountPath: /ckpt
    ```
    """
    runtime = ctx.runtime_for(job)
    if runtime is None:
        return
    jobs = dig(runtime.body, *JOBS)
    noun = "targetJob" if ctx.trainer_version < (2, 2) else "replicated job"
    detail = f"must not have {noun} that doesn't exist in the runtime job template"
    for path, name in override_targets(job, ctx.trainer_version):
        if named(jobs, name) is None:
            verdict = _verdict(detail, appends=ctx.trainer_version >= (2, 3))
            yield Problem(
                path,
                f"job `{name}` is not in {runtime.describe()}: {verdict}",
                help=f"target one of the runtime's jobs: {_names(jobs)}",
                related=(Related(runtime, JOBS, f"the jobs of {runtime.describe()}"),),
            )
    for pod_path, pod, targets in override_pods(job, ctx.trainer_version):
        for target in targets:
            found = named(jobs, target)
            if found is None:
                continue
            for kind, kind_noun in NOUNS.items():
                known = container_names(found[1], kind)
                for index, container in mappings(pod.get(kind)):
                    given = container.get("name")
                    if not isinstance(given, str) or given in known:
                        continue
                    missing = f"must not have {kind_noun} that doesn't exist in the runtime job"
                    verdict = _verdict(f"{missing} {target}", appends=True)
                    yield Problem(
                        (*pod_path, kind, index, "name"),
                        f"{kind_noun} `{given}` is not in job `{target}` of "
                        f"{runtime.describe()}: {verdict}",
                        help=f"name one of the job's {kind}: {', '.join(sorted(known)) or 'none'}",
                        related=(Related(runtime, (*JOBS, found[0], *POD_SPEC, kind),
                                         f"the {kind} of job `{target}`"),),
                    )


def _verdict(detail: str, *, appends: bool) -> str:
    denial = f'the Trainer webhook denies the TrainJob ("{detail}")'
    if not appends:
        return denial
    return (
        f"{denial}, or, since it checks the template after merging the override, appends it "
        "without an image so that the Job cannot be created"
    )


def _names(jobs: object) -> str:
    names = [str(item.get("name")) for _, item in mappings(jobs)]
    return ", ".join(f"`{name}`" for name in names) or "none"
