"""A real `trainlint lsp` process and pygls's own client, driven with blocking calls.

The client runs on an event loop of its own thread; a test calls `Session` methods, which
wait (bounded) for the server's answers and notifications.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

T = TypeVar("T")
TIMEOUT = 10.0
Published = types.PublishDiagnosticsParams


class Session:
    """One server process over stdio, initialised on `root` as its workspace folder."""

    def __init__(
        self, command: Sequence[str], root: Path, *, options: Any = None,
        capabilities: types.ClientCapabilities | None = None,
    ) -> None:
        self.root = root
        self.published: dict[str, list[Published]] = {}
        self.logs: list[types.LogMessageParams] = []
        self.shown: list[types.ShowMessageParams] = []
        self.registrations: list[types.Registration] = []
        self.unregistrations: list[types.Unregistration] = []
        #: How many publishes each document had when it was last opened.
        self._opened: dict[str, int] = {}
        self._changed = threading.Condition()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.client = self._call(self._start(list(command), options, capabilities))

    async def _start(
        self, command: list[str], options: Any, capabilities: types.ClientCapabilities | None
    ) -> LanguageClient:
        client = LanguageClient("trainlint-tests", "1")

        def published(_: LanguageClient, params: Published) -> None:
            self._record(lambda: self.published.setdefault(params.uri, []).append(params))

        def logged(_: LanguageClient, params: types.LogMessageParams) -> None:
            self._record(lambda: self.logs.append(params))

        def shown(_: LanguageClient, params: types.ShowMessageParams) -> None:
            self._record(lambda: self.shown.append(params))

        def register(_: LanguageClient, params: types.RegistrationParams) -> None:
            self._record(lambda: self.registrations.extend(params.registrations))

        def unregister(_: LanguageClient, params: types.UnregistrationParams) -> None:
            self._record(lambda: self.unregistrations.extend(params.unregisterations))

        for method, handler in (
            (types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, published),
            (types.WINDOW_LOG_MESSAGE, logged), (types.WINDOW_SHOW_MESSAGE, shown),
            (types.CLIENT_REGISTER_CAPABILITY, register),
            (types.CLIENT_UNREGISTER_CAPABILITY, unregister),
        ):
            on: Callable[[Callable[..., None]], object] = client.feature(method)
            on(handler)

        await client.start_io(*command, cwd=str(self.root))
        folder = str(from_fs_path(str(self.root)))
        await client.initialize_async(types.InitializeParams(
            capabilities=capabilities or types.ClientCapabilities(),
            root_uri=folder, workspace_folders=[types.WorkspaceFolder(folder, self.root.name)],
            initialization_options=options,
        ))
        client.initialized(types.InitializedParams())
        return client

    def _record(self, change: Callable[[], None]) -> None:
        with self._changed:
            change()
            self._changed.notify_all()

    def _call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(TIMEOUT)

    def _notify(self, send: Callable[[], None]) -> None:
        async def notify() -> None:
            send()

        self._call(notify())

    # --- documents ---

    def uri(self, name: str) -> str:
        """The URI of a file of the workspace, or of one beside it (`../context/a.yaml`),
        as an editor names it: without `..`."""
        return str(from_fs_path(os.path.normpath(self.root / name)))

    def open(self, name: str, text: str | None = None, version: int = 1) -> str:
        """Open a document of the workspace (by default with its text on disk)."""
        uri = self.uri(name)
        text = (self.root / name).read_text() if text is None else text
        item = types.TextDocumentItem(uri, "yaml", version, text)
        self._opened[uri] = self.count(uri)
        self._notify(lambda: self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(item)
        ))
        return uri

    def change(self, uri: str, text: str, version: int) -> None:
        """Replace a document's whole text, as an editor does after a paste."""
        change = types.TextDocumentContentChangeWholeDocument(text)
        document = types.VersionedTextDocumentIdentifier(uri=uri, version=version)
        self._notify(lambda: self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(document, [change])
        ))

    def close(self, uri: str) -> None:
        """Close a document, once the server has cleared its diagnostics."""
        document = types.TextDocumentIdentifier(uri)
        mark = self.count(uri)
        self._notify(lambda: self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(document)
        ))
        self.diagnostics(uri, lambda found: not found, after=mark)

    def add_folder(self, folder: Path) -> None:
        """Add a workspace folder, as an editor does when its user opens one beside."""
        added = types.WorkspaceFolder(str(from_fs_path(str(folder))), folder.name)
        event = types.WorkspaceFoldersChangeEvent(added=[added], removed=[])
        self._notify(lambda: self.client.workspace_did_change_workspace_folders(
            types.DidChangeWorkspaceFoldersParams(event)
        ))

    def files_changed(self, *changes: tuple[str, types.FileChangeType]) -> None:
        events = [types.FileEvent(self.uri(name), kind) for name, kind in changes]
        self._notify(lambda: self.client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(events)
        ))

    def configure(self, settings: Any) -> None:
        """Send new settings, as an editor does when its user changes them."""
        params = types.DidChangeConfigurationParams(settings)
        self._notify(lambda: self.client.workspace_did_change_configuration(params))

    # --- waiting for what the server says ---

    def diagnostics(
        self, uri: str, until: Callable[[list[types.Diagnostic]], bool] = lambda _: True,
        *, version: int | None = None, after: int | None = None, timeout: float = TIMEOUT,
    ) -> list[types.Diagnostic]:
        """The diagnostics of the newest publish for `uri` once it is later than the
        `after`-th one (see `count`; by default, the last before the document was opened),
        of `version` if given, and `until` holds for it (AssertionError after `timeout`)."""
        if after is None:
            after = self._opened.get(uri, 0)

        def ready() -> Published | None:
            found = self.published.get(uri, [])
            if len(found) <= after:
                return None
            newest = found[-1]
            if version is not None and newest.version != version:
                return None
            return newest if until(list(newest.diagnostics)) else None

        with self._changed:
            newest = self._changed.wait_for(ready, timeout)
        assert newest is not None, f"no such diagnostics for {uri}: {self.published.get(uri)}"
        return list(newest.diagnostics)

    def count(self, uri: str) -> int:
        """How many times diagnostics were published for `uri` so far."""
        with self._changed:
            return len(self.published.get(uri, []))

    def wait(self, found: Callable[[], T | None]) -> T:
        """What `found` returns once it is something, as notifications arrive."""
        with self._changed:
            result = self._changed.wait_for(found, TIMEOUT)
        assert result is not None, "the server never said it"
        return result

    def wait_for_log(self, contains: str) -> types.LogMessageParams:
        return self.wait(lambda: next((log for log in self.logs if contains in log.message), None))

    # --- requests ---

    def code_actions(
        self, uri: str, line: int, only: Sequence[str] | None = None
    ) -> list[types.CodeAction]:
        span = types.Range(types.Position(line, 0), types.Position(line, 0))
        params = types.CodeActionParams(
            types.TextDocumentIdentifier(uri), span, types.CodeActionContext([], only=only)
        )
        found = self._call(self.client.text_document_code_action_async(params))
        return [action for action in found or [] if isinstance(action, types.CodeAction)]

    def resolve(self, action: types.CodeAction) -> types.CodeAction:
        return self._call(self.client.code_action_resolve_async(action))

    def hover(self, uri: str, line: int, character: int) -> types.Hover | None:
        params = types.HoverParams(
            types.TextDocumentIdentifier(uri), types.Position(line, character)
        )
        return self._call(self.client.text_document_hover_async(params))

    def definition(self, uri: str, line: int, character: int) -> Any:
        params = types.DefinitionParams(
            types.TextDocumentIdentifier(uri), types.Position(line, character)
        )
        return self._call(self.client.text_document_definition_async(params))

    def stop(self) -> int | None:
        """Shut the server down as an editor does; its exit status."""
        async def stop() -> int | None:
            await self.client.shutdown_async(None)
            self.client.exit(None)
            await self.client.stop()  # type: ignore[no-untyped-call]  # unannotated in pygls
            server = self.client._server  # the process pygls started
            return None if server is None else server.returncode

        try:
            return self._call(stop())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(TIMEOUT)

    def alive(self) -> bool:
        server = self.client._server
        return server is not None and server.returncode is None


def apply(text: str, edit: types.WorkspaceEdit, uri: str) -> str:
    """`text` with the edits of a WorkspaceEdit for `uri` applied (UTF-16 positions)."""
    edits: list[types.TextEdit] = list((edit.changes or {}).get(uri, []))
    for change in edit.document_changes or []:
        if isinstance(change, types.TextDocumentEdit) and change.text_document.uri == uri:
            edits.extend(item for item in change.edits if isinstance(item, types.TextEdit))
    lines = text.splitlines(keepends=True)

    def offset(position: types.Position) -> int:
        before = sum(len(line) for line in lines[: position.line])
        line = lines[position.line] if position.line < len(lines) else ""
        units = 0
        for index, character in enumerate(line):
            if units >= position.character:
                return before + index
            units += 2 if ord(character) > 0xFFFF else 1
        return before + len(line)

    spans = sorted(((offset(e.range.start), offset(e.range.end), e.new_text) for e in edits),
                   reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text
