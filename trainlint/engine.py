"""The engine: which rules run on which objects, and what their problems become.

`lint` is pure: the CLI, the pre-commit hook and the webhook call it and differ only in
how they render the findings.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from trainlint.document import Loaded, LoadProblem, Manifest, Path, Source, Span, mapping
from trainlint.rule import NEWEST, Options, Problem, Rule, Severity, TrainerVersion, all_rules
from trainlint.rule import matches as rule_matches

TRAINER_GROUP = "trainer.kubeflow.org"
TRAINER_KINDS = frozenset({"TrainJob", "TrainingRuntime", "ClusterTrainingRuntime"})
RUNTIME_KINDS = frozenset({"TrainingRuntime", "ClusterTrainingRuntime"})


def object_kind(manifest: Manifest) -> str:
    """The kind rules dispatch on: Trainer kinds count only in the Trainer API group."""
    kind = manifest.kind
    if kind in TRAINER_KINDS and not manifest.api_version.startswith(f"{TRAINER_GROUP}/"):
        return ""
    return kind


class Index:
    """The objects of one run (or of the cluster, in the webhook) that rules refer to."""

    def __init__(self, manifests: Iterable[Manifest]) -> None:
        self._objects: dict[tuple[str, str, str], Manifest] = {}
        self._users: dict[tuple[str, str, str], list[Manifest]] = defaultdict(list)
        for manifest in manifests:
            kind = object_kind(manifest)
            if kind in RUNTIME_KINDS or kind in {"PersistentVolumeClaim", "StorageClass"}:
                self._objects.setdefault(self._key(kind, manifest.namespace, manifest.name), manifest)
            elif kind == "TrainJob":
                self._users[self.runtime_key(manifest)].append(manifest)

    @staticmethod
    def _key(kind: str, namespace: str, name: str) -> tuple[str, str, str]:
        cluster_scoped = kind in {"ClusterTrainingRuntime", "StorageClass"}
        return kind, "" if cluster_scoped else namespace, name

    def runtime_key(self, job: Manifest) -> tuple[str, str, str]:
        """What `spec.runtimeRef` names; kind defaults to ClusterTrainingRuntime."""
        ref = mapping(mapping(job.body.get("spec")).get("runtimeRef"))
        kind = ref.get("kind") or "ClusterTrainingRuntime"
        group = ref.get("apiGroup") or TRAINER_GROUP
        name = ref.get("name") if isinstance(ref.get("name"), str) else ""
        if group != TRAINER_GROUP or kind not in RUNTIME_KINDS:
            kind = f"unsupported:{kind}.{group}"
        return self._key(str(kind), job.namespace, str(name))

    def runtime_for(self, job: Manifest) -> Manifest | None:
        """The runtime a TrainJob references, when it is among the known objects."""
        return self._objects.get(self.runtime_key(job))

    def trainjobs_using(self, runtime: Manifest) -> list[Manifest]:
        return self._users.get(self._key(runtime.kind, runtime.namespace, runtime.name), [])

    def claim(self, namespace: str, name: str) -> Manifest | None:
        return self._objects.get(("PersistentVolumeClaim", namespace, name))

    def storage_class(self, name: str) -> Manifest | None:
        return self._objects.get(("StorageClass", "", name))


@dataclass(frozen=True)
class Context:
    """What a check may know besides the object: the release, the run, its options."""

    trainer_version: TrainerVersion
    index: Index
    options: Any = None

    def runtime_for(self, job: Manifest) -> Manifest | None:
        return self.index.runtime_for(job)

    def claim(self, namespace: str, name: str) -> Manifest | None:
        return self.index.claim(namespace, name)

    def storage_class(self, name: str) -> Manifest | None:
        return self.index.storage_class(name)

    def trainjobs_using(self, runtime: Manifest) -> list[Manifest]:
        return self.index.trainjobs_using(runtime)


@dataclass(frozen=True)
class Settings:
    """How a run is configured: release, rule selection and rule options."""

    trainer_version: TrainerVersion = NEWEST
    select: tuple[str, ...] = ("ALL",)
    ignore: tuple[str, ...] = ()
    severities: Mapping[str, Severity] = field(default_factory=dict)
    rule_options: Mapping[str, Options] = field(default_factory=dict)

    def enabled(self) -> list[Rule]:
        return [
            rule
            for rule in all_rules().values()
            if rule_matches(rule, self.select)
            and not rule_matches(rule, self.ignore)
            and rule.applies_to(self.trainer_version)
        ]


@dataclass(frozen=True, slots=True)
class ObjectRef:
    api_version: str
    kind: str
    name: str
    namespace: str | None


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

    @property
    def file(self) -> str:
        return self.source.name

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return self.file, self.span.line, self.span.column, self.code, self.message


def lint(inputs: Iterable[Loaded], settings: Settings | None = None) -> list[Finding]:
    """Every finding of the enabled rules over all inputs, deduplicated and sorted."""
    settings = settings or Settings()
    loaded = list(inputs)
    rules = settings.enabled()
    enabled = {rule.code for rule in rules}
    index = Index(manifest for item in loaded for manifest in item.manifests)
    base = Context(settings.trainer_version, index)
    by_kind: dict[str, list[tuple[Rule, Context]]] = defaultdict(list)
    for rule in rules:
        options = settings.rule_options.get(rule.code) or (rule.options() if rule.options else None)
        for kind in rule.kinds:
            by_kind[kind].append((rule, replace(base, options=options)))

    registry = all_rules()
    findings: dict[tuple[object, ...], Finding] = {}

    def add(finding: Finding) -> None:
        findings.setdefault(
            (finding.code, finding.file, finding.span, finding.message), finding
        )

    for item in loaded:
        for problem in item.problems:
            if problem.code in enabled:
                add(_from_load_problem(registry[problem.code], problem, item.source, settings))
        for manifest in item.manifests:
            for rule, context in by_kind.get(object_kind(manifest), ()):
                assert rule.check is not None
                for found in rule.check(manifest, context):
                    add(_from_problem(rule, found, manifest, settings))
    return sorted(findings.values(), key=Finding.sort_key)


def _severity(rule: Rule, settings: Settings) -> Severity:
    return settings.severities.get(rule.code, rule.severity)


def _from_load_problem(
    rule: Rule, problem: LoadProblem, source: Source, settings: Settings
) -> Finding:
    return Finding(
        rule.code, rule.name, _severity(rule, settings), problem.message, rule.help,
        source, problem.span, (), None,
    )


def _from_problem(rule: Rule, problem: Problem, checked: Manifest, settings: Settings) -> Finding:
    manifest = problem.manifest or checked
    metadata = mapping(manifest.body.get("metadata"))
    namespace = metadata.get("namespace")
    ref = ObjectRef(
        manifest.api_version, manifest.kind, manifest.name,
        namespace if isinstance(namespace, str) else None,
    )
    return Finding(
        rule.code, rule.name, _severity(rule, settings), problem.message,
        problem.help or rule.help, manifest.source, manifest.span(problem.path),
        problem.path, ref,
    )
