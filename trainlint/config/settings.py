"""Settings: how one run is configured, and which rules that enables."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from trainlint.config.defaults import (
    DEFAULT_FAIL_ON,
    DEFAULT_FIXABLE,
    DEFAULT_KUBERNETES_VERSION,
    DEFAULT_SELECT,
    DEFAULT_TRAINER_VERSION,
    DOCS_URL,
)
from trainlint.finding import Finding
from trainlint.memo import PerValue
from trainlint.options import RuleOptions
from trainlint.problem import SEVERITY_RANK, Severity
from trainlint.release import TrainerVersion
from trainlint.rule import Listed, Rule, code_matches, listed_rules, named_exactly, names_codes
from trainlint.rule import matches as rule_matches

_FAIL_ON = Severity(DEFAULT_FAIL_ON)
_MAY_FIX: PerValue[bool] = PerValue("may-fix")


@dataclass(frozen=True)
class Settings:
    """How a run is configured: release, rule selection, severities, options, suppressions."""

    trainer_version: TrainerVersion = DEFAULT_TRAINER_VERSION
    #: The Kubernetes minor release of the cluster (`1.33`), for the schema rules.
    kubernetes_version: str = DEFAULT_KUBERNETES_VERSION
    select: tuple[str, ...] = DEFAULT_SELECT
    ignore: tuple[str, ...] = ()
    severities: Mapping[str, Severity] = field(default_factory=dict)
    rule_options: Mapping[str, RuleOptions] = field(default_factory=dict)
    #: Honour the object annotation `trainlint.dev/ignore` (a webhook may refuse it).
    annotation_exemptions: bool = True
    #: The least severity that fails a run (exit status 1).
    fail_on: Severity = _FAIL_ON
    #: Rules whose fixes `--fix` may apply (config `fixable`, `unfixable`).
    fixable: tuple[str, ...] = DEFAULT_FIXABLE
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
    def enabled(self) -> dict[str, Listed]:
        """The enabled rules, by code, as listed: choosing them imports none (read only)."""
        return {
            code: rule for code, rule in listed_rules().items()
            if rule_matches(rule, self.select)
            and not rule_matches(rule, self.ignore)
            and rule.applies_to(self.trainer_version)
            and (not rule.preview or self.preview or named_exactly(rule, self.select))
        }

    def rules_for(self, kind: str) -> tuple[tuple[Rule, RuleOptions | None], ...]:
        """The enabled rules that check objects of `kind`, with their options: a run imports
        the modules of the kinds it meets only (worked out once per kind and Settings: a
        webhook lints every request with the same Settings)."""
        if kind not in self._by_kind:
            self._by_kind[kind] = tuple(
                (loaded, self._options_of(loaded))
                for loaded in (rule.load() for rule in self.enabled.values() if kind in rule.kinds)
            )
        return self._by_kind[kind]

    @cached_property
    def rules_reporting(self) -> dict[type, Rule]:
        """The enabled rules that report what is not an object, by the type they report
        (the rules of no kind), imported when first asked for."""
        loaded = (rule.load() for rule in self.enabled.values() if not rule.kinds)
        return {rule.reports: rule for rule in loaded if rule.reports is not None}

    @cached_property
    def _by_kind(self) -> dict[str, tuple[tuple[Rule, RuleOptions | None], ...]]:
        return {}

    def _options_of(self, rule: Rule) -> RuleOptions | None:
        """A rule's options, configured or its defaults, made once: every kind it checks
        shares them."""
        if rule.code not in self._options:
            configured = self.rule_options.get(rule.code)
            self._options[rule.code] = configured or (rule.options() if rule.options else None)
        return self._options[rule.code]

    @cached_property
    def _options(self) -> dict[str, RuleOptions | None]:
        return {}

    def may_fix(self, code: str) -> bool:
        """Whether `fixable`/`unfixable` let `--fix` apply fixes of this rule (told from the
        code alone when they name codes: a run served from the cache imports no rule;
        worked out once per code, as each finding of a report asks)."""
        return _MAY_FIX.get(self, lambda: self._may_fix(code), code)

    def _may_fix(self, code: str) -> bool:
        if names_codes((*self.fixable, *self.unfixable)):
            return any(code_matches(code, selector) for selector in self.fixable) and not any(
                code_matches(code, selector) for selector in self.unfixable
            )
        return code in self._fixable_codes

    @cached_property
    def memo(self) -> dict[tuple[Hashable, ...], Any]:
        """What is worked out from these settings (`trainlint.memo.PerValue`)."""
        return {}

    @cached_property
    def _fixable_codes(self) -> frozenset[str]:
        return frozenset(
            code for code, rule in listed_rules().items()
            if rule_matches(rule, self.fixable) and not rule_matches(rule, self.unfixable)
        )

    def fails(self, findings: Iterable[Finding]) -> bool:
        """Whether any finding is at or above `fail_on`."""
        least = SEVERITY_RANK[self.fail_on]
        return any(SEVERITY_RANK[finding.severity] >= least for finding in findings)
