from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig, mappings
from trainlint.engine.context import Context
from trainlint.problem import Problem, Related, Severity
from trainlint.render.trainer import (
    JOBS,
    POD_SPEC,
    container_names,
    named,
    override_pods,
    override_targets,
)
from trainlint.rule import rule

#: What the webhook calls each kind of container.
NOUNS = {"initContainers": "initContainer", "containers": "container"}
#: What happens to a target the runtime lacks, which the webhook checks only after the
#: merge has added it.
APPENDED_CONTAINER = (
    "the Trainer webhook does not deny it (it checks the template after the merge, which "
    "has appended it), so the pods get a new container with only these env and mounts and "
    "no image: they cannot be created, which shows only as an event"
)
APPENDED_JOB = (
    "the Trainer webhook does not deny it (it checks the JobSet after the merge, which has "
    "appended it), so the JobSet gets a job of that name with only what the patch gives "
    "it, its containers without an image: the Job cannot be created"
)


@rule(
    "TL208", "override-target-not-in-runtime", kinds={"TrainJob"}, severity=Severity.ERROR,
    remediation="Target only jobs and containers the runtime defines, by their exact names.",
)
def check(job: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Checks every job that `podSpecOverrides` (v2.0), `podTemplateOverrides` (v2.1) or
    `runtimePatches` (v2.2+) target, and every container and init container they name,
    against the runtime itself.

    ## Why is this bad?
    Overrides can only adjust what the runtime has. Up to v2.2 the Trainer webhook denies
    a TrainJob that targets a job the runtime lacks ("must not have targetJob that doesn't
    exist in the runtime job template", v2.2: "must not have replicated job ..."). The
    webhook's container checks ("must not have container that doesn't exist in the runtime
    job node") never fire: it checks the template after the override is merged, and the
    merge has already appended the unknown container, with only the override's env and
    mounts and no image, so the pods cannot be created (`image: Required value`), which
    shows only as an event. From v2.3 the merge appends an unknown job the same way.

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
            verdict = f'the Trainer webhook denies the TrainJob ("{detail}")'
            if ctx.trainer_version >= (2, 3):
                verdict = APPENDED_JOB
            yield Problem(
                path,
                f"job `{name}` is not in {runtime.describe()}: {verdict}",
                remediation=f"target one of the runtime's jobs: {_names(jobs)}",
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
                    yield Problem(
                        (*pod_path, kind, index, "name"),
                        f"{kind_noun} `{given}` is not in job `{target}` of "
                        f"{runtime.describe()}: {APPENDED_CONTAINER}",
                        remediation=(
                            f"name one of the job's {kind}: {', '.join(sorted(known)) or 'none'}"
                        ),
                        related=(Related(runtime, (*JOBS, found[0], *POD_SPEC, kind),
                                         f"the {kind} of job `{target}`"),),
                    )


def _names(jobs: object) -> str:
    names = [str(item.get("name")) for _, item in mappings(jobs)]
    return ", ".join(f"`{name}`" for name in names) or "none"
