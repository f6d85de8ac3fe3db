"""The base of rule options: frozen dataclasses with defaults, checked without pydantic."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar


def kebab(name: str) -> str:
    """A Python field name as configuration spells it: `max_restarts` → `max-restarts`."""
    return name.replace("_", "-")


@dataclass(frozen=True)
class RuleOptions:
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


def check_range(options: RuleOptions, field: str, low: int, high: int, why: str = "") -> None:
    """Refuse an integer option outside [low, high]; `why` explains the bounds."""
    value = getattr(options, field)
    if not low <= value <= high:
        reason = f" ({why})" if why else ""
        raise OptionError(field, f"must be from {low} to {high}, not {value}{reason}")


def check_no_empty_names(options: RuleOptions, *fields: str) -> None:
    """Refuse an empty string in a list option of names: as a part of a name it would
    match every name, and as a whole name it matches none."""
    for field in fields:
        if "" in getattr(options, field):
            raise OptionError(field, "must not hold an empty string")
