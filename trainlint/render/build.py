"""The controller's steps, release by release: from a runtime and a TrainJob to a JobSet.

Each step follows kubeflow/trainer at the release's tag: `newRuntimeInfo` and the merge
of overrides or patches (`pkg/runtime/core/trainingruntime.go`), the pod sets and their
counts (`pkg/runtime/runtime.go`), the ML-policy plugins (`trainlint.render.plugins`), the
JobSet plugin's `Build` and its builder (`plugins/jobset/jobset.go`, `builder.go`), then
the defaults of the JobSet webhook and of Kubernetes (`trainlint.render.defaults`).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import Any

from trainlint.document import (
    KeyPath,
    Manifest,
    dig,
    is_count,
    mapping,
    mappings,
    string,
    without_keys,
)
from trainlint.render import (
    ANCESTOR_LABEL,
    INITIALIZERS,
    JOBS,
    POD_SPEC,
    TRAINER,
    Job,
    Render,
    Version,
)
from trainlint.render.merge import merge
from trainlint.render.tree import Origin, Tree, injected, within

#: Where a runtime keeps the JobSet template.
TEMPLATE: KeyPath = ("spec", "template")
#: A TrainJob rendered without its runtime stands in with this name for it.
PLACEHOLDER = "<trainjob>"
SET_BY_CONTROLLER = "set by the Trainer controller"

# --- what survives the API server's pruning of an override or patch, per release ---
# (None: kept whole; a mapping: the keys kept; a one-item list: applied to each item)

_META = {"labels": None, "annotations": None}
_OVERRIDE_CONTAINER = {"name": None, "env": None, "volumeMounts": None}
_PATCH_CONTAINER = {**_OVERRIDE_CONTAINER, "securityContext": None}
_POD_SPEC_OVERRIDE: dict[str, Any] = {
    "serviceAccountName": None, "nodeSelector": None, "tolerations": None, "volumes": None,
    "initContainers": [_OVERRIDE_CONTAINER], "containers": [_OVERRIDE_CONTAINER],
    "schedulingGates": None,
}
_POD_TEMPLATE_OVERRIDE_SPEC = {**_POD_SPEC_OVERRIDE, "affinity": None, "imagePullSecrets": None}
_POD_SPEC_PATCH: dict[str, Any] = {
    **_POD_TEMPLATE_OVERRIDE_SPEC, "initContainers": [_PATCH_CONTAINER],
    "containers": [_PATCH_CONTAINER], "securityContext": None,
}


def _job_template_patch(version: Version) -> dict[str, Any]:
    pod_spec = dict(_POD_SPEC_PATCH)
    if version >= (2, 3):
        pod_spec["terminationGracePeriodSeconds"] = None
    return {"metadata": _META, "spec": {"template": {"metadata": _META, "spec": pod_spec}}}


def pruned(value: Any, shape: Any) -> Any:
    """`value` with only what `shape` keeps, and without patch directives (`$patch`,
    `$retainKeys`: no field of the schema), which the API server drops from a TrainJob (as
    it drops nulls, which no `Manifest.body` holds). The keys that stay keep their key
    paths."""
    if shape is None:
        return without_keys(value, _directive)
    if isinstance(shape, list):
        return [pruned(item, shape[0]) for item in value] if isinstance(value, list) else value
    if not isinstance(value, dict):
        return value
    return {key: pruned(item, shape[key]) for key, item in value.items() if key in shape}


def _directive(key: object, _: object) -> bool:
    return isinstance(key, str) and key.startswith("$")


#: The origin of a value nothing wrote.
_NOWHERE = Origin(None, ())


class _Build:
    """One render: the state the controller's steps share (its `runtime.Info`)."""

    def __init__(self, job: Manifest | None, runtime: Manifest | None, version: Version):
        self.job, self.runtime, self.version = job, runtime, version
        self.source: Manifest = job if job is not None else runtime  # type: ignore[assignment]
        spec = mapping(self.source.body.get("spec")) if job is not None else {}
        self.spec = spec
        #: `spec.trainer` (a runtime alone is rendered for a TrainJob with an empty one,
        #: what every TrainJob that sets any of it gets).
        self.has_trainer = job is None or isinstance(spec.get("trainer"), dict)
        self.trainer = mapping(spec.get("trainer"))
        self.name = job.name if job is not None else PLACEHOLDER
        self.ml_policy: dict[str, Any] | None = None
        if runtime is not None:
            policy = dig(runtime.body, "spec", "mlPolicy")
            self.ml_policy = policy if isinstance(policy, dict) else None
        self.framework = _framework(self.ml_policy, version)
        #: Pod counts by replicatedJob index, with the origin of each (the pod sets).
        self.counts: dict[int, tuple[int, Origin]] = {}
        self.ancestors: dict[int, str | None] = {}
        self.pod_labels: dict[str, tuple[str, Origin]] = {}
        self.pod_annotations: dict[str, tuple[str, Origin]] = {}
        #: What a plugin changed of `spec.trainer` before the builder reads it (the
        #: torchtune and Flux commands), with origins.
        self.filled: dict[str, Any] = {}
        self.filled_at: dict[str, Origin] = {}

    # --- where things are ---

    def trainer_at(self, *keys: str | int) -> Origin:
        """The origin of a TrainJob `spec.trainer` key."""
        return Origin(self.job, ("spec", "trainer", *keys)) if self.job else _NOWHERE

    def runtime_at(self, *keys: str | int) -> Origin:
        return Origin(self.runtime, keys) if self.runtime else _NOWHERE

    # --- the steps ---

    def run(self) -> Render:
        self.tree = self._start()
        self._propagate_metadata()
        self._merge_overrides()
        self._read_pod_sets()
        if self.version >= (2, 3):
            self._merge_resources()
        from trainlint.render import plugins

        result = self.result = Render(
            self.job, self.runtime, self.version, self.tree, self.framework
        )
        plugins.enforce(self, result)
        self._sync_counts()
        self._fill_initializers()
        self._fill_trainer()
        self._label_pods()
        self._suspend()
        from trainlint.render.defaults import apply_defaults

        apply_defaults(self.tree, self.version)
        self.tree.done()
        owner = weakref.ref(result)
        for index, job in mappings(self.tree.get(JOBS)):
            pods, at = self.counts.get(index, (1, _NOWHERE))
            result.jobs.append(Job(owner, index, job, self.ancestors.get(index), pods, at))
        return result

    def _start(self) -> Tree:
        """The runtime's JobSet template, shared, under the TrainJob's name."""
        metadata = {"name": self.name, "namespace": self.source.namespace}
        root = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": metadata}
        tree = Tree(root, injected(SET_BY_CONTROLLER))
        tree.adopt(metadata)
        if self.job is not None:
            tree.mark(("metadata", "name"), Origin(self.job, ("metadata", "name")))
            written = "namespace" in mapping(self.job.body.get("metadata"))
            tree.mark(("metadata", "namespace"), Origin(self.job, ("metadata", "namespace"))
                      if written else injected("default (the namespace it is applied in)"))
        if self.runtime is not None:
            template = dig(self.runtime.body, *TEMPLATE, "spec")
            root["spec"] = template if isinstance(template, dict) else {}
            tree.mark(("spec",), Origin(self.runtime, (*TEMPLATE, "spec")))
        else:
            root["spec"] = _stand_in()
            tree.adopt(root["spec"])
            tree.mark(("spec",), injected("assumed: the runtime is unknown, so only what the "
                                          "TrainJob says is rendered"))
        return tree

    def _propagate_metadata(self) -> None:
        """The JobSet's labels and annotations: the runtime template's, then the TrainJob's
        `spec.labels` (up to v2.1) or its patches' template metadata (v2.2+)."""
        for key in ("labels", "annotations"):
            sources: list[tuple[dict[str, Any], Origin]] = []
            if self.runtime is not None:
                path = (*TEMPLATE, "metadata", key)
                sources.append((mapping(dig(self.runtime.body, *path)), Origin(self.runtime, path)))
            if self.job is not None and self.version <= (2, 1):
                sources.append((mapping(self.spec.get(key)), Origin(self.job, ("spec", key))))
            elif self.job is not None:
                for index, patch in mappings(self.spec.get("runtimePatches")):
                    path = ("spec", "runtimePatches", index, "trainingRuntimeSpec", "template",
                            "metadata", key)
                    sources.append((mapping(dig(patch, *path[3:])), Origin(self.job, path)))
            for values, at in sources:
                if not values:
                    continue
                if self.tree.get(("metadata", key)) is None:
                    # The first is taken whole, shared: its keys' origins follow from its
                    # own, and a later source copies it before changing it.
                    self.tree.put(("metadata", key), values, at)
                    continue
                for name, value in values.items():
                    self.tree.put(("metadata", key, name), value, within(at, name))

    def _merge_overrides(self) -> None:
        """The TrainJob's podSpecOverrides (v2.0), podTemplateOverrides (v2.1) or
        runtimePatches (v2.2+), merged in order as the controller merges them."""
        if self.job is None:
            return
        jobs = self.tree.get(JOBS)
        names = [job.get("name") for _, job in mappings(jobs)]
        if self.version == (2, 0):
            for index, override in mappings(self.spec.get("podSpecOverrides")):
                at = Origin(self.job, ("spec", "podSpecOverrides", index))
                patch = pruned(override, _POD_SPEC_OVERRIDE)
                for position in _targeted(override, names):
                    merge(self.tree, (*JOBS, position, *POD_SPEC), patch, at, "PodSpec")
        elif self.version == (2, 1):
            for index, override in mappings(self.spec.get("podTemplateOverrides")):
                at = Origin(self.job, ("spec", "podTemplateOverrides", index))
                patch = pruned(override, {"metadata": _META, "spec": _POD_TEMPLATE_OVERRIDE_SPEC})
                for position in _targeted(override, names):
                    path = (*JOBS, position, *POD_SPEC[:-1])
                    merge(self.tree, path, patch, at, "PodTemplateSpec")
        else:
            self._merge_patches(names)

    def _merge_patches(self, names: list[Any]) -> None:
        assert self.job is not None
        shape = _job_template_patch(self.version)
        for index, _ in mappings(self.spec.get("runtimePatches")):
            spec_path = ("spec", "runtimePatches", index, "trainingRuntimeSpec", "template", "spec")
            spec = dig(self.job.body, *spec_path)
            if not isinstance(spec, dict):
                continue
            at = Origin(self.job, spec_path)
            patched = [
                (position, item) for position, item in mappings(spec.get("replicatedJobs"))
            ]
            if self.version >= (2, 3):
                # One merge of the whole JobSet spec: replicatedJobs merge by name, and a
                # name the runtime lacks is appended as a job of its own.
                jobs = [
                    {key: pruned(value, shape) if key == "template" else value
                     for key, value in item.items() if key in ("name", "template")}
                    for _, item in patched
                ]
                merge(self.tree, ("spec",), {"replicatedJobs": jobs}, at, "JobSetSpec")
                continue
            for position, item in patched:
                if not isinstance(item.get("template"), dict):
                    continue
                there = within(at, "replicatedJobs", position, "template")
                template = pruned(item["template"], shape)
                for target, name in enumerate(names):
                    if name == item.get("name"):
                        merge(self.tree, (*JOBS, target, "template"), template, there,
                              "JobTemplateSpec")
        if self.version >= (2, 3):
            # The controller puts the jobs back in the runtime's order (a new one sorts
            # with the first).
            merged = [string(job.get("name")) for _, job in mappings(self.tree.get(JOBS))]
            place = {name: position for position, name in enumerate(names)
                     if isinstance(name, str)}
            order = sorted(range(len(merged)), key=lambda item: place.get(merged[item], 0))
            if order != list(range(len(merged))):
                self.tree.reorder(JOBS, order)

    def _read_pod_sets(self) -> None:
        """Each replicatedJob's ancestor label and pod count, read after the merge: the
        job's parallelism, or for the trainer of a runtime with an mlPolicy its
        `numNodes` (1 when unset)."""
        for index, job in mappings(self.tree.get(JOBS)):
            labels = mapping(dig(job, "template", "metadata", "labels"))
            label = labels.get(ANCESTOR_LABEL)
            ancestor = str(label) if label is not None else None
            parallelism = dig(job, "template", "spec", "parallelism")
            if is_count(parallelism):
                count, at = parallelism, self.tree.origin((*JOBS, index, "template", "spec",
                                                            "parallelism"))
            else:
                count, at = 1, injected(f"{SET_BY_CONTROLLER} (the job sets no parallelism)")
            if ancestor == TRAINER and self.ml_policy is not None:
                nodes = self.ml_policy.get("numNodes")
                count = nodes if is_count(nodes) else 1
                at = (self.runtime_at("spec", "mlPolicy", "numNodes") if is_count(nodes)
                      else injected(f"{SET_BY_CONTROLLER} (the runtime sets no numNodes)"))
            self.ancestors[index] = ancestor
            self.counts[index] = (max(count, 1), at)

    def set_count(self, index: int, count: object, at: Origin) -> None:
        if is_count(count):
            self.counts[index] = (count, at)

    def _merge_resources(self) -> None:
        """v2.3+: `resourcesPerNode` merged key by key into the trainer's `node` container
        (only when the runtime has an mlPolicy), and into the job named `node` of an MPI
        runtime that runs its launcher as a node."""
        given = self.trainer.get("resourcesPerNode")
        if not isinstance(given, dict):
            return
        for index, job in mappings(self.tree.get(JOBS)):
            trainer = self.ancestors.get(index) == TRAINER and self.ml_policy is not None
            if not (trainer or (self.launcher_as_node and job.get("name") == "node")):
                continue
            for position, container in mappings(dig(job, *POD_SPEC, "containers")):
                if container.get("name") != "node":
                    continue
                path = (*JOBS, index, *POD_SPEC, "containers", position, "resources")
                own = mapping(container.get("resources"))
                kept = {part: own[part] for part in ("limits", "requests") if part in own}
                self.tree.put(path, self.tree.adopt(kept), self.tree.origin(path))
                for part in ("limits", "requests"):
                    for name, amount in mapping(given.get(part)).items():
                        self.tree.put((*path, part, name), amount,
                                      self.trainer_at("resourcesPerNode", part, name))
                break

    @property
    def launcher_as_node(self) -> bool:
        mpi = mapping(mapping(self.ml_policy).get("mpi"))
        return self.framework == "mpi" and mpi.get("runLauncherAsNode") is True

    def _sync_counts(self) -> None:
        """Every replicatedJob's parallelism and completions become its pod count; before
        v2.1, every job labelled trainer takes the count of the first one, last of all."""
        trainers = [index for index, ancestor in self.ancestors.items() if ancestor == TRAINER]
        if self.version < (2, 1):
            for index in trainers[1:]:
                self.counts[index] = self.counts[trainers[0]]
        for index, (count, at) in self.counts.items():
            spec = (*JOBS, index, "template", "spec")
            written = mapping(self.tree.get(spec))
            changed = [(key, count, at) for key in ("parallelism", "completions")
                       if written.get(key) != count or self.tree.origin((*spec, key)) != at]
            if changed:
                self.tree.put_keys(spec, changed)

    def _fill_initializers(self) -> None:
        """A job labelled `dataset-initializer` or `model-initializer` runs one replica;
        its container of the same name gets `STORAGE_URI`, the env and the secret."""
        initializer = mapping(self.spec.get("initializer"))
        for index, job in mappings(self.tree.get(JOBS)):
            ancestor = self.ancestors.get(index)
            if ancestor not in INITIALIZERS:
                continue
            self.tree.put((*JOBS, index, "replicas"), 1, injected(
                f"{SET_BY_CONTROLLER} for the `{ancestor}` job"))
            key = ancestor.split("-")[0]
            source = initializer.get(key)
            if not isinstance(source, dict) or self.job is None:
                continue
            at = Origin(self.job, ("spec", "initializer", key))
            for position, container in mappings(dig(job, *POD_SPEC, "containers")):
                if container.get("name") != ancestor:
                    continue
                path = (*JOBS, index, *POD_SPEC, "containers", position)
                uri = source.get("storageUri")
                if isinstance(uri, str):
                    self.upsert_env(path, {"name": "STORAGE_URI", "value": uri},
                                    injected(SET_BY_CONTROLLER, within(at, "storageUri")))
                self.upsert_envs(path, source.get("env"), within(at, "env"))
                secret = dig(source, "secretRef", "name")
                if isinstance(secret, str):
                    self._upsert((*path, "envFrom"), {"secretRef": {"name": secret}},
                                 within(at, "secretRef"), None)

    def _fill_trainer(self) -> None:
        """The trainer jobs run one replica; their `node` container takes the TrainJob's
        image, command and args, and its env (also the job named `node` of an MPI runtime
        that runs its launcher as a node, from v2.1); up to v2.2 `resourcesPerNode`
        replaces its resources."""
        for index, job in mappings(self.tree.get(JOBS)):
            trainer = self.ancestors.get(index) == TRAINER
            if trainer:
                self.tree.put((*JOBS, index, "replicas"), 1,
                              injected(f"{SET_BY_CONTROLLER} for the trainer job"))
            launcher_node = (
                self.version >= (2, 1) and self.launcher_as_node and job.get("name") == "node"
            )
            if not (trainer or launcher_node) or not self.has_trainer:
                continue
            for position, container in mappings(dig(job, *POD_SPEC, "containers")):
                if container.get("name") != "node":
                    continue
                path = (*JOBS, index, *POD_SPEC, "containers", position)
                if trainer:
                    given = [(key, value, self.filled_at.get(key, self.trainer_at(key)))
                             for key in ("image", "command", "args")
                             if (value := self.filled.get(key, self.trainer.get(key))) is not None]
                    if given:
                        self.tree.put_keys(path, given)
                if self.version <= (2, 2):
                    self._replace_resources(path)
                self.upsert_envs(path, self.trainer.get("env"), self.trainer_at("env"))

    def _replace_resources(self, path: KeyPath) -> None:
        given = self.trainer.get("resourcesPerNode")
        if not isinstance(given, dict) or not ({"limits", "requests"} & set(given)):
            return
        kept = {part: given[part] for part in ("limits", "requests") if part in given}
        self.tree.put((*path, "resources"), kept, self.trainer_at("resourcesPerNode"))

    def _label_pods(self) -> None:
        """The gang-scheduling plugins' pod labels and annotations, on every pod."""
        for key, values in (("labels", self.pod_labels), ("annotations", self.pod_annotations)):
            for index, _ in mappings(self.tree.get(JOBS)):
                for name, (value, at) in values.items():
                    path = (*JOBS, index, "template", "spec", "template", "metadata", key, name)
                    self.tree.put(path, value, at)

    def _suspend(self) -> None:
        """The JobSet is suspended exactly when the TrainJob is (false by default)."""
        if self.job is None:
            return
        suspend = self.spec.get("suspend")
        at = (Origin(self.job, ("spec", "suspend")) if "suspend" in self.spec
              else injected("default (TrainJob)"))
        self.tree.put(("spec", "suspend"), suspend if isinstance(suspend, bool) else False, at)

    # --- helpers the plugins use ---

    def upsert_env(self, container: KeyPath, variable: dict[str, Any], at: Origin) -> None:
        """Set an env variable by name in place, or append it (`apply.UpsertEnvVars`)."""
        self._upsert((*container, "env"), variable, at, "name")

    def upsert_envs(self, container: KeyPath, variables: object, at: Origin) -> None:
        """`upsert_env` for each variable of a list written at `at`."""
        self.upsert_env_items(container, (
            (variable, None, index) for index, variable in mappings(variables)
        ), at)

    def upsert_env_items(
        self, container: KeyPath, items: Iterable[tuple[Any, Origin | None, int]],
        at: Origin = _NOWHERE,
    ) -> None:
        """`upsert_env` for each (variable, its origin, index), in order, in one pass: an
        origin None is the `index`-th item of the list written at `at`."""
        path = (*container, "env")
        found = self.tree.get(path)
        written = isinstance(found, list)
        if not written:
            found = []
        # Where each name is (the first of its name: upserts replace that one).
        where: dict[str, int] = {}
        for position, old in enumerate(found):
            if isinstance(old, dict) and isinstance(old.get("name"), str):
                where.setdefault(old["name"], position)
        changes: list[tuple[int, Any, Origin]] = []
        replaced: set[int] = set()
        size = len(found)
        for variable, origin, index in items:
            name = variable.get("name")
            if not isinstance(name, str):
                continue
            known = where.get(name)
            if known is not None and known < len(found) and found[known] is variable:
                continue  # set by the same key before (the torch plugin, then the builder)
            there = within(at, index) if origin is None else origin
            if known is None:
                known = where[name] = size
                size += 1
            elif known < len(found) and known not in replaced:
                replaced.add(known)
                self._replacing(path, known, found[known], variable, there)
            changes.append((known, variable, there))
        if changes:
            if not written:
                self.tree.put(path, self.tree.adopt([]), changes[0][2])
            self.tree.put_items(path, changes)

    def upsert_mount(self, container: KeyPath, mount: dict[str, Any], at: Origin) -> None:
        self._upsert((*container, "volumeMounts"), mount, at, "mountPath")

    def upsert_volume(self, job: int, volume: dict[str, Any], at: Origin) -> None:
        self._upsert((*JOBS, job, *POD_SPEC, "volumes"), volume, at, "name")

    def upsert_port(self, container: KeyPath, port: int, at: Origin) -> None:
        path = (*container, "ports")
        found = self.tree.get(path)
        items = found if isinstance(found, list) else []
        if any(isinstance(item, dict) and item.get("containerPort") == port for item in items):
            return
        self._upsert(path, {"containerPort": port}, at, "containerPort")

    def _upsert(self, path: KeyPath, item: dict[str, Any], at: Origin, key: str | None) -> None:
        """Replace the item of the list at `path` with the same `key`, or append it (always
        when `key` is None)."""
        found = self.tree.get(path)
        if not isinstance(found, list):
            self.tree.put(path, self.tree.adopt([]), at)
            found = []
        index = len(found)
        if key is not None:
            wanted = item.get(key)
            for position, old in enumerate(found):
                if isinstance(old, dict) and old.get(key) == wanted:
                    index = position
                    break
        self._set(path, index, item, at)

    def _set(self, path: KeyPath, index: int, item: dict[str, Any], at: Origin) -> None:
        """Put `item` at `index` of the list at `path` (one past its end appends),
        remembering a plugin's value a TrainJob's replaces."""
        found = self.tree.get(path)
        if index < len(found):
            self._replacing(path, index, found[index], item, at)
        self.tree.put((*path, index), item, at)

    def _replacing(self, path: KeyPath, index: int, old: Any, item: Any, at: Origin) -> None:
        """Remember a plugin's value that a TrainJob's (`item`, written at `at`) replaces."""
        if old != item and at.note is None:
            before = self.tree.origin((*path, index))
            if before.note is not None and before.note.startswith("injected by"):
                self.result.replaced.append(((*path, index), old, before))




def _framework(policy: dict[str, Any] | None, version: Version) -> str:
    """The ML policy plugin that acts: the first policy the release knows, else plainml."""
    known = ("torch", "mpi") if version <= (2, 1) else ("torch", "mpi", "jax", "xgboost", "flux")
    for name in known:
        if policy is not None and name in policy:
            return name
    return "plainml"


def _targeted(override: dict[str, Any], names: list[Any]) -> list[int]:
    """The indexes of the runtime jobs an override's `targetJobs` names."""
    targets = {name for _, target in mappings(override.get("targetJobs"))
               for name in [target.get("name")] if isinstance(name, str)}
    return [index for index, name in enumerate(names) if name in targets]


def _stand_in() -> dict[str, Any]:
    """The JobSet spec a TrainJob is rendered on when its runtime is unknown: the trainer
    job the controller looks for, `node` with its `node` container, and nothing else."""
    return {"replicatedJobs": [{
        "name": "node",
        "template": {
            "metadata": {"labels": {ANCESTOR_LABEL: TRAINER}},
            "spec": {"template": {"spec": {"containers": [{"name": "node"}]}}},
        },
    }]}



def render(job: Manifest | None, runtime: Manifest | None, version: Version) -> Render:
    """The JobSet the controller of `version` builds for `job` on `runtime`."""
    if job is None and runtime is None:
        raise ValueError("a render needs a TrainJob or a runtime")
    return _Build(job, runtime, version).run()
