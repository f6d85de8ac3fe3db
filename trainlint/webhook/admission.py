"""AdmissionReview in, AdmissionReview out: the webhook's decision, free of any I/O.

The engine is the same `lint()` the CLI runs; this module only turns the request into
Manifests and the findings into what the API server accepts (a denial message that fits,
warnings kubectl prints unchanged).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from trainlint.config.settings import Settings
from trainlint.document import (
    KeyPath,
    Loaded,
    Manifest,
    NotAnObject,
    Source,
    TooComplex,
    dig,
    dotted,
    mapping,
    string,
)
from trainlint.engine.run import lint
from trainlint.finding import Finding
from trainlint.kinds import TRAINER_GROUP, TRAINER_KINDS
from trainlint.loader import MAX_DEPTH
from trainlint.memo import PerValue
from trainlint.problem import Severity

API_VERSION = "admission.k8s.io/v1"
KIND = "AdmissionReview"
#: What the API server shows of a denial without cutting it.
MAX_MESSAGE = 1024
#: Stricter than the API server (256 per warning, 4 KiB in all), so nothing is ever cut.
MAX_WARNING = 120
MAX_WARNINGS = 20
MAX_WARNINGS_TOTAL = 4096
OPERATIONS = frozenset({"CREATE", "UPDATE"})
#: Where the objects a request is checked against come from, as messages name it.
CLUSTER = "the cluster"
#: Operations the API server may send that no rule is about: allowed without a check.
IGNORED_OPERATIONS = frozenset({"DELETE", "CONNECT"})
#: Containers nested deeper than this in a body too deep for the JSON parser are read as
#: null: deeper than any object a rule reads (`MAX_DEPTH` below the object itself), so
#: the request's own fields are still read and the object is refused as too deep.
SKIM_DEPTH = MAX_DEPTH + 8


class Mode(StrEnum):
    """`advise` never denies (errors become warnings); `enforce` denies on errors."""

    ADVISE = "advise"
    ENFORCE = "enforce"


class BadReview(ValueError):
    """The body is not an AdmissionReview v1 request. When it is a JSON object, the answer
    is still an AdmissionReview (refusing it), carrying `uid` (the request's, or "" when it
    has none); otherwise (`uid` None) it is HTTP 400."""

    def __init__(self, message: str, uid: str | None = None) -> None:
        super().__init__(message)
        self.uid = uid


@dataclass(frozen=True, slots=True)
class Review:
    """The parts of an AdmissionReview request the decision depends on."""

    uid: str
    kind: str
    operation: str
    namespace: str
    name: str
    dry_run: bool
    object: Any
    #: The stored object on UPDATE, kept for rules that compare old and new.
    old_object: Any = None
    #: `request.kind.group` (`parse` always reads it; "" is the core group).
    group: str = TRAINER_GROUP


@dataclass(frozen=True, slots=True)
class Decision:
    """The answer, plus what the log line and the metrics need."""

    allowed: bool
    message: str = ""
    code: int = 200
    warnings: tuple[str, ...] = ()
    codes: tuple[str, ...] = ()
    #: Why no rule ran (`skipped`, `unreadable`, `overloaded`, `timeout`...), or "" when they did.
    reason: str = ""
    findings: tuple[Finding, ...] = field(default=(), repr=False)

    @property
    def verdict(self) -> str:
        if not self.allowed:
            return "deny"
        return "warn" if self.warnings else "allow"


def parse(body: bytes) -> Review:
    """Read an AdmissionReview v1 request; BadReview says what is wrong with it."""
    data = _json(body)
    if not isinstance(data, dict):
        raise BadReview("body is not a JSON object")
    request = data.get("request")
    uid = request.get("uid") if isinstance(request, dict) else None
    uid = uid if isinstance(uid, str) else ""
    if data.get("apiVersion") != API_VERSION or data.get("kind") != KIND:
        raise BadReview(f"expected apiVersion {API_VERSION} and kind {KIND}", uid)
    if not isinstance(request, dict):
        raise BadReview("AdmissionReview has no `request` object", uid)
    if not uid:
        raise BadReview("request.uid is missing", uid)
    kind = mapping(request.get("kind"))
    return Review(
        uid=uid,
        kind=string(kind.get("kind")),
        operation=string(request.get("operation")),
        namespace=string(request.get("namespace")),
        name=string(request.get("name")),
        dry_run=request.get("dryRun") is True,
        object=request.get("object"),
        old_object=request.get("oldObject"),
        group=string(kind.get("group")),
    )


def _json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except RecursionError:  # deeper than Python's parser goes: read what lies above
        try:
            return json.loads(skim(body.decode()))
        except (ValueError, RecursionError) as error:
            raise BadReview(f"body is not JSON: {str(error)[:200]}") from None
    except ValueError as error:
        raise BadReview(f"body is not JSON: {str(error)[:200]}") from None


#: A JSON string, or a run of brackets opening or closing (a run is counted at once).
_STRUCTURE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[{]+|[\]}]+')


def skim(text: str, limit: int = SKIM_DEPTH) -> str:
    """The JSON text with every container nested deeper than `limit` written as null, in
    one pass over its strings and brackets (text that is not JSON stays not JSON)."""
    parts: list[str] = []
    depth = kept = 0
    start: int | None = None
    for match in _STRUCTURE.finditer(text):
        run = match[0]
        if run[0] == '"':
            continue
        if run[0] in "[{":
            if start is None and depth + len(run) > limit:
                start = match.start() + limit - depth
            depth += len(run)
        else:
            if start is not None and depth - len(run) <= limit:
                end = match.start() + depth - limit
                parts += [text[kept:start], "null"]
                kept, start = end, None
            depth -= len(run)
    parts.append(text[kept:])
    return "".join(parts)


def unchecked(review: Review, mode: Mode) -> Decision | None:
    """The answer to a request no rule is run on, or None when the rules decide it.

    DELETE and CONNECT are allowed: no rule is about them (as a policy engine allows what
    none of its policies match). A request that says no operation, or one the API server
    does not have, or no kind, or a kind other than the three Trainer kinds, is refused
    when enforcing: the webhook is registered for those kinds only, so such a request is
    malformed or misrouted, and enforcing fails closed (as `failurePolicy: Fail` does when
    trainlint cannot answer); advising allows it with a warning saying why."""
    if review.operation in IGNORED_OPERATIONS:
        return Decision(True, reason="skipped")
    operation, kind = printable(review.operation)[:40], printable(review.kind)[:80]
    if review.operation not in OPERATIONS:
        why = f"operation `{operation}`" if operation else "no operation"
    elif not review.kind:
        why = "no kind"
    elif review.group != TRAINER_GROUP or review.kind not in TRAINER_KINDS:
        group = printable(review.group)[:80]
        why = f"kind {kind}.{group}" if group else f"kind {kind} (core API group)"
    else:
        return None
    return _refusal(
        f"trainlint: not checked: {why}; trainlint checks CREATE and UPDATE of Trainer objects",
        mode, "unclassified", 400,
    )


def malformed(error: BadReview, mode: Mode) -> Decision:
    """The answer to a JSON body that is no AdmissionReview v1 request."""
    return _refusal(f"trainlint: not an AdmissionReview v1 request: {error}", mode,
                    "bad_request", 400)


def request_manifest(review: Review) -> Manifest | None:
    """The object under review as a Manifest, namespace filled from the request; None if
    it is not an object at all. Positions are never asked for, so the text is left empty."""
    return _manifest(review, review.object)


def stored_manifest(review: Review) -> Manifest | None:
    """On UPDATE, the stored object (`oldObject`) that update rules compare with; None when
    it is no object rules can read."""
    stored = _manifest(review, review.old_object) if review.operation == "UPDATE" else None
    return stored if stored is not None and shallow(stored.body) else None


def _manifest(review: Review, body: Any) -> Manifest | None:
    if not isinstance(body, dict):
        return None
    metadata = body.get("metadata")
    if review.namespace and isinstance(metadata, dict) and not metadata.get("namespace"):
        body = {**body, "metadata": {**metadata, "namespace": review.namespace}}
    return Manifest(body, Source(f"admission:{review.uid}", ""))


def decide(
    review: Review,
    settings: Settings,
    mode: Mode,
    context: Callable[[Manifest], Sequence[Manifest]] = lambda _: (),
) -> Decision:
    """Lint the object under review (with the cluster objects `context` returns) and decide.
    The `trainlint.dev/ignore` annotation is honoured as `settings.annotation_exemptions` says.
    On UPDATE, errors the stored object already had warn instead of denying
    (`standing_errors`): the stored object is linted too, only when enforcing and the
    update has errors at values it did not change, by those errors' rules alone."""
    early = unchecked(review, mode)
    if early is not None:
        return early
    mode = mode_for(review, mode)
    manifest = request_manifest(review)
    if manifest is None or not _readable(manifest, review):
        return unreadable(review, mode)
    if not shallow(manifest.body):
        return too_deep(review, mode)
    stored = stored_manifest(review)
    findings = _lint(manifest, settings, context, stored)
    unchanged = _unchanged_errors(findings, manifest, stored) if mode is Mode.ENFORCE else set()
    if stored is not None and unchanged:
        codes = frozenset(code for code, _ in unchanged)
        only = _NARROWED.get(settings, lambda: replace(settings, select=tuple(sorted(codes))),
                             codes)
        before = _lint(stored, only, context, None)
        return judge(findings, mode, standing_errors(unchanged, before))
    return judge(findings, mode)


#: The settings that run only some of a webhook's rules, kept with its settings: the
#: stored object of an update is linted by the rules whose errors could stand.
_NARROWED: PerValue[Settings] = PerValue("narrowed")


#: An error finding as it is matched across the two states of an object: code, key path.
Place = tuple[str, KeyPath]


def _unchanged_errors(
    findings: Sequence[Finding], manifest: Manifest, stored: Manifest | None
) -> set[Place]:
    """The errors among `findings` (of `manifest`, an update of `stored`) at a value the
    update left as stored: only those may have stood before (`standing_errors`).

    Unchanged, not merely still wrong: an update that writes another bad value at the same
    path brings that value in, and is refused, as Kubernetes ratchets CRD validation only
    where "each part of the resource that failed to validate was not changed". So an error
    reported at a field holding others (a missing `spec.trainer` is reported at `spec`)
    stands only while all of them stay as stored, as a CRD rule scoped there does."""
    if stored is None:
        return set()
    return {
        (f.code, f.path) for f in findings
        if f.severity is Severity.ERROR and dig(manifest.body, *f.path) == dig(stored.body, *f.path)
    }


def _lint(
    manifest: Manifest,
    settings: Settings,
    context: Callable[[Manifest], Sequence[Manifest]],
    stored: Manifest | None,
) -> list[Finding]:
    """The findings of one object, compared with its `stored` state when there is one.
    Cluster objects are looked up, not checked: their own findings were reported when
    they were admitted, and running their rules again would double the cost of a request."""
    return lint(
        [Loaded(manifest.source, [manifest], [])], settings, context=context(manifest),
        where=CLUSTER, previous=[stored] if stored is not None else [],
    )


def standing_errors(unchanged: set[Place], before: Sequence[Finding]) -> frozenset[Place]:
    """The errors at unchanged values (`_unchanged_errors`) that the update did not bring
    in: `before` (the findings of the stored object, linted alone) has an error of the
    same code at the same key path. They warn instead of denying, so that an object stored
    before enforcing began, or before a rule was added, can still be relabelled,
    unsuspended or finalized (Kyverno's `allowExistingViolations`). Update rules (TL012,
    TL219...) need a stored state that the stored object itself lacks: their errors are
    always the update's own."""
    return frozenset(unchanged & {(f.code, f.path) for f in before if f.severity is Severity.ERROR})


def mode_for(review: Review, mode: Mode) -> Mode:
    """The mode a checked request is answered in: `mode`, except for an UPDATE of an
    object being deleted (`metadata.deletionTimestamp` set), which is advised, never
    denied: it removes a finalizer or leads up to that, and refusing it would leave the
    object Terminating for good. The API server refuses a change of `deletionTimestamp`
    before it calls validating webhooks, so the object's own value is the stored one's."""
    deleting = mapping(mapping(review.object).get("metadata")).get("deletionTimestamp")
    return Mode.ADVISE if review.operation == "UPDATE" and deleting else mode


def _readable(manifest: Manifest, review: Review) -> bool:
    return (
        manifest.kind == review.kind
        and manifest.api_version.startswith(f"{TRAINER_GROUP}/")
        and isinstance(manifest.body.get("metadata"), dict)
    )


def shallow(value: object, limit: int = MAX_DEPTH) -> bool:
    """Whether nesting stays within what a Kubernetes object has (rules recurse)."""
    stack: list[tuple[dict[str, Any] | list[Any], int]] = []
    if isinstance(value, dict | list):
        stack.append((value, 0))
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        if children and depth >= limit:  # its children lie deeper than the limit
            return False
        stack.extend(
            (child, depth + 1) for child in children if isinstance(child, dict | list)
        )
    return True


def unreadable(review: Review, mode: Mode) -> Decision:
    """An object the rules cannot read: a clear denial when enforcing, a warning otherwise."""
    what = f"{review.kind} object" if review.kind else "object"
    message = (
        f"{NotAnObject.code}: the {what} under review is not a {TRAINER_GROUP} object with "
        "metadata, so no rule can check it"
    )
    return _refusal(message, mode, "unreadable", 400)


def too_deep(review: Review, mode: Mode) -> Decision:
    """An object nested deeper than any Kubernetes object is (the rules recurse)."""
    message = (
        f"{TooComplex.code}: the {review.kind} object under review is nested deeper than "
        f"{MAX_DEPTH} levels, so no rule can check it"
    )
    return _refusal(message, mode, "too_deep", 400)


def not_checked(review: Review, mode: Mode, why: str, reason: str) -> Decision:
    """The rules did not run (overload, deadline): enforce fails closed, advise says so.
    An object being deleted is never refused (`mode_for`)."""
    message = f"trainlint: the object was not checked: {why}"
    return _refusal(message, mode_for(review, mode), reason, 429)


def _refusal(message: str, mode: Mode, reason: str, code: int) -> Decision:
    if mode is Mode.ENFORCE:
        return Decision(False, clip(message, MAX_MESSAGE), code, reason=reason)
    return Decision(True, warnings=(clip(message, MAX_WARNING),), reason=reason)


def judge(
    findings: Sequence[Finding], mode: Mode, standing: Collection[Place] = frozenset()
) -> Decision:
    """Errors deny (enforce) or warn (advise); warnings always warn, and so do the errors
    at the places `standing` holds (`standing_errors`). Most severe first."""
    ordered = sorted(findings, key=lambda f: (f.severity is not Severity.ERROR, f.code))
    codes = tuple(dict.fromkeys(f.code for f in ordered))
    denying: list[Finding] = []
    rest: list[Finding] = []
    for finding in ordered:
        denies = finding.severity is Severity.ERROR and (finding.code, finding.path) not in standing
        (denying if denies else rest).append(finding)
    if mode is Mode.ENFORCE and denying:
        return Decision(
            False, deny_message(denying), 403, warning_lines(rest), codes, findings=tuple(ordered)
        )
    return Decision(True, warnings=warning_lines(ordered), codes=codes, findings=tuple(ordered))


def deny_message(errors: Sequence[Finding]) -> str:
    """`CODE: message (at path)`, then `and N more: CODES`, within 1 KiB."""
    first = errors[0]
    at = f" (at {dotted(first.path)})" if first.path else ""
    more = ""
    if len(errors) > 1:
        others = ", ".join(dict.fromkeys(f.code for f in errors[1:]))
        more = f"; and {len(errors) - 1} more: {others}"
    head = printable(f"{first.code}: {first.message}{at}")
    return clip(head, MAX_MESSAGE - len(more)) + clip(more, MAX_MESSAGE)


def warning_lines(findings: Sequence[Finding]) -> tuple[str, ...]:
    """One `CODE: message` per finding, deduplicated, within the API server's limits."""
    lines = list(dict.fromkeys(clip(printable(f"{f.code}: {f.message}"), MAX_WARNING)
                               for f in findings))
    if len(lines) > MAX_WARNINGS:
        hidden = len(lines) - (MAX_WARNINGS - 1)
        lines = [*lines[: MAX_WARNINGS - 1], f"trainlint: {hidden} more findings not shown"]
    kept: list[str] = []
    total = 0
    for line in lines:
        if total + len(line) > MAX_WARNINGS_TOTAL:
            break
        kept.append(line)
        total += len(line)
    return tuple(kept)


def printable(text: str) -> str:
    """One line of printable characters: kubectl prints warnings as they come."""
    if not text.isprintable():
        text = "".join(char if char.isprintable() else " " for char in text)
    return " ".join(text.split())


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3].rstrip() + "..."


def response(uid: str, decision: Decision) -> dict[str, Any]:
    """The AdmissionReview v1 answer: uid echoed, never a patch."""
    answer: dict[str, Any] = {"uid": uid, "allowed": decision.allowed}
    if not decision.allowed:
        reason = "Forbidden" if decision.code == 403 else "TooManyRequests" if (
            decision.code == 429) else "BadRequest"
        answer["status"] = {
            "status": "Failure", "code": decision.code, "reason": reason,
            "message": decision.message,
        }
    if decision.warnings:
        answer["warnings"] = list(decision.warnings)
    return {"apiVersion": API_VERSION, "kind": KIND, "response": answer}

