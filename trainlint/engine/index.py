"""The index: the objects of one run that rules look up, and what identifies each one's
answer across runs (the cache checks a stored result against these digests)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Generic, TypeVar

from trainlint.digest import blake2b
from trainlint.document import Manifest, StandIn, mapping, string
from trainlint.kinds import (
    CLUSTER_SCOPED,
    LOOKED_UP_KINDS,
    RUNTIME_KINDS,
    TRAINER_GROUP,
    object_kind,
)
from trainlint.release import TrainerVersion, format_version, parse_version

#: Where the objects of a run of the command line come from, as messages name it.
FILES = "the checked files or their context"
T = TypeVar("T")
#: Fetches the whole object a stand-in stands for (None: it can no longer be read).
Fetch = Callable[[StandIn], Manifest | None]


class Index:
    """The objects of one run that rules refer to: the inputs, then the context (objects
    known but never checked: `--context` files, the cluster's, or in the webhook the
    cluster's cache), and on demand the runtimes a Trainer release installs.

    An object may be known by its stand-in only (`StandIn`: read by another process, or
    let go once checked): what look-ups read of it is there, and a look-up of one object
    (a TrainJob's runtime, a claim) gives the whole object, got back by `fetch`."""

    def __init__(
        self, manifests: Iterable[Manifest], context: Iterable[Manifest] = (), *,
        where: str = FILES, previous: Mapping[int, Manifest] | None = None,
        fetch: Fetch | None = None,
    ) -> None:
        self._objects: dict[tuple[str, str, str], Manifest] = {}
        #: The objects as they were before the change under check (`--base REV`, the
        #: webhook's `oldObject`), by the id of the object each one was (`pair`).
        self._previous = previous or {}
        #: What look-ups that many objects answer find: the TrainJobs that use a runtime
        #: (by `runtime_key`), the runtimes and the claims of a name, every claim.
        self._users: _Answers[tuple[str, str, str]] = _Answers()
        self._runtimes_by_name: _Answers[str] = _Answers()
        self._claims: _Answers[str] = _Answers()
        self._claims_by_name: _Answers[str] = _Answers()
        self._answer_digests: dict[tuple[str, ...], str] = {}
        #: Where the objects come from, as messages name it (`the cluster`).
        self.where = where
        self._fetch = fetch
        #: What rules derive from an object (its trainer pod...), computed once per object
        #: checked.
        self.memo: dict[tuple[Any, ...], Any] = {}
        #: What `per_run` worked out for the whole run: (object, value, look-ups made).
        self._per_run: dict[tuple[Any, ...], tuple[Manifest, Any, dict[str, str] | None]] = {}
        #: What `per_run(recent=True)` worked out or was asked for lately, the least
        #: recently asked first (dicts keep their order): kept only while it is one of the
        #: last `RECENT`.
        self._recent: dict[tuple[Any, ...], tuple[Manifest, Any, dict[str, str] | None]] = {}
        #: While not None, every look-up is recorded here as dependency → digest of the
        #: answer, so a cached result can later be checked against the objects it read.
        self.looked_up: dict[str, str] | None = None
        #: Whether an input found by its key is the run's for good: inputs are added in
        #: the run's order, so a later one of the same key never takes its place, and the
        #: look-up is not recorded (nothing keeps it for a later run). What is not found,
        #: what many objects answer, and a context object (which an input read later
        #: displaces) may still change and are recorded all the same.
        self.lasting = False
        #: With `lasting`, whether an input found by its key is recorded all the same, as
        #: found for good (`FOUND`): a process that reads only some of the inputs found the
        #: run's object unless another input has its key (`collisions`). One that reads
        #: them all in the run's order need not: the first input of a key stays.
        self.marking = False
        #: The keys two inputs share (the first added is the one found).
        self.collisions: set[tuple[str, str, str]] = set()
        #: What identifies each object (by `id`) across runs, set by whoever records
        #: look-ups: its file's content digest and its place in the file (`identify`), or
        #: for stand-ins of a cached file, what was stored.
        self.digests: dict[int, str] = {}
        #: The digest of each file whose objects are known by it (`add`).
        self._contents: dict[str, str] = {}
        #: The context objects, and the place of each (by `id`): (`CONTEXT`, its number).
        self.context = list(context)
        self._context: dict[int, tuple[int, int]] = {}
        #: The TrainJobs of the inputs, by namespace and name; those of the context, each
        #: until an input of its name takes its place.
        self._checked: set[tuple[str, str]] = set()
        self._context_jobs: dict[tuple[str, str], list[Manifest]] = defaultdict(list)
        for manifest in manifests:
            self._add(manifest)
        for number, manifest in enumerate(self.context):
            # A context TrainJob that is also an input is an older copy of it: the input
            # stands for it (a TrainJob never shares a directory with itself).
            if object_kind(manifest) != "TrainJob" or (
                (manifest.namespace, manifest.name) not in self._checked
            ):
                self._context[id(manifest)] = (CONTEXT, number)
                self._add(manifest)

    def add(
        self, manifest: Manifest, identity: str | None = None, *, content: str | None = None
    ) -> None:
        """Add an input once the index is made (a run that indexes files as it reads
        them), known across runs by `identity` (`identify`), or by the digest of its
        file's `content`, from which its identity is made when an answer needs it (an
        index of a long stream keeps one digest, not one identity per object)."""
        displaced = self._add(manifest)
        if identity is not None:
            self.digests[id(manifest)] = identity
        elif content is not None:
            self._contents[manifest.source.name] = content
        if self._answer_digests:  # the answers the object may change are worked out again
            for dependency in [*self._finding(manifest),
                               *(found for held in displaced for found in self._finding(held))]:
                self._answer_digests.pop(dependency, None)

    def _finding(self, manifest: Manifest) -> list[tuple[str, ...]]:
        """The look-ups whose answer may hold `manifest`."""
        kind = object_kind(manifest)
        found: list[tuple[str, ...]] = [self.key_of(manifest)]
        if kind in RUNTIME_KINDS:
            found.append(("named", manifest.name))
        elif kind == "PersistentVolumeClaim":
            found += [("claims-named", manifest.name), ("any-claims",)]
        elif kind == "TrainJob":
            key = self.runtime_key(manifest)
            found += [("users", *key), ("context-users", *key)]
        return found

    def _add(self, manifest: Manifest) -> list[Manifest]:
        """Index an input, or a context object (placed in `_context` first). The inputs
        come before the context, whenever they are added (`add`, once the context is
        known): an input takes the place of the context object of its key, and of the
        context's copy of its TrainJob, as in an index given every input at once. The
        context objects it displaces."""
        kind = object_kind(manifest)
        context = id(manifest) in self._context
        displaced: list[Manifest] = []
        if kind in LOOKED_UP_KINDS:
            key = self._key(kind, manifest.namespace, manifest.name)
            held = self._objects.setdefault(key, manifest)
            if held is not manifest:
                if context or id(held) not in self._context:
                    if not context:
                        self.collisions.add(key)
                    return displaced  # the first input (or context object) of a key stays
                self._objects[key] = manifest
                displaced.append(held)
            if kind in RUNTIME_KINDS:
                self._runtimes_by_name.add(manifest.name, manifest, context, displaced)
            elif kind == "PersistentVolumeClaim":
                self._claims.add("", manifest, context, displaced)
                self._claims_by_name.add(manifest.name, manifest, context, displaced)
        elif kind == "TrainJob":
            name = (manifest.namespace, manifest.name)
            if context:
                self._context_jobs[name].append(manifest)
            else:
                self._checked.add(name)
                displaced = self._context_jobs.pop(name, [])
                for copy in displaced:
                    self._users.drop(self.runtime_key(copy), copy)
            self._users.add(self.runtime_key(manifest), manifest, context)
        return displaced

    @staticmethod
    def _key(kind: str, namespace: str, name: str) -> tuple[str, str, str]:
        return kind, "" if kind in CLUSTER_SCOPED else namespace, name

    @classmethod
    def key_of(cls, manifest: Manifest) -> tuple[str, str, str]:
        """What finds an object (kind, namespace unless cluster-scoped, name): a runtime's
        is what `runtime_key` of each TrainJob that uses it gives."""
        return cls._key(manifest.kind, manifest.namespace, manifest.name)

    def previous(self, manifest: Manifest) -> Manifest | None:
        """The object as it was before the change; None for a new object, or when no
        previous state is known. (Runs that compare with previous objects are not cached:
        nothing records this look-up.)"""
        return self._previous.get(id(manifest))

    def runtime_key(self, job: Manifest) -> tuple[str, str, str]:
        """What `spec.runtimeRef` names; kind defaults to ClusterTrainingRuntime."""
        ref = mapping(mapping(job.body.get("spec")).get("runtimeRef"))
        kind = string(ref.get("kind")) or "ClusterTrainingRuntime"
        group = string(ref.get("apiGroup")) or TRAINER_GROUP
        name = string(ref.get("name"))
        if group != TRAINER_GROUP or kind not in RUNTIME_KINDS:
            kind = f"unsupported:{kind}.{group}"
        return self._key(str(kind), job.namespace, str(name))

    def per_object(
        self, name: str, what: tuple[Any, ...], of: Manifest, build: Callable[[], T]
    ) -> T:
        """What `build` derives from `of` (the memo `name`, and `what`), kept while `of` is
        checked (the engine empties `memo` before each object). The entry holds `of`, so an
        id reused after it is freed never finds it."""
        key = (id(of), name, what)
        kept: tuple[Manifest, T] | None = self.memo.get(key)
        if kept is None or kept[0] is not of:
            kept = self.memo[key] = (of, build())
        return kept[1]

    def complete(self) -> None:
        """Every input is in: a look-up is recorded like any other (`lasting` ends), and
        what `per_run` derived while some inputs were missing is worked out again."""
        self.lasting = False
        self._per_run.clear()
        self._recent.clear()

    def per_run(
        self, of: Manifest, what: tuple[Any, ...], build: Callable[[], T], *,
        recent: bool = False,
    ) -> T:
        """What `build` derives from `of` (named `what`), worked out once per run: a runtime
        that many TrainJobs use is looked at once, not once per TrainJob.

        `build` starts from an empty memo, so the look-ups it makes are all recorded, and
        they are recorded again for every object that asks: a cached result still names
        everything it depends on. With `recent`, what is built is kept only while it is
        one of the last `RECENT` such results asked for (a large result that the objects
        checked close together ask for, such as a runtime's render, which each of its
        TrainJobs asks)."""
        key = (id(of), *what)  # the entry holds `of`: its id is not reused during the run
        kept = self._recent if recent else self._per_run
        entry = kept.get(key)
        if entry is None:
            memo, looked_up = self.memo, self.looked_up
            self.memo, self.looked_up = {}, None if looked_up is None else {}
            try:
                built, recorded = build(), self.looked_up
            finally:
                self.memo, self.looked_up = memo, looked_up
            entry = kept[key] = (of, built, recorded)
            if recent and len(kept) > RECENT:
                del kept[next(iter(kept))]
        elif recent:  # asked again: now the most recent
            kept[key] = kept.pop(key)
        if self.looked_up is not None and entry[2] is not None:
            self.looked_up.update(entry[2])
        value: T = entry[1]
        return value

    def runtime_for(
        self, job: Manifest, bundled: TrainerVersion | None = None
    ) -> Manifest | None:
        """The runtime a TrainJob references, when it is among the known objects; with
        `bundled`, else the ClusterTrainingRuntime of that name the release installs
        (looked up once per object checked: most rules of a TrainJob ask)."""
        key = ("runtime-for", id(job), bundled)
        if key not in self.memo:
            wanted = self.runtime_key(job)
            found = self._one(wanted)
            if found is None and bundled is not None and wanted[0] == "ClusterTrainingRuntime":
                found = self._one(("bundled", format_version(bundled), wanted[2]))
            self.memo[key] = found
        runtime: Manifest | None = self.memo[key]
        return runtime

    def runtime_unknown(self, job: Manifest, bundled: TrainerVersion | None = None) -> bool:
        """Whether a TrainJob names a runtime found nowhere, so that no check that needs
        the runtime was made (a runtime of that name of another kind or namespace is
        TL101's finding, not unknown)."""
        kind, _, name = self.runtime_key(job)
        if not name or kind not in RUNTIME_KINDS:
            return False  # nothing to look up, or TL101 reports an unsupported reference
        return self.runtime_for(job, bundled) is None and not self.runtimes_named(name)

    def runtimes_named(self, name: str) -> list[Manifest]:
        """Every runtime of the run with this name, of either kind, in any namespace."""
        return self._many(("named", name))

    def trainjobs_using(self, runtime: Manifest) -> list[Manifest]:
        return self._many(("users", *self.key_of(runtime)))

    def context_users(self, runtime: Manifest) -> list[Manifest]:
        """The TrainJobs of the context (not checked) that use this runtime: their facts
        are the runtime's to gather (a look-up of its own, so that a checked TrainJob
        that changes never makes its runtime's entry stale)."""
        return self._many(("context-users", *self.key_of(runtime)))

    def context_order(self, manifest: Manifest) -> tuple[int, int] | None:
        """A context object's place after the run's inputs; None for an input."""
        return self._context.get(id(manifest))

    def claim(self, namespace: str, name: str) -> Manifest | None:
        return self._one(("PersistentVolumeClaim", namespace, name))

    def storage_class(self, name: str) -> Manifest | None:
        return self._one(("StorageClass", "", name))

    def config_map(self, namespace: str, name: str) -> Manifest | None:
        return self._one(("ConfigMap", namespace, name))

    def custom_resource_definition(self, name: str) -> Manifest | None:
        return self._one(("CustomResourceDefinition", "", name))

    def has_claims(self) -> bool:
        """Whether the run has any PersistentVolumeClaim, in any namespace (a look-up of
        its own: which claims they are does not change the answer)."""
        return bool(self._many(("any-claims",)))

    def claims_named(self, name: str) -> list[Manifest]:
        """The PersistentVolumeClaims of the run with this name, in any namespace."""
        return self._many(("claims-named", name))

    def answer(self, dependency: tuple[str, ...]) -> list[Manifest]:
        """What a look-up (`("named", name)`, `("users", *key)`, `("context-users", *key)`,
        `("any-claims",)` (the first claim, if any),
        `("claims-named", name)`, `("bundled", release, name)` or an object key) finds."""
        by_name = {"named": self._runtimes_by_name, "claims-named": self._claims_by_name}
        if dependency[0] in by_name:
            return by_name[dependency[0]].get(dependency[1])
        if dependency[0] == "users":
            return self._users.get((dependency[1], dependency[2], dependency[3]))
        if dependency[0] == "context-users":
            return self._users.context.get((dependency[1], dependency[2], dependency[3]), [])
        if dependency[0] == "any-claims":
            return self._claims.get("")[:1]
        if dependency[0] == "bundled":
            return self._bundled(dependency[1], dependency[2])
        found = self._objects.get((dependency[0], dependency[1], dependency[2]))
        return [found] if found is not None else []

    @staticmethod
    def _bundled(release: str, name: str) -> list[Manifest]:
        """The runtime of this name the release (`v2.3`) installs, if any."""
        from trainlint import bundled

        found = bundled.runtime(parse_version(release), name)
        return [] if found is None else [found]

    def digest(self, dependency: tuple[str, ...]) -> str:
        """A digest of what a look-up finds, to tell later whether the answer changed."""
        if dependency[0] == "bundled":
            # What a release installs changes only with trainlint itself, which the cache
            # tells apart: the look-up stands for its answer, and nothing is parsed.
            return DEPENDENCY_SEPARATOR.join(dependency)
        if dependency[0] == "any-claims":
            return "some" if self._claims.get("") else "none"  # whichever they are
        if dependency not in self._answer_digests:  # answers do not change during a run
            parts = [self._identity(manifest) for manifest in self.answer(dependency)]
            digest = blake2b("\n".join(parts).encode(), digest_size=16).hexdigest()
            self._answer_digests[dependency] = digest
        return self._answer_digests[dependency]

    def _identity(self, manifest: Manifest) -> str:
        found = self.digests.get(id(manifest))
        return found if found is not None else identify(
            self._contents[manifest.source.name], manifest)

    def _one(self, dependency: tuple[str, ...]) -> Manifest | None:
        found = self.answer(dependency)
        if not found:
            self._record(dependency)
            return None
        if not self.lasting or id(found[0]) in self._context:
            # A context object is the run's for good only once every input is known: an
            # input of its key read later takes its place (`_add`).
            self._record(dependency)
        elif self.marking and self.looked_up is not None:
            self.looked_up[DEPENDENCY_SEPARATOR.join(dependency)] = FOUND
        if isinstance(found[0], StandIn) and self._fetch is not None:
            return self._fetch(found[0])
        return found[0]

    def _many(self, dependency: tuple[str, ...]) -> list[Manifest]:
        self._record(dependency)
        return self.answer(dependency)

    def still_found(self, dependencies: dict[str, str]) -> bool:
        """Whether every look-up recorded elsewhere (`looked_up`: a cache entry, another
        process's check, an editor's last check) finds here what it found then."""
        for dependency, found in dependencies.items():
            parts = tuple(dependency.split(DEPENDENCY_SEPARATOR))
            if parts in self.collisions if found == FOUND else self.digest(parts) != found:
                return False
        return True

    def _record(self, dependency: tuple[str, ...]) -> None:
        if self.looked_up is not None:
            self.looked_up[DEPENDENCY_SEPARATOR.join(dependency)] = self.digest(dependency)


K = TypeVar("K")


class _Answers(Generic[K]):
    """The objects that answer look-ups of many objects, by key: the inputs' (in the
    order they are added), then the context's."""

    def __init__(self) -> None:
        self.inputs: dict[K, list[Manifest]] = defaultdict(list)
        self.context: dict[K, list[Manifest]] = defaultdict(list)

    def add(
        self, key: K, manifest: Manifest, context: bool, displaced: Iterable[Manifest] = ()
    ) -> None:
        """Add an input (or a context object), in place of the context objects it
        `displaced`."""
        for held in displaced:
            self.drop(key, held)
        (self.context if context else self.inputs)[key].append(manifest)

    def drop(self, key: K, manifest: Manifest) -> None:
        """A context object displaced by an input."""
        found = self.context.get(key, [])
        found[:] = [held for held in found if held is not manifest]

    def get(self, key: K) -> list[Manifest]:
        inputs, context = self.inputs.get(key), self.context.get(key)
        if not context:
            return inputs or []
        return [*inputs, *context] if inputs else context


#: Where context objects stand in the run's order (`Index.context_order`): after every
#: input, in the order the context gives them.
CONTEXT = 1 << 62
#: How many results of `Index.per_run(recent=True)` are kept.
RECENT = 64

#: Joins the parts of a dependency into one string (a JSON key).
DEPENDENCY_SEPARATOR = "\x1f"
#: What a look-up of an input by its key found, recorded while `Index.marking`: no
#: digest is ever empty. Never cached: only runs without a cache mark.
FOUND = ""


def previous_key(manifest: Manifest) -> tuple[str, str, str, str]:
    """What pairs an object with its previous state: apiVersion, kind, namespace, name."""
    kind = manifest.kind
    namespace = "" if kind in CLUSTER_SCOPED else manifest.namespace
    return manifest.api_version, kind, namespace, manifest.name


def pair(
    manifests: Iterable[Manifest], previous: Iterable[Manifest]
) -> dict[int, Manifest]:
    """The previous state of each object (by its id) that is the only one of its
    `previous_key` among `manifests`, when `previous` has exactly one of that key too.
    Two of a name on either side (overlays of one object) pair nothing: a guess would
    judge an update against another object's state, or take a new object for unchanged.
    An object without a name has none: the API server makes a new one each time."""
    now, before = _by_key(manifests), _by_key(previous)
    return {id(found[0]): before[key][0] for key, found in now.items()
            if len(found) == 1 and len(before.get(key, ())) == 1}


def _by_key(manifests: Iterable[Manifest]) -> dict[tuple[str, str, str, str], list[Manifest]]:
    found: dict[tuple[str, str, str, str], list[Manifest]] = defaultdict(list)
    for manifest in manifests:
        if manifest.name:
            found[previous_key(manifest)].append(manifest)
    return found


def identify(content: str, manifest: Manifest) -> str:
    """What identifies an object across runs: the digest of its file's bytes, and where in
    the file it is. Any change to the file makes it another object: the objects whose
    findings depend on it are checked again, which costs less than a digest of every
    object's data would in every run that records look-ups."""
    return f"{content}/{manifest.document}/{'/'.join(map(str, manifest.base))}"
