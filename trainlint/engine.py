"""The engine: which rules run on which objects, and what their problems become.

`lint` is pure: the CLI, the pre-commit hook and the webhook call it and differ only in
how they render the findings.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import chain
from typing import TYPE_CHECKING, Any, TypeVar

from trainlint.document import Loaded, LoadProblem, Manifest, Path, Source, Span, mapping, string
from trainlint.rule import (
    DOCS_URL,
    NEWEST,
    Fix,
    Options,
    Problem,
    Related,
    Rule,
    Severity,
    TrainerVersion,
    all_rules,
    code_matches,
    format_version,
    named_exactly,
    names_codes,
    parse_version,
)
from trainlint.rule import matches as rule_matches

if TYPE_CHECKING:
    from trainlint import suppression

TRAINER_GROUP = "trainer.kubeflow.org"
TRAINER_KINDS = frozenset({"TrainJob", "TrainingRuntime", "ClusterTrainingRuntime"})
RUNTIME_KINDS = frozenset({"TrainingRuntime", "ClusterTrainingRuntime"})
#: The kinds rules look up by name, besides TrainJobs.
LOOKED_UP_KINDS = RUNTIME_KINDS | {"PersistentVolumeClaim", "StorageClass", "PriorityClass"}
CLUSTER_SCOPED = frozenset({"ClusterTrainingRuntime", "StorageClass", "PriorityClass"})
#: Where the objects of a run of the command line come from, as messages name it.
FILES = "the checked files or their context"
T = TypeVar("T")
#: The Kubernetes release assumed when none is configured: a current 1.3x.
DEFAULT_KUBERNETES_VERSION = "1.33"


def object_kind(manifest: Manifest) -> str:
    """The kind rules dispatch on: Trainer kinds count only in the Trainer API group."""
    kind = manifest.kind
    if kind in TRAINER_KINDS and not manifest.api_version.startswith(f"{TRAINER_GROUP}/"):
        return ""
    return kind


class Index:
    """The objects of one run that rules refer to: the inputs, then the context (objects
    known but never checked: `--context` files, the cluster's, or in the webhook the
    cluster's cache), and on demand the runtimes a Trainer release installs."""

    def __init__(
        self, manifests: Iterable[Manifest], context: Iterable[Manifest] = (), *,
        where: str = FILES, previous: Iterable[Manifest] = (),
    ) -> None:
        self._objects: dict[tuple[str, str, str], Manifest] = {}
        #: The objects as they were before the change under check (`--base REV`, the
        #: webhook's `oldObject`), by `previous_key`.
        self._previous = {previous_key(manifest): manifest for manifest in previous
                          if manifest.name}
        self._users: dict[tuple[str, str, str], list[Manifest]] = defaultdict(list)
        self._trainjobs_by_namespace: dict[str, list[Manifest]] = defaultdict(list)
        self._runtimes_by_name: dict[str, list[Manifest]] = defaultdict(list)
        self._claims: list[Manifest] = []
        self._claims_by_name: dict[str, list[Manifest]] = defaultdict(list)
        self._answer_digests: dict[tuple[str, ...], str] = {}
        #: Where the objects come from, as messages name it (`the cluster`).
        self.where = where
        #: What rules derive from an object (its trainer pod...), computed once per object
        #: checked.
        self.memo: dict[tuple[Any, ...], Any] = {}
        #: What `derived` worked out for the whole run: (object, value, look-ups made).
        self._derived: dict[tuple[Any, ...], tuple[Manifest, Any, dict[str, str] | None]] = {}
        #: What `derived(recent=True)` worked out lately, the oldest first (dicts keep
        #: their order): kept only while it is one of the last `RECENT`.
        self._recent: dict[tuple[Any, ...], tuple[Manifest, Any, dict[str, str] | None]] = {}
        #: While not None, every look-up is recorded here as dependency → digest of the
        #: answer, so a cached result can later be checked against the objects it read.
        self.looked_up: dict[str, str] | None = None
        #: What identifies each object (by `id`) across runs, set by whoever records
        #: look-ups: its file's content digest and its place in the file (`identify`), or
        #: for stand-ins of a cached file, what was stored.
        self.digests: dict[int, str] = {}
        checked: set[tuple[str, str]] = set()
        for manifest in manifests:
            self._add(manifest)
            if object_kind(manifest) == "TrainJob":
                checked.add((manifest.namespace, manifest.name))
        for manifest in context:
            # A context TrainJob that is also an input is an older copy of it: the input
            # stands for it (a TrainJob never shares a directory with itself).
            if object_kind(manifest) != "TrainJob" or (
                (manifest.namespace, manifest.name) not in checked
            ):
                self._add(manifest)

    def _add(self, manifest: Manifest) -> None:
        kind = object_kind(manifest)
        if kind in LOOKED_UP_KINDS:
            key = self._key(kind, manifest.namespace, manifest.name)
            if self._objects.setdefault(key, manifest) is not manifest:
                return
            if kind in RUNTIME_KINDS:
                self._runtimes_by_name[manifest.name].append(manifest)
            elif kind == "PersistentVolumeClaim":
                self._claims.append(manifest)
                self._claims_by_name[manifest.name].append(manifest)
        elif kind == "TrainJob":
            self._users[self.runtime_key(manifest)].append(manifest)
            self._trainjobs_by_namespace[manifest.namespace].append(manifest)

    @staticmethod
    def _key(kind: str, namespace: str, name: str) -> tuple[str, str, str]:
        return kind, "" if kind in CLUSTER_SCOPED else namespace, name

    def previous(self, manifest: Manifest) -> Manifest | None:
        """The object as it was before the change (same apiVersion, kind, namespace and
        name); None for a new object, or when no previous state is known. (Runs that
        compare with previous objects are not cached: nothing records this look-up.)"""
        return self._previous.get(previous_key(manifest)) if manifest.name else None

    def runtime_key(self, job: Manifest) -> tuple[str, str, str]:
        """What `spec.runtimeRef` names; kind defaults to ClusterTrainingRuntime."""
        ref = mapping(mapping(job.body.get("spec")).get("runtimeRef"))
        kind = string(ref.get("kind")) or "ClusterTrainingRuntime"
        group = string(ref.get("apiGroup")) or TRAINER_GROUP
        name = string(ref.get("name"))
        if group != TRAINER_GROUP or kind not in RUNTIME_KINDS:
            kind = f"unsupported:{kind}.{group}"
        return self._key(str(kind), job.namespace, str(name))

    def derived(
        self, of: Manifest, what: tuple[Any, ...], build: Callable[[], T],
        summary: Iterable[tuple[str, ...]] | None = None, *, recent: bool = False,
    ) -> T:
        """What `build` derives from `of` (named `what`), worked out once per run: a runtime
        that many TrainJobs use is looked at once, not once per TrainJob.

        `build` starts from an empty memo, so the look-ups it makes are all recorded, and
        they are recorded again for every object that asks: a cached result still names
        everything it depends on. With `summary`, these look-ups are recorded instead of
        the build's own: they must find everything the build reads (a result over a whole
        namespace would otherwise tie each of its objects to every look-up made for every
        other one). With `recent`, what is built is kept only while it is one of the last
        `RECENT` such results (a large result that a few objects checked close together
        ask for, such as a TrainJob's render: its own rules, and its runtime's)."""
        key = (id(of), *what)  # the entry holds `of`: its id is not reused during the run
        kept = self._recent if recent else self._derived
        entry = kept.get(key)
        if entry is None:
            memo, looked_up = self.memo, self.looked_up
            self.memo, self.looked_up = {}, None if looked_up is None else {}
            try:
                built, recorded = build(), self.looked_up
            finally:
                self.memo, self.looked_up = memo, looked_up
            if recorded is not None and summary:  # what was built inside keeps its own
                recorded = {DEPENDENCY_SEPARATOR.join(part): self.digest(part) for part in summary}
            entry = kept[key] = (of, built, recorded)
            if recent and len(kept) > RECENT:
                del kept[next(iter(kept))]
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
        key = self._key(runtime.kind, runtime.namespace, runtime.name)
        return self._many(("users", *key))

    def trainjobs_in(self, namespace: str) -> list[Manifest]:
        """Every TrainJob of the run in this namespace, whatever its runtime."""
        return self._many(("trainjobs-in", namespace))

    def claim(self, namespace: str, name: str) -> Manifest | None:
        return self._one(("PersistentVolumeClaim", namespace, name))

    def storage_class(self, name: str) -> Manifest | None:
        return self._one(("StorageClass", "", name))

    def claims(self) -> list[Manifest]:
        """Every PersistentVolumeClaim of the run, in any namespace."""
        return self._many(("claims",))

    def claims_named(self, name: str) -> list[Manifest]:
        """The PersistentVolumeClaims of the run with this name, in any namespace."""
        return self._many(("claims-named", name))

    def answer(self, dependency: tuple[str, ...]) -> list[Manifest]:
        """What a look-up (`("named", name)`, `("users", *key)`, `("trainjobs-in",
        namespace)`, `("runtimes-in", namespace)`, `("claims",)`, `("bundled", release,
        name)` or an object key) finds."""
        by_name = {"named": self._runtimes_by_name, "claims-named": self._claims_by_name}
        if dependency[0] in by_name:
            return by_name[dependency[0]].get(dependency[1], [])
        if dependency[0] == "users":
            return self._users.get((dependency[1], dependency[2], dependency[3]), [])
        if dependency[0] in ("trainjobs-in", "runtimes-in"):
            jobs = self._trainjobs_by_namespace.get(dependency[1], [])
            return jobs if dependency[0] == "trainjobs-in" else self._runtimes_of(jobs)
        if dependency[0] == "claims":
            return self._claims
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

    def _runtimes_of(self, jobs: list[Manifest]) -> list[Manifest]:
        """The runtimes these TrainJobs find, each once."""
        found: dict[int, Manifest] = {}
        for job in jobs:
            runtime = self._objects.get(self.runtime_key(job))
            if runtime is not None:
                found[id(runtime)] = runtime
        return list(found.values())

    def digest(self, dependency: tuple[str, ...]) -> str:
        """A digest of what a look-up finds, to tell later whether the answer changed."""
        import hashlib

        if dependency[0] == "bundled":
            # What a release installs changes only with trainlint itself, which the cache
            # tells apart: the look-up stands for its answer, and nothing is parsed.
            return DEPENDENCY_SEPARATOR.join(dependency)
        if dependency not in self._answer_digests:  # answers do not change during a run
            parts = [self.digests[id(manifest)] for manifest in self.answer(dependency)]
            digest = hashlib.blake2b("\n".join(parts).encode(), digest_size=16).hexdigest()
            self._answer_digests[dependency] = digest
        return self._answer_digests[dependency]

    def _one(self, dependency: tuple[str, ...]) -> Manifest | None:
        found = self.answer(dependency)
        self._record(dependency)
        return found[0] if found else None

    def _many(self, dependency: tuple[str, ...]) -> list[Manifest]:
        self._record(dependency)
        return self.answer(dependency)

    def _record(self, dependency: tuple[str, ...]) -> None:
        if self.looked_up is not None:
            self.looked_up[DEPENDENCY_SEPARATOR.join(dependency)] = self.digest(dependency)


#: How many results of `Index.derived(recent=True)` are kept.
RECENT = 64

#: Joins the parts of a dependency into one string (a JSON key).
DEPENDENCY_SEPARATOR = "\x1f"


def previous_key(manifest: Manifest) -> tuple[str, str, str, str]:
    """What pairs an object with its previous state: apiVersion, kind, namespace, name."""
    kind = manifest.kind
    namespace = "" if kind in CLUSTER_SCOPED else manifest.namespace
    return manifest.api_version, kind, namespace, manifest.name


def identify(content: str, manifest: Manifest) -> str:
    """What identifies an object across runs: the digest of its file's bytes, and where in
    the file it is. Any change to the file makes it another object: the objects whose
    findings depend on it are checked again, which costs less than a digest of every
    object's data would in every run that records look-ups."""
    return f"{content}/{manifest.document}/{'/'.join(map(str, manifest.base))}"


@dataclass(frozen=True)
class Context:
    """What a check may know besides the object: the release, the run, its options."""

    trainer_version: TrainerVersion
    index: Index
    options: Any = None
    #: The cluster's Kubernetes minor release (`1.33`), for the schemas of core objects.
    kubernetes_version: str = DEFAULT_KUBERNETES_VERSION
    #: Device-plugin resource names beyond `trainlint.devices.CATALOGUE`: name → kind.
    device_resources: Mapping[str, str] = field(default_factory=dict)
    #: Whether a runtime the release installs stands in for one no object defines.
    bundled_runtimes: bool = True

    @property
    def bundled(self) -> TrainerVersion | None:
        """The release whose installed runtimes are known, None when they are not."""
        return self.trainer_version if self.bundled_runtimes else None

    def runtime_for(self, job: Manifest) -> Manifest | None:
        return self.index.runtime_for(job, self.bundled)

    def runtime_unknown(self, job: Manifest) -> bool:
        return self.index.runtime_unknown(job, self.bundled)

    def claim(self, namespace: str, name: str) -> Manifest | None:
        return self.index.claim(namespace, name)

    def storage_class(self, name: str) -> Manifest | None:
        return self.index.storage_class(name)

    def trainjobs_using(self, runtime: Manifest) -> list[Manifest]:
        return self.index.trainjobs_using(runtime)

    def trainjobs_in(self, namespace: str) -> list[Manifest]:
        return self.index.trainjobs_in(namespace)

    def previous(self, manifest: Manifest) -> Manifest | None:
        """The object before the change under check (an update), None for a new one."""
        return self.index.previous(manifest)

    @property
    def kubernetes_release(self) -> tuple[int, int]:
        """`kubernetes_version` as numbers: (1, 33)."""
        major, _, minor = self.kubernetes_version.partition(".")
        return int(major), int(minor or 0)


def unchecked(objects: Iterable[tuple[Manifest, Settings]], index: Index) -> dict[str, int]:
    """The runtimes that TrainJobs among `objects` (each with its settings) name but that
    `index` does not know, each with how many TrainJobs name it: those TrainJobs were not
    checked against their runtime, which the run says once rather than as findings."""
    found: dict[str, int] = defaultdict(int)
    for job in unchecked_trainjobs(objects, index):
        found[index.runtime_key(job)[2]] += 1
    return dict(found)


def unchecked_trainjobs(
    objects: Iterable[tuple[Manifest, Settings]], index: Index
) -> Iterator[Manifest]:
    """The TrainJobs among `objects` that name a runtime `index` does not know."""
    for manifest, settings in objects:
        release = settings.trainer_version if settings.bundled_runtimes else None
        if object_kind(manifest) == "TrainJob" and index.runtime_unknown(manifest, release):
            yield manifest


#: Severities from the least to the most serious, for `fail-on`.
SEVERITY_RANK = {Severity.WARNING: 0, Severity.ERROR: 1}


@dataclass(frozen=True)
class Settings:
    """How a run is configured: release, rule selection, severities, options, suppressions."""

    trainer_version: TrainerVersion = NEWEST
    #: The Kubernetes minor release of the cluster (`1.33`), for the schema rules.
    kubernetes_version: str = DEFAULT_KUBERNETES_VERSION
    select: tuple[str, ...] = ("ALL",)
    ignore: tuple[str, ...] = ()
    severities: Mapping[str, Severity] = field(default_factory=dict)
    rule_options: Mapping[str, Options] = field(default_factory=dict)
    #: Honour the object annotation `trainlint.dev/ignore` (a webhook may refuse it).
    annotation_exemptions: bool = True
    #: The least severity that fails a run (exit status 1).
    fail_on: Severity = Severity.WARNING
    #: Rules whose fixes `--fix` may apply (config `fixable`, `unfixable`).
    fixable: tuple[str, ...] = ("ALL",)
    unfixable: tuple[str, ...] = ()
    #: Run the preview rules too (config `preview`, `--preview`); without it a preview rule
    #: runs only when `select` names it by its code or name.
    preview: bool = False
    #: The documentation site findings link their rule's page on (config `docs-url`).
    docs_url: str = DOCS_URL
    #: Device-plugin resource names beyond the catalogue (config `device-resources`).
    device_resources: Mapping[str, str] = field(default_factory=dict)
    #: Whether the runtimes the release installs are known (`bundled-runtimes`): a
    #: cluster that replaced them turns this off.
    bundled_runtimes: bool = True

    @cached_property
    def rules_by_code(self) -> dict[str, Rule]:
        """The enabled rules, by code (read only)."""
        return {rule.code: rule for rule, _ in self.rules_with_options}

    @cached_property
    def rules_by_kind(self) -> dict[str, tuple[tuple[Rule, Options | None], ...]]:
        """The enabled rules and their options, by the kind they check."""
        by_kind: dict[str, list[tuple[Rule, Options | None]]] = defaultdict(list)
        for rule, options in self.rules_with_options:
            for kind in rule.kinds:
                by_kind[kind].append((rule, options))
        return {kind: tuple(rules) for kind, rules in by_kind.items()}

    @cached_property
    def rules_with_options(self) -> tuple[tuple[Rule, Options | None], ...]:
        """The enabled rules and their options, worked out once per Settings (a webhook
        lints every request with the same Settings)."""
        return tuple(
            (rule, self.rule_options.get(rule.code) or (rule.options() if rule.options else None))
            for rule in all_rules().values()
            if rule_matches(rule, self.select)
            and not rule_matches(rule, self.ignore)
            and rule.applies_to(self.trainer_version)
            and (not rule.preview or self.preview or named_exactly(rule, self.select))
        )

    def may_fix(self, code: str) -> bool:
        """Whether `fixable`/`unfixable` let `--fix` apply fixes of this rule (told from the
        code alone when they name codes: a run served from the cache imports no rule)."""
        known = self._may_fix
        if code not in known:
            if names_codes((*self.fixable, *self.unfixable)):
                known[code] = any(
                    code_matches(code, selector) for selector in self.fixable
                ) and not any(code_matches(code, selector) for selector in self.unfixable)
            else:
                known[code] = code in self._fixable_codes
        return known[code]

    @cached_property
    def _may_fix(self) -> dict[str, bool]:
        """`may_fix` by code, as worked out (each finding of a report asks)."""
        return {}

    @cached_property
    def _fixable_codes(self) -> frozenset[str]:
        return frozenset(
            code for code, rule in all_rules().items()
            if rule_matches(rule, self.fixable) and not rule_matches(rule, self.unfixable)
        )

    def fails(self, findings: Iterable[Finding]) -> bool:
        """Whether any finding is at or above `fail_on`."""
        least = SEVERITY_RANK[self.fail_on]
        return any(SEVERITY_RANK[finding.severity] >= least for finding in findings)


@dataclass(frozen=True, slots=True)
class ObjectRef:
    api_version: str
    kind: str
    name: str
    namespace: str | None

    @classmethod
    def of(cls, manifest: Manifest) -> ObjectRef:
        """The object as findings name it: its namespace as written (None when unset)."""
        namespace = mapping(manifest.body.get("metadata")).get("namespace")
        return cls(manifest.api_version, manifest.kind, manifest.name,
                   namespace if isinstance(namespace, str) else None)


@dataclass(frozen=True, slots=True)
class Finding:
    """A problem as users see it: rule, severity, message and position."""

    code: str
    name: str
    severity: Severity
    message: str
    help: str | None
    source: Source
    span: Span
    path: Path
    object: ObjectRef | None
    #: The repair the rule offers, and the object it edits.
    fix: Fix | None = field(default=None, compare=False)
    manifest: Manifest | None = field(default=None, compare=False, repr=False)
    #: The keys of other objects that cause it (the runtime's, for a TrainJob's finding).
    related: tuple[Related, ...] = field(default=(), compare=False, repr=False)

    @property
    def file(self) -> str:
        return self.source.name

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return self.file, self.span.line, self.span.column, self.code, self.message


SettingsFor = Callable[[Source], Settings]
#: Told of a rule that raised on an object, when the run goes on without that rule's
#: findings on it (the language server); without one, the error ends the run.
RuleError = Callable[[Rule, Manifest, Exception], None]


def in_order(per_input: Iterable[Iterable[Finding]]) -> list[Finding]:
    """The findings of several inputs in the order every output shows them: by file,
    position, code and message."""
    return sorted(chain.from_iterable(per_input), key=Finding.sort_key)


def lint(
    inputs: Iterable[Loaded],
    settings: Settings | None = None,
    *,
    settings_for: SettingsFor | None = None,
    context: Iterable[Manifest] = (),
    on_rule_error: RuleError | None = None,
    where: str = FILES,
    previous: Iterable[Manifest] = (),
) -> list[Finding]:
    """Every finding of the enabled rules over all inputs, suppressions applied, sorted.

    `settings_for` gives each file its own settings (its nearest configuration file) while
    all inputs still share one index, so references across files resolve. `context` are
    objects that references may find (the cluster's, for the webhook) but that are not
    checked; `where` names where the objects come from, for messages. With
    `on_rule_error`, a rule that raises loses its findings on that object and the run goes
    on. `previous` are the objects as they were before the change under check (the
    webhook's `oldObject`, the files at `--base REV`): update rules compare with them.
    """
    run = Run(
        inputs, settings, settings_for, context=context, where=where,
        on_rule_error=on_rule_error, previous=previous,
    )
    return run.settle(run.check(position) for position in range(len(run.inputs)))


class Run:
    """One run over a set of inputs: their shared index, and the rules of each input.

    Checking an input (`check`) needs only this object, so inputs can be checked in other
    processes (see `trainlint.parallel`); `settle` then turns all of it into findings.
    """

    def __init__(
        self,
        inputs: Iterable[Loaded],
        settings: Settings | None = None,
        settings_for: SettingsFor | None = None,
        *,
        contents: Mapping[str, str] | None = None,
        context: Iterable[Manifest] = (),
        on_rule_error: RuleError | None = None,
        context_files: Iterable[Loaded] = (),
        where: str = FILES,
        previous: Iterable[Manifest] = (),
    ) -> None:
        self.inputs = list(inputs)
        #: Files read for their objects only (`--context`): indexed, never checked.
        self.context_files = list(context_files)
        self.index = Index(
            (manifest for item in self.inputs for manifest in item.manifests),
            [*(manifest for item in self.context_files for manifest in item.manifests),
             *context],
            where=where, previous=previous,
        )
        self._default = settings or Settings()
        self._settings_for = settings_for
        self._on_rule_error = on_rule_error
        self._plans: dict[int, _Plan] = {}
        #: With `contents` (file name → digest of its bytes), the look-ups of every input
        #: are recorded: per input, dependency → digest of the answer (`Index.looked_up`).
        self._record = contents is not None
        self.dependencies: dict[int, dict[str, str]] = {}
        #: With `contents`, per input: `unchecked` of its TrainJobs, worked out with them.
        self.missing: dict[int, dict[str, int]] = {}
        for item in [*self.inputs, *self.context_files]:
            if contents is not None and item.manifests:  # a file read has its digest
                content = contents[item.source.name]
                for manifest in item.manifests:
                    self.index.digests[id(manifest)] = identify(content, manifest)

    def unchecked(self, items: Iterable[Loaded]) -> dict[str, int]:
        """The runtimes that TrainJobs of these inputs name but that were found nowhere
        (see `unchecked`)."""
        return unchecked(
            ((manifest, self.plan_for(item.source).settings)
             for item in items for manifest in item.manifests),
            self.index,
        )

    def plan_for(self, source: Source) -> _Plan:
        chosen = self._settings_for(source) if self._settings_for else self._default
        if id(chosen) not in self._plans:
            self._plans[id(chosen)] = _Plan(chosen, self.index, self._on_rule_error)
        return self._plans[id(chosen)]

    def check(self, position: int) -> list[Finding]:
        """The raw findings of one input's rules."""
        item = self.inputs[position]
        self.index.looked_up = {} if self._record else None
        try:
            found = list(self.plan_for(item.source).run(item))
            if self._record:  # kept with the findings, so its look-ups are recorded too
                self.missing[position] = self.unchecked([item])
            return found
        finally:
            if self.index.looked_up is not None:
                self.dependencies[position] = self.index.looked_up
            self.index.looked_up = None

    def settle(self, checked: Iterable[list[Finding]]) -> list[Finding]:
        """The findings of every input (`checked`: their raw findings, in input order), in
        a stable order."""
        return in_order(
            self.settle_input(position, raw) for position, raw in enumerate(checked)
        )

    def settle_input(self, position: int, raw: list[Finding]) -> list[Finding]:
        """One input's findings: deduplicated, its file's own rules, severities and
        suppressions applied. Findings land only on the input checked, so inputs settle
        one by one, in any process."""
        item = self.inputs[position]
        unique: dict[tuple[object, ...], Finding] = {}
        for finding in raw:
            unique.setdefault((finding.code, finding.span, finding.message), finding)
        plan = self.plan_for(item.source)
        return plan.settle(item.source, list(unique.values()), item.manifests)


class _Plan:
    """The rules one Settings enables, by kind, with their contexts (one per set of
    options: the webhook makes a plan for every request)."""

    def __init__(
        self, settings: Settings, index: Index, on_rule_error: RuleError | None = None
    ) -> None:
        self.settings = settings
        self.index = index
        self.on_rule_error = on_rule_error
        self.enabled = settings.rules_by_code
        self._contexts: dict[int, Context] = {}
        self._by_kind: dict[str, list[tuple[Rule, Context]]] = {}

    def rules_for(self, kind: str) -> list[tuple[Rule, Context]]:
        if kind not in self._by_kind:
            self._by_kind[kind] = [
                (rule, self._context(options))
                for rule, options in self.settings.rules_by_kind.get(kind, ())
            ]
        return self._by_kind[kind]

    def _context(self, options: Options | None) -> Context:
        if id(options) not in self._contexts:
            self._contexts[id(options)] = Context(
                self.settings.trainer_version, self.index, options,
                self.settings.kubernetes_version, self.settings.device_resources,
                self.settings.bundled_runtimes,
            )
        return self._contexts[id(options)]

    def run(self, item: Loaded) -> Iterator[Finding]:
        """The findings of one input."""
        for problem in item.problems:
            if problem.code in self.enabled:
                yield _from_load_problem(self.enabled[problem.code], problem, item.source)
        for manifest in item.manifests:
            # What one object's rules derived (its pod...) is dropped before the next: it
            # must not hide another input's look-ups, and a long file must not hold it all.
            self.index.memo.clear()
            for rule, context in self.rules_for(object_kind(manifest)):
                assert rule.check is not None
                problems: Iterable[Problem]
                if self.on_rule_error is None:
                    problems = rule.check(manifest, context)
                else:
                    problems = self._guarded(rule, manifest, context, self.on_rule_error)
                for found in problems:
                    yield _from_problem(rule, found, manifest)

    @staticmethod
    def _guarded(
        rule: Rule, manifest: Manifest, context: Context, on_error: RuleError
    ) -> list[Problem]:
        """The problems of one rule on one object, none when it raises (then told)."""
        assert rule.check is not None
        try:
            return list(rule.check(manifest, context))
        except Exception as error:
            on_error(rule, manifest, error)
            return []

    def settle(
        self,
        source: Source,
        raw: list[Finding],
        manifests: list[Manifest],
    ) -> list[Finding]:
        """The findings a file shows: its rules only, severities set, suppressions applied,
        plus the suppressions that silence nothing (TL090) or name no rule (TL091)."""
        from trainlint import suppression

        entries, invalid = suppression.comment_entries(source)
        if self.settings.annotation_exemptions:
            for manifest in manifests:
                entries.extend(suppression.annotation_entries(manifest))
        kept = [
            finding for finding in raw
            if finding.code in self.enabled
            and not _silence(entries, finding.code, finding.span.line, finding.manifest)
        ]
        meta = [
            *(self._unused(entry) for entry in entries if not entry.used),
            *(self._meta(INVALID_SUPPRESSION, item.message, source, item.span, ())
              for item in invalid),
        ]
        # Only a file-wide or same-line comment can silence TL090/TL091 themselves.
        comments = [entry for entry in entries if entry.scope != "object"]
        kept.extend(
            finding for finding in meta
            if finding is not None and not _silence(comments, finding.code, finding.span.line, None)
        )
        return [self._severity(finding) for finding in kept]

    def _unused(self, entry: suppression.Entry) -> Finding | None:
        if entry.rule is None:
            from trainlint.rule import did_you_mean_rule

            message = (
                f"suppression names `{entry.selector}`, which is no rule's code or name"
                f"{did_you_mean_rule(entry.selector)}: it silences nothing "
                "(see `trainlint rules`)"
            )
            return self._meta(INVALID_SUPPRESSION, message, entry.source, entry.span, entry.path)
        if entry.rule.code not in self.enabled or entry.rule.code in SUPPRESSION_CODES:
            return None  # a rule not run here may well fire where it is enabled
        where = {
            "line": f"on line {entry.target}", "file": "in this file", "object": "on this object",
        }[entry.scope]
        message = (
            f"unused suppression of {entry.rule.code} ({entry.rule.name}): it finds nothing "
            f"{where}, so the suppression would hide a future finding unseen; remove it"
        )
        from trainlint.suppression import removal

        return self._meta(
            UNUSED_SUPPRESSION, message, entry.source, entry.span, entry.path,
            removal(entry), entry.manifest,
        )

    def _meta(
        self, code: str, message: str, source: Source, span: Span, path: Path,
        fix: Fix | None = None, manifest: Manifest | None = None,
    ) -> Finding | None:
        rule = self.enabled.get(code)
        if rule is None:
            return None
        return Finding(
            code, rule.name, rule.severity, message, rule.help, source, span, path, None, fix,
            manifest,
        )

    def _severity(self, finding: Finding) -> Finding:
        severity = self.settings.severities.get(finding.code, finding.severity)
        return finding if severity == finding.severity else replace(finding, severity=severity)


#: The codes of the suppression rules (declared in `trainlint.rules`).
UNUSED_SUPPRESSION = "TL090"
INVALID_SUPPRESSION = "TL091"
SUPPRESSION_CODES = frozenset({UNUSED_SUPPRESSION, INVALID_SUPPRESSION})


def _silence(
    entries: list[suppression.Entry], code: str, line: int, manifest: Manifest | None
) -> bool:
    """Whether any entry covers the finding; every entry that does is marked used."""
    silenced = False
    for entry in entries:
        if entry.covers(code, line, manifest):
            entry.used = silenced = True
    return silenced


def _from_load_problem(rule: Rule, problem: LoadProblem, source: Source) -> Finding:
    return Finding(
        rule.code, rule.name, rule.severity, problem.message, rule.help,
        source, problem.span, (), None,
    )


def _from_problem(rule: Rule, problem: Problem, manifest: Manifest) -> Finding:
    ref = ObjectRef.of(manifest)
    return Finding(
        rule.code, rule.name, rule.severity, problem.message,
        problem.help or rule.help, manifest.source, manifest.span(problem.path),
        problem.path, ref, problem.fix, manifest, problem.related,
    )
