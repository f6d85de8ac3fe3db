"""`trainlint lsp` as an editor sees it: a real server process, pygls's own client on stdio.

Every expectation is what `trainlint check` reports (or `--fix` writes) for the same files,
so the editor and the command line cannot drift apart.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.conftest import ROOT
from tests.lsp_session import Session, apply
from trainlint import suppression
from trainlint.config.settings import Settings
from trainlint.document import Span
from trainlint.engine.run import lint
from trainlint.loader import load
from trainlint.lsp.text import UTF8, Text

EXAMPLE = ROOT / "examples" / "finetune-broken"
SEVERITIES = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning}
#: What a client that resolves code actions lazily and takes versioned edits announces.
RESOLVING = types.ClientCapabilities(
    workspace=types.WorkspaceClientCapabilities(
        workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True),
        did_change_watched_files=types.DidChangeWatchedFilesClientCapabilities(
            dynamic_registration=True
        ),
    ),
    text_document=types.TextDocumentClientCapabilities(
        code_action=types.CodeActionClientCapabilities(
            resolve_support=types.ClientCodeActionResolveOptions(properties=["edit"])
        )
    ),
)
#: A TL010 finding (column 39 as the CLI counts) after characters of 2 and 4 UTF-8 bytes.
NAMES = (
    "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
    'metadata: {annotations: {note: "é😋"}, name: Bad_Name}\n'
    "spec:\n  runtimeRef:\n    kind: TrainingRuntime\n    name: torch-sft\n"
)
#: The runtime of the example with its trainer label where the controller reads it.
LABEL = "                    trainer.kubeflow.org/trainjob-ancestor-step: trainer\n"
JOB_TEMPLATE = "          template:\n            spec:\n              template:\n"
LABELLED = (
    "          template:\n            metadata:\n              labels:\n"
    "                trainer.kubeflow.org/trainjob-ancestor-step: trainer\n"
    "            spec:\n              template:\n"
)


def trainlint(*arguments: str, cwd: Path) -> str:
    result = subprocess.run(
        ["trainlint", *arguments], cwd=cwd, capture_output=True, text=True, timeout=60,
        check=False,
    )
    assert result.returncode in (0, 1), result.stderr
    return result.stdout


def cli_findings(folder: Path, *arguments: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads(
        trainlint("check", "--no-cache", "--output-format", "json", *arguments, cwd=folder)
    )
    return found


def as_reported(found: list[dict[str, Any]], file: str) -> list[tuple[Any, ...]]:
    """(code, severity, range as 1-based line/column) of the CLI's findings in `file`."""
    return [
        (item["code"], SEVERITIES[item["severity"]],
         (item["line"], item["column"], item["end_line"], item["end_column"]))
        for item in found if Path(item["file"]).name == file
    ]


def as_shown(diagnostics: list[types.Diagnostic]) -> list[tuple[Any, ...]]:
    return [
        (item.code, item.severity, (item.range.start.line + 1, item.range.start.character + 1,
                                    item.range.end.line + 1, item.range.end.character + 1))
        for item in diagnostics
    ]


def codes(diagnostics: list[types.Diagnostic]) -> list[Any]:
    return [item.code for item in diagnostics]


def related_uris(diagnostic: types.Diagnostic) -> list[str]:
    return [item.location.uri for item in diagnostic.related_information or []]


def reloaded(session: Session, uri: str, config: str) -> list[types.Diagnostic]:
    """The diagnostics of `uri` once `pyproject.toml` says `config` and the client's file
    watcher has told the server."""
    mark = session.count(uri)
    (session.root / "pyproject.toml").write_text(config)
    session.files_changed(("pyproject.toml", types.FileChangeType.Changed))
    return session.diagnostics(uri, after=mark)


def watched(session: Session, prefix: str) -> tuple[types.Registration, list[str]]:
    """The first registration of file watchers whose id starts with `prefix`, and its
    glob patterns."""
    registration = session.wait(lambda: next(
        (item for item in session.registrations if item.id.startswith(prefix)), None
    ))
    assert registration.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
    options: Any = registration.register_options  # as the client received it
    return registration, [watcher["globPattern"] for watcher in options["watchers"]]


def runtime_labelled(text: str) -> str:
    """The example runtime with its label moved from the pod template to the job's."""
    assert LABEL in text and JOB_TEMPLATE in text
    moved = text.replace(JOB_TEMPLATE, LABELLED)
    return moved.replace("                metadata:\n                  labels:\n" + LABEL, "")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("workspace")
    for path in EXAMPLE.glob("*.yaml"):
        shutil.copy(path, root / path.name)
    return root


@pytest.fixture(scope="module")
def reported(workspace: Path) -> list[dict[str, Any]]:
    """What `trainlint check` reports on the workspace as it is on disk."""
    return cli_findings(workspace)


@pytest.fixture(scope="module")
def session(workspace: Path) -> Iterator[Session]:
    session = Session(["trainlint", "lsp"], workspace, capabilities=RESOLVING)
    yield session
    assert session.stop() == 0


def test_open_shows_the_cli_findings_at_their_ranges(
    session: Session, workspace: Path, reported: list[dict[str, Any]]
) -> None:
    uri = session.open("trainjob.yaml")
    try:
        shown = session.diagnostics(uri)
        assert codes(shown) == ["TL201", "TL202"]
        assert as_shown(shown) == as_reported(reported, "trainjob.yaml")
        sarif = json.loads(trainlint("check", "--no-cache", "--output-format", "sarif", ".",
                                     cwd=workspace))
        help_uris = {rule["id"]: rule["helpUri"] for rule in sarif["runs"][0]["tool"]["driver"]
                     ["rules"]}
        assert [item.code_description.href for item in shown if item.code_description] == [
            help_uris[str(item.code)] for item in shown
        ]
        # TL201 on the TrainJob is caused by the runtime's misplaced label: the related
        # location is where the CLI reports TL201 on the runtime.
        label = next(item for item in reported
                     if item["code"] == "TL201" and item["file"].endswith("runtime.yaml"))
        (related,) = shown[0].related_information or []
        assert related.location.uri == session.uri("runtime.yaml")
        start = related.location.range.start
        assert (start.line + 1, start.character + 1) == (label["line"], label["column"])
        assert "pod template of job `node`" in related.message
    finally:
        session.close(uri)


def test_columns_are_counted_in_utf16_by_default(session: Session) -> None:
    uri = session.open("names.yaml", NAMES)
    try:
        (name,) = [item for item in session.diagnostics(uri) if item.code == "TL010"]
        assert (name.range.start.line, name.range.start.character) == (2, 39)  # 😋 counts 2
    finally:
        session.close(uri)


def test_editing_the_runtime_refreshes_the_trainjob_that_uses_it(
    session: Session, workspace: Path, tmp_path: Path
) -> None:
    job = session.open("trainjob.yaml")
    storage = session.open("storage.yaml")
    runtime_text = (workspace / "runtime.yaml").read_text()
    try:
        assert "TL201" in codes(session.diagnostics(job))
        session.diagnostics(storage)
        unchanged = session.count(storage)
        mark = session.count(job)
        runtime = session.open("runtime.yaml")
        session.change(runtime, runtime_labelled(runtime_text), version=2)
        refreshed = session.diagnostics(job, lambda found: "TL201" not in codes(found), after=mark)
        copy = tmp_path / "labelled"
        shutil.copytree(workspace, copy)
        (copy / "runtime.yaml").write_text(runtime_labelled(runtime_text))
        assert as_shown(refreshed) == as_reported(cli_findings(copy), "trainjob.yaml")
        session.hover(storage, 0, 0)  # answered after everything published before it
        assert session.count(storage) == unchanged  # a PVC looks nothing up: not checked again

        # Closed unsaved, the runtime counts again as it is on disk.
        mark = session.count(job)
        session.close(runtime)
        session.diagnostics(job, lambda found: "TL201" in codes(found), after=mark)

        # Changed on disk, reported by the client's file watcher.
        mark = session.count(job)
        (workspace / "runtime.yaml").write_text(runtime_labelled(runtime_text))
        session.files_changed(("runtime.yaml", types.FileChangeType.Changed))
        on_disk = session.diagnostics(job, lambda found: "TL201" not in codes(found), after=mark)
        assert as_shown(on_disk) == as_shown(refreshed)
    finally:
        (workspace / "runtime.yaml").write_text(runtime_text)
        session.files_changed(("runtime.yaml", types.FileChangeType.Changed))
        session.close(job)
        session.close(storage)


def test_code_actions_make_the_edits_of_fix(
    session: Session, workspace: Path, tmp_path: Path
) -> None:
    uri = session.open("trainjob.yaml")
    text = (workspace / "trainjob.yaml").read_text()
    try:
        (env,) = [item for item in session.diagnostics(uri) if item.code == "TL202"]
        actions = session.code_actions(uri, env.range.start.line)
        assert [action.title for action in actions] == [
            "TL202: move the variables to `spec.trainer.env`",
            "Disable TL202 (env-in-pod-overrides) for this line",
            "Disable TL202 (env-in-pod-overrides) for this file",
            "Fix all trainlint problems with safe fixes",
        ]
        copy = tmp_path / "fixed"
        shutil.copytree(workspace, copy)
        trainlint("check", "--no-cache", "--fix", ".", cwd=copy)
        fixed = (copy / "trainjob.yaml").read_text()
        assert fixed != text
        quick_fix, line, file, fix_all = actions
        assert quick_fix.edit is None and quick_fix.is_preferred  # the edit comes on resolve
        assert apply(text, session.resolve(quick_fix).edit or types.WorkspaceEdit(), uri) == fixed
        (only,) = session.code_actions(uri, 0, only=[types.CodeActionKind.SourceFixAll])
        assert only.kind == "source.fixAll.trainlint"
        assert apply(text, session.resolve(fix_all).edit or types.WorkspaceEdit(), uri) == fixed

        for action, comment in ((line, "# trainlint: disable=TL202"),
                                (file, "# trainlint: disable-file=TL202")):
            assert action.edit is not None
            silenced = apply(text, action.edit, uri)
            assert comment in silenced
            session.change(uri, silenced, version=2 if action is line else 3)
            found = session.diagnostics(uri, version=2 if action is line else 3)
            assert codes(found) == ["TL201"]  # silenced, and TL090 has nothing to say
    finally:
        session.close(uri)


def test_malformed_yaml_while_typing_is_tl001_and_the_server_goes_on(
    session: Session, workspace: Path, tmp_path: Path
) -> None:
    """Each text is what an editor sends mid-typing; the diagnostics are the CLI's on the
    same text, and the server answers the next request."""
    typed = (workspace / "trainjob.yaml").read_text()
    texts = [
        typed.replace("    name: torch-sft", '    name: "torch-sft'),  # unclosed quote
        typed.replace("  runtimeRef:", "  runtimeRef: {"),  # unclosed flow mapping
        typed.replace("    numNodes: 2", "\tnumNodes: 2"),  # a tab for indentation
        typed[: typed.index("resourcesPerNode") + 5],  # cut in the middle of a key
        "kind: TrainJob\na: &a [" + "*a, " * 50 + "]\n" + "[" * 10_000,  # aliases, deep nesting
        "kind: TrainJob\n\x00\x01 binary",
    ]
    for number, text in enumerate(texts):
        (tmp_path / f"typed-{number}.yaml").write_text(text)
    expected = cli_findings(tmp_path, ".")
    uri = session.open("typing.yaml", typed)
    try:
        session.diagnostics(uri)
        # Typed faster than the debounce: the newest text is checked, not every one.
        mark = session.count(uri)
        for version, text in enumerate(texts, start=2):
            session.change(uri, text, version)
        session.diagnostics(uri, version=len(texts) + 1)
        assert session.count(uri) - mark < len(texts)
        for number, text in enumerate(texts):
            version = len(texts) + 2 + number
            session.change(uri, text, version)
            shown = session.diagnostics(uri, version=version)
            assert as_shown(shown) == as_reported(expected, f"typed-{number}.yaml")
            assert codes(shown)[0] == "TL001"
        assert session.hover(uri, 1, 0) is not None  # on the TL001 of the last text
        assert session.alive()
    finally:
        session.close(uri)


def test_hover_explains_the_rule_and_the_runtime_it_names(
    session: Session, workspace: Path
) -> None:
    uri = session.open("trainjob.yaml")
    try:
        (env,) = [item for item in session.diagnostics(uri) if item.code == "TL202"]
        hover = session.hover(uri, env.range.start.line, env.range.start.character + 1)
        assert hover is not None and isinstance(hover.contents, types.MarkupContent)
        documented = trainlint("rule", "TL202", cwd=workspace)
        what = documented.split("## What it does\n", 1)[1].split("\n## ", 1)[0].strip()
        assert "**What it does**" in hover.contents.value
        assert what in hover.contents.value
        assert "**Why is this bad?**" in hover.contents.value

        line = (workspace / "trainjob.yaml").read_text().splitlines().index("    name: torch-sft")
        on_name = session.hover(uri, line, 12)
        assert on_name is not None and isinstance(on_name.contents, types.MarkupContent)
        assert on_name.contents.value.startswith(
            "TrainingRuntime `torch-sft` in namespace `llm-sft-broken`, defined in "
            "`runtime.yaml` line 5"
        )
        target = session.definition(uri, line, 12)
        assert isinstance(target, types.Location)
        assert target.uri == session.uri("runtime.yaml")
        assert (target.range.start.line, target.range.start.character) == (4, 2)  # name:
        assert session.hover(uri, line - 2, 0) is None  # `spec:`: nothing to say
    finally:
        session.close(uri)

    unknown = session.open("unknown.yaml", (workspace / "trainjob.yaml").read_text().replace(
        "name: torch-sft", "name: torch-elsewhere"
    ))
    try:
        hover = session.hover(unknown, line, 12)
        assert hover is not None and isinstance(hover.contents, types.MarkupContent)
        assert "is not defined in the workspace" in hover.contents.value
        assert session.definition(unknown, line, 12) is None
    finally:
        session.close(unknown)


#: Makes one rule raise, then runs the real command.
BROKEN_RULE = """
import sys
from trainlint.rule import Listed

def broken(manifest, ctx):
    yield from ()
    raise ZeroDivisionError("division by zero in the rule")

def load(listed, loaded=Listed.load):
    rule = loaded(listed)
    return rule._replace(check=broken) if rule.code == "TL202" else rule

Listed.load = load
from trainlint.cli import run
sys.argv = ["trainlint", "lsp"]
run()
"""


def test_a_rule_that_raises_is_logged_and_only_its_findings_are_skipped(
    workspace: Path, reported: list[dict[str, Any]], tmp_path: Path
) -> None:
    session = Session([sys.executable, "-c", BROKEN_RULE], workspace)
    try:
        uri = session.open("trainjob.yaml")
        shown = session.diagnostics(uri)
        log = session.wait_for_log("TrainJob `sft-llama-1b`")
        assert log.type == types.MessageType.Error
        assert "ZeroDivisionError: division by zero in the rule" in log.message
        assert "rule TL202 (env-in-pod-overrides) failed" in log.message
        expected = [item for item in reported if item["code"] != "TL202"]
        assert as_shown(shown) == as_reported(expected, "trainjob.yaml")
        session.change(uri, (workspace / "trainjob.yaml").read_text() + "\n", version=2)
        assert codes(session.diagnostics(uri, version=2)) == ["TL201"]
        assert session.alive()

        # This client does not resolve code actions: the edit comes with the action.
        runtime = session.open("runtime.yaml")
        session.diagnostics(runtime)
        (fix_all,) = session.code_actions(runtime, 0, only=[types.CodeActionKind.SourceFixAll])
        copy = tmp_path / "fixed"
        shutil.copytree(workspace, copy)
        trainlint("check", "--no-cache", "--fix", ".", cwd=copy)
        text = (workspace / "runtime.yaml").read_text()
        assert fix_all.edit is not None
        assert apply(text, fix_all.edit, runtime) == (copy / "runtime.yaml").read_text() != text
    finally:
        assert session.stop() == 0


def test_settings_come_from_initialization_options_and_configuration_reloads(
    tmp_path: Path,
) -> None:
    root = tmp_path / "project"
    shutil.copytree(EXAMPLE, root)
    (root / "pyproject.toml").write_text('[tool.trainlint]\nignore = ["TL201"]\n')
    capabilities = types.ClientCapabilities(
        workspace=RESOLVING.workspace, text_document=RESOLVING.text_document,
        general=types.GeneralClientCapabilities(position_encodings=[UTF8]),
    )
    session = Session(["trainlint", "lsp"], root, options={"trainerVersion": "2.1"},
                      capabilities=capabilities)
    try:
        (registration,) = session.wait(lambda: session.registrations)
        assert registration.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
        uri = session.open("trainjob.yaml")
        shown = session.diagnostics(uri)
        expected = cli_findings(root, "--trainer-version", "2.1")
        assert as_shown(shown) == as_reported(expected, "trainjob.yaml")
        assert "TL007" in codes(shown) and "TL201" not in codes(shown)  # release 2.1, config
        names = session.open("names.yaml", NAMES)
        (name,) = [item for item in session.diagnostics(names) if item.code == "TL010"]
        assert (name.range.start.line, name.range.start.character) == (2, 42)  # UTF-8 bytes
        session.close(names)

        shown = reloaded(session, uri, '[tool.trainlint]\nignore = ["TL302", "TL201"]\n')
        expected = cli_findings(root, "--trainer-version", "2.1")
        assert as_shown(shown) == as_reported(expected, "trainjob.yaml")
        assert "TL201" not in codes(shown)

        # A configuration that cannot be read: said once, and no finding is guessed.
        assert reloaded(session, uri, "[tool.trainlint]\nignore = [\n") == []
        assert any("pyproject.toml:" in message.message and "invalid TOML" in message.message
                   for message in session.shown)

        # Excluding the runtime's folder: the TrainJob no longer sees it, as the CLI (and
        # TL102, a preview rule selected here, says so).
        (root / "runtimes").mkdir()
        (root / "runtime.yaml").rename(root / "runtimes" / "runtime.yaml")
        session.files_changed(("runtime.yaml", types.FileChangeType.Deleted),
                              ("runtimes/runtime.yaml", types.FileChangeType.Created))
        shown = reloaded(
            session, uri, '[tool.trainlint]\nexclude = ["runtimes/"]\nextend-select = ["TL102"]\n'
        )
        expected = cli_findings(root, "--trainer-version", "2.1")
        assert as_shown(shown) == as_reported(expected, "trainjob.yaml")
        assert "TL102" in codes(shown)

        # Settings the editor sends later: over the command's and initializationOptions'.
        session.configure({"trainlint": {"trainerVersion": "9"}})
        session.wait(lambda: any("settings: trainer-version: unknown Trainer release '9'"
                                 in message.message for message in session.shown) or None)
        mark = session.count(uri)
        session.configure({"trainlint": {"ignore": ["TL102"]}})
        shown = session.diagnostics(uri, after=mark)
        expected = cli_findings(root, "--trainer-version", "2.1", "--ignore", "TL102")
        *findings, note = shown
        assert as_shown(findings) == as_reported(expected, "trainjob.yaml")
        assert "TL102" not in codes(shown) and "TL007" in codes(shown)
        # Without TL102, the CLI's note on what was not checked says it in the editor.
        assert (note.code, note.severity, note.range.start.line + 1) == (
            None, types.DiagnosticSeverity.Information, 9  # spec.runtimeRef.name
        )
        assert note.message.startswith("TrainingRuntime `torch-sft` in namespace `llm-sft-broken`"
                                       " is not defined in the workspace or its context")
        assert session.stop() == 0
    finally:
        if session.alive():
            session.stop()


def with_shared_runtime(folder: Path) -> tuple[Path, Path, str]:
    """A project holding the example's TrainJob and storage, and beside it a folder of
    shared runtimes holding its runtime; and that runtime's text."""
    root, shared = folder / "project", folder / "shared-runtimes"
    root.mkdir()
    shared.mkdir()
    for name in ("trainjob.yaml", "storage.yaml"):
        shutil.copy(EXAMPLE / name, root / name)
    runtime_text = (EXAMPLE / "runtime.yaml").read_text()
    (shared / "runtime.yaml").write_text(runtime_text)
    return root, shared, runtime_text


def test_runtimes_named_as_context_are_known_and_followed(tmp_path: Path) -> None:
    """A runtime in a `context` folder outside the workspace gives the TrainJob the
    findings `trainlint check` reports; a change to it on disk, and to `context`, refresh
    them, and an excluded folder named as context is still known."""
    root, shared, runtime_text = with_shared_runtime(tmp_path)
    (root / "pyproject.toml").write_text('[tool.trainlint]\ncontext = ["../shared-runtimes"]\n')
    session = Session(["trainlint", "lsp"], root, capabilities=RESOLVING)
    try:
        uri = session.open("trainjob.yaml")
        shown = session.diagnostics(uri)
        assert codes(shown) == ["TL201", "TL202"]
        assert as_shown(shown) == as_reported(cli_findings(root), "trainjob.yaml")
        runtime_uri = session.uri("../shared-runtimes/runtime.yaml")
        assert related_uris(shown[0]) == [runtime_uri]
        line = (root / "trainjob.yaml").read_text().splitlines().index("    name: torch-sft")
        target = session.definition(uri, line, 12)
        assert isinstance(target, types.Location) and target.uri == runtime_uri

        # The client's watchers see the workspace folder: the context folder is asked for.
        context, globs = watched(session, "trainlint-context")
        assert globs == [
            f"{shared.as_posix()}/**/*.{extension}" for extension in ("yaml", "yml", "json")
        ]

        # Changed on disk, reported by the client's file watcher.
        mark = session.count(uri)
        (shared / "runtime.yaml").write_text(runtime_labelled(runtime_text))
        session.files_changed(("../shared-runtimes/runtime.yaml", types.FileChangeType.Changed))
        shown = session.diagnostics(uri, lambda found: "TL201" not in codes(found), after=mark)
        assert as_shown(shown) == as_reported(cli_findings(root), "trainjob.yaml")

        # No context: the runtime is unknown, which the CLI's note and the editor's say.
        shown = reloaded(session, uri, "[tool.trainlint]\ncontext = []\n")
        *findings, note = shown
        assert as_shown(findings) == as_reported(cli_findings(root), "trainjob.yaml")
        assert codes(findings) == ["TL202"]
        assert (note.severity, note.range.start.line) == (types.DiagnosticSeverity.Information,
                                                          line)
        assert "`context`" in note.message
        assert session.wait(lambda: session.unregistrations)[0].id == context.id

        # An excluded folder of the workspace named as context: known, never checked.
        (root / "runtimes").mkdir()
        (root / "runtimes" / "runtime.yaml").write_text(runtime_text)
        session.files_changed(("runtimes/runtime.yaml", types.FileChangeType.Created))
        shown = reloaded(
            session, uri, '[tool.trainlint]\nexclude = ["runtimes/"]\ncontext = ["runtimes"]\n'
        )
        assert codes(shown) == ["TL201", "TL202"]
        assert as_shown(shown) == as_reported(cli_findings(root), "trainjob.yaml")
        assert related_uris(shown[0]) == [session.uri("runtimes/runtime.yaml")]
        assert session.stop() == 0
    finally:
        if session.alive():
            session.stop()


def changed_on_disk(
    session: Session, uri: str, path: Path, text: str, until: Callable[[list[Any]], bool]
) -> list[types.Diagnostic]:
    """The diagnostics of `uri` once `path` holds `text`, written again after a second,
    since the OS's watch starts a few milliseconds after the server says it watches."""
    mark = session.count(uri)
    for _ in range(5):
        path.write_text(text)
        try:
            return session.diagnostics(uri, until, after=mark, timeout=1.0)
        except AssertionError:
            continue
    raise AssertionError(f"no refresh after {path} changed")


def test_a_client_that_reports_no_file_changes_still_sees_them(tmp_path: Path) -> None:
    """A client without dynamic registration of watched files: the server watches the
    workspace and the context folder outside it itself, so a runtime changed on disk, and
    then the configuration, refresh the open TrainJob with nothing sent by the client."""
    root, shared, runtime_text = with_shared_runtime(tmp_path)
    config = '[tool.trainlint]\ncontext = ["../shared-runtimes"]\n'
    (root / "pyproject.toml").write_text(config)
    session = Session(["trainlint", "lsp"], root)
    try:
        uri = session.open("trainjob.yaml")
        assert codes(session.diagnostics(uri)) == ["TL201", "TL202"]
        session.wait(lambda: any(str(shared) in item.message for item in session.logs))
        assert not session.registrations

        shown = changed_on_disk(session, uri, shared / "runtime.yaml",
                                runtime_labelled(runtime_text),
                                lambda found: "TL201" not in codes(found))
        assert as_shown(shown) == as_reported(cli_findings(root), "trainjob.yaml")
        shown = changed_on_disk(session, uri, root / "pyproject.toml",
                                config + 'ignore = ["TL202"]\n',
                                lambda found: "TL202" not in codes(found))
        assert codes(shown) == ["TL302"]
        assert as_shown(shown) == as_reported(cli_findings(root), "trainjob.yaml")
        assert session.stop() == 0
    finally:
        if session.alive():
            session.stop()


def test_the_servers_own_watch_follows_a_workspace_folder_added(tmp_path: Path) -> None:
    """A folder of runtimes added to the workspace is watched too, by a server that
    watches the disk itself: its runtime changed on disk refreshes the TrainJob."""
    root, shared, runtime_text = with_shared_runtime(tmp_path)
    session = Session(["trainlint", "lsp"], root)
    try:
        uri = session.open("trainjob.yaml")
        assert codes(session.diagnostics(uri)) == ["TL202", None]  # None: runtime unknown
        mark = session.count(uri)
        session.add_folder(shared)
        assert codes(session.diagnostics(uri, after=mark)) == ["TL201", "TL202"]
        session.wait(lambda: any(str(shared) in item.message for item in session.logs))
        shown = changed_on_disk(session, uri, shared / "runtime.yaml",
                                runtime_labelled(runtime_text),
                                lambda found: "TL201" not in codes(found))
        assert codes(shown) == ["TL302", "TL202"]
        assert session.stop() == 0
    finally:
        if session.alive():
            session.stop()


# --- the parts without a client ---


def test_positions_are_counted_in_the_clients_units() -> None:
    text = Text('a: "😋"\r\nb: 1\u2028c: 2\n')
    # trainlint's `c` is on line 3 (YAML breaks at LS); the client's line 1 goes on.
    assert text.span(Span(3, 1, 3, 2)) == ((1, 5), (1, 6))
    assert text.span(Span(1, 7, 1, 8)) == ((0, 7), (0, 8))  # after the emoji: 2 UTF-16 units
    assert Text('a: "😋"\n', UTF8).span(Span(1, 7, 1, 8)) == ((0, 9), (0, 10))


def test_edits_replace_whole_lines_and_give_the_new_text() -> None:
    old = "a: 1\nb: 2\nc: 3\ne: 5"
    # The last line has no line break: its edit ends at the line's end, not past it.
    assert Text(old).edits("a: 1\nb: 20\nc: 3\ne: 6\n") == [
        ((1, 0), (2, 0), "b: 20\n"), ((3, 0), (3, 4), "e: 6\n")
    ]
    assert Text("a: 1\n").edits("# c\na: 1\n") == [((0, 0), (0, 0), "# c\n")]


def test_disable_comments_are_written_where_the_suppression_reads_them() -> None:
    text = 'a: 1\nb: "x\n  y"\nc: 2  # note\n'
    assert suppression.disable_on_line(text, 1, "TL301").splitlines()[0] == (
        "a: 1  # trainlint: disable=TL301"
    )
    # The end of line 2 is inside a quoted string: the comment goes on a line above.
    assert suppression.disable_on_line(text, 2, "TL301").splitlines()[1:3] == [
        "# trainlint: disable=TL301", 'b: "x'
    ]
    twice = suppression.disable_on_line(suppression.disable_on_line(text, 4, "TL1"), 4, "TL2")
    assert twice.splitlines()[3] == "c: 2  # note  # trainlint: disable=TL1,TL2"
    in_file = suppression.disable_in_file(suppression.disable_in_file(text, "TL1"), "TL2")
    assert in_file.splitlines()[0] == "# trainlint: disable-file=TL1,TL2"


RUNTIME_AND_JOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: {kind}  # related: TL101
metadata:
  name: torch-sft
  namespace: {namespace}  # related: TL101-namespace
spec:
  template:
    spec:
      replicatedJobs:  # related: TL206 TL208
        - name: node
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: run-1
  namespace: team-a
spec:
  runtimeRef:
    kind: TrainingRuntime
    name: torch-sft
  initializer:
    model: {{storageUri: "hf://org/model"}}
  podTemplateOverrides:
    - targetJobs:
        - name: trainer
"""


@pytest.mark.parametrize(("code", "kind", "namespace", "related"), [
    ("TL101", "ClusterTrainingRuntime", "team-a", ["`torch-sft` is a ClusterTrainingRuntime"]),
    ("TL101-namespace", "TrainingRuntime", "team-b",
     ["TrainingRuntime `torch-sft` is in namespace `team-b`"]),
    ("TL206", "TrainingRuntime", "team-a", ["what TrainingRuntime `torch-sft` has instead"]),
    ("TL208", "TrainingRuntime", "team-a", ["the jobs of TrainingRuntime `torch-sft`"]),
])
def test_findings_caused_by_another_object_point_at_its_key(
    code: str, kind: str, namespace: str, related: list[str]
) -> None:
    """The related information the editor shows: the runtime's key that makes the
    TrainJob's finding true, on the line marked `# related: CODE`."""
    text = RUNTIME_AND_JOB.format(kind=kind, namespace=namespace)
    line = next(number for number, content in enumerate(text.splitlines(), start=1)
                if "# related:" in content and code in content.split("# related:")[1].split())
    # v2.1: the release that reads `podTemplateOverrides` (later ones prune it, TL007).
    settings = Settings(trainer_version=(2, 1))
    (finding,) = [item for item in lint([load(text, "both.yaml")], settings)
                  if item.code == code[:5] and item.object and
                  item.object.kind == "TrainJob"]
    assert [(item.manifest.kind, item.manifest.span(item.path).line, item.message)
            for item in finding.related] == [(kind, line, message) for message in related]


@pytest.mark.parametrize("first", ["broken", "labelled"])
def test_of_two_runtimes_of_one_name_the_editor_finds_the_one_check_finds(
    tmp_path: Path, first: str
) -> None:
    """The first in the order `trainlint check` reads the workspace, whatever order the
    server's sets iterate in (string hashes differ from process to process)."""
    runtime = (EXAMPLE / "runtime.yaml").read_text()
    texts = {"broken": runtime, "labelled": runtime_labelled(runtime)}
    second = "labelled" if first == "broken" else "broken"
    for name in ("trainjob.yaml", "storage.yaml"):
        shutil.copy(EXAMPLE / name, tmp_path / name)
    for folder, kind in (("a", first), ("b", second)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "runtime.yaml").write_text(texts[kind])
    expected = as_reported(cli_findings(tmp_path), "trainjob.yaml")
    assert ("TL201" in codes_of(expected)) == (first == "broken")
    for seed in ("1", "2", "3"):
        session = Session(["env", f"PYTHONHASHSEED={seed}", "trainlint", "lsp"], tmp_path)
        try:
            assert as_shown(session.diagnostics(session.open("trainjob.yaml"))) == expected
            assert session.stop() == 0
        finally:
            if session.alive():
                session.stop()


def codes_of(reported: list[tuple[Any, ...]]) -> list[Any]:
    return [code for code, *_ in reported]


def _framed(*messages: dict[str, Any]) -> bytes:
    bodies = [json.dumps({"jsonrpc": "2.0", **message}).encode() for message in messages]
    return b"".join(b"Content-Length: %d\r\n\r\n%s" % (len(body), body) for body in bodies)


def test_a_message_with_no_usable_length_loses_no_other() -> None:
    """A header whose `Content-Length` is no number (or missing) frames nothing: that
    message cannot be read, but the request after it is answered, and the skip is told."""
    hover = {"method": "textDocument/hover", "params": {
        "textDocument": {"uri": "file:///nowhere/job.yaml"},
        "position": {"line": 0, "character": 0}}}
    unframed = json.dumps({"jsonrpc": "2.0", "id": 2, **hover}).encode()
    for header in (b"Content-Length: many\r\n", b"Content-Type: application/json\r\n"):
        sent = b"".join((
            _framed({"id": 1, "method": "initialize",
                     "params": {"processId": None, "capabilities": {}}},
                    {"method": "initialized", "params": {}}),
            header, b"\r\n", unframed,
            _framed({"id": 3, **hover}, {"id": 4, "method": "shutdown"}, {"method": "exit"}),
        ))
        result = subprocess.run([sys.executable, "-m", "trainlint", "lsp"], input=sent,
                                capture_output=True, timeout=60, check=False)
        answered = [message.get("id") for message in _unframed(result.stdout)
                    if message.get("method") != "window/logMessage"]
        assert answered == [1, 3, 4]
        assert result.stderr.decode() == (
            f"WARNING trainlint.lsp: skipped {len(unframed)} bytes that no usable "
            "Content-Length header framed\n")
        assert result.returncode == 0


def test_a_message_cut_short_by_its_length_is_logged_not_shown() -> None:
    """A `Content-Length` short of the body leaves no JSON to read: the client's log says
    so (no message box blaming the server), and the next request is answered."""
    hover = {"method": "textDocument/hover", "params": {
        "textDocument": {"uri": "file:///nowhere/job.yaml"},
        "position": {"line": 0, "character": 0}}}
    body = json.dumps({"jsonrpc": "2.0", "id": 2, **hover}).encode()
    sent = b"".join((
        _framed({"id": 1, "method": "initialize",
                 "params": {"processId": None, "capabilities": {}}},
                {"method": "initialized", "params": {}}),
        b"Content-Length: %d\r\n\r\n" % (len(body) - 5), body,
        _framed({"id": 3, **hover}, {"id": 4, "method": "shutdown"}, {"method": "exit"}),
    ))
    result = subprocess.run([sys.executable, "-m", "trainlint", "lsp"], input=sent,
                            capture_output=True, timeout=60, check=False)
    messages = _unframed(result.stdout)
    assert [message.get("id") for message in messages if "method" not in message] == [1, 3, 4]
    told = [(message["method"], message["params"]["type"], message["params"]["message"])
            for message in messages if "method" in message]
    assert [(method, kind) for method, kind, _ in told] == [("window/logMessage", 2)]
    assert told[0][2].startswith("a message could not be read, and was passed over: ")
    assert result.returncode == 0


def _unframed(data: bytes) -> list[dict[str, Any]]:
    found = []
    while data:
        head, _, data = data.partition(b"\r\n\r\n")
        length = int(next(line for line in head.split(b"\r\n")
                          if line.startswith(b"Content-Length")).split(b":")[1])
        found.append(json.loads(data[:length]))
        data = data[length:]
    return found


def test_a_request_the_server_cannot_take_is_answered_with_an_error() -> None:
    """A client waits for the answer to every request: one whose params pygls cannot read
    (a hover with no position, a line of -1) gets JSON-RPC's Invalid Params, not a
    message box and silence, and one after `shutdown` Invalid Request. A notification
    pygls cannot read is told in the client's log, with no message box blaming the server."""
    hover = "textDocument/hover"
    document = {"uri": "file:///nowhere/job.yaml"}
    sent = _framed(
        {"id": 1, "method": "initialize", "params": {"processId": None, "capabilities": {}}},
        {"method": "initialized", "params": {}},
        {"method": "textDocument/didChange", "params": {"textDocument": document}},
        {"id": 2, "method": hover, "params": {"textDocument": document}},
        {"id": 3, "method": hover, "params": {
            "textDocument": document, "position": {"line": -1, "character": 0}}},
        {"id": 4, "method": "shutdown"},
        {"id": 5, "method": hover, "params": {
            "textDocument": document, "position": {"line": 0, "character": 0}}},
        {"method": "exit"},
    )
    result = subprocess.run([sys.executable, "-m", "trainlint", "lsp"], input=sent,
                            capture_output=True, timeout=60, check=False)
    messages = _unframed(result.stdout)
    assert [(message["method"], message["params"]) for message in messages
            if "method" in message] == [("window/logMessage", {
                "type": 2, "message": "textDocument/didChange: the params are not the "
                "protocol's; passed over"})]
    answers = [(message.get("id"), message.get("error"), message.get("method"))
               for message in messages if "method" not in message]
    invalid = {"code": -32602, "message": "Invalid Params"}
    ended = {"code": -32600, "message": "the server is shut down: only exit is taken"}
    assert answers[1:] == [
        (2, invalid, None), (3, invalid, None), (4, None, None), (5, ended, None)]
    assert answers[0][:2] == (1, None)
    assert result.returncode == 0
