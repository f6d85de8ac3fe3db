"""What a check reports and how severe it is: the Problem, its Fix, the keys it relates to.

The ground floor: the render and the schema checks build Problems as the rules do.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any, NamedTuple

from trainlint.document import KeyPath, Manifest


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"

#: Edits the round-trip mapping (ruamel.yaml) of the object a Problem is on, in place.
Edit = Callable[[Any], None]

#: Edits a file's text (comments, which the round-trip tree does not give to edit):
#: the whole text before → after; LookupError when it no longer holds what it was made for.
Rewrite = Callable[[str], str]


class TextEdit(NamedTuple):
    """Replace the text from (row, column) up to (end_row, end_column) (1-based, columns
    in characters, the end excluded) of the original file with `content`."""

    row: int
    column: int
    end_row: int
    end_column: int
    content: str


class Fix(NamedTuple):
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


class Related(NamedTuple):
    """A key in another object that a finding depends on (the runtime's line that makes
    a TrainJob's finding true), and what it has to do with the finding."""

    manifest: Manifest
    path: KeyPath
    message: str


class Problem(NamedTuple):
    """What a check reports: where (a key path in the object) and what.

    Problem, Fix, TextEdit and Fact are named tuples: a frozen dataclass costs each run
    that imports it 3 to 4 million instructions (its methods compiled), a named tuple one."""

    path: KeyPath
    message: str
    #: What to do, when the remedy depends on the case (instead of the rule's own).
    remediation: str | None = None
    #: How to repair it, when the check knows a repair.
    fix: Fix | None = None
    #: The keys of other objects that cause it, when they are not in this one.
    related: tuple[Related, ...] = ()


class Fact(NamedTuple):
    """What a check tells its rule's cross-object pass (`across`) about its object: a
    value of plain data (lists, strings, numbers: it crosses processes and is cached as
    JSON), and the key it is about, where a finding made of it lands. A finding that
    needs other objects' facts (a runtime's, once all its TrainJobs are known) is made
    there, never by reading the other objects."""

    path: KeyPath
    value: Any
    #: The repair a finding made of it offers (an edit of this object only).
    fix: Fix | None = None


#: Severities from the least to the most serious, for `fail-on`.
SEVERITY_RANK = {Severity.WARNING: 0, Severity.ERROR: 1}


def listed(items: list[str]) -> str:
    """Items as a message lists them: `a`, `a and b`, `a, b and c`."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
