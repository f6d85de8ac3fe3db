"""The language server: pygls on stdio, one worker thread that owns the workspace.

The event loop only speaks the protocol. Every change is queued, and one task hands the
queue to the worker: at once after a pause in changes, else once they have paused for
`debounce` (a save, a close and a configuration change go at once). The worker applies
them, checks every open document whose text or look-ups changed, and the loop publishes
the diagnostics. Hovers, definitions and code actions are answered on the same worker, so
they never race a check, on the text the editor holds when they are asked.

Clients that report no file changes (no dynamic registration of watched files) still see
changes on disk: the server then watches the workspace folders and the context itself, with
the operating system's file events (watchfiles), and treats what it sees as the client's
reports.

Nothing a document holds stops the server: a rule that raises loses its findings on that
object (a log message says which), and any other error in a check is logged and leaves
the document's diagnostics as they were.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import JsonRPCNotification
from pygls.uris import from_fs_path, to_fs_path

from trainlint import __version__
from trainlint.config.files import CONFIG_FILES, followed
from trainlint.errors import ConfigError
from trainlint.lsp import features
from trainlint.lsp.workspace import SETTINGS, Checked, LspOptions, Workspace

T = TypeVar("T")
log = logging.getLogger("trainlint.lsp")
#: The files of a folder that may hold manifests.
MANIFESTS = ("**/*.yaml", "**/*.yml", "**/*.json")
#: The files of the workspace folders whose changes the client is asked to report.
WATCHED = (*MANIFESTS, *(f"**/{name}" for name in sorted(CONFIG_FILES)))


class _Protocol(LanguageServerProtocol):
    """pygls's protocol, which answers every request: one whose params it cannot read
    (pygls dropped it with a message box) and one after `shutdown` (dropped silently),
    where a client would wait for an answer that never comes. A notification whose params
    it cannot read is passed over with a line in the client's log, not a message box that
    blames the server (and a traceback)."""

    def handle_message(self, message: Any) -> None:
        if message is _ANSWERED:
            return
        if self._shutdown and getattr(message, "id", None) is not None and getattr(
                message, "method", types.EXIT) != types.EXIT:
            error = JsonRpcInvalidRequest("the server is shut down: only exit is taken")
            self._send_response(message.id, None, error.to_response_error())
            return
        super().handle_message(message)

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcInvalidParams as error:
            if "method" not in data:
                raise
            if "id" in data:
                self._send_response(data["id"], None, error.to_response_error())
            else:  # a notification: there is no one to answer
                _passed_over(self._server,
                             f"{data['method']}: the params are not the protocol's; passed over")
            return _ANSWERED


def _passed_over(server: LanguageServer, message: str) -> None:
    """A message of the client's that the server passed over, told in the client's log
    (and the server's), where the client's fault belongs: no message box."""
    log.warning("%s", message)
    server.window_log_message(types.LogMessageParams(types.MessageType.Warning, message))


#: What a message answered or passed over while it was read becomes.
_ANSWERED = JsonRPCNotification(method="", jsonrpc="answered", params=None)


class Server(LanguageServer):
    """`trainlint lsp`: diagnostics, quick fixes, hovers and definitions for manifests."""

    def __init__(self, options: LspOptions) -> None:
        super().__init__("trainlint", __version__, protocol_cls=_Protocol)
        self.given = options
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="trainlint")
        self.files = Workspace(options, self._problem)
        #: Changes to apply, in order, before the next check: (operation, arguments).
        self._queue: list[tuple[Callable[..., None], tuple[Any, ...]]] = []
        #: Documents whose text changed since the last check, by URI.
        self._changed: set[str] = set()
        self._wake = asyncio.Event()
        self._due = self._last_change = 0.0
        self._uris: dict[str, str] = {}
        self._told: set[str] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        #: Whether the client asked for a shutdown before it exits.
        self.shut_down = False
        self.checking: asyncio.Future[None] | None = None
        #: The context folders outside the workspace folders whose files are watched, the
        #: id of that registration, and how many were made.
        self._watching: tuple[str, ...] = ()
        self._registration: str | None = None
        self._registrations = 0
        #: What the server watches itself, for a client that reports no file changes
        #: (the workspace folders and the context outside them), and the event that
        #: restarts that watch when they change.
        self._disk_roots: tuple[str, ...] = ()
        self._rewatch = asyncio.Event()
        self.watching_disk: asyncio.Future[None] | None = None

    def report_server_error(self, error: Exception, source: Any) -> None:
        """A message that is no JSON (its `Content-Length` cut it short) is the client's
        fault: a line in its log, not pygls's message box that blames the server."""
        if source is JsonRpcException:
            _passed_over(self, f"a message could not be read, and was passed over: {error}")
            return
        super().report_server_error(error, source)

    # --- names and the client ---

    def name_of(self, uri: str) -> str:
        name = to_fs_path(uri) or uri
        self._uris.setdefault(name, uri)
        return name

    def uri_of(self, name: str) -> str:
        return self._uris.get(name) or from_fs_path(name) or name

    def client(self) -> features.Client:
        capabilities = self.client_capabilities
        action = capabilities.text_document and capabilities.text_document.code_action
        resolves = action and action.resolve_support
        edit = capabilities.workspace and capabilities.workspace.workspace_edit
        encoding = self.workspace.position_encoding or types.PositionEncodingKind.Utf16
        return features.Client(
            encoding=getattr(encoding, "value", encoding),  # an enum member, or a string
            uri_of=self.uri_of,
            resolves_edits=bool(resolves and "edit" in resolves.properties),
            versioned_edits=bool(edit and edit.document_changes),
        )

    def watches_files(self) -> bool:
        """Whether the client reports changes to files that the server names."""
        workspace = self.client_capabilities.workspace
        watching = workspace and workspace.did_change_watched_files
        return bool(watching and watching.dynamic_registration)

    def watch_context(self) -> None:
        """Have the context folders that lie outside the workspace folders watched, anew
        when they change: by the client (its own watchers see only the workspace), or,
        for a client that reports no changes, by the server's own watch of the workspace
        folders and of them."""
        folders = self.folders()
        roots = tuple(
            root for root in self.files.context_roots
            if not any(Path(root).is_relative_to(folder) for folder in folders)
        )
        if not self.watches_files():
            watched = (*map(str, folders), *roots)
            if watched != self._disk_roots:
                self._disk_roots = watched
                self._rewatch.set()
            return
        if roots == self._watching:
            return
        previous, self._watching, self._registration = self._registration, roots, None
        if roots:
            self._registrations += 1
            self._registration = f"trainlint-context-{self._registrations}"
            registration = types.Registration(
                self._registration, types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                types.DidChangeWatchedFilesRegistrationOptions(self._watchers(roots)),
            )
            self.client_register_capability(types.RegistrationParams([registration]))
        if previous:
            gone = types.Unregistration(previous, types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
            self.client_unregister_capability(types.UnregistrationParams([gone]))

    def _watchers(self, roots: tuple[str, ...]) -> list[types.FileSystemWatcher]:
        """The manifests of each root (a folder, or one file), relative to it where the
        client takes relative patterns, else as absolute globs."""
        workspace = self.client_capabilities.workspace
        watching = workspace and workspace.did_change_watched_files
        relative = bool(watching and watching.relative_pattern_support)
        watchers = []
        for root in roots:
            path = Path(root)
            base, patterns = (path, MANIFESTS) if path.is_dir() else (path.parent, (path.name,))
            for pattern in patterns:
                glob: types.GlobPattern = (
                    types.RelativePattern(from_fs_path(str(base)) or str(base), pattern)
                    if relative else f"{base.as_posix()}/{pattern}"
                )
                watchers.append(types.FileSystemWatcher(glob_pattern=glob))
        return watchers

    def disk_changed(self, names: list[str], *, created_or_deleted: bool) -> None:
        """Files changed on disk, as the client or the server's own watch reports them."""
        if any(Path(name).name in CONFIG_FILES for name in names):
            self.reconfigure(self.files.options)
            return
        if created_or_deleted:
            self.enqueue(self.files.rescan, at_once=False)
        self.enqueue(self.files.reread, names, at_once=False)

    async def watch_disk(self) -> None:
        """For a client that reports no file changes: the OS's events of what
        `watch_context` names, anew when that changes. Without
        watchfiles (the `lsp` extra has it), changes on disk are seen when a document is
        opened, as before."""
        try:
            import watchfiles
        except ImportError:
            log.warning("watchfiles is missing: changes on disk are not followed")
            return
        while not self.shut_down:
            self._rewatch.clear()
            roots = [root for root in self._disk_roots if Path(root).exists()]
            if not roots:
                await self._rewatch.wait()
                continue
            self.window_log_message(types.LogMessageParams(
                types.MessageType.Log, "watching for changes on disk: " + ", ".join(roots)
            ))
            async for changes in watchfiles.awatch(
                *roots, watch_filter=lambda _, name: followed(name), debounce=50,
                stop_event=self._rewatch,
            ):
                self.disk_changed(
                    [name for _, name in changes],
                    created_or_deleted=any(
                        change != watchfiles.Change.modified for change, _ in changes
                    ),
                )

    def folders(self) -> list[Path]:
        found = [to_fs_path(folder.uri) for folder in self.workspace.folders.values()]
        if not found and self.workspace.root_path:
            found = [self.workspace.root_path]
        return [Path(folder) for folder in found if folder]

    def _problem(self, message: str) -> None:
        """Told on the worker thread; each message goes to the client once per
        configuration (a broken configuration would otherwise be told for every check)."""
        if message in self._told:
            return
        self._told.add(message)
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._tell, message)

    def _tell(self, message: str) -> None:
        self.window_log_message(types.LogMessageParams(types.MessageType.Error, message))
        if not message.startswith("internal error"):
            self.window_show_message(types.ShowMessageParams(types.MessageType.Error, message))

    # --- the queue ---

    def enqueue(self, operation: Callable[..., None], *arguments: Any, at_once: bool) -> None:
        self._queue.append((operation, arguments))
        self._soon(at_once)

    def closed(self, uri: str) -> None:
        self._changed.discard(uri)
        self.enqueue(self.files.close, self.name_of(uri), at_once=True)

    def changed(self, uri: str, *, at_once: bool = False) -> None:
        self._changed.add(uri)
        self._soon(at_once)

    def _soon(self, at_once: bool) -> None:
        """Check at once after a pause in changes (typing at any human pace), else once
        the changes have paused for `debounce` (a burst: a paste, a multi-cursor edit, a
        formatter's many changes)."""
        loop = asyncio.get_running_loop()
        self._loop = loop
        now, pause = loop.time(), self.files.options.debounce
        quiet = now - self._last_change >= pause
        self._due = now if at_once or quiet else now + pause
        self._last_change = now
        self._wake.set()

    async def checker(self) -> None:
        """Hand what is queued to the worker, once changes have paused, then publish."""
        loop = asyncio.get_running_loop()
        while True:
            await self._wake.wait()
            while (left := self._due - loop.time()) > 0:
                await asyncio.sleep(left)
            self._wake.clear()
            queue, self._queue = self._queue, []
            texts = {}
            for uri in self._changed:
                document = self.workspace.text_documents.get(uri)
                if document is not None:
                    texts[self.name_of(uri)] = document.source, document.version
            self._changed = set()
            client = self.client()
            try:
                published = await loop.run_in_executor(
                    self.worker, self._check, queue, texts, client
                )
            except Exception:
                log.exception("checking failed; the diagnostics shown are left as they were")
                continue
            self._publish(published)
            self.watch_context()

    def _check(
        self, queue: list[tuple[Callable[..., None], tuple[Any, ...]]],
        texts: dict[str, tuple[str, int | None]], client: features.Client,
    ) -> list[types.PublishDiagnosticsParams]:
        """On the worker: apply the changes, check what they made stale."""
        for operation, arguments in queue:
            try:
                operation(*arguments)
            except Exception:
                log.exception("%s failed; the workspace may lag behind", operation.__name__)
        for name, (text, version) in texts.items():
            self.files.open(name, text, version)
        published = []
        for name in self.files.stale():
            try:
                published.append(self._checked(name, client))
            except Exception:
                log.exception("checking %s failed; its diagnostics are left as they were", name)
        return published

    def _checked(self, name: str, client: features.Client) -> types.PublishDiagnosticsParams:
        """On the worker: check a document, and what to publish for it."""
        checked = self.files.check(name)
        return types.PublishDiagnosticsParams(
            self.uri_of(name), features.diagnostics(checked, client), checked.version
        )

    def _publish(self, published: list[types.PublishDiagnosticsParams]) -> None:
        for params in published:
            # Not for a document closed, or changed, while it was being checked.
            document = self.workspace.text_documents.get(params.uri)
            if document is not None and document.version == params.version:
                self.text_document_publish_diagnostics(params)

    async def answer(
        self, uri: str, build: Callable[[str, Checked, features.Client], T | None]
    ) -> T | None:
        """Run `build(name, checked, client)` on the worker, after what is queued, on a
        check of the text the editor holds now (published, when it is a new check)."""
        loop = asyncio.get_running_loop()
        document = self.workspace.text_documents.get(uri)
        if document is None:
            return None
        name, text, version = self.name_of(uri), document.source, document.version
        client = self.client()

        def run() -> tuple[T | None, list[types.PublishDiagnosticsParams]]:
            self.files.open(name, text, version)
            published = [] if self.files.checked(name) else [self._checked(name, client)]
            checked = self.files.checked(name)
            assert checked is not None
            return build(name, checked, client), published

        answered, published = await loop.run_in_executor(self.worker, run)
        self._publish(published)
        return answered

    def reconfigure(self, options: LspOptions) -> None:
        self._told.clear()
        self.enqueue(self.files.configure, options, self.folders(), at_once=True)


def build(options: LspOptions) -> Server:
    """The server with its features registered."""
    server = Server(options)
    _lifecycle(server)
    _documents(server)
    _workspace(server)
    _requests(server)
    return server


def _lifecycle(server: Server) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: Server, params: types.InitializeParams) -> None:
        try:
            ls.given = ls.given.updated(params.initialization_options)
        except ConfigError as error:
            ls.window_show_message(types.ShowMessageParams(types.MessageType.Error, str(error)))

    @server.feature(types.INITIALIZED)
    async def initialized(ls: Server, params: types.InitializedParams) -> None:
        ls.reconfigure(ls.given)
        ls.checking = asyncio.ensure_future(ls.checker())
        ls.enqueue(ls.files.warm_up, at_once=True)
        if ls.watches_files():
            watchers = [types.FileSystemWatcher(glob_pattern=pattern) for pattern in WATCHED]
            registration = types.Registration(
                "trainlint-files", types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                types.DidChangeWatchedFilesRegistrationOptions(watchers),
            )
            await ls.client_register_capability_async(types.RegistrationParams([registration]))
        else:
            ls.watching_disk = asyncio.ensure_future(ls.watch_disk())

    @server.feature(types.SHUTDOWN)
    def shutdown(ls: Server, params: None) -> None:
        ls.shut_down = True


def _documents(server: Server) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: Server, params: types.DidOpenTextDocumentParams) -> None:
        ls.changed(params.text_document.uri, at_once=True)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: Server, params: types.DidChangeTextDocumentParams) -> None:
        ls.changed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: Server, params: types.DidSaveTextDocumentParams) -> None:
        ls.changed(params.text_document.uri, at_once=True)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: Server, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.closed(uri)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri, []))


def _workspace(server: Server) -> None:
    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: Server, params: types.DidChangeWatchedFilesParams) -> None:
        ls.disk_changed(
            [ls.name_of(change.uri) for change in params.changes],
            created_or_deleted=any(
                change.type != types.FileChangeType.Changed for change in params.changes
            ),
        )

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(
        ls: Server, params: types.DidChangeConfigurationParams
    ) -> None:
        try:
            options = ls.given.updated(params.settings, SETTINGS)
        except ConfigError as error:
            ls.window_show_message(types.ShowMessageParams(types.MessageType.Error, str(error)))
            return
        ls.reconfigure(options)

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def did_change_folders(ls: Server, params: types.DidChangeWorkspaceFoldersParams) -> None:
        ls.reconfigure(ls.files.options)


def _requests(server: Server) -> None:
    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[features.QUICK_FIX, features.FIX_ALL], resolve_provider=True
        ),
    )
    async def code_action(
        ls: Server, params: types.CodeActionParams
    ) -> list[types.CodeAction] | None:
        return await ls.answer(
            params.text_document.uri,
            lambda name, checked, client: features.code_actions(
                ls.files, name, checked, params, client
            ),
        )

    @server.feature(types.CODE_ACTION_RESOLVE)
    async def code_action_resolve(ls: Server, action: types.CodeAction) -> types.CodeAction:
        data = action.data if isinstance(action.data, dict) else {}
        uri = data.get("uri")
        if not isinstance(uri, str):
            return action

        def resolved(name: str, checked: Checked, client: features.Client) -> types.CodeAction:
            build = features.builder(ls.files, name, checked, data)
            if build is None:
                action.disabled = types.CodeActionDisabled("the document changed: ask again")
                return action
            return features.resolve(action, build, checked, name, client)

        return await ls.answer(uri, resolved) or action

    _at_position(server, types.TEXT_DOCUMENT_HOVER, features.hover)
    _at_position(server, types.TEXT_DOCUMENT_DEFINITION, features.definition)


def _at_position(
    server: Server, method: str,
    answer: Callable[[Workspace, str, Checked, types.Position, features.Client], T | None],
) -> None:
    """A request about a position in a document (hover, definition)."""

    @server.feature(method)
    async def at_position(ls: Server, params: types.TextDocumentPositionParams) -> T | None:
        return await ls.answer(
            params.text_document.uri,
            lambda name, checked, client: answer(ls.files, name, checked, params.position, client),
        )
