"""A problem as users see it: the Finding every front end renders, and its object."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import chain
from typing import Any, NamedTuple

from trainlint.document import KeyPath, Manifest, Source, Span, mapping
from trainlint.problem import Fix, Problem, Related, Severity


class ObjectRef(NamedTuple):
    """The object a finding is on, as findings name it (a named tuple, as `Problem`)."""

    api_version: str
    kind: str
    name: str
    namespace: str | None

    @classmethod
    def of(cls, manifest: Manifest) -> ObjectRef:
        """The object as findings name it: its namespace as written (None when unset)."""
        namespace = mapping(manifest.body.get("metadata")).get("namespace")
        return cls(manifest.api_version, manifest.kind, manifest.name,
                   namespace if isinstance(namespace, str) else None)


@dataclass(frozen=True, slots=True)
class Finding:
    """A problem as users see it: rule, severity, message and position."""

    code: str
    name: str
    severity: Severity
    message: str
    #: What to do about it (the rule's remediation, or the problem's own).
    remediation: str | None
    source: Source
    span: Span
    path: KeyPath
    object: ObjectRef | None
    #: The repair the rule offers, and the object it edits.
    fix: Fix | None = field(default=None, compare=False)
    manifest: Manifest | None = field(default=None, compare=False, repr=False)
    #: The keys of other objects that cause it (the runtime's, for a TrainJob's finding).
    related: tuple[Related, ...] = field(default=(), compare=False, repr=False)

    @property
    def file(self) -> str:
        return self.source.name

    def sort_key(self) -> tuple[str, int, int, str, str]:
        return self.file, self.span.line, self.span.column, self.code, self.message


def in_order(per_input: Iterable[Iterable[Finding]]) -> list[Finding]:
    """The findings of several inputs in the order every output shows them: by file,
    position, code and message."""
    return sorted(chain.from_iterable(per_input), key=Finding.sort_key)


class Note(NamedTuple):
    """A `Fact` as the run keeps it for its rule's `across`: what it says, and where its
    object is, so that a finding made of it needs no document (it is made in the parent
    process, or from the cache, once every object's facts are known)."""

    #: The rule whose check yielded it.
    code: str
    value: Any
    path: KeyPath
    span: Span
    source: Source
    object: ObjectRef
    #: Its object's place in the run (input, then object): earlier objects come first.
    order: tuple[int, int]
    #: Whether its object is checked: an object known only as context tells its facts
    #: (a TrainJob of the cluster that uses a runtime checked here), and takes no finding.
    checked: bool = True
    fix: Fix | None = None
    #: Its object, in the process that checked it (for a finding's related keys and
    #: fixes); None once it crossed processes or came from the cache.
    manifest: Manifest | None = None

    def problem(self, message: str, related: tuple[Related, ...] = ()) -> Problem:
        """A finding on this note's key, with its fix."""
        return Problem(self.path, message, fix=self.fix, related=related)

    def related(self, message: str, path: KeyPath | None = None) -> tuple[Related, ...]:
        """This note's key (or another key of its object) as the related key of a finding
        on another object; none where its object is not at hand."""
        if self.manifest is None:
            return ()
        return (Related(self.manifest, self.path if path is None else path, message),)
