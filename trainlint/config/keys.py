"""The keys a configuration may set, and the options of rules, validated with pydantic.

Values are validated strictly, as the JSON they are: `true`, not "yes"; `5`, not "5" or
5.0. Imported only when a configuration file or the command line sets something: a run on
the defaults never pays for importing pydantic.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Iterable
from pathlib import PurePath
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    TypeAdapter,
    ValidationError,
    field_validator,
)

from trainlint.errors import ConfigError
from trainlint.options import OptionError, RuleOptions, kebab
from trainlint.problem import Severity
from trainlint.release import parse_version
from trainlint.rule import Rule, did_you_mean_rule, listed_rules, matches
from trainlint.suggest import did_you_mean

#: Deeper than any key takes (`rules.TL402.flags[0]` is 4 deep): refused before anything
#: walks the data with recursion.
MAX_DEPTH = 10
#: The name part of an extended resource name (Kubernetes' qualified name).
QUALIFIED_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
#: Values in one layer, counted as if YAML aliases were copied out, so that an alias bomb
#: is refused before it is walked.
MAX_VALUES = 100_000


def _selectors(values: list[str]) -> list[str]:
    for value in values:
        if not value.strip():  # a prefix of every code: a list emptied by mistake
            raise ValueError("an empty selector names no rule (`ALL` selects every rule)")
        if not any(matches(rule, [value]) for rule in listed_rules().values()):
            raise ValueError(
                f"no rule matches {value!r}{did_you_mean_rule(value)} (see `trainlint rules`)"
            )
    return values


def _patterns(patterns: Iterable[str], *, alone: bool = False) -> None:
    """Refuse a gitignore pattern that pathspec cannot compile or that matches no path
    (`[` unclosed, `#...`, blank); `alone`: each pattern is used by itself, so a negation
    (`!x`) matches nothing either."""
    from pathspec import GitIgnoreSpec

    for pattern in patterns:
        try:
            compiled = GitIgnoreSpec.from_lines([pattern]).patterns
        except (ValueError, re.error) as error:
            raise ValueError(f"{pattern!r} is not a gitignore pattern: {error}") from None
        include = compiled[0].include if compiled else None
        if include is None:
            hint = " (an unclosed `[`: write `\\[` for a bracket)" if "[" in pattern else ""
            raise ValueError(f"{pattern!r} matches no path as a gitignore pattern{hint}")
        if alone and not include:
            raise ValueError(f"{pattern!r}: a negated pattern on its own matches no file")


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
        from trainlint.model.k8s import resolve_version

        release = f"1.{int(match[1])}"
        resolve_version(release)  # schemas for it, or an older release, are installed
        return release

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

    @field_validator("exclude", "extend_exclude")
    @classmethod
    def _compiled(cls, value: list[str] | None) -> list[str] | None:
        _patterns(value or [])
        return value

    @field_validator("per_file_ignores")
    @classmethod
    def _known_codes(cls, value: dict[str, list[str]] | None) -> dict[str, list[str]] | None:
        _patterns(value or {}, alone=True)
        for codes in (value or {}).values():
            _selectors(codes)
        return value

    @field_validator("device_resources")
    @classmethod
    def _resource_names(cls, value: dict[str, str] | None) -> dict[str, str] | None:
        """A name that is no extended resource name would never match a container's."""
        from trainlint.patches import SUBDOMAIN_FORMAT

        for name in value or {}:
            if not re.fullmatch(rf"{SUBDOMAIN_FORMAT}/{QUALIFIED_NAME}", name):
                raise ValueError(
                    f"{name!r} is not a device-plugin resource name like \"nvidia.com/gpu\""
                )
        return value

    @field_validator("cache_dir")
    @classmethod
    def _own_folder(cls, value: str | None) -> str | None:
        """The cache folder gets a `.gitignore` of `*` and loses its stale cache files:
        it must not be the configuration's folder or one above it."""
        if value is None:
            return None
        path = PurePath(os.path.normpath(value))
        if set(path.parts) - {path.anchor} <= {".."}:
            raise ValueError(
                f"{value!r} is not a folder of its own: trainlint marks the cache folder "
                "ignored by git; name one such as \".trainlint_cache\""
            )
        return value

    @field_validator("severity")
    @classmethod
    def _known_keys(cls, value: dict[str, Severity] | None) -> dict[str, Severity] | None:
        _selectors(list(value or {}))
        return value


def validate(data: dict[str, Any], where: str, prefix: str = "") -> dict[str, Any]:
    """The keys `data` sets, by their kebab-case names; errors name `where` and the key."""
    try:
        keys = Keys.model_validate_json(_as_json(data, where, prefix), strict=True)
    except ValidationError as error:
        known = sorted(kebab(name) for name in Keys.model_fields)
        raise _error(error, where, prefix, "key", known) from None
    return keys.model_dump(mode="json", exclude_none=True, by_alias=True)


def rule_options(rule: Rule, table: dict[str, Any], where: str, prefix: str) -> RuleOptions:
    """A rule's options table, validated against the rule's options dataclass."""
    assert rule.options is not None
    try:
        options: RuleOptions = TypeAdapter(rule.options).validate_json(
            _as_json(table, where, prefix), strict=True
        )
    except ValidationError as error:
        known = [kebab(field.name) for field in dataclasses.fields(rule.options)]
        raise _error(error, where, prefix, "option", known) from None
    return options


def dump_options(options: RuleOptions) -> dict[str, Any]:
    """RuleOptions as their configuration table (kebab-case keys, lists for tuples)."""
    table: dict[str, Any] = TypeAdapter(type(options)).dump_python(
        options, mode="json", by_alias=True
    )
    return table


def _as_json(data: dict[str, Any], where: str, prefix: str) -> str:
    """`data` as JSON text, for strict validation. Refuses what JSON cannot hold (a YAML or
    TOML date, a key that is not a string), and data nested deeper or larger than any
    configuration, before anything walks it recursively."""
    count = 0
    stack: list[tuple[tuple[str | int, ...], object]] = [((), data)]
    while stack:
        loc, value = stack.pop()
        count += 1
        if count > MAX_VALUES:
            raise ConfigError(f"{where}: more than {MAX_VALUES:,} values (YAML aliases count "
                              "as copies); no configuration needs that many")
        if len(loc) > MAX_DEPTH:
            raise ConfigError(f"{where}: {_key(prefix, loc[:MAX_DEPTH])}: nested more than "
                              f"{MAX_DEPTH} levels deep; no key takes such a value")
        if isinstance(value, dict):
            for name, item in value.items():
                if not isinstance(name, str):
                    raise ConfigError(f"{where}: {_key(prefix, loc)}: the key {name!r} is not "
                                      "a string")
                stack.append(((*loc, name), item))
        elif isinstance(value, list):
            stack.extend(((*loc, index), item) for index, item in enumerate(value))
        elif value is not None and not isinstance(value, str | int | float):
            raise ConfigError(f"{where}: {_key(prefix, loc)}: a {type(value).__name__} is not "
                              "a value any key takes")
    return json.dumps(data)


def _key(prefix: str, loc: Iterable[str | int]) -> str:
    """A key path as the configuration writes it: `rules.TL402.flags[0]`."""
    return prefix + "".join(
        f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc
    ).lstrip(".")


def _error(
    error: ValidationError, where: str, prefix: str, noun: str, known: list[str]
) -> ConfigError:
    """One line per problem: `where: key: message`, an unknown key listing the known ones,
    a value of the wrong type shown as given."""
    problems = []
    for item in error.errors():
        loc = list(item["loc"])
        refusal = item.get("ctx", {}).get("error")
        if isinstance(refusal, OptionError):
            loc.append(refusal.option)
        key = _key(prefix, loc).rstrip(".")
        if item["type"] in ("extra_forbidden", "unexpected_keyword_argument"):
            given = str(item["loc"][-1]) if item["loc"] else ""
            message = f"unknown {noun}{did_you_mean(given, known)} (known: {', '.join(known)})"
        else:
            message = str(item["msg"]).removeprefix("Value error, ")
            if item["type"] != "value_error" and isinstance(item["input"], str | int | float):
                message += f", not {_shown(item['input'])}"
        problems.append(f"{where}: {key}: {message}")
    return ConfigError("\n".join(problems))


def _shown(value: object) -> str:
    """A value as the configuration writes it, cut short."""
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."
