"""What each ML-policy and pod-group plugin of the controller injects, per release.

kubeflow/trainer `pkg/runtime/framework/plugins/{torch,mpi,jax,xgboost,flux,plainml,
coscheduling,volcano}` at each tag: the trainer's node count, the framework's env
variables, ports, volumes and commands. The plugins act on the first job labelled
`trainer` and its `node` container (MPI: on the jobs named `node` and `launcher`), and
only for a TrainJob that has `spec.trainer`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Protocol

from trainlint.document import KeyPath, Manifest, dig, mapping, mappings, sequence
from trainlint.render import JOBS, POD_SPEC, TRAINER, Render, Version
from trainlint.render.quantity import whole
from trainlint.render.tree import Origin, Tree, injected


class Building(Protocol):
    """What the plugins read and change of a render in progress: the build
    (`trainlint.render.build`) runs the plugins, so they know it by this alone."""

    job: Manifest | None
    runtime: Manifest | None
    version: Version
    name: str
    framework: str
    has_trainer: bool
    trainer: dict[str, Any]
    ml_policy: dict[str, Any] | None
    tree: Tree
    counts: dict[int, tuple[int, Origin]]
    ancestors: dict[int, str | None]
    pod_labels: dict[str, tuple[str, Origin]]
    pod_annotations: dict[str, tuple[str, Origin]]
    filled: dict[str, Any]
    filled_at: dict[str, Origin]
    #: The render being built.
    result: Render

    def trainer_at(self, *keys: str | int) -> Origin: ...
    def runtime_at(self, *keys: str | int) -> Origin: ...
    def set_count(self, index: int, count: object, at: Origin) -> None: ...
    def upsert_env(self, container: KeyPath, variable: dict[str, Any], at: Origin) -> None: ...
    def upsert_envs(self, container: KeyPath, variables: object, at: Origin) -> None: ...
    def upsert_env_items(
        self, container: KeyPath, items: Iterable[tuple[Any, Origin | None, int]],
        at: Origin = ...,
    ) -> None: ...
    def upsert_mount(self, container: KeyPath, mount: dict[str, Any], at: Origin) -> None: ...
    def upsert_volume(self, job: int, volume: dict[str, Any], at: Origin) -> None: ...
    def upsert_port(self, container: KeyPath, port: int, at: Origin) -> None: ...

#: The port of the rendezvous, the XGBoost tracker and the JAX coordinator.
PORT = 29500
#: Where Kubernetes exposes a pod's Job completion index.
COMPLETION_INDEX = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
TORCHTUNE = ["tune", "run"]
TORCHTUNE_MANAGED = ("output_dir", "tokenizer.path", "checkpointer.checkpoint_dir",
                     "tokenizer.merges_file")


def by(plugin: str) -> str:
    return f"injected by the {plugin} plugin"


def enforce(build: Building, render: Render) -> None:
    """Run the ML-policy plugin of the runtime, then the pod-group plugins."""
    plugin = build.framework
    render.sized_by = _resources_per_node(build)
    if plugin in ("torch", "jax"):
        _count_from_num_nodes(build)
    if plugin == "torch":
        _torch(build)
    elif plugin == "mpi":
        _mpi(build, render)
    elif plugin == "jax":
        _jax(build)
    else:
        # plainml runs for every runtime without torch, MPI or JAX: with XGBoost and Flux
        # too (their order is not fixed upstream; plainml is taken first).
        _count_from_num_nodes(build)
        _user_env(build)
        if plugin == "xgboost":
            _xgboost(build)
        elif plugin == "flux":
            _flux(build)
    _pod_groups(build)


# --- shared steps ---


def trainer_index(build: Building) -> int | None:
    """The first job labelled `trainer` (`FindPodSetByAncestor`)."""
    return next((index for index, name in build.ancestors.items() if name == TRAINER), None)


def trainer_container(build: Building) -> KeyPath | None:
    """The first trainer job's `node` container, when the TrainJob has `spec.trainer`."""
    index = trainer_index(build)
    if index is None or not build.has_trainer:
        return None
    return _container(build, index, "node")


def _container(build: Building, job: int, name: str, kind: str = "containers") -> KeyPath | None:
    for position, container in mappings(build.tree.get((*JOBS, job, *POD_SPEC, kind))):
        if container.get("name") == name:
            return (*JOBS, job, *POD_SPEC, kind, position)
    return None


def _count_from_num_nodes(build: Building) -> None:
    index = trainer_index(build)
    if index is not None and "numNodes" in build.trainer and build.has_trainer:
        build.set_count(index, build.trainer["numNodes"], build.trainer_at("numNodes"))


def _user_env(build: Building) -> None:
    """The TrainJob's env on the trainer container (the builder sets it again last)."""
    path = trainer_container(build)
    if path is not None:
        build.upsert_envs(path, build.trainer.get("env"), build.trainer_at("env"))


def nodes(build: Building) -> tuple[int, Origin]:
    index = trainer_index(build)
    return build.counts[index] if index is not None else (1, injected("default"))


def resources_per_node(build: Building) -> tuple[dict[str, Any], Origin]:
    """The resources the plugins size processes by (`Render.sized_by`)."""
    return build.result.sized_by


def _resources_per_node(build: Building) -> tuple[dict[str, Any], Origin]:
    """The resources the plugins size processes by: the TrainJob's `resourcesPerNode`, else
    the first `node` container of a job named `node` or labelled `trainer`."""
    if isinstance(build.trainer.get("resourcesPerNode"), dict):
        return build.trainer["resourcesPerNode"], build.trainer_at("resourcesPerNode")
    for index, job in mappings(build.tree.get(JOBS)):
        if job.get("name") != "node" and build.ancestors.get(index) != TRAINER:
            continue
        path = _container(build, index, "node")
        if path is not None:
            resources = mapping(build.tree.get((*path, "resources")))
            return resources, build.tree.origin((*path, "resources"))
    return {}, injected("no resources")


def gpus(resources: dict[str, Any]) -> int:
    """GPUs per node as the controller counts them: the first resource whose name holds
    `gpu`, in requests, else in limits (`runtime.GetNumGPUPerNode`)."""
    for part in ("requests", "limits"):
        for name, amount in mapping(resources.get(part)).items():
            if "gpu" in str(name).lower():
                count = whole(amount)
                if count:
                    return count
                break
    return 0


def cpus(resources: dict[str, Any]) -> int:
    """CPUs per node: the CPU request, else the CPU limit (rounded up)."""
    request = whole(mapping(resources.get("requests")).get("cpu"))
    return request or whole(mapping(resources.get("limits")).get("cpu"))


# --- torch ---

PET = ("PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT")


def _torch(build: Building) -> None:
    path = trainer_container(build)
    nproc, nproc_at = processes_per_node(build)
    _user_env(build)
    count, count_at = nodes(build)
    if path is not None:
        note = by("torch")
        torchtune = build.trainer.get("command") == TORCHTUNE
        _pet(build, path, note, count, count_at, nproc, nproc_at, master=not torchtune)
        if torchtune:
            _torchtune(build, count, nproc)
        build.upsert_port(path, PORT, injected(note))
    if build.version >= (2, 3):
        _env_injection(build, count, count_at, nproc, nproc_at)


def _pet(
    build: Building, path: KeyPath, note: str, count: int, count_at: Origin, nproc: int | str,
    nproc_at: Origin, *, master: bool,
) -> None:
    """The torchrun variables (the master's only for torchrun, not torchtune)."""
    plain = injected(note)
    variables: list[tuple[Any, Origin | None, int]] = [
        ({"name": "PET_NNODES", "value": str(count)}, injected(note, count_at), 0),
        ({"name": "PET_NPROC_PER_NODE", "value": str(nproc)}, injected(note, nproc_at), 0),
        (_from_index("PET_NODE_RANK"), plain, 0),
    ]
    if master:
        variables += [
            ({"name": "PET_MASTER_ADDR", "value": _master(build)}, plain, 0),
            ({"name": "PET_MASTER_PORT", "value": str(PORT)}, plain, 0),
        ]
    build.upsert_env_items(path, variables)


def processes_per_node(build: Building) -> tuple[int | str, Origin]:
    """PET_NPROC_PER_NODE as the release derives it, and the key it comes from."""
    runtime_key = ("spec", "mlPolicy", "torch", "numProcPerNode")
    value: Any = "auto"
    at = injected("default (auto)")
    if build.version <= (2, 1) and build.runtime is not None:
        written = dig(build.runtime.body, *runtime_key)
        if written is not None:
            value, at = written, build.runtime_at(*runtime_key)
    if "numProcPerNode" in build.trainer:
        value, at = build.trainer["numProcPerNode"], build.trainer_at("numProcPerNode")
    if build.version == (2, 0):
        return _nproc_v20(build, value, at)
    resources, resources_at = resources_per_node(build)
    cpu_words = ("cpu", "auto") if build.version == (2, 1) else ("auto",)
    if str(value) in cpu_words and (str(value) == "cpu" or gpus(resources) == 0):
        return max(1, cpus(resources)), resources_at
    return value, at


def _nproc_v20(build: Building, value: Any, at: Origin) -> tuple[int | str, Origin]:
    """v2.0 reads processes from the TrainJob's `resourcesPerNode` alone: `auto` counts
    CPUs when no resource name holds `gpu`, `cpu` counts CPUs; limits first, then
    requests, and 1 when the list it reads is unset."""
    given = build.trainer.get("resourcesPerNode")
    if not isinstance(given, dict):
        return value, at
    mode = str(value)
    fallback: int | str = "auto" if mode == "auto" else 1 if mode == "cpu" else value

    def uses_cpu(resources: dict[str, Any]) -> bool:
        if mode == "auto":
            return not any("gpu" in str(name).lower() for name in resources)
        return mode == "cpu" and "cpu" in resources

    there = build.trainer_at("resourcesPerNode")
    for part in ("limits", "requests"):
        resources = given.get(part)
        if not isinstance(resources, dict):
            if part == "requests":
                return 1, there
            continue
        if uses_cpu(resources):
            return max(1, whole(resources.get("cpu"))), there
        if part == "requests":
            return fallback, (at if fallback == value else there)
    return fallback, there


def _master(build: Building) -> str:
    return f"{build.name}-node-0-0.{build.name}"


def _from_index(name: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": COMPLETION_INDEX}}}


def _torchtune(build: Building, count: int, nproc: int | str) -> None:
    """A `tune run` command becomes the full torchtune command line."""
    resources, _ = resources_per_node(build)
    gpu = gpus(resources)
    args = [arg for arg in sequence(build.trainer.get("args")) if isinstance(arg, str)]
    command = list(TORCHTUNE)
    several = (isinstance(nproc, int) and nproc > 1) if build.version >= (2, 1) else nproc != 1
    if count > 1 or several or (build.version >= (2, 1) and isinstance(nproc, str) and gpu > 1):
        command.append(f"--rdzv_endpoint={_master(build)}:{PORT}")
    recipe, suffix = _recipe(build, count, nproc, gpu, args)
    ref = dig(build.job.body if build.job else {}, "spec", "runtimeRef", "name")
    command += [recipe, "--config", f"{_model(ref if isinstance(ref, str) else '')}{suffix}"]
    index = trainer_index(build)
    if index is not None:
        node = _container(build, index, "node")
        for item in build.tree.get((*node, "command")) or [] if node else []:
            if isinstance(item, str) and item.split("=")[0] in TORCHTUNE_MANAGED:
                command.append(item)
    build.filled["command"] = command
    build.filled_at["command"] = injected(by("torch") + " (torchtune)", build.trainer_at("command"))


def _recipe(
    build: Building, count: int, nproc: int | str, gpu: int, args: list[str]
) -> tuple[str, str]:
    """The torchtune recipe and config suffix for the node and device counts: single
    device, several on one node, or several nodes; LoRA and QLoRA from v2.1."""
    single = count == 1 and (nproc == 1 or (build.version >= (2, 1) and gpu == 1))
    qlora = build.version >= (2, 1) and _qlora(build, args)
    lora = build.version >= (2, 1) and any("model.lora_attn_modules" in arg for arg in args)
    tuning = "_qlora" if qlora else "_lora" if lora else ""
    if single:
        recipe = "lora_finetune_single_device" if tuning else "full_finetune_single_device"
        return recipe, f"{tuning or '_full'}_single_device"
    if count == 1 and tuning:
        return "lora_finetune_distributed", tuning
    return "full_finetune_distributed", "_full_multinode" if count > 1 else "_full"


def _qlora(build: Building, args: list[str]) -> bool:
    if build.version <= (2, 2):
        return not any("model.use_dora" in arg for arg in args) and any(
            "model.quantize_base" in arg for arg in args
        )

    def enabled(key: str) -> bool:
        return any(
            key in name and value.strip().lower() == "true"
            for name, _, value in (arg.partition("=") for arg in args if "=" in arg)
        )

    return not enabled("model.use_dora") and enabled("model.quantize_base")


def _model(runtime_name: str) -> str:
    """`torchtune-llama3.2-1b` → `llama3_2/1B`: the model a torchtune runtime's name gives."""
    parts = runtime_name.split("-")
    return f"{parts[1].replace('.', '_')}/{parts[2].upper()}" if len(parts) == 3 else ""


def _env_injection(
    build: Building, count: int, count_at: Origin, nproc: int | str, nproc_at: Origin
) -> None:
    """v2.3+: the PET variables also on the containers `envInjection` names, whether the
    TrainJob sets `spec.trainer` or not (torch.go injects them outside its trainer block)."""
    if build.runtime is None:
        return
    targets = dig(build.runtime.body, "spec", "mlPolicy", "torch", "envInjection", "targets")
    note = by("torch") + " (envInjection)"
    for _, target in mappings(targets):
        job = next((index for index, item in mappings(build.tree.get(JOBS))
                    if item.get("name") == target.get("jobName")), None)
        for name in target.get("containerNames") or []:
            path = None if job is None else (
                _container(build, job, name) or _container(build, job, name, "initContainers")
            )
            if path is None:
                continue
            _pet(build, path, note, count, count_at, nproc, nproc_at, master=True)


# --- MPI ---


def _mpi(build: Building, render: Render) -> None:
    policy = mapping(mapping(build.ml_policy).get("mpi"))
    policy_at = build.runtime_at("spec", "mlPolicy", "mpi")
    note = by("MPI")
    launcher_as_node = policy.get("runLauncherAsNode") is True
    names = [job.get("name") for _, job in mappings(build.tree.get(JOBS))]
    if build.has_trainer and "numNodes" in build.trainer and "node" in names:
        given = build.trainer["numNodes"]
        count = max(given - 1, 1) if launcher_as_node and isinstance(given, int) else given
        build.set_count(names.index("node"), count, build.trainer_at("numNodes"))
    slots, slots_at = _slots(build, policy, policy_at)
    mount_path = policy.get("sshAuthMountPath", "/root/.ssh")
    for index, name in enumerate(names):
        if name not in ("node", "launcher"):
            continue
        build.upsert_volume(index, {
            "name": "mpi-ssh-auth",
            "secret": {"secretName": f"{build.name}-mpi-ssh-auth", "items": [
                {"key": "ssh-privatekey", "path": "id_rsa"},
                {"key": "ssh-publickey", "path": "id_rsa.pub"},
                {"key": "ssh-publickey", "path": "authorized_keys"},
            ]},
        }, injected(note))
        if name == "launcher":
            build.upsert_volume(index, {"name": "mpi-hostfile", "configMap": {
                "name": f"{build.name}-mpi-hostfile",
                "items": [{"key": "hostfile", "path": "hostfile", "mode": 0o444}],
            }}, injected(note))
        path = _container(build, index, "node")
        if path is None:
            continue
        build.upsert_mount(path, {"name": "mpi-ssh-auth", "mountPath": mount_path},
                           injected(note, build.runtime_at("spec", "mlPolicy", "mpi",
                                                           "sshAuthMountPath")
                                    if "sshAuthMountPath" in policy else None))
        if name == "launcher":
            build.upsert_mount(path, {"name": "mpi-hostfile", "mountPath": "/etc/mpi"},
                               injected(note))
            for variable, value, at in (
                ("OMPI_MCA_orte_default_hostfile", "/etc/mpi/hostfile", None),
                ("OMPI_MCA_orte_keep_fqdn_hostnames", "true", None),
                ("OMPI_MCA_orte_set_default_slots", str(slots), slots_at),
                ("OMPI_MCA_plm_rsh_args", "-o ConnectionAttempts=10", None),
            ):
                build.upsert_env(path, {"name": variable, "value": value}, injected(note, at))
    render.extras.append(_hostfile(build, names, launcher_as_node, slots))


def _slots(build: Building, policy: dict[str, Any], at: Origin) -> tuple[int, Origin]:
    """Processes per node: the TrainJob's numProcPerNode, else the runtime's (1 by
    default), which from v2.1 becomes the GPU count when it is 1 and there are more GPUs."""
    if build.has_trainer and "numProcPerNode" in build.trainer:
        given = build.trainer["numProcPerNode"]
        count = given if isinstance(given, int) else whole(given)
        return count, build.trainer_at("numProcPerNode")
    slots = policy.get("numProcPerNode", 1)
    slots_at = Origin(at.manifest, (*at.path, "numProcPerNode")) if "numProcPerNode" in policy \
        else injected("default (1)")
    if slots == 1 and build.version >= (2, 1):
        resources, resources_at = resources_per_node(build)
        if gpus(resources) > 1:
            return gpus(resources), resources_at
    return (slots if isinstance(slots, int) else 1), slots_at


def _hostfile(
    build: Building, names: list[Any], launcher_as_node: bool, slots: int
) -> tuple[str, str, dict[str, Any], Origin]:
    """The hostfile ConfigMap: a line per pod of the `node` job (and the launcher's when
    it runs as a node); before v2.3 for the first replica only. Written up to what a
    ConfigMap holds (`CONFIGMAP_BYTES`): the API server refuses a larger one, and a
    `numNodes` of 99,999,999 (an int32 the CRD takes) would otherwise fill the memory."""
    subdomain = dig(build.tree.root, "spec", "network", "subdomain") or build.name
    text, size = [], 0
    for line in _host_lines(build, names, launcher_as_node, slots, subdomain):
        size += len(line) + 1
        if size > CONFIGMAP_BYTES:
            break
        text.append(f"{line}\n")
    return ("ConfigMap", f"{build.name}-mpi-hostfile", {"hostfile": "".join(text)},
            injected(by("MPI")))


#: The most a ConfigMap holds (its data, as the API server counts it).
CONFIGMAP_BYTES = 1024 * 1024


def _host_lines(
    build: Building, names: list[Any], launcher_as_node: bool, slots: int, subdomain: str
) -> Iterator[str]:
    for index, name in enumerate(names):
        if name != "node" and not (launcher_as_node and name == "launcher"):
            continue
        replicas = dig(build.tree.get((*JOBS, index)), "replicas")
        replicas = replicas if isinstance(replicas, int) and build.version >= (2, 3) else 1
        for replica in range(replicas):
            for pod in range(build.counts[index][0]):
                yield f"{build.name}-{name}-{replica}-{pod}.{subdomain} slots={slots}"


# --- JAX, XGBoost, Flux ---


def _jax(build: Building) -> None:
    path = trainer_container(build)
    if path is None:
        return
    count, count_at = nodes(build)
    note = by("JAX")
    build.upsert_env(path, {"name": "JAX_NUM_PROCESSES", "value": str(count)},
                     injected(note, count_at))
    build.upsert_env(path, _from_index("JAX_PROCESS_ID"), injected(note))
    build.upsert_env(path, {"name": "JAX_COORDINATOR_ADDRESS",
                            "value": f"{_master(build)}:{PORT}"}, injected(note))
    build.upsert_port(path, PORT, injected(note))


def _xgboost(build: Building) -> None:
    path = trainer_container(build)
    if path is None:
        return
    count, count_at = nodes(build)
    resources, resources_at = resources_per_node(build)
    per_node = gpus(resources) or 1
    note = by("XGBoost")
    workers_at = resources_at if gpus(resources) else count_at
    for variable in (
        {"name": "DMLC_TRACKER_URI", "value": _master(build)},
        {"name": "DMLC_TRACKER_PORT", "value": str(PORT)},
        _from_index("DMLC_TASK_ID"),
        {"name": "DMLC_NUM_WORKER", "value": str(count * per_node)},
    ):
        at = workers_at if variable["name"] == "DMLC_NUM_WORKER" else None
        build.upsert_env(path, variable, injected(note, at))
    build.upsert_port(path, PORT, injected(note))


FLUX_INSTALLER = "flux-installer"
FLUX_IMAGE = "ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy"


def _flux(build: Building) -> None:
    """The Flux plugin wraps the trainer command in its entrypoint and adds its installer
    init container, volumes and mounts to the job named `node`."""
    if not build.has_trainer:
        return  # the plugin reads spec.trainer.command and the reconcile fails
    note = by("Flux")
    config = f"{build.name}-flux-entrypoint"
    trainer = trainer_container(build)
    command = build.trainer.get("command")
    if not isinstance(command, list) and trainer is not None:
        command = build.tree.get((*trainer, "command"))
    args = build.trainer.get("args")
    words = [*(command if isinstance(command, list) else []),
             *(args if isinstance(args, list) else [])]
    build.filled["command"] = ["/bin/bash", "/etc/flux-config/entrypoint.sh",
                               " ".join(str(word) for word in words).strip()]
    build.filled_at["command"] = injected(note, build.trainer_at("command"))
    image = FLUX_IMAGE
    for _, variable in mappings(build.trainer.get("env")):
        if variable.get("name") == "FLUX_VIEW_IMAGE" and isinstance(variable.get("value"), str):
            image = variable["value"]
    for index, job in mappings(build.tree.get(JOBS)):
        if job.get("name") != "node":
            continue
        for volume in (
            {"name": "spack-install", "emptyDir": {}},
            {"name": "flux-install", "emptyDir": {}},
            {"name": config, "configMap": {"name": config, "defaultMode": 0o755}},
            {"name": "shared-memory", "emptyDir": {"medium": "Memory"}},
            {"name": "flux-curve", "secret": {"secretName": f"{build.name}-flux-curve",
                                              "defaultMode": 0o400}},
        ):
            build.upsert_volume(index, volume, injected(note))
        init = (*JOBS, index, *POD_SPEC, "initContainers")
        found = build.tree.get(init)
        position = len(found) if isinstance(found, list) else 0
        if not isinstance(found, list):
            build.tree.put(init, build.tree.adopt([]), injected(note))
        build.tree.put((*init, position), {
            "name": FLUX_INSTALLER, "image": image,
            "command": ["/bin/bash", "/etc/flux-config/init.sh"],
            "volumeMounts": [{"name": "flux-install", "mountPath": "/mnt/flux"},
                             {"name": config, "mountPath": "/etc/flux-config", "readOnly": True}],
        }, injected(note))
        node = _container(build, index, "node")
        if node is None:
            continue
        mounts = [("flux-install", "/mnt/flux"), ("spack-install", "/opt/software"),
                  (config, "/etc/flux-config"), ("flux-curve", "/curve")]
        if build.version >= (2, 3):
            mounts.append(("shared-memory", "/dev/shm"))
        for name, mount_path in mounts:
            mount: dict[str, Any] = {"name": name, "mountPath": mount_path}
            if name not in {"flux-install", "spack-install"}:
                mount["readOnly"] = True
            build.upsert_mount(node, mount, injected(note))


# --- gang scheduling ---


def _pod_groups(build: Building) -> None:
    policy = mapping(dig(build.runtime.body, "spec", "podGroupPolicy")) if build.runtime else {}
    if "coscheduling" in policy:
        build.pod_labels["scheduling.x-k8s.io/pod-group"] = (
            build.name, injected(by("coscheduling"), build.runtime_at("spec", "podGroupPolicy")))
    if "volcano" in policy and build.version >= (2, 1):
        build.pod_annotations["scheduling.k8s.io/group-name"] = (
            build.name, injected(by("Volcano"), build.runtime_at("spec", "podGroupPolicy")))
