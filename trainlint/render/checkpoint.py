"""Where a trainer writes its checkpoints, and what storage that path lands on.

Trainer has no checkpoint API, so the checkpoint directory is recognised by convention:
environment variables and settings of the command line (`trainlint.render.script`: flags,
overrides, inline Python, the programs of ConfigMaps the pods mount, configs written by the
script) that name one. A container with
no such path is not checkpointing, nor one whose settings say it saves nothing
(`save_strategy="no"`, `save_steps` beyond `max_steps`): the checkpoint rules stay silent
for both. Every container of the rendered JobSet is looked at (`writers`), whatever its job
or its name: what counts is the pod the controller builds, not which container the
controller fills.
"""

from __future__ import annotations

import math
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple

from trainlint.document import Manifest, count, dig, mappings
from trainlint.memo import PerObject, PerValue
from trainlint.options import RuleOptions, check_no_empty_names
from trainlint.render import TRAINER, Container, Render, script, shell
from trainlint.render.trainer import rendered
from trainlint.render.tree import Origin, first_on

if TYPE_CHECKING:
    from trainlint.lookups import Lookups

#: Volume types whose data does not outlive the pod (or the node).
EPHEMERAL = ("emptyDir", "ephemeral", "hostPath")
#: The commands that start MPI ranks in other pods.
_MPIRUN = re.compile(r"(?:.*/)?(?:mpirun|mpiexec|horovodrun)")
_VARIABLE = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


@dataclass(frozen=True)
class CheckpointOptions(RuleOptions):
    """How a checkpoint directory is recognised; extend the lists for your own scripts."""

    env_name_parts: tuple[str, ...] = ("CKPT", "CHECKPOINT")
    env_names: tuple[str, ...] = ("OUTPUT_DIR", "SAVE_DIR")
    flags: tuple[str, ...] = (
        "--output_dir", "--output-dir", "--checkpoint_dir", "--checkpoint-dir",
        "--ckpt_dir", "--ckpt-dir", "--save_dir", "--save-dir", "--save",
    )

    def __post_init__(self) -> None:
        check_no_empty_names(self, "env_name_parts", "env_names", "flags")


class CheckpointDir(NamedTuple):
    #: Absolute; it may hold variables Kubernetes puts in that the container does not
    #: spell out (`/ckpt/$(RUN)`): the storage under it is known, not which runs share it.
    path: str
    #: How it was found, for messages: `env CKPT_DIR`, `flag --output_dir`...
    origin: str
    at: Origin
    #: The setting or variable that names it (`output_dir`, `CKPT_DIR`).
    key: str = ""

    @property
    def varies(self) -> bool:
        """Whether it holds a variable (`$(RUN)`): each run or pod may have its own."""
        return "$(" in self.path


class Mount(NamedTuple):
    """A volumeMount of a rendered container, and where it was written."""

    value: dict[str, Any]
    at: Origin


class Storage(NamedTuple):
    """What a path is stored on: a volume type (`emptyDir`, `persistentVolumeClaim`...),
    `volumeClaimPolicies`, `container` (no volume) or `unknown`."""

    kind: str
    volume: str | None = None
    mount: Mount | None = None
    #: The key that makes the volume what it is (`volumes[i].emptyDir`).
    volume_at: Origin | None = None

    @property
    def mount_path(self) -> str | None:
        return self.mount.value["mountPath"] if self.mount else None


#: Per render: its containers that write checkpoints, the directories of a container,
#: and the storage under a path of one.
_WRITERS: PerValue[list[tuple[Container, list[CheckpointDir]]]] = PerValue("writers")
_DIRS: PerValue[list[CheckpointDir]] = PerValue("checkpoint-dirs")
_STORAGE: PerValue[Storage] = PerValue("storage")


def writers(
    render: Render, options: CheckpointOptions
) -> list[tuple[Container, list[CheckpointDir]]]:
    """Every container of the render that writes checkpoints, with the directories: the
    containers of every job but the initializers', which download rather than checkpoint.
    What an MPI launcher that is no node of the run tells `mpirun` to save, the ranks
    save, in the pods of the `node` job: its container stands for the launcher's."""
    return _WRITERS.get(render, lambda: [
        (writing, found) for container in render.workload()
        for found in [checkpoint_dirs(container, options)] if found
        for writing in [ranks_of(container)] if writing is not None
    ], options.env_name_parts, options.env_names, options.flags)


def ranks_of(container: Container) -> Container | None:
    """The container whose pods run what `container`'s command trains: its own, but for
    the launcher of an MPI run that does not run as a node (`runLauncherAsNode`), whose
    `mpirun` starts the ranks in the `node` job's pods (none where there is no such job)."""
    render = container.job.render
    if render.framework != "mpi" or container.job.ancestor != TRAINER or dig(
            render.runtime.body if render.runtime else None,
            "spec", "mlPolicy", "mpi", "runLauncherAsNode") is True:
        return container
    if not script.read(container).runs(_MPIRUN):
        return container  # the launcher's own program (no mpirun): it writes itself
    node = render.job_named("node")
    return node.container("node") if node is not None and node is not container.job else None


def checkpoint_dirs(container: Container, options: CheckpointOptions) -> list[CheckpointDir]:
    """Absolute paths the container writes checkpoints to, from its env and command line,
    first mention first (not those it reads weights from: `READ_ONLY_KEYS`, a variable
    named as an input); worked out once per container and way of recognising them."""
    return _DIRS.get(
        container.job.render, lambda: _checkpoint_dirs(container, options),
        container.path, options.env_name_parts, options.env_names, options.flags,
    )


#: Arguments that name a directory a trainer reads weights from, not one it writes:
#: torchtune loads the base model from `checkpointer.checkpoint_dir`.
READ_ONLY_KEYS = frozenset({"checkpointer.checkpoint_dir"})


def _checkpoint_dirs(container: Container, options: CheckpointOptions) -> list[CheckpointDir]:
    if saves_nothing(container) is not None:
        return []
    found: dict[str, CheckpointDir] = {}
    env = container.env
    for candidate in _candidates(container, env, options):
        if candidate.key in READ_ONLY_KEYS:
            continue
        path = candidate.path
        if "$(" in path:  # a variable's value puts in only those set before it
            before = env[candidate.key][0] if candidate.origin == f"env {candidate.key}" else None
            path = _expanded({name: item for name, item in env.items()
                              if before is None or item[0] < before}, path)
        if not path.startswith("/") or "$" in _VARIABLE.sub("", path) or path in found:
            continue
        if "$(" in path and _may_name_a_mount(container, path.split("$(", 1)[0]):
            continue  # where it lands is unknown
        found[path] = CheckpointDir(path, candidate.origin, candidate.at, candidate.key)
    return list(found.values())


def _may_name_a_mount(container: Container, fixed: str) -> bool:
    """Whether the variable after `fixed`, the start of a directory, may name a mount
    below it (`/data/$(TEAM)/ckpt` beside a mount at `/data/team-a`)."""
    return any(
        isinstance(at, str) and at.startswith(fixed) and at != fixed
        for _, mount in mappings(container.body.get("volumeMounts"))
        for at in [mount.get("mountPath")]
    )


def relative_dirs(container: Container, options: CheckpointOptions) -> list[CheckpointDir]:
    """The checkpoint directories a container's command line gives relative to a folder
    trainlint does not know (the image's working directory: no `cd` before it), from the
    flags and settings that name one (`--output_dir out`): where they land is unknown, but
    not whether any volume could hold them."""
    if saves_nothing(container) is not None:
        return []
    found: dict[str, CheckpointDir] = {}
    for setting in _naming_settings(container, options):
        value = setting.value
        if (setting.cwd is None and isinstance(value, str) and value
                and not value.startswith(("/", "-")) and "$" not in value
                and "://" not in value and value not in found):
            found[value] = CheckpointDir(value, setting.origin, setting.at, setting.key)
    return list(found.values())


def saves_nothing(container: Container) -> str | None:
    """Why the container's own settings say it writes no checkpoint during the run, if
    they do: `save_strategy` `no`, or `save_steps` at or beyond the last step (the run
    ends before the first save): `max_steps`, or the most steps its samples make
    (`_most_steps`)."""
    settings = script.read(container)
    strategy = settings.get("save_strategy")
    if strategy is not None and str(strategy.value).lower() == "no":
        return f"`save_strategy` is `no` ({strategy.origin})"
    steps = settings.get("save_steps")
    every = count(steps.value) if steps is not None else None
    if steps is None or every is None:
        return None
    last = settings.get("max_steps")
    until = count(last.value) if last is not None else None
    if until is not None and 0 < until <= every:
        return f"`save_steps` {every} ({steps.origin}) is not below `max_steps` {until}"
    most = _most_steps(settings) if last is None else None
    if most is not None and most <= every:
        return (f"`save_steps` {every} ({steps.origin}) is beyond the {most} steps its "
                "samples make at most")
    return None


def _most_steps(settings: script.Script) -> int | None:
    """The most optimizer steps a run capped by a sample count can take, as the Hugging
    Face Trainer counts them (batches per epoch over gradient accumulation, times the
    epochs), on one process with an unset batch size or accumulation taken as 1: more
    processes or larger batches make fewer. The cap is LlamaFactory's `max_samples` (per
    dataset of its `dataset` list), or the example scripts' `max_train_samples` (their
    one dataset); the epochs must be written (defaults differ between tools). None where
    the samples do not bound the steps: a save at each epoch's end (`save_strategy`
    other than `steps`), a batch found at run time (`auto_find_batch_size`), documents cut
    into many blocks (LlamaFactory's pre-training stage) or datasets oversampled
    (`mix_strategy` other than `concat`)."""
    for key, allowed in (("save_strategy", "steps"), ("stage", "sft"), ("mix_strategy", "concat")):
        setting = settings.get(key)
        if setting is not None and str(setting.value).lower() != allowed:
            return None
    found = settings.get("auto_find_batch_size")
    if found is not None and script.truth(found) is not False:
        return None
    samples, datasets = settings.get("max_train_samples"), 1
    if samples is None:
        samples, named = settings.get("max_samples"), settings.get("dataset")
        if named is None or not isinstance(named.value, str):
            return None
        datasets = len([name for name in named.value.split(",") if name.strip()])
    epochs = settings.get("num_train_epochs")
    if samples is None or epochs is None:
        return None
    cap, rounds = count(samples.value), _positive(epochs.value)
    batch = _count_or_one(settings.get("per_device_train_batch_size"))
    accumulation = _count_or_one(settings.get("gradient_accumulation_steps"))
    if cap is None or rounds is None or batch is None or accumulation is None:
        return None
    return math.ceil(rounds * max(math.ceil(cap * datasets / batch) // accumulation, 1))


def _count_or_one(setting: script.Setting | None) -> int | None:
    """A positive count a setting writes, 1 when it is unset; None for anything else."""
    if setting is None:
        return 1
    found = count(setting.value)
    return found if found is not None and found > 0 else None


def _positive(value: object) -> float | None:
    try:
        number = float(str(value))
    except ValueError:
        return None
    return number if math.isfinite(number) and number > 0 else None


def _expanded(env: dict[str, tuple[int, dict[str, Any]]], path: str) -> str:
    """`path` with each `$(NAME)` replaced by the value the container's env gives it."""

    def value(match: re.Match[str]) -> str:
        found = _literal(env.get(match[1], (0, {}))[1])
        return match[0] if found is None else found

    return _VARIABLE.sub(value, path)


def _literal(variable: dict[str, Any]) -> str | None:
    """The value an env variable spells out (not one taken from a secret or a field)."""
    value = variable.get("value")
    return value if isinstance(value, str) else None


def _candidates(
    container: Container, env: dict[str, tuple[int, dict[str, Any]]], options: CheckpointOptions
) -> Iterator[CheckpointDir]:
    names_a_dir = _DirectoryNames.of(options.env_names, options.env_name_parts)
    reassigned = _reassigned(container)
    for name, (index, variable) in env.items():
        if names_a_dir(name) and name not in reassigned:
            value = _literal(variable)
            if value is not None:
                yield CheckpointDir(value, f"env {name}", container.origin("env", index), name)
    for setting in _naming_settings(container, options):
        path = setting.path()
        if path is not None:
            yield CheckpointDir(path, setting.origin, setting.at, setting.key)
    for code, at in script.read(container).programs:  # `os.environ.get("CKPT_DIR", "/x")`
        for name, default in script.environ_defaults(code):
            if names_a_dir(name) and name not in env and name not in reassigned:
                program = script.its_program(script.program_file(container, code))
                yield CheckpointDir(default, f"default of {name} in {program}", at, name)


def _reassigned(container: Container) -> frozenset[str]:
    """The variables the container's script sets before its program runs (`export
    CKPT_DIR=/mnt/ckpt/run`): their env values are not what the program sees."""
    return frozenset(word.partition("=")[0] for word, _ in script.read(container).words
                     if shell.ASSIGNMENT.fullmatch(word))


def _naming_settings(
    container: Container, options: CheckpointOptions
) -> Iterator[script.Setting]:
    """The settings of a container's command line that name a checkpoint directory (a flag
    or key such as `output_dir`, however nested: `trainer.output_dir`)."""
    keys = _flag_keys(options.flags)
    return (setting for setting in script.read(container).settings
            if setting.key.rsplit(".", 1)[-1] in keys)


#: Words of a variable's name that make a checkpoint one the trainer reads (the weights it
#: starts from, the model it compares with), not one it writes: `BASE_CHECKPOINT`,
#: `PRETRAINED_CKPT_DIR`, `REF_CHECKPOINT`, `RESUME_FROM_CHECKPOINT`.
_INPUT = re.compile(
    r"(?:^|_)(?:BASE|PRETRAINED|INIT|INITIAL|LOAD|SOURCE|SRC|INPUT|FROM|REF|REFERENCE"
    r"|TEACHER|RESUME)(?:_|$)"
)


class _DirectoryNames:
    """Whether an env variable's name marks a checkpoint directory, remembered by name:
    the same names recur in every TrainJob of a repository."""

    #: The most names remembered.
    KEPT = 100_000

    def __init__(self, names: tuple[str, ...], parts: tuple[str, ...]) -> None:
        self.names = frozenset(names)
        self.parts = re.compile("|".join(map(re.escape, parts)) or "(?!)")
        self.known: dict[str, bool] = {}

    @staticmethod
    @cache
    def of(names: tuple[str, ...], parts: tuple[str, ...]) -> _DirectoryNames:
        return _DirectoryNames(names, parts)

    def __call__(self, name: str) -> bool:
        found = self.known.get(name)
        if found is None:
            upper = name.upper()
            found = upper in self.names or (
                self.parts.search(upper) is not None and _INPUT.search(upper) is None)
            if len(self.known) < self.KEPT:
                self.known[name] = found
        return found


@cache
def _flag_keys(flags: tuple[str, ...]) -> frozenset[str]:
    return frozenset(flag.lstrip("-") for flag in flags)


def storage(container: Container, path: str) -> Storage:
    """The storage under `path`: the longest mountPath prefix of the container's mounts,
    then the volume it mounts (worked out once per container and path: every checkpoint
    rule asks)."""
    return _STORAGE.get(container.job.render, lambda: _storage(container, path),
                        container.path, path)


def _storage(container: Container, path: str) -> Storage:
    mount: Mount | None = None
    longest = -1
    for index, item in mappings(container.body.get("volumeMounts")):
        mount_path, name = item.get("mountPath"), item.get("name")
        if not isinstance(mount_path, str) or not isinstance(name, str):
            continue
        inside = mount_path.rstrip("/") or "/"
        covers = path == inside or path.startswith(inside.rstrip("/") + "/")
        if covers and len(inside) > longest:
            mount, longest = Mount(item, container.origin("volumeMounts", index)), len(inside)
    render = container.job.render
    if mount is None:
        return Storage("container" if render.complete else "unknown")
    name = mount.value["name"]
    volumes = container.job.volumes()
    if name in volumes:
        index, volume = volumes[name]
        kind = next((key for key in volume if key != "name"), "unknown")
        return Storage(kind, name, mount, container.job.origin(*_pod_keys("volumes", index, kind)))
    template = claim_template(render, name)
    if template is not None:
        return Storage("volumeClaimPolicies", name, mount, template[1])
    return Storage("unknown", name, mount)


def _pod_keys(*keys: str | int) -> tuple[str | int, ...]:
    return ("template", "spec", "template", "spec", *keys)


def claim_template(render: Render, name: str) -> tuple[dict[str, Any], Origin] | None:
    """The `volumeClaimPolicies` template JobSet makes the PVC `name` from, if any."""
    policies = ("spec", "volumeClaimPolicies")
    for index, policy in mappings(dig(render.jobset, *policies)):
        for position, template in mappings(policy.get("templates")):
            if dig(template, "metadata", "name") == name:
                return template, render.origin((*policies, index, "templates", position))
    return None


def claim_name(container: Container, where: Storage) -> str | None:
    """The PVC a `persistentVolumeClaim` storage mounts, by name."""
    found = container.job.volumes().get(where.volume or "")
    if where.kind != "persistentVolumeClaim" or found is None:
        return None
    name = dig(found[1], "persistentVolumeClaim", "claimName")
    return name if isinstance(name, str) and name else None


def path_on_volume(container: Container, where: Storage, path: str) -> str:
    """Where `path` lands inside the volume, through the mount's folder of it."""
    relative = path[len(where.mount_path or ""):]
    return posixpath.normpath(f"/{_sub_path(container, where) or ''}/{relative}")


def named_by_variables(container: Container, where: Storage) -> bool:
    """Whether the mount's folder in the volume is named by variables the container does
    not spell out (`subPathExpr: $(POD_NAME)`, `$(JOBSET_NAME)` from a label): each pod
    or TrainJob may have its own, which is not known here, so no two are said to share
    it."""
    return _sub_path(container, where) is None


def _sub_path(container: Container, where: Storage) -> str | None:
    """The mount's folder of its volume: its `subPath`, or its `subPathExpr` with the
    variables the container's env spells out put in; None where another remains."""
    mount = where.mount.value if where.mount else {}
    sub = mount.get("subPath")
    if isinstance(sub, str) and sub:
        return sub
    expression = mount.get("subPathExpr")
    if not isinstance(expression, str):
        return ""
    expanded = _expanded(container.env, expression)
    return None if "$(" in expanded else expanded





class Place(NamedTuple):
    """Where a TrainJob's JobSet writes checkpoints."""

    #: The PVC the directory is on, None on any other storage.
    claim: str | None
    #: The path inside the volume (through the mount's `subPath`).
    inside: str
    #: The directory as the trainer is given it.
    path: str
    #: The first key of the TrainJob behind it (the directory, the mount, the volume),
    #: else the TrainJob's name.
    at: Origin
    #: What in the writing container's command shows it resumes from what it finds.
    resume: str | None


#: Where a TrainJob checkpoints, while it is checked.
_PLACES: PerObject[list[Place]] = PerObject("checkpoint-places")


def places(job: Manifest, ctx: Lookups, options: CheckpointOptions) -> list[Place]:
    """Every place the containers of a TrainJob's JobSet write checkpoints (worked out
    once per object: the rules that compare TrainJobs' places each ask)."""
    return ctx.remember(_PLACES, job, lambda: _places(job, ctx, options),
                        ctx.trainer_version, ctx.bundled, options)


def _places(job: Manifest, ctx: Lookups, options: CheckpointOptions) -> list[Place]:
    found: list[Place] = []
    for container, directories in writers(rendered(job, ctx), options):
        for directory in directories:
            where = storage(container, directory.path)
            if directory.varies or named_by_variables(container, where):
                continue
            mount_at = where.mount.at if where.mount else None
            at = first_on(job, directory.at, mount_at, where.volume_at) or Origin(
                job, ("metadata", "name")
            )
            found.append(Place(
                claim_name(container, where), path_on_volume(container, where, directory.path),
                directory.path, at, script.resumes(script.read(container)),
            ))
    return found
