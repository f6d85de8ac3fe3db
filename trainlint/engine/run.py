"""The run: which rules run on which objects, and the findings their problems become.

`lint` is pure: the CLI, the pre-commit hook and the webhook call it and differ only in
how they render the findings.

A run has two passes. Each object's rules see the object and what it looks up (its
runtime, its claims): they yield the object's findings, and small Facts. Then each rule
with an `across` makes findings of all the objects' facts at once: what several objects
say together (a runtime's fixed checkpoint directory and each TrainJob that uses it) is
judged there, never by one object's rules reading another object. The first pass can so
run anywhere (another process, a cached earlier run); the second needs only the facts.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from trainlint.config.settings import Settings
from trainlint.document import Loaded, LoadProblem, Manifest, Source, is_placeholder
from trainlint.engine.context import Context
from trainlint.engine.index import CONTEXT, FILES, Index, identify, pair
from trainlint.engine.settle import Suppressions
from trainlint.finding import Finding, Note, ObjectRef, in_order
from trainlint.kinds import RUNTIME_KINDS, object_kind
from trainlint.options import RuleOptions
from trainlint.problem import Fact, Problem
from trainlint.rule import Rule, listed_rules, reported

#: What stands for an input let go (`Run.forget`).
_FORGOTTEN = Loaded(Source("", ""), [], [])


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
    """The TrainJobs among `objects` that name a runtime `index` does not know (a guide's
    `<runtime-name>` is the reader's to write: no runtime to add)."""
    for manifest, settings in objects:
        release = settings.trainer_version if settings.bundled_runtimes else None
        if (object_kind(manifest) == "TrainJob" and index.runtime_unknown(manifest, release)
                and not is_placeholder(index.runtime_key(manifest)[2])):
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
    webhook's `oldObject`): update rules compare each with the input of its apiVersion,
    kind, namespace and name (`pair`).
    """
    inputs = list(inputs)
    before = pair((manifest for item in inputs for manifest in item.manifests), previous)
    run = Run(
        inputs, settings, settings_for, context=context, where=where,
        on_rule_error=on_rule_error, previous=before,
    )
    return run.settle([run.check(position) for position in range(len(run.inputs))])


class Run:
    """One run over a set of inputs: their shared index, and the rules of each input.

    Checking an input (`check`) needs only this object, so inputs can be checked in other
    processes (see `trainlint.run.parallel`); their facts then go through the rules'
    cross-object passes (`across`), and `finish` settles each input."""

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
        previous: Mapping[int, Manifest] | None = None,
        index: Index | None = None,
    ) -> None:
        self.inputs = list(inputs)
        #: Files read for their objects only (`--context`): indexed, never checked.
        self.context_files = list(context_files)
        #: The objects rules look up: the inputs' and the context's, or `index` as given
        #: (a run that checks its inputs as it reads them, `add`, whose index is kept by
        #: whoever reads them).
        self.index = index or Index(
            (manifest for item in self.inputs for manifest in item.manifests),
            [*(manifest for item in self.context_files for manifest in item.manifests),
             *context],
            where=where, previous=previous,
        )
        self._default = settings or Settings()
        self._settings_for = settings_for
        self._on_rule_error = on_rule_error
        self._plans: dict[int, _Plan] = {}
        #: With `contents` (file name → digest of its bytes) or an `index` given, the
        #: look-ups of every input are recorded: per input, dependency → digest of the
        #: answer (`Index.looked_up`).
        self._record = contents is not None or index is not None
        self.dependencies: dict[int, dict[str, str]] = {}
        #: With `contents`, per input: `unchecked` of its TrainJobs, worked out with them.
        self.missing: dict[int, dict[str, int]] = {}
        #: Per input: the notes of the facts its objects' rules yielded (and of the
        #: context objects that use its runtimes), for the rules' `across`.
        self.notes: dict[int, list[Note]] = {}
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

    def add(self, item: Loaded) -> int:
        """One more input, checked once read (its objects are indexed by the caller): its
        position."""
        self.inputs.append(item)
        return len(self.inputs) - 1

    def forget(self, position: int) -> None:
        """Let go of an input checked and settled: what the index holds of it stays."""
        self.inputs[position] = _FORGOTTEN
        for kept in (self.notes, self.dependencies, self.missing):
            kept.pop(position, None)

    def placed(self, order: tuple[int, int]) -> Manifest | None:
        """The object at a place of the run (`Note.order`): an input's, or the context's."""
        position, number = order
        objects = (self.index.context if position == CONTEXT
                   else self.inputs[position].manifests if position < len(self.inputs) else [])
        return objects[number] if number < len(objects) else None

    def check(self, position: int, documents: range | None = None) -> list[Finding]:
        """The raw findings of one input's rules (its facts' notes go to `notes`); with
        `documents`, those of the objects at these places only (and the file's own
        findings with the first part): a long file is checked in parts, on several
        processes, and its parts' results are joined (`dependencies`, `missing` and
        `notes` then hold the part's)."""
        item = self.inputs[position]
        first = 0
        if documents is not None:
            first = documents.start
            item = Loaded(
                item.source, item.manifests[documents.start : documents.stop],
                item.problems if documents.start == 0 else [], item.fragments,
            )
        self.index.looked_up = {} if self._record else None
        notes: list[Note] = []
        try:
            found = list(self.plan_for(item.source).run(item, (position, first), notes))
            if self._record:  # kept with the findings, so its look-ups are recorded too
                self.missing[position] = self.unchecked([item])
            return found
        finally:
            self.notes[position] = notes
            if self.index.looked_up is not None:
                self.dependencies[position] = self.index.looked_up
            self.index.looked_up = None

    def settle(self, checked: Sequence[list[Finding]]) -> list[Finding]:
        """The findings of every input (`checked`: their raw findings, in input order,
        their notes in `notes`), in a stable order."""
        settled = dict(enumerate(self.settle_input(position, raw)
                                 for position, raw in enumerate(checked)))
        notes = [note for notes in self.notes.values() for note in notes]
        added = self.finish(settled, notes)
        return in_order([*found, *added[position]] for position, (found, _) in settled.items())

    def settle_input(
        self, position: int, raw: list[Finding]
    ) -> tuple[list[Finding], Suppressions]:
        """One input's own findings, deduplicated, its file's own rules, severities and
        suppressions applied, and its suppressions as they stand (marked used). Findings
        land only on the input checked, so inputs settle one by one, in any process."""
        item = self.inputs[position]
        unique: dict[tuple[object, ...], Finding] = {}
        for finding in raw:
            # The path too: an object not read from a file (the webhook's) has no spans,
            # and one problem in two places (two patches) is two findings there as well.
            key = (finding.code, finding.span, finding.path, finding.message)
            unique.setdefault(key, finding)
        settings = self.plan_for(item.source).settings
        suppressions = Suppressions.of(settings, item.source, item.manifests)
        return suppressions.settle(settings, unique.values()), suppressions

    def finish(
        self, settled: Mapping[int, tuple[object, Suppressions]], notes: Iterable[Note],
        amend: Amend | None = None,
    ) -> dict[int, list[Finding]]:
        """What lands on each settled input (`settle_input`) once every object's facts are
        known: see `finish`."""
        return finish(
            {position: (self.plan_for(self.inputs[position].source).settings, suppressions)
             for position, (_, suppressions) in settled.items()},
            notes, amend,
        )

#: Completes findings with what is worked out where they were made (`fix.with_edits`).
Amend = Callable[[list[Finding]], list[Finding]]


def finish(
    inputs: Mapping[int, tuple[Settings, Suppressions]], notes: Iterable[Note],
    amend: Amend | None = None,
) -> dict[int, list[Finding]]:
    """What lands on each settled input (by position: its settings and suppressions, as
    its own findings left them) once every object's facts are known (`notes`: those of
    all the inputs and context objects of the run): the findings of the cross-object
    passes, settled in turn, then what the suppression rules say of its suppressions,
    which nothing more can use. `amend` completes them."""
    found_across = across(notes)
    added: dict[int, list[Finding]] = {}
    for position, (settings, suppressions) in inputs.items():
        found = found_across.get(position, [])
        if not found and not suppressions.entries and not suppressions.invalid:
            added[position] = []  # nearly every file: nothing more lands on it
            continue
        more = [*suppressions.settle(settings, found), *suppressions.unheeded(settings)]
        added[position] = amend(more) if amend is not None and more else more
    return added


def across(notes: Iterable[Note]) -> dict[int, list[Finding]]:
    """The findings of the rules' cross-object passes over all the notes of a run (in
    any order; each rule's are given to it in the run's order), by input: only
    checked objects take findings."""
    by_rule: dict[str, dict[tuple[object, ...], Note]] = defaultdict(dict)
    for note in notes:
        # A context object that uses two runtimes of one name tells its facts twice.
        by_rule[note.code].setdefault((note.order, note.path, repr(note.value)), note)
    found: dict[int, list[Finding]] = defaultdict(list)
    rules = listed_rules()
    for code, kept in by_rule.items():
        rule = rules[code].load()
        assert rule.across is not None, f"{code} yields facts but has no `across`"
        ordered = sorted(kept.values(), key=lambda note: note.order)
        for note, problem in rule.across(ordered):
            if note.checked:
                found[note.order[0]].append(_from_note(rule, problem, note))
    return found


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

    def run(self, item: Loaded, place: tuple[int, int], notes: list[Note]) -> Iterator[Finding]:
        """The findings of one input (whose objects are numbered from `place`: input,
        object); the notes of their facts are added to `notes`."""
        for problem in item.problems:
            reporter = self.settings.rules_reporting.get(type(problem))
            if reporter is not None:
                for found in reported(reporter, problem):
                    yield _from_load_problem(reporter, found, problem, item.source)
        position, first = place
        for number, manifest in enumerate(item.manifests, start=first):
            # What one object's rules derived (its pod...) is dropped before the next: it
            # must not hide another input's look-ups, and a long file must not hold it all.
            self.index.memo.clear()
            kind = object_kind(manifest)
            for rule, context in self.rules_for(kind):
                # `_told`, inlined: a call per rule and object is a twentieth of a run's.
                told_all = (rule.check(manifest, context) if self.on_rule_error is None
                            else self._told(rule, manifest, context))
                for told in told_all:
                    if isinstance(told, Fact):
                        notes.append(_note(rule, told, manifest, (position, number)))
                    else:
                        yield _from_problem(rule, told, manifest)
            if kind in RUNTIME_KINDS:
                self._context_facts(manifest, notes)

    def _context_facts(self, runtime: Manifest, notes: list[Note]) -> None:
        """The facts the rules with an `across` find on the TrainJobs of the context that
        use this runtime: whatever else those say, it lands on no object of the run."""
        for job in self.index.context_users(runtime):
            order = self.index.context_order(job)
            assert order is not None
            self.index.memo.clear()
            for rule, context in self.rules_for(object_kind(job)):
                if rule.across is None:
                    continue
                for found in self._told(rule, job, context):
                    if isinstance(found, Fact):
                        notes.append(_note(rule, found, job, order, checked=False))

    def _told(
        self, rule: Rule, manifest: Manifest, context: Context
    ) -> Iterable[Problem | Fact]:
        """What one rule tells of one object; with `on_rule_error`, nothing when it
        raises (then told)."""
        if self.on_rule_error is None:
            return rule.check(manifest, context)
        try:
            return list(rule.check(manifest, context))
        except Exception as error:
            self.on_rule_error(rule, manifest, error)
            return []


def _note(
    rule: Rule, fact: Fact, manifest: Manifest, order: tuple[int, int], *, checked: bool = True
) -> Note:
    return Note(
        rule.code, fact.value, fact.path, manifest.span(fact.path), manifest.source,
        ObjectRef.of(manifest), order, checked, fact.fix, manifest,
    )


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


def _from_note(rule: Rule, problem: Problem, note: Note) -> Finding:
    return Finding(
        rule.code, rule.name, rule.severity, problem.message,
        problem.remediation or rule.remediation, note.source, note.span, note.path,
        note.object, problem.fix, note.manifest, problem.related,
    )
