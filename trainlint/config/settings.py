"""Settings: how one run is configured, and which rules that enables."""

from __future__ import annotations

from collections import defaultdict
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
from trainlint.rule import Rule, all_rules, code_matches, named_exactly, names_codes
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
    def rules_by_code(self) -> dict[str, Rule]:
        """The enabled rules, by code (read only)."""
        return {rule.code: rule for rule, _ in self.rules_with_options}

    @cached_property
    def rules_reporting(self) -> dict[type, Rule]:
        """The enabled rules that report what is not an object, by the type they report."""
        return {
            rule.reports: rule for rule, _ in self.rules_with_options if rule.reports is not None
        }

    @cached_property
    def rules_by_kind(self) -> dict[str, tuple[tuple[Rule, RuleOptions | None], ...]]:
        """The enabled rules and their options, by the kind they check."""
        by_kind: dict[str, list[tuple[Rule, RuleOptions | None]]] = defaultdict(list)
        for rule, options in self.rules_with_options:
            for kind in rule.kinds:
                by_kind[kind].append((rule, options))
        return {kind: tuple(rules) for kind, rules in by_kind.items()}

    @cached_property
    def rules_with_options(self) -> tuple[tuple[Rule, RuleOptions | None], ...]:
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
            code for code, rule in all_rules().items()
            if rule_matches(rule, self.fixable) and not rule_matches(rule, self.unfixable)
        )

    def fails(self, findings: Iterable[Finding]) -> bool:
        """Whether any finding is at or above `fail_on`."""
        least = SEVERITY_RANK[self.fail_on]
        return any(SEVERITY_RANK[finding.severity] >= least for finding in findings)
