from __future__ import annotations

from collections.abc import Iterator

from trainlint.document import Manifest, dig, mapping, mappings
from trainlint.engine.context import Context
from trainlint.kinds import TRAINER_KINDS
from trainlint.problem import Problem, Severity
from trainlint.render import Render, lifetime
from trainlint.render.trainer import rendered, trainer_of
from trainlint.render.tree import on_checked
from trainlint.rule import rule

SUCCESS_POLICY = ("spec", "successPolicy")


@rule(
    "TL419", "container-never-exits",
    kinds=TRAINER_KINDS, severity=Severity.WARNING,
    remediation=(
        "Run the container as a native sidecar: move it to `initContainers` with "
        "`restartPolicy: Always` (Kubernetes 1.29+), which the kubelet stops once the main "
        "containers have exited; or make its command exit when the training is done."
    ),
)
def check(manifest: Manifest, ctx: Context) -> Iterator[Problem]:
    """## What it does
    Renders the JobSet the controller builds (see `trainlint render`) and flags a regular
    container beside the trainer (in `containers`, not the trainer job's `node` container
    itself) whose command clearly never exits, in a job the JobSet's `successPolicy` waits
    for: `sleep infinity`, `tail -f FILE`, a `while true` loop with no `break` or `exit` in
    its body (one that leaves only an inner loop or a subshell is none), or a server started
    in the foreground by a well-known program (`python -m http.server`, `tensorboard
    --logdir`, `jupyter lab`, `mlflow server`, `nginx -g "daemon off;"`, `redis-server`,
    `vllm serve`, `tritonserver`, `uvicorn`, `gunicorn`, `sshd -D`, `ray start --block`),
    also in a shell script, or put in the background and then waited for (`server &` ...
    `wait`, or `wait $!` when the server was the last put there).

    ## Why is this bad?
    A pod succeeds only once all its regular containers have exited, and a Job completes
    only when its pods succeed. A container that runs forever keeps its pod `Running`
    after the trainer has finished: the Job never completes, so the JobSet's
    `successPolicy` (by default: every job) is never met, and the TrainJob runs on,
    holding its nodes and GPUs, until it is deleted or a deadline fails it. A native
    sidecar (an init container with `restartPolicy: Always`, on by default since
    Kubernetes 1.29) runs beside the main containers for as long as they do, and is
    stopped once they have exited. A job whose containers all serve (MPI workers running
    sshd for the launcher) belongs out of the policy: `targetReplicatedJobs: [launcher]`,
    as in Trainer's MPI runtimes.

    ## When it stays silent
    When the command is not in the manifest (no `command`: the image's entrypoint runs, and
    an image's name is no evidence; a script or program of the image), when the command may
    end (`sleep 3600`, `tail -f --pid=...`, a loop with `break`, `exit`, `kill` or `eval` in
    its body or under a condition, a server under `timeout`, daemonized, or given a config
    file that may daemonize it, `redis-server redis.conf`), when the script puts the server
    in the background and goes on (`server &`, then the training, and no `wait`), when the
    command runs only if another fails (`a || sleep infinity`), and when the script exits
    first or may (`test -f /etc/debug || exit 0`, a `false` under `set -e`). On init
    containers (one with `restartPolicy: Always` is the native sidecar), on the trainer
    job's `node` container (the training itself, which other rules judge), and on a job the
    `successPolicy` does not wait for: one not among its `targetReplicatedJobs` (Trainer's
    DeepSpeed and MLX runtimes have their `node` workers run `sshd -De` while the policy
    waits for the `launcher`), or one of several with `operator: Any`, unless a job it waits
    for `dependsOn` its completion. A runtime that TrainJobs of the run use is judged on
    each of them, at its `runtimeRef`.

    ## Example
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-with-reward-model
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
                          image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
                          command: [torchrun, /workspace/train.py]
                        - name: reward-model
                          image: python:3.12-slim
                          command: [python, -m, http.server, "8080"]
    ```

    Use instead:
    ```yaml
    apiVersion: trainer.kubeflow.org/v1alpha1
    kind: ClusterTrainingRuntime
    metadata:
      name: torch-with-reward-model
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
                      initContainers:
                        - name: reward-model
                          image: python:3.12-slim
                          command: [python, -m, http.server, "8080"]
                          restartPolicy: Always
                      containers:
                        - name: node
                          image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
                          command: [torchrun, /workspace/train.py]
    ```
    """
    render = rendered(manifest, ctx)
    if not render.complete:
        return  # the runtime's success policy and containers are unknown
    needed = _waited_for(render)
    if not needed:
        return
    trainer_job = trainer_of(render)
    trainer = trainer_job.container("node") if trainer_job is not None else None
    for job in render.jobs:
        if job.name not in needed:
            continue
        found = [(container, lifetime.never_exits(container)) for container in job.containers()
                 if container is not trainer]
        # A job all of whose containers serve (MPI workers' sshd) is no sidecar's case:
        # the success policy should not wait for it.
        serving = trainer_job is not None and trainer_job is not job and (
            needed[job.name] is None and all(endless is not None for _, endless in found))
        for container, endless in found:
            if endless is None:
                continue
            fix = _fix(container.name, trainer_job.name if serving and trainer_job else None,
                       ctx.kubernetes_release)
            message = (
                f"{container.noun} `{container.name}` of job `{job.name}` runs {endless.shown}, "
                f"{endless.what}: a pod succeeds only once all its containers have exited, so "
                f"job `{job.name}` never completes, and {_waits(render, job.name, needed)}; "
                "the TrainJob never succeeds and holds its nodes until it is deleted or a "
                f"deadline fails it: {fix}")
            if render.job is None and ctx.trainjobs_using(manifest):
                return  # judged on each TrainJob of it, the JobSet that runs (asked last:
                # the answer makes the runtime's result depend on those TrainJobs)
            yield from on_checked(manifest, render.job, endless.at, message,
                                  "the container's command")


#: The release from which Kubernetes runs native sidecars by default (`SidecarContainers`,
#: beta and on in 1.29; alpha, off, in 1.28).
NATIVE_SIDECARS = (1, 29)


def _fix(container: str, trainer_job: str | None, kubernetes: tuple[int, int]) -> str:
    """What to do: a job all of whose containers serve is waited for by no policy that
    names the trainer's job (`trainer_job`); a container beside others becomes a native
    sidecar where the cluster runs them, or exits."""
    if trainer_job is not None:
        return (f"have the `successPolicy` wait only for `{trainer_job}` "
                "(`targetReplicatedJobs`), as Trainer's MPI runtimes do")
    if kubernetes >= NATIVE_SIDECARS:
        return (f"make `{container}` a native sidecar (an init container with "
                "`restartPolicy: Always`, stopped once the other containers have exited), "
                "or let it exit")
    return (f"let `{container}` exit (native sidecars, init containers with "
            "`restartPolicy: Always`, are on by default from Kubernetes 1.29)")


def _waited_for(render: Render) -> dict[str, str | None]:
    """The jobs the JobSet's success policy needs to complete: those it waits for (None),
    and those a job it waits for `dependsOn` completing (the name of that job).

    JobSet counts the Jobs it needs (`numJobsExpectedToSucceed`): with `operator: All`,
    every Job of the `targetReplicatedJobs` (all jobs when none are named); with `Any`,
    one Job of any of them, so only a job that is the one target is needed."""
    policy = mapping(dig(render.jobset, *SUCCESS_POLICY))
    names = [job.name for job in render.jobs if job.replicas != 0]
    listed = policy.get("targetReplicatedJobs")
    targets = {name for name in listed if isinstance(name, str)} if (
        isinstance(listed, list) and listed) else set(names)
    operator = policy.get("operator")
    if operator == "Any" and len(targets) != 1:
        return {}
    if operator not in ("All", "Any"):
        return {}
    needed: dict[str, str | None] = {name: None for name in names if name in targets}
    grown = True
    while grown:
        grown = False
        for job in render.jobs:
            if job.name not in needed:
                continue
            for _, depends in mappings(job.body.get("dependsOn")):
                name = depends.get("name")
                if depends.get("status") == "Complete" and isinstance(name, str) and (
                        name in names and name not in needed):
                    needed[name] = needed[job.name] or job.name
                    grown = True
    return needed


def _waits(render: Render, name: str, needed: dict[str, str | None]) -> str:
    """How the success policy waits for job `name`, for the message."""
    policy = mapping(dig(render.jobset, *SUCCESS_POLICY))
    by = needed[name]
    if by is not None:
        return (f"the JobSet's `successPolicy` waits for job `{by}`, which starts only once "
                f"`{name}` has completed (`dependsOn`)")
    if render.origin(SUCCESS_POLICY).note is not None:
        return "the JobSet's `successPolicy` waits for every job (the default)"
    if policy.get("operator") == "Any":
        return f"`{name}` is the one job the JobSet's `successPolicy` (`Any`) waits for"
    if not policy.get("targetReplicatedJobs"):
        return "the JobSet's `successPolicy` (`All`) waits for every job"
    return f"the JobSet's `successPolicy` waits for job `{name}`"
