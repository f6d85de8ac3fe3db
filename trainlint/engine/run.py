"""The run: which rules run on which objects, and the findings their problems become.

`lint` is pure: the CLI, the pre-commit hook and the webhook call it and differ only in
how they render the findings.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from trainlint.config.settings import Settings
from trainlint.document import Loaded, LoadProblem, Manifest, Source
from trainlint.engine.context import Context
from trainlint.engine.index import FILES, Index, identify
from trainlint.engine.settle import settle
from trainlint.finding import Finding, ObjectRef, in_order
from trainlint.kinds import RUNTIME_KINDS, object_kind
from trainlint.options import RuleOptions
from trainlint.problem import Problem
from trainlint.rule import Rule


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


SettingsFor = Callable[[Source], Settings]
#: Told of a rule that raised on an object, when the run goes on without that rule's
#: findings on it (the language server); without one, the error ends the run.
RuleError = Callable[[Rule, Manifest, Exception], None]


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
    positions = range(len(run.inputs))
    checked = {position: run.check(position) for position in run.order(positions)}
    return run.settle(checked[position] for position in positions)


class Run:
    """One run over a set of inputs: their shared index, and the rules of each input.

    Checking an input (`check`) needs only this object, so inputs can be checked in other
    processes (see `trainlint.run.parallel`); `settle` then turns all of it into findings.
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

    def order(self, positions: Sequence[int]) -> list[int]:
        """`positions` in the order to check them: an input that holds a runtime after the
        last of them that holds a TrainJob using it, the others as they come. A runtime's
        rules ask where each of its TrainJobs checkpoints, which takes the TrainJob's
        render; asked after the TrainJob's own rules, the answer is found worked out with
        the render they used, not rendered a second time (a render is kept only while it
        is recent). With 2,000 TrainJobs on one runtime, that is 2,001 renders, not 4,001."""
        holding = {id(manifest): position for position in positions
                   for manifest in self.inputs[position].manifests}
        after: dict[int, int] = {}
        for position in positions:
            for manifest in self.inputs[position].manifests:
                if object_kind(manifest) not in RUNTIME_KINDS:
                    continue
                last = max((holding.get(id(job), -1)
                            for job in self.index.trainjobs_using(manifest)), default=-1)
                if last > after.get(position, position):
                    after[position] = last
        return sorted(positions, key=lambda position: (
            after.get(position, position), position in after, position))

    def check(self, position: int, documents: range | None = None) -> list[Finding]:
        """The raw findings of one input's rules; with `documents`, those of the objects at
        these places only (and the file's own findings with the first part): a long file
        is checked in parts, on several processes, and its parts' results are joined
        (`dependencies` and `missing` then hold the part's)."""
        item = self.inputs[position]
        if documents is not None:
            item = Loaded(
                item.source, item.manifests[documents.start : documents.stop],
                item.problems if documents.start == 0 else [], item.fragments,
            )
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
        return settle(plan.settings, item.source, list(unique.values()), item.manifests)


class _Plan:
    """The rules one Settings enables, by kind, with their contexts (one per set of
    options: the webhook makes a plan for every request)."""

    def __init__(
        self, settings: Settings, index: Index, on_rule_error: RuleError | None = None
    ) -> None:
        self.settings = settings
        self.index = index
        self.on_rule_error = on_rule_error
        self._contexts: dict[int, Context] = {}
        self._by_kind: dict[str, list[tuple[Rule, Context]]] = {}

    def rules_for(self, kind: str) -> list[tuple[Rule, Context]]:
        if kind not in self._by_kind:
            self._by_kind[kind] = [
                (rule, self._context(options))
                for rule, options in self.settings.rules_for(kind)
            ]
        return self._by_kind[kind]

    def _context(self, options: RuleOptions | None) -> Context:
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
            reporter = self.settings.rules_reporting.get(type(problem))
            if reporter is not None:
                for found in reporter.check(problem):
                    yield _from_load_problem(reporter, found, problem, item.source)
        for manifest in item.manifests:
            # What one object's rules derived (its pod...) is dropped before the next: it
            # must not hide another input's look-ups, and a long file must not hold it all.
            self.index.memo.clear()
            for rule, context in self.rules_for(object_kind(manifest)):
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
        try:
            return list(rule.check(manifest, context))
        except Exception as error:
            on_error(rule, manifest, error)
            return []


def _from_load_problem(
    rule: Rule, problem: Problem, loading: LoadProblem, source: Source
) -> Finding:
    return Finding(
        rule.code, rule.name, rule.severity, problem.message,
        problem.remediation or rule.remediation, source, loading.span, problem.path, None,
    )


def _from_problem(rule: Rule, problem: Problem, manifest: Manifest) -> Finding:
    ref = ObjectRef.of(manifest)
    return Finding(
        rule.code, rule.name, rule.severity, problem.message,
        problem.remediation or rule.remediation, manifest.source, manifest.span(problem.path),
        problem.path, ref, problem.fix, manifest, problem.related,
    )
