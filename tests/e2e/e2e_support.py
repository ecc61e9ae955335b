"""Helpers for end-to-end tests: a workspace on disk and a pytest-lsp client session."""

from __future__ import annotations

import asyncio
import atexit
import os
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities, make_test_lsp_client

SERVER_COMMAND = [sys.executable, "-m", "memory_ls"]
# The server must never touch the real home: global folders and lock files go here.
_HOME = tempfile.mkdtemp(prefix="memory-ls-e2e-home-")
atexit.register(shutil.rmtree, _HOME, True)
SERVER_ENV = {
    **os.environ,
    "HOME": _HOME,
    "XDG_CACHE_HOME": os.path.join(_HOME, ".cache"),
    "SERENA_HOME": os.path.join(_HOME, ".serena"),
}
CLIENTS = ("visual-studio-code", "neovim")
TIMEOUT = 5.0
CURSOR = "¦"
# The titles of the server's indexing progresses: names and facts, then the search index.
INDEXING = "Indexing memories"
INDEXING_FOR_SEARCH = "Indexing memories for search"

MEMORIES: Mapping[str, str] = {
    ".serena/memories/project_overview.md": (
        "---\ntags: [overview, onboarding]\n---\n# Project overview\n\nSee [[auth/login_flow]].\n"
    ),
    ".serena/memories/auth/login_flow.md": "---\ntags: [auth]\n---\n# Login flow\n",
    ".serena/memories/style_guide.md": "# Style guide (project)\n",
    "shared/feature/FEATURE_checkout.md": "---\ntags: [checkout, auth]\n---\n# Checkout\n",
    "shared/spec/SPEC_payments_api.md": "# Payments API\n",
    "notes/readme.md": "# Not a memory\n",
}
OUTSIDE_MEMORIES: Mapping[str, str] = {
    "team/team_rules.md": "# Team rules\n",
    "global/style_guide.md": "# Style guide (personal)\n",
    "global/editor_tips.md": "---\ntags: [editor]\n---\n# Editor tips\n",
}


@dataclass
class Workspace:
    """A workspace root with memory folders, plus folders outside it (team, global)."""

    base: Path

    @property
    def root(self) -> Path:
        """The workspace root."""
        return self.base / "project"

    @property
    def primary(self) -> Path:
        """The primary folder."""
        return self.root / ".serena" / "memories"

    @property
    def outside(self) -> Path:
        """An additional folder outside the workspace."""
        return self.base / "team"

    @property
    def global_folder(self) -> Path:
        """The global folder (outside the workspace)."""
        return self.base / "global"

    def path(self, relative: str) -> Path:
        """A path under the workspace root."""
        return self.root / relative

    def uri(self, relative: str) -> str:
        """The file URI of a path under the workspace root."""
        return self.path(relative).as_uri()

    def write(self, relative: str, text: str) -> Path:
        """Write a file under the root (parents created)."""
        return write_file(self.path(relative), text)

    def init_options(self, **extra: Any) -> dict[str, Any]:
        """Initialization options naming this workspace's folders."""
        return {
            "additionalFolders": [
                "shared/feature",
                "shared/feature_builder",
                "shared/spec",
                str(self.outside),
            ],
            "globalFolder": str(self.global_folder),
            **extra,
        }


def write_file(path: Path, text: str) -> Path:
    """Write a file, creating its parents."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def make_workspace(base: Path) -> Workspace:
    """Create the standard test workspace under `base`."""
    workspace = Workspace(base)
    for relative, text in MEMORIES.items():
        workspace.write(relative, text)
    (workspace.root / "shared" / "feature_builder").mkdir(parents=True)
    for relative, text in OUTSIDE_MEMORIES.items():
        write_file(base / relative, text)
    return workspace


@dataclass
class Session:
    """A client connected to a running server, with what it recorded."""

    client: LanguageClient
    workspace: Workspace
    initialized: types.InitializeResult | None = None
    published: list[types.PublishDiagnosticsParams] = field(default_factory=list)
    registrations: list[types.Registration] = field(default_factory=list)
    unregistrations: list[types.Unregistration] = field(default_factory=list)

    async def command(self, name: str, *arguments: Any) -> Any:
        """Execute a workspace command."""
        return await self.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command=name, arguments=list(arguments))
        )

    def open(self, relative: str, text: str | None = None, version: int = 1) -> str:
        """Open a document (its text from disk unless given); return its URI."""
        uri = (
            self.workspace.uri(relative)
            if not relative.startswith("/")
            else Path(relative).as_uri()
        )
        path = Path(relative) if relative.startswith("/") else self.workspace.path(relative)
        content = path.read_text(encoding="utf-8") if text is None else text
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="markdown", version=version, text=content
                )
            )
        )
        return uri

    def replace_text(self, uri: str, text: str, version: int) -> None:
        """Replace a document's whole text."""
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def close(self, uri: str) -> None:
        """Close a document."""
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )

    async def complete(self, uri: str, line: int, character: int) -> types.CompletionList | None:
        """Ask for completion at a position (in the client's units)."""
        result = await self.client.text_document_completion_async(
            types.CompletionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=line, character=character),
            )
        )
        assert result is None or isinstance(result, types.CompletionList), result
        return result

    async def documentation(self, item: types.CompletionItem) -> types.MarkupContent:
        """An item's documentation: inline, or from completionItem/resolve (VS Code's way)."""
        if item.documentation is None:
            item = await self.client.completion_item_resolve_async(item)
        assert isinstance(item.documentation, types.MarkupContent), item
        return item.documentation

    def units(self, text: str) -> int:
        """The length of `text` in the position encoding the server chose."""
        assert self.initialized is not None
        encoding = self.initialized.capabilities.position_encoding or "utf-16"
        if encoding == "utf-8":
            return len(text.encode("utf-8"))
        if encoding == "utf-32":
            return len(text)
        return len(text.encode("utf-16-le")) // 2

    async def complete_at(self, relative: str, marked: str) -> types.CompletionList | None:
        """Open `marked` as document `relative` and complete where CURSOR marks the cursor."""
        before, after = marked.split(CURSOR, 1)
        lines = before.split("\n")
        uri = self.open(relative, before + after)
        return await self.complete(uri, len(lines) - 1, self.units(lines[-1]))

    def notify_files(self, *changes: tuple[Path, types.FileChangeType]) -> None:
        """Send workspace/didChangeWatchedFiles, as a client's file watcher would."""
        self.client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[types.FileEvent(uri=path.as_uri(), type=kind) for path, kind in changes]
            )
        )

    def publications(self, uri: str) -> int:
        """How many times diagnostics were published for a document."""
        return sum(1 for params in self.published if params.uri == uri)

    def change_configuration(self, configuration: Any, settings: Any = None) -> None:
        """Change the client's `memoryLs` section and tell the server (which pulls it)."""
        self.client.set_configuration(configuration, section="memoryLs")
        self.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings=settings)
        )

    async def eventually(
        self, check: Callable[[], Awaitable[bool]], describe: str, timeout: float = TIMEOUT
    ) -> None:
        """Repeat a check made of requests until it holds (the server applies changes async)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not await check():
            if loop.time() > deadline:
                raise AssertionError(f"timed out after {timeout}s: {describe}")
            await asyncio.sleep(0.02)

    async def wait_for_message(self, text: str) -> types.ShowMessageParams:
        """Wait for a window/showMessage containing `text`."""

        def matching() -> list[types.ShowMessageParams]:
            return [m for m in self.client.messages if text in m.message]

        await wait_until(
            self.client,
            types.WINDOW_SHOW_MESSAGE,
            lambda: bool(matching()),
            lambda: f"messages: {[m.message for m in self.client.messages]}",
        )
        return matching()[0]

    def messages_with(self, text: str) -> list[str]:
        """The shown messages that contain `text`."""
        return [m.message for m in self.client.messages if text in m.message]

    def progress_ended(self, title: str = INDEXING) -> int:
        """How many work-done progresses with this title the server has ended."""
        return sum(
            isinstance(report, types.WorkDoneProgressEnd)
            for reports in self.progresses(title)
            for report in reports
        )

    def progresses(self, title: str = INDEXING) -> list[list[Any]]:
        """The reports of each work-done progress with this title."""
        return [
            reports
            for reports in self.client.progress_reports.values()
            if reports
            and isinstance(reports[0], types.WorkDoneProgressBegin)
            and reports[0].title == title
        ]

    async def indexed(self, count: int = 1, title: str = INDEXING) -> None:
        """Wait until the server has finished indexing (`title`) `count` times."""
        await wait_until(
            self.client,
            types.PROGRESS,
            lambda: self.progress_ended(title) >= count,
            lambda: f"progress: {self.client.progress_reports}",
        )

    def codes(self, uri: str) -> list[str]:
        """The codes of the diagnostics last published for a document."""
        return sorted(str(d.code) for d in self.client.diagnostics.get(uri, ()))

    async def wait_for_codes(self, uri: str, condition: Callable[[list[str]], bool]) -> list[str]:
        """Wait until the document's published diagnostic codes satisfy `condition`."""
        await wait_until(
            self.client,
            types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
            lambda: uri in self.client.diagnostics and condition(self.codes(uri)),
            lambda: f"diagnostics of {uri}: {self.codes(uri)}",
        )
        return self.codes(uri)


async def wait_until(
    client: LanguageClient,
    method: str,
    condition: Callable[[], bool],
    describe: Callable[[], str] = lambda: "",
    timeout: float = TIMEOUT,
) -> None:
    """Wait for notifications of `method` until `condition` holds (checked after each)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        # Registered before awaiting, so a notification cannot slip between check and wait.
        arrival = client.protocol.wait_for_notification_async(method)
        remaining = deadline - loop.time()
        try:
            await asyncio.wait_for(arrival, max(remaining, 0.001))
        except TimeoutError:
            if condition():
                return
            raise AssertionError(f"timed out after {timeout}s waiting; {describe()}") from None


@asynccontextmanager
async def session(
    workspace: Workspace,
    client_name: str = "visual-studio-code",
    init_options: Any = None,
    configuration: Any = None,
    server_args: tuple[str, ...] = (),
    env: Mapping[str, str] | None = None,
    process_id: int | None = None,
    wait_indexed: bool = True,
    capabilities: types.ClientCapabilities | None = None,
) -> AsyncIterator[Session]:
    """Start the server, initialize it as `client_name` would, and shut it down after."""
    client = make_test_lsp_client()
    recorded = Session(client, workspace)

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register_capability(params: types.RegistrationParams) -> None:
        recorded.registrations.extend(params.registrations)

    @client.feature(types.CLIENT_UNREGISTER_CAPABILITY)
    def unregister_capability(params: types.UnregistrationParams) -> None:
        recorded.unregistrations.extend(params.unregisterations)

    # Keep every publication (the client itself keeps only the last per document).
    keep_last = client.protocol.fm.features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def publish_diagnostics(params: types.PublishDiagnosticsParams) -> None:
        recorded.published.append(params)
        keep_last(params)

    client.protocol.fm.features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish_diagnostics

    if configuration is not None:
        client.set_configuration(configuration, section="memoryLs")
    await client.start_io(*SERVER_COMMAND, *server_args, env={**SERVER_ENV, **(env or {})})
    try:
        recorded.initialized = await client.initialize_session(
            types.InitializeParams(
                capabilities=capabilities or client_capabilities(client_name),
                root_uri=workspace.root.as_uri(),
                workspace_folders=[
                    types.WorkspaceFolder(uri=workspace.root.as_uri(), name="project")
                ],
                initialization_options=(
                    workspace.init_options() if init_options is None else init_options
                ),
                process_id=process_id,
            )
        )
        if wait_indexed:
            await recorded.indexed()
        yield recorded
        if client._server is not None and client._server.returncode is None:
            await client.shutdown_session()
    finally:
        await _stop(client)


async def _stop(client: LanguageClient) -> None:
    """Stop the client; a server still running (a failed test) is made to exit first."""
    # pygls' client.stop() waits for the server without closing its input, so after a
    # failure the server would never notice that the session is over.
    server = client._server
    if server is not None and server.returncode is None:
        if server.stdin is not None:
            server.stdin.close()
        try:
            await asyncio.wait_for(server.wait(), TIMEOUT)
        except TimeoutError:
            server.kill()
    await client.stop()
