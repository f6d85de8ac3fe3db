"""What the server answers, in the protocol's types: diagnostics, code actions, hovers and
definitions, all read from the findings of a check (`Checked`) and their positions.

Nothing here finds anything: a diagnostic is a finding as the CLI reports it (code,
severity, span), a quick fix the edit `--fix` makes (`trainlint.fix`), a "disable" action
the comment `trainlint.suppression` reads. The one diagnostic that is no finding is the
CLI's note "N TrainJobs not checked against their runtime", said where the runtime is
named, as information: it is why the runtime's findings are missing, not a problem of
the manifest, so it fails nothing and has nothing to disable.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lsprotocol import types

from trainlint import fix, suppression
from trainlint.document import Manifest, Span, dig, mapping, mappings
from trainlint.engine.index import Index
from trainlint.finding import Finding
from trainlint.kinds import object_kind
from trainlint.lsp.text import Position, Text
from trainlint.lsp.workspace import Checked, Workspace
from trainlint.problem import Severity
from trainlint.render.trainer import JOBS
from trainlint.rule import all_rules

SOURCE = "trainlint"
#: `source.fixAll.trainlint`: every safe fix, as `trainlint check --fix` applies them.
FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.{SOURCE}"
QUICK_FIX = types.CodeActionKind.QuickFix.value
RUNTIME_NAME = ("spec", "runtimeRef", "name")
#: The opt-in rule that reports an unknown runtime as a finding: then no note is needed.
UNKNOWN = "TL102"
_WHERE_TO_ADD = (
    "; add the file or folder that defines it to `context` in the trainlint configuration"
)
_SEVERITIES = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
}
#: Shown faded (an unused suppression) or struck through (a deprecated runtime).
_TAGS = {"TL090": types.DiagnosticTag.Unnecessary, "TL205": types.DiagnosticTag.Deprecated}
UriOf = Callable[[str], str]


@dataclass(frozen=True)
class Client:
    """What the server knows of the client it answers."""

    #: The position encoding agreed at initialisation (`utf-16` unless the client offers
    #: another).
    encoding: str
    uri_of: UriOf
    #: Whether code actions may leave their edit to `codeAction/resolve`.
    resolves_edits: bool = False
    #: Whether a WorkspaceEdit may name the document version it applies to.
    versioned_edits: bool = False


# --- diagnostics ---


def diagnostics(checked: Checked, client: Client) -> list[types.Diagnostic]:
    text = Text(checked.text, client.encoding)
    shown = [_diagnostic(finding, text, client, checked.docs_url) for finding in checked.findings]
    told = {id(finding.manifest) for finding in checked.findings if finding.code == UNKNOWN}
    shown.extend(
        types.Diagnostic(
            range=_range(text.span(job.span(RUNTIME_NAME))),
            message=_unknown_runtime(job) + _WHERE_TO_ADD,
            severity=types.DiagnosticSeverity.Information,
            source=SOURCE,
        )
        for job in checked.unchecked
        if id(job) not in told and isinstance(dig(job.body, *RUNTIME_NAME), str)
    )
    return shown


def _diagnostic(
    finding: Finding, text: Text, client: Client, site: str
) -> types.Diagnostic:
    rule = all_rules()[finding.code]
    message = finding.message + (f"\nhelp: {finding.remediation}" if finding.remediation else "")
    tag = _TAGS.get(finding.code)
    return types.Diagnostic(
        range=_range(text.span(finding.span)),
        message=message,
        severity=_SEVERITIES[finding.severity],
        code=finding.code,
        code_description=types.CodeDescription(href=rule.docs_url_on(site)),
        source=SOURCE,
        tags=[tag] if tag else None,
        related_information=[
            types.DiagnosticRelatedInformation(
                _location(related.manifest, related.path, client), related.message
            )
            for related in finding.related
        ] or None,
    )


def _location(manifest: Manifest, path: tuple[str | int, ...], client: Client) -> types.Location:
    """Where a key of an object is, in whatever file holds it."""
    text = Text(manifest.source.text, client.encoding)
    return types.Location(client.uri_of(manifest.source.name),
                          _range(text.span(manifest.span(path))))


def _range(span: tuple[Position, Position]) -> types.Range:
    (line, character), (end_line, end_character) = span
    return types.Range(types.Position(line, character), types.Position(end_line, end_character))


def _position(position: types.Position) -> Position:
    return position.line, position.character


# --- code actions ---


def code_actions(
    workspace: Workspace, name: str, checked: Checked, params: types.CodeActionParams,
    client: Client,
) -> list[types.CodeAction]:
    """For each finding on the lines of the range: its fix, when `--fix` may apply it
    (`fixable`), and the comments that silence it on its line or in the file; for the
    document, every safe fix at once (`source.fixAll.trainlint`)."""
    text = Text(checked.text, client.encoding)
    low, high = _position(params.range.start), _position(params.range.end)
    settings = workspace.settings_for(name)
    #: Each action, and for a fix, what computes its text (see `resolve`).
    actions: list[tuple[types.CodeAction, Callable[[], str | None] | None]] = []
    for index, finding in enumerate(checked.findings):
        start, end = text.span(finding.span)
        if end[0] < low[0] or high[0] < start[0]:
            continue  # on none of the lines asked about
        diagnostic = [_diagnostic(finding, text, client, checked.docs_url)]
        repair = finding.fix
        if repair is not None and settings is not None and settings.may_fix(finding.code):
            unsafe = "" if repair.safe else " (unsafe fix)"
            action = types.CodeAction(
                title=f"{finding.code}: {repair.title}{unsafe}", kind=QUICK_FIX,
                diagnostics=diagnostic, is_preferred=repair.safe or None,
                data={"fix": index},
            )
            actions.append((action, _fixing(checked, finding)))
        for scope, new in (
            ("line", suppression.disable_on_line(checked.text, finding.span.line, finding.code)),
            ("file", suppression.disable_in_file(checked.text, finding.code)),
        ):
            action = types.CodeAction(
                title=f"Disable {finding.code} ({finding.name}) for this {scope}",
                kind=QUICK_FIX, diagnostics=diagnostic,
                edit=_workspace_edit(checked, name, new, client),
            )
            actions.append((action, None))
    if settings is not None and any(_fixes_safely(finding, workspace, name)
                                    for finding in checked.findings):
        action = types.CodeAction(
            title="Fix all trainlint problems with safe fixes", kind=FIX_ALL,
            data={"fix-all": True},
        )
        actions.append((action, lambda: fixed_all(workspace, name, checked)))
    only = params.context.only
    chosen = []
    for action, build in actions:
        if only and not any(_within(str(action.kind), str(kind)) for kind in only):
            continue
        if build is not None:
            action.data = {**(action.data or {}), "uri": params.text_document.uri,
                           "version": checked.version}
            if not client.resolves_edits:
                resolve(action, build, checked, name, client)
        chosen.append(action)
    return chosen


def _within(kind: str, wanted: str) -> bool:
    return kind == wanted or kind.startswith(f"{wanted}.")


def resolve(
    action: types.CodeAction, build: Callable[[], str | None], checked: Checked, name: str,
    client: Client,
) -> types.CodeAction:
    """Give a fix action its edit (computed only now: a round trip through ruamel)."""
    new = build()
    if new is None or new == checked.text:
        action.disabled = types.CodeActionDisabled("the fix cannot be applied to this text")
    else:
        action.edit = _workspace_edit(checked, name, new, client)
    return action


def builder(
    workspace: Workspace, name: str, checked: Checked, data: Any
) -> Callable[[], str | None] | None:
    """What computes the text of a fix action sent back for `codeAction/resolve`; None
    when the document changed since the action was made."""
    if not isinstance(data, dict) or data.get("version") != checked.version:
        return None
    if data.get("fix-all"):
        return lambda: fixed_all(workspace, name, checked)
    index = data.get("fix")
    if not isinstance(index, int) or not 0 <= index < len(checked.findings):
        return None
    return _fixing(checked, checked.findings[index])


def _fixing(checked: Checked, finding: Finding) -> Callable[[], str | None]:
    def build() -> str | None:
        try:
            return fix.apply(checked.text, [finding])[0]
        except fix.Unfixable:
            return None

    return build


def fixed_all(workspace: Workspace, name: str, checked: Checked) -> str | None:
    """The text `trainlint check --fix` would write: every safe fix `fixable` allows, in
    passes until nothing changes."""
    settings = workspace.settings_for(name)
    if settings is None:
        return None

    def wanted(finding: Finding) -> bool:
        return _fixes_safely(finding, workspace, name)

    _, _, files = fix.fix_all([checked.loaded], lambda items: workspace.findings_of(items[0]),
                              wanted)
    entry = files.get(name)
    return entry.text if entry is not None else None


def _fixes_safely(finding: Finding, workspace: Workspace, name: str) -> bool:
    settings = workspace.settings_for(name)
    return bool(finding.fix is not None and finding.fix.safe and settings is not None
                and settings.may_fix(finding.code))


def _workspace_edit(checked: Checked, name: str, new: str, client: Client) -> types.WorkspaceEdit:
    """The edits that turn the checked text into `new`, whole lines at a time."""
    uri = client.uri_of(name)
    edits = [
        types.TextEdit(_range((start, end)), replacement)
        for start, end, replacement in Text(checked.text, client.encoding).edits(new)
    ]
    if client.versioned_edits:
        document = types.OptionalVersionedTextDocumentIdentifier(uri, checked.version)
        return types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(document, edits)])
    return types.WorkspaceEdit(changes={uri: edits})


# --- hover and definition ---


def hover(
    workspace: Workspace, name: str, checked: Checked, where: types.Position, client: Client
) -> types.Hover | None:
    """On a finding's key: its rule's "What it does" and "Why is this bad?"; on a
    TrainJob's `spec.runtimeRef.name`: where that runtime is defined."""
    text = Text(checked.text, client.encoding)
    at = _position(where)
    parts = []
    for finding in checked.findings:
        start, end = text.span(finding.span)
        if start <= at <= end:
            parts.append(_rule_help(finding, checked.docs_url))
    reference = _runtime_reference(workspace, name, checked, at, text)
    if reference is not None:
        job, runtime, _ = reference
        parts.insert(0, _runtime_help(job, runtime, workspace))
    if not parts:
        return None
    markdown = types.MarkupContent(types.MarkupKind.Markdown, "\n\n---\n\n".join(parts))
    return types.Hover(markdown)


def definition(
    workspace: Workspace, name: str, checked: Checked, where: types.Position, client: Client
) -> types.Location | None:
    """From `spec.runtimeRef.name` to the runtime's `metadata.name`."""
    text = Text(checked.text, client.encoding)
    reference = _runtime_reference(workspace, name, checked, _position(where), text)
    if reference is None or reference[1] is None:
        return None
    return _location(reference[1], ("metadata", "name"), client)


def _rule_help(finding: Finding, site: str) -> str:
    rule = all_rules()[finding.code]
    parts = [f"**{rule.code}** `{rule.name}` ({finding.severity.value})", finding.message]
    for title in ("What it does", "Why is this bad?"):
        section = rule.section(title)
        if section:
            parts.append(f"**{title}**\n\n{section}")
    parts.append(f"[{rule.code} documentation]({rule.docs_url_on(site)})")
    return "\n\n".join(parts)


def _runtime_reference(
    workspace: Workspace, name: str, checked: Checked, at: Position, text: Text
) -> tuple[Manifest, Manifest | None, Span] | None:
    """(TrainJob, the runtime it names if known, span of the key) when `at` is on the line
    of a TrainJob's `spec.runtimeRef.name`, from the key to the line's end."""
    for job in checked.loaded.manifests:
        if object_kind(job) != "TrainJob" or not isinstance(dig(job.body, *RUNTIME_NAME), str):
            continue
        span = job.span(RUNTIME_NAME)
        start, _ = text.span(span)
        if at[0] == start[0] and start <= at <= text.line_end(start[0]):
            index = Index([*checked.loaded.manifests, *workspace.context_objects(name)])
            settings = workspace.settings_for(name)
            bundled = settings.trainer_version if settings and settings.bundled_runtimes else None
            return job, index.runtime_for(job, bundled), span
    return None


def _unknown_runtime(job: Manifest) -> str:
    kind, namespace, name = Index(()).runtime_key(job)
    where = f" in namespace `{namespace}`" if namespace else ""
    return (
        f"{kind} `{name}`{where} is not defined in the workspace or its context: the "
        "checks that need the runtime were not made on this TrainJob"
    )


def _runtime_help(job: Manifest, runtime: Manifest | None, workspace: Workspace) -> str:
    if runtime is None:
        return _unknown_runtime(job)
    namespace = Index(()).runtime_key(job)[1]
    where = f" in namespace `{namespace}`" if namespace else ""
    span = runtime.span(("metadata", "name"))
    lines = [
        f"{runtime.kind} `{runtime.name}`{where}, defined in "
        f"`{workspace.shown(runtime.source.name)}` line {span.line}"
    ]
    policy = [key for key in mapping(dig(runtime.body, "spec", "mlPolicy")) if key != "numNodes"]
    jobs = [str(job.get("name")) for _, job in mappings(dig(runtime.body, *JOBS))]
    if policy:
        lines.append(f"ML policy: {', '.join(f'`{key}`' for key in policy)}")
    if jobs:
        lines.append(f"replicated jobs: {', '.join(f'`{job}`' for job in jobs)}")
    return "\n\n".join(lines)

