"""What a rule is: its metadata, declared once in a decorator beside its check."""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from trainlint.config.defaults import DOCS_URL
from trainlint.document import Manifest
from trainlint.finding import Note
from trainlint.options import RuleOptions
from trainlint.problem import Fact, Problem, Severity
from trainlint.release import RELEASES, TrainerVersion, format_version, parse_version

if TYPE_CHECKING:
    from trainlint.engine.context import Context

#: Each rule's page on that site (`docs/rules/TLnnn.md`, the text of `trainlint rule CODE`):
#: the SARIF `helpUri` and the language server's `codeDescription` both link here.
RULE_DOCS = "{site}/rules/{code}/"
#: What the documentation of a preview rule says of it.
PREVIEW_NOTE = (
    "Preview: off by default; runs with `--preview` (config `preview = true`) or when "
    "selected by its code or name."
)


#: The check of a rule of objects: the object and its context → Problems, and the Facts
#: its `Across` makes findings of.
Check = Callable[[Manifest, "Context"], Iterator[Problem | Fact]]
AnyCheck = TypeVar("AnyCheck", bound=Callable[..., Iterator[Problem | Fact]])
#: A rule's cross-object pass: the notes of its facts, of every object of the run in the
#: run's order → the findings, each on one note's object and key (`Note.problem`).
Across = Callable[[Sequence[Note]], Iterator[tuple[Note, Problem]]]


class Rule(NamedTuple):
    code: str
    name: str
    severity: Severity
    #: The kinds of object it checks; none for a rule that `reports` something else.
    kinds: frozenset[str]
    check: Callable[..., Iterator[Problem | Fact]]
    #: What to do about a finding, when the rule knows one remedy for all (a Problem
    #: may give its own); not the `Fix` a check offers to apply.
    remediation: str | None
    #: The documentation as written (see `doc`).
    docstring: str
    options: type[RuleOptions] | None
    since: TrainerVersion
    until: TrainerVersion | None
    #: Off by default: runs only in preview mode (`--preview`, config `preview = true`) or
    #: when selected by its own code or name. Rules whose findings are not yet right on
    #: real manifests often enough wait here (as ruff's preview rules do).
    preview: bool = False
    #: What the rule reports instead of objects: a kind of `LoadProblem`, or of suppression
    #: (`trainlint.suppression`); its check takes one of those alone.
    reports: type | None = None
    #: Its cross-object pass, for a rule whose findings need what several objects say
    #: together (a runtime and every TrainJob that uses it): its check yields Facts.
    across: Across | None = None

    @property
    def doc(self) -> str:
        """The documentation, dedented: worked out when read (`trainlint rule`, SARIF),
        not for every rule at start-up."""
        return _cleaned(self.docstring)

    @property
    def docs_url(self) -> str:
        return self.docs_url_on(DOCS_URL)

    def docs_url_on(self, site: str) -> str:
        """The rule's page on the documentation site at `site` (config `docs-url`)."""
        return RULE_DOCS.format(site=site.rstrip("/"), code=self.code)

    def section(self, title: str) -> str:
        """The text of one `## title` section of the documentation ("" when absent)."""
        head = f"## {title}"
        if head not in self.doc:
            return ""
        return self.doc.split(head, 1)[1].split("\n## ", 1)[0].strip()

    @property
    def description(self) -> str:
        """What it does, on one line."""
        return " ".join(self.section("What it does").split())

    @property
    def summary(self) -> str:
        """The first sentence of what it does, without its full stop (listings, SARIF)."""
        return self.description.split(". ")[0].rstrip(".")

    @property
    def releases(self) -> str:
        first = format_version(self.since)
        if self.until is None:
            return "all" if self.since == RELEASES[0] else f"{first}+"
        return first if self.until == self.since else f"{first}–{format_version(self.until)}"


class Listed(NamedTuple):
    """A rule as the package's registry lists it: what choosing, naming and reporting it
    takes, and the module that declares it, imported only when the rule is to run. (A
    named tuple: a dataclass costs start-up a compile per method.)"""

    code: str
    name: str
    kinds: frozenset[str]
    remediation: str | None
    since: TrainerVersion
    until: TrainerVersion | None
    preview: bool
    #: The dotted name of the module that declares it.
    module: str

    @classmethod
    def of(cls, rule: Rule) -> Listed:
        return cls(rule.code, rule.name, rule.kinds, rule.remediation, rule.since, rule.until,
                   rule.preview, rule.check.__module__)

    def applies_to(self, version: TrainerVersion) -> bool:
        return self.since <= version and (self.until is None or version <= self.until)

    def load(self) -> Rule:
        """The rule itself, its module imported."""
        importlib.import_module(self.module)
        found = _REGISTRY.get(self.code)
        if found is None or Listed.of(found) != self:
            raise RuntimeError(f"{self.module} does not declare {self.code} as listed: run "
                               f"`python -m {RULES_PACKAGE}.{REGISTRY}`")
        return found


_REGISTRY: dict[str, Rule] = {}
#: Where the rules are, one module each.
RULES_PACKAGE = "trainlint.rules"
#: The module of that package that lists its rules (`Listed`), by its name in the package:
#: written from the rules, it is no rule's module.
REGISTRY = "registry"


def _register(rule: Rule) -> Rule:
    if not re.fullmatch(r"TL\d{3}", rule.code):
        raise ValueError(f"rule code {rule.code!r} is not TL + 3 digits")
    if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name):
        raise ValueError(f"rule name {rule.name!r} is not kebab-case")
    _refuse_clashes(rule, _REGISTRY.values())
    _REGISTRY[rule.code] = rule
    return rule


def _refuse_clashes(rule: Rule, others: Iterable[Rule | Listed]) -> None:
    for other in others:
        if other.code == rule.code or other.name == rule.name:
            raise ValueError(f"rule {rule.code} {rule.name} clashes with {other.code} {other.name}")


def rule(
    code: str,
    name: str,
    *,
    severity: Severity,
    kinds: Iterable[str] = (),
    reports: type | None = None,
    remediation: str | None = None,
    options: type[RuleOptions] | None = None,
    since: str = "2.0",
    until: str | None = None,
    preview: bool = False,
    across: Across | None = None,
) -> Callable[[AnyCheck], AnyCheck]:
    """Declare a rule: `check(manifest, ctx)` runs on objects of `kinds` and yields Problems,
    or, with `reports`, `check(reported)` turns each thing of that type the engine finds (a
    load problem, an unused suppression) into Problems. A `preview` rule is off by default
    (see `Rule.preview`). With `across`, the check also yields Facts, and `across` makes
    findings of all the objects' facts at once (see `Across`)."""
    if bool(kinds) == (reports is not None):
        raise ValueError(f"rule {code} checks objects of `kinds` or `reports` one type")
    told = getattr(reports, "code", code)
    if told != code:
        raise ValueError(f"rule {code} reports {getattr(reports, '__name__', reports)}, of {told}")

    def register(check: AnyCheck) -> AnyCheck:
        _register(
            Rule(
                code, name, severity, frozenset(kinds), check, remediation, check.__doc__ or "",
                options, parse_version(since), parse_version(until) if until else None,
                preview, reports, across,
            )
        )
        return check

    return register


def reported(rule: Rule, item: object) -> Iterator[Problem]:
    """The Problems a rule that `reports` something else (a load problem, a suppression)
    makes of it: such a check yields no Facts."""
    for found in rule.check(item):
        assert isinstance(found, Problem), f"{rule.code} reports, and so yields no facts"
        yield found


@cache
def _cleaned(text: str) -> str:
    import inspect

    return inspect.cleandoc(text)


@cache
def listed_rules() -> dict[str, Listed]:
    """Every rule, by code, in code order, as listed: a run imports the modules of the rules
    it runs only (`Listed.load`).

    The rules are found by the package's name, as plugins are: they sit a floor above the
    rule API they are written against, and no code below them names one. The package's
    registry lists its rules; a module it does not list (a rule added beside them) is
    imported now, and its rules listed as they declare themselves."""
    registry = importlib.import_module(f"{RULES_PACKAGE}.{REGISTRY}")
    listed = {
        code: Listed(code, name, frozenset(kinds), remediation, since, until, preview,
                     f"{RULES_PACKAGE}.{module}")
        for code, name, kinds, since, until, preview, module, remediation in registry.RULES
    }
    known = {rule.module for rule in listed.values()}
    for module in rule_modules():
        if module not in known:
            importlib.import_module(module)
    for declared in list(_REGISTRY.values()):
        if declared.check.__module__ not in known:
            _refuse_clashes(declared, listed.values())
            listed[declared.code] = Listed.of(declared)
    return dict(sorted(listed.items()))


def rule_modules() -> list[str]:
    """The dotted names of the rules' modules: every module of the package (a `.py` file,
    or a folder with an `__init__.py`) but its registry. The folder is listed here: pkgutil,
    which would list it, costs every run more to import (1–2 ms) than the listing."""
    package = importlib.import_module(RULES_PACKAGE)
    names = set()
    for folder in package.__path__:
        for path in Path(folder).iterdir():
            if path.suffix == ".py":
                names.add(path.stem)
            elif (path / "__init__.py").is_file():
                names.add(path.name)
    return [f"{RULES_PACKAGE}.{name}" for name in sorted(names - {"__init__", REGISTRY})]


@cache
def all_rules() -> dict[str, Rule]:
    """Every rule, by code, in code order, for what needs them all (the rules' docs, the
    webhook, the language server): every module of the package imported once."""
    for module in rule_modules():
        importlib.import_module(module)
    return dict(sorted(_REGISTRY.items()))


def find_rule(selector: str) -> Listed | None:
    """A rule by code (any case) or name, as listed (`Listed.load` gives the rule)."""
    rules = listed_rules()
    return rules.get(selector.upper()) or next(
        (rule for rule in rules.values() if rule.name == selector), None
    )


def did_you_mean_rule(selector: str, *, exact: bool = False) -> str:
    """` (did you mean `TL301`?)` for a selector that names no rule, "" when no code, code
    prefix or name is close to it; with `exact`, where one rule must be named (a
    suppression, `trainlint rule`), no prefix and no `ALL` (`TL4` named nothing there)."""
    from trainlint.suggest import did_you_mean

    rules = listed_rules().values()
    names = [rule.name for rule in rules]
    if exact:
        if not selector.strip():
            return ""
        if selector.upper() == "ALL":
            return " (`ALL` selects every rule, where rules are selected: name one)"
        prefixed = [rule.code for rule in rules if code_matches(rule.code, selector)]
        if prefixed:
            return (f" (the start of {len(prefixed)} rules' codes, {prefixed[0]} to "
                    f"{prefixed[-1]}: name one)")
        return did_you_mean(selector, [*(rule.code for rule in rules), *names])
    prefixes = {rule.code[:length] for rule in rules for length in range(2, 6)}
    return did_you_mean(selector, [*sorted(prefixes), *names, "ALL"])


def matches(rule: Listed, selectors: Any) -> bool:
    """Whether a rule is named by any selector: a code, a code prefix (`TL3`, `ALL`) or a name."""
    return any(code_matches(rule.code, selector) or rule.name == selector for selector in selectors)


def named_exactly(rule: Listed, selectors: Any) -> bool:
    """Whether a selector names this rule by its whole code or its name (not by a prefix
    or `ALL`): how a preview rule is turned on alone."""
    return any(selector.upper() == rule.code or selector == rule.name for selector in selectors)


def code_matches(code: str, selector: str) -> bool:
    upper = selector.upper()
    return upper == "ALL" or code.startswith(upper)


def names_codes(selectors: Iterable[str]) -> bool:
    """Whether every selector is a code or code prefix: matching then needs no rule."""
    return all(re.fullmatch(r"ALL|TL\d{0,3}", selector.upper()) for selector in selectors)
