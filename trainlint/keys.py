"""The keys a configuration may set, and the options of rules, validated with pydantic.

Imported only when a configuration file or the command line sets something: a run on the
defaults never pays for importing pydantic.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError, field_validator

from trainlint.config import ConfigError
from trainlint.rule import (
    Options,
    Rule,
    Severity,
    all_rules,
    did_you_mean_rule,
    kebab,
    matches,
    parse_version,
)
from trainlint.suggest import did_you_mean


def _selectors(values: list[str]) -> list[str]:
    for value in values:
        if not any(matches(rule, [value]) for rule in all_rules().values()):
            raise ValueError(
                f"no rule matches {value!r}{did_you_mean_rule(value)} (see `trainlint rules`)"
            )
    return values


class Keys(BaseModel):
    """The keys one configuration layer may set; all optional, unknown keys refused."""

    model_config = ConfigDict(extra="forbid", alias_generator=kebab, frozen=True)

    trainer_version: str | None = None
    kubernetes_version: str | None = None
    select: list[str] | None = None
    extend_select: list[str] | None = None
    ignore: list[str] | None = None
    per_file_ignores: dict[str, list[str]] | None = None
    exclude: list[str] | None = None
    extend_exclude: list[str] | None = None
    respect_gitignore: bool | None = None
    cache_dir: str | None = None
    context: list[str] | None = None
    bundled_runtimes: bool | None = None
    severity: dict[str, Severity] | None = None
    rules: dict[str, dict[str, Any]] | None = None
    fail_on: Literal["warning", "error"] | None = None
    fixable: list[str] | None = None
    unfixable: list[str] | None = None
    preview: bool | None = None
    device_resources: dict[str, Literal["gpu", "tpu", "npu", "hpu", "neuron", "share"]] | None = (
        None
    )
    docs_url: str | None = None

    @field_validator("trainer_version", "kubernetes_version", mode="before")
    @classmethod
    def _quoted(cls, value: object) -> object:
        if isinstance(value, int | float):
            raise ValueError(f"write the version as a string: \"{value}\", not {value}")
        return value

    @field_validator("trainer_version")
    @classmethod
    def _trainer_release(cls, value: str | None) -> str | None:
        if value is None:
            return None
        major, minor = parse_version(value)
        return f"{major}.{minor}"

    @field_validator("kubernetes_version")
    @classmethod
    def _kubernetes_release(cls, value: str | None) -> str | None:
        if value is None:
            return None
        match = re.fullmatch(r"v?1\.(\d{1,2})(?:\.\d+)?", value.strip())
        if match is None:
            raise ValueError(f"{value!r} is not a Kubernetes release like \"1.33\"")
        return f"1.{int(match[1])}"

    @field_validator("docs_url")
    @classmethod
    def _site(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"https?://[^\s/]+(/\S*)?", value):
            raise ValueError(f"{value!r} is not an http(s) address like \"https://trainlint.dev\"")
        return None if value is None else value.rstrip("/")

    @field_validator("select", "extend_select", "ignore", "fixable", "unfixable")
    @classmethod
    def _known(cls, value: list[str] | None) -> list[str] | None:
        return None if value is None else _selectors(value)

    @field_validator("per_file_ignores")
    @classmethod
    def _known_codes(cls, value: dict[str, list[str]] | None) -> dict[str, list[str]] | None:
        for codes in (value or {}).values():
            _selectors(codes)
        return value

    @field_validator("severity")
    @classmethod
    def _known_keys(cls, value: dict[str, Severity] | None) -> dict[str, Severity] | None:
        _selectors(list(value or {}))
        return value


def validate(data: dict[str, Any], where: str, prefix: str = "") -> dict[str, Any]:
    """The keys `data` sets, by their kebab-case names; errors name `where` and the key."""
    try:
        keys = Keys.model_validate(data)
    except ValidationError as error:
        known = sorted(kebab(name) for name in Keys.model_fields)
        raise _error(error, where, prefix, "key", known) from None
    return keys.model_dump(mode="json", exclude_none=True, by_alias=True)


def rule_options(rule: Rule, table: dict[str, Any], where: str, prefix: str) -> Options:
    """A rule's options table, validated against the rule's options dataclass."""
    assert rule.options is not None
    try:
        options: Options = TypeAdapter(rule.options).validate_python(table)
    except ValidationError as error:
        known = [kebab(field.name) for field in dataclasses.fields(rule.options)]
        raise _error(error, where, prefix, "option", known) from None
    return options


def dump_options(options: Options) -> dict[str, Any]:
    """Options as their configuration table (kebab-case keys, lists for tuples)."""
    table: dict[str, Any] = TypeAdapter(type(options)).dump_python(
        options, mode="json", by_alias=True
    )
    return table


def _error(
    error: ValidationError, where: str, prefix: str, noun: str, known: list[str]
) -> ConfigError:
    """One line per problem: `where: key: message`, an unknown key listing the known ones."""
    problems = []
    for item in error.errors():
        key = prefix + "".join(
            f"[{part}]" if isinstance(part, int) else f".{part}" for part in item["loc"]
        ).lstrip(".")
        if item["type"] in ("extra_forbidden", "unexpected_keyword_argument"):
            given = str(item["loc"][-1]) if item["loc"] else ""
            message = f"unknown {noun}{did_you_mean(given, known)} (known: {', '.join(known)})"
        else:
            message = str(item["msg"]).removeprefix("Value error, ")
        problems.append(f"{where}: {key}: {message}")
    return ConfigError("\n".join(problems))
