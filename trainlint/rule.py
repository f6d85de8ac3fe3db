"""What a rule is: its metadata, declared once in a decorator beside its check."""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar

from trainlint.document import Manifest, Path

if TYPE_CHECKING:
    from trainlint.engine import Context

TrainerVersion = tuple[int, int]
#: Releases of Kubeflow Trainer whose API trainlint knows, oldest first.
RELEASES: tuple[TrainerVersion, ...] = ((2, 0), (2, 1), (2, 2), (2, 3))
NEWEST = RELEASES[-1]
#: Where the documentation site (built from `docs/` by mkdocs) is published; config
#: `docs-url` points the links at another copy of it.
DOCS_URL = "https://trainlint.dev"
#: Each rule's page on that site (`docs/rules/TLnnn.md`, the text of `trainlint rule CODE`):
#: the SARIF `helpUri` and the language server's `codeDescription` both link here.
RULE_DOCS = "{site}/rules/{code}/"
#: What the documentation of a preview rule says of it.
PREVIEW_NOTE = (
    "Preview: off by default; runs with `--preview` (config `preview = true`) or when "
    "selected by its code or name."
)


def parse_version(text: str) -> TrainerVersion:
    """`2.3`, `v2.3` or `v2.3.0` → (2, 3); ValueError for a release trainlint does not know."""
    match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?", text.strip())
    version = (int(match.group(1)), int(match.group(2))) if match else None
    if version not in RELEASES:
        known = ", ".join(f"{major}.{minor}" for major, minor in RELEASES)
        raise ValueError(f"unknown Trainer release {text!r} (known: {known})")
    return version


def format_version(version: TrainerVersion) -> str:
    return f"v{version[0]}.{version[1]}"


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


def kebab(name: str) -> str:
    """A Python field name as configuration spells it: `max_restarts` → `max-restarts`."""
    return name.replace("_", "-")


@dataclass(frozen=True)
class Options:
    """Base of rule options, frozen dataclasses with defaults: kebab-case keys in config,
    unknown keys refused.

    Plain dataclasses, so a run without a configuration never imports pydantic; the
    configuration validates a `[rules.CODE]` table against them with pydantic, which
    reads `__pydantic_config__`.
    """

    __pydantic_config__: ClassVar[dict[str, Any]] = {
        "extra": "forbid", "alias_generator": kebab, "populate_by_name": True,
    }


class OptionError(ValueError):
    """A rule option out of its range, raised by the options' `__post_init__`: plain
    checks, so that importing the rules imports no validation library."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        #: The option's name in configuration (`min-seconds`).
        self.option = kebab(field)


def check_range(options: Options, field: str, low: int, high: int, why: str = "") -> None:
    """Refuse an integer option outside [low, high]; `why` explains the bounds."""
    value = getattr(options, field)
    if not low <= value <= high:
        reason = f" ({why})" if why else ""
        raise OptionError(field, f"must be from {low} to {high}, not {value}{reason}")


def check_no_empty_names(options: Options, *fields: str) -> None:
    """Refuse an empty string in a list option of names: as a part of a name it would
    match every name, and as a whole name it matches none."""
    for field in fields:
        if "" in getattr(options, field):
            raise OptionError(field, "must not hold an empty string")


#: Edits the round-trip mapping (ruamel.yaml) of the object a Problem is on, in place.
Edit = Callable[[Any], None]
#: Edits a file's text (comments, which the round-trip tree does not give to edit):
#: the whole text before → after; LookupError when it no longer holds what it was made for.
Rewrite = Callable[[str], str]


@dataclass(frozen=True, slots=True)
class TextEdit:
    """Replace the text from (row, column) up to (end_row, end_column) (1-based, columns
    in characters, the end excluded) of the original file with `content`."""

    row: int
    column: int
    end_row: int
    end_column: int
    content: str


@dataclass(frozen=True, slots=True)
class Fix:
    """A repair a check offers with its Problem, built where the check knows the case.

    Safe fixes keep what the manifest means to the cluster; unsafe ones change behaviour a
    user may rely on, so only `--unsafe-fixes` applies them. A fix edits the object's
    round-trip tree (`edit`), or the file's text (`rewrite`, for comments).
    """

    title: str
    edit: Edit | None
    safe: bool = True
    rewrite: Rewrite | None = None
    #: What the fix alone changes in its file (`fix.with_edits`; JSON's `fix.edits`):
    #: None until worked out, () when it cannot apply there.
    edits: tuple[TextEdit, ...] | None = None


@dataclass(frozen=True, slots=True)
class Related:
    """A key in another object that a finding depends on (the runtime's line that makes
    a TrainJob's finding true), and what it has to do with the finding."""

    manifest: Manifest
    path: Path
    message: str


@dataclass(frozen=True, slots=True)
class Problem:
    """What a check reports: where (a key path in the object) and what."""

    path: Path
    message: str
    #: Overrides the rule's generic help text when the remedy depends on the case.
    help: str | None = None
    #: How to repair it, when the check knows a repair.
    fix: Fix | None = None
    #: The keys of other objects that cause it, when they are not in this one.
    related: tuple[Related, ...] = ()


Check = Callable[[Manifest, "Context"], Iterator[Problem]]


@dataclass(frozen=True, slots=True)
class Rule:
    code: str
    name: str
    severity: Severity
    kinds: frozenset[str]
    check: Check | None
    help: str | None
    doc: str
    options: type[Options] | None
    since: TrainerVersion
    until: TrainerVersion | None
    #: Off by default: runs only in preview mode (`--preview`, config `preview = true`) or
    #: when selected by its own code or name. Rules whose findings are not yet right on
    #: real manifests often enough wait here (as ruff's preview rules do).
    preview: bool = False

    def applies_to(self, version: TrainerVersion) -> bool:
        return self.since <= version and (self.until is None or version <= self.until)

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
    def releases(self) -> str:
        first = format_version(self.since)
        if self.until is None:
            return "all" if self.since == RELEASES[0] else f"{first}+"
        return first if self.until == self.since else f"{first}–{format_version(self.until)}"


_REGISTRY: dict[str, Rule] = {}


def _register(rule: Rule) -> Rule:
    if not re.fullmatch(r"TL\d{3}", rule.code):
        raise ValueError(f"rule code {rule.code!r} is not TL + 3 digits")
    if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.name):
        raise ValueError(f"rule name {rule.name!r} is not kebab-case")
    for other in _REGISTRY.values():
        if other.code == rule.code or other.name == rule.name:
            raise ValueError(f"rule {rule.code} {rule.name} clashes with {other.code} {other.name}")
    _REGISTRY[rule.code] = rule
    return rule


def rule(
    code: str,
    name: str,
    *,
    kinds: set[str],
    severity: Severity,
    fix: str | None = None,
    options: type[Options] | None = None,
    since: str = "2.0",
    until: str | None = None,
    preview: bool = False,
) -> Callable[[Check], Check]:
    """Declare a rule: `check(manifest, ctx)` runs on objects of `kinds` and yields Problems;
    a `preview` rule is off by default (see `Rule.preview`)."""

    def register(check: Check) -> Check:
        _register(
            Rule(
                code, name, severity, frozenset(kinds), check, fix, _doc(check.__doc__),
                options, parse_version(since), parse_version(until) if until else None,
                preview,
            )
        )
        return check

    return register


def declare(code: str, name: str, *, severity: Severity, fix: str | None, doc: str) -> Rule:
    """Declare a rule whose problems are found while reading text (syntax, duplicate keys)."""
    return _register(
        Rule(code, name, severity, frozenset(), None, fix, _doc(doc), None, RELEASES[0], None)
    )


def _doc(text: str | None) -> str:
    import inspect

    return inspect.cleandoc(text or "")


@cache
def all_rules() -> dict[str, Rule]:
    """Every rule, by code, in code order: the modules of `trainlint.rules` are imported once."""
    import trainlint.rules as package

    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{module.name}")
    return dict(sorted(_REGISTRY.items()))


def find_rule(selector: str) -> Rule | None:
    """A rule by code (any case) or name."""
    rules = all_rules()
    return rules.get(selector.upper()) or next(
        (rule for rule in rules.values() if rule.name == selector), None
    )


def did_you_mean_rule(selector: str) -> str:
    """` (did you mean `TL301`?)` for a selector that names no rule, "" when no code, code
    prefix or name is close to it."""
    from trainlint.suggest import did_you_mean

    rules = all_rules().values()
    prefixes = {rule.code[:length] for rule in rules for length in range(2, 6)}
    return did_you_mean(selector, [*sorted(prefixes), *(rule.name for rule in rules), "ALL"])


def matches(rule: Rule, selectors: Any) -> bool:
    """Whether a rule is named by any selector: a code, a code prefix (`TL3`, `ALL`) or a name."""
    return any(code_matches(rule.code, selector) or rule.name == selector for selector in selectors)


def named_exactly(rule: Rule, selectors: Any) -> bool:
    """Whether a selector names this rule by its whole code or its name (not by a prefix
    or `ALL`): how a preview rule is turned on alone."""
    return any(selector.upper() == rule.code or selector == rule.name for selector in selectors)


def code_matches(code: str, selector: str) -> bool:
    upper = selector.upper()
    return upper == "ALL" or code.startswith(upper)


def names_codes(selectors: Iterable[str]) -> bool:
    """Whether every selector is a code or code prefix: matching then needs no rule."""
    return all(re.fullmatch(r"ALL|TL\d{0,3}", selector.upper()) for selector in selectors)
