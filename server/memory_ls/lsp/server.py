"""The memory-ls language server: the state its features share.

Each LSP feature lives in its own module with a `register(server)` function and imports
this module; this module imports none of them (lsp/app.py, the composition root,
registers them all and serves). It holds what they share (settings, store, index, worker
threads) and the orchestration when the configuration or the store changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, TypeVar

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from memory_ls import __version__
from memory_ls.config import (
    INITIALIZATION_OPTIONS_SOURCE,
    WORKSPACE_CONFIGURATION_SOURCE,
    Layer,
    Settings,
    anchor_layer,
    merge_layers,
)
from memory_ls.core.services.index import MemoryIndex, Update
from memory_ls.core.services.search import SearchIndex, fingerprint
from memory_ls.core.storage.folders import StoreConfig, resolve_store_config
from memory_ls.core.store import Store
from memory_ls.lsp.protocol import MemoryProtocol
from memory_ls.project_file import ProjectWatch, store_root

SERVER_NAME = "memory-ls"
# Who the language server's writes are journaled for (core/services/journal/: history, revert).
EDITOR_SOURCE = "editor"
# MEMORY_LS_LOG_LEVEL=INFO logs every message on stderr (the client's server log).
LOG_LEVEL_ENV = "MEMORY_LS_LOG_LEVEL"
# Store calls get their own threads: pygls reads stdin on its thread pool, and slow
# disk work there could starve message reading (see notes/pygls-2.md).
STORE_WORKERS = 4
# When the session ends, store work still running gets this long before the process exits
# anyway (the client expects the server gone within two seconds).
EXIT_GRACE_SECONDS = 1.0

logger = logging.getLogger(__name__)
Result = TypeVar("Result")


class QuickFixes(Protocol):
    """Quick fixes a feature offers for a diagnostic (lsp/repository.py's for `stale-path`)."""

    def fixes(
        self, uri: str, text: str, version: int | None, diagnostic: types.Diagnostic
    ) -> list[tuple[str, types.CodeAction]]: ...


class MemoryServer(LanguageServer):
    """The language server and the state its feature modules share."""

    def __init__(self, cli: Layer) -> None:
        super().__init__(
            SERVER_NAME,
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=MemoryProtocol,
        )
        self.cli_layer = cli
        self.init_layer = Layer(source=INITIALIZATION_OPTIONS_SOURCE, values={})
        self.workspace_layer = Layer(source=WORKSPACE_CONFIGURATION_SOURCE, values={})
        self.root = os.getcwd()
        # The repository's project file, found from the workspace folder (project_file.py).
        self.project = ProjectWatch(self.root)
        self.settings: Settings = merge_layers(cli)
        self.config: StoreConfig = resolve_store_config(self.settings, self.root)
        self.index = MemoryIndex(self.config)
        # The full-text index, kept current with the name index (lsp/indexing.py, watching.py).
        self.search_index = SearchIndex(self.config, live=True)
        self.store = Store(
            self.config,
            self.search_index,
            self.reference_sources,
            source=EDITOR_SOURCE,
            name_words=self.name_words,
        )
        self.store_pool = ThreadPoolExecutor(STORE_WORKERS, thread_name_prefix="memory-ls-store")
        self.loop: asyncio.AbstractEventLoop | None = None
        # Called on the event loop when the folders change (a new, empty index).
        self.folder_listeners: list[Callable[[], None]] = []
        # Called on the event loop when memories appear or disappear, or settings change.
        self.store_listeners: list[Callable[[], None]] = []
        # Called with paths that changed on disk because of our own commands.
        self.path_listeners: list[Callable[[list[str]], None]] = []
        # Called on the event loop after the full-text index caught up with the disk (its
        # first sync, or changed files): near-duplicates are found through it.
        self.search_listeners: list[Callable[[set[str] | None], None]] = []
        # Called on the event loop after changed paths (files or folders) updated an index.
        self.index_listeners: list[Callable[[MemoryIndex, set[str], Update], None]] = []
        # What a document shows once closed (the file's problems on disk, where the client
        # gets every file's problems by push; else nothing).
        self.closed_diagnostics: Callable[[str], list[types.Diagnostic]] = lambda uri: []
        # Each file's on-disk problem codes by path, as the workspace diagnostics last
        # found them (lsp/workspace_diagnostics.py; empty while they are off): the graph's.
        self.disk_problems: Callable[[], dict[str, tuple[str, ...]]] = dict
        # Called on the event loop with the paths of the client's file events (any file).
        self.client_file_listeners: list[Callable[[list[str]], None]] = []
        # Called on the event loop with the (old, new) paths of files and folders the editor
        # is about to rename or move (willRenameFiles: False) or renamed (didRenameFiles: True).
        self.rename_listeners: list[Callable[[list[tuple[str, str]], bool], None]] = []
        # The repository's files for `stale-path` (lsp/repository.py).
        self.repository: QuickFixes | None = None
        # Set once the server's own watch over the current folders is active (or off):
        # indexing lists the folders only then (lsp/watching.py, lsp/indexing.py).
        self.watch_armed = threading.Event()
        self.watch_armed.set()
        # Paths reported changed that the index has not caught up with yet (lsp/watching.py):
        # answers from the link index read them too.
        self.unsettled_paths: Callable[[], set[str]] = set
        # Called on shutdown, to stop watchers and background work.
        self.closers: list[Callable[[], None]] = []
        # False until the client said `initialized` and the first configuration is in:
        # folder listeners wait for it, so the store is not indexed twice at start.
        self.started = False
        # Set once the first configuration (the client's settings included) is applied.
        self.configured = asyncio.Event()
        # True once the client asked to shut down: nothing more is sent.
        self.stopping = False
        self._said: set[str] = set()

    # ----- threads and the event loop ------------------------------------------------

    async def in_store_thread(
        self, function: Callable[..., Result], *args: Any, **kwargs: Any
    ) -> Result:
        """Run blocking store work off the event loop."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self.store_pool, functools.partial(function, *args, **kwargs)
        )

    def on_loop(self, callback: Callable[[], None]) -> None:
        """Run a callback on the event loop, from any thread."""
        loop = self.loop
        if loop is None or loop.is_closed() or self.stopping:
            return
        try:
            loop.call_soon_threadsafe(callback)
        except RuntimeError:  # the loop stopped between the check and the call
            logger.debug("event loop closed; dropped a callback")

    # ----- messages ------------------------------------------------------------------

    def tell(self, message: str, kind: types.MessageType) -> None:
        """Show a message to the user and log it."""
        self.window_log_message(types.LogMessageParams(type=kind, message=message))
        self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def tell_once(self, message: str, kind: types.MessageType) -> None:
        """Show a message once per session, however often its cause comes back."""
        if message not in self._said:
            self._said.add(message)
            self.tell(message, kind)

    def name_words(self, scope: str | None) -> frozenset[str] | None:
        """The words of the names in a scope, from the name index (a search that matches
        nothing suggests from them without listing the folders: 0.85 s at 100,000
        memories); None before the names are known."""
        index = self.index
        return index.name_words(scope) if index.scanned else None

    def reference_sources(self, keys: Sequence[str]) -> list[str] | None:
        """The memory files that may hold any of these link keys: those the link index
        names, and those changed on disk that it has not caught up with yet (a move and the
        editor's references read only these); None before the names are known (blocking:
        a store thread)."""
        index = self.index
        if not index.scanned:
            return None
        index.learn_links()
        found = dict.fromkeys(index.link_candidates(keys))
        found.update(dict.fromkeys(index.memory_paths_at(sorted(self.unsettled_paths()))))
        return list(found)

    # ----- configuration -------------------------------------------------------------

    def reconfigure(self) -> None:
        """Merge the settings layers and apply them (on the event loop)."""
        self.refresh_project()
        settings = merge_layers(*self.layers())
        project = self.project.project
        config = resolve_store_config(
            settings,
            store_root(self.root, project),
            project_file=project.path if project is not None else None,
        )
        for missing in config.missing_additional:
            self.tell_once(
                f"memory-ls: additional folder {missing} does not exist; it is skipped "
                "(it is never created for you).",
                types.MessageType.Warning,
            )
        # New patterns change which memories exist (ignored ones are not indexed).
        folders_changed = (config.root, config.folders, config.patterns) != (
            self.config.root,
            self.config.folders,
            self.config.patterns,
        )
        self.settings, self.config = settings, config
        # The full-text index follows what decides its content (folders, patterns, limits).
        search_stale = fingerprint(config) != fingerprint(self.search_index.config)
        if search_stale:
            self.search_index = SearchIndex(config, live=True)
        self.store = Store(
            config,
            self.search_index,
            self.reference_sources,
            source=EDITOR_SOURCE,
            name_words=self.name_words,
        )
        if folders_changed:
            self.index = MemoryIndex(config)
            if self.started:
                self.folders_changed()
        else:
            # Same folders: the index stays; only limits and severities changed.
            self.index.config = config
            if search_stale and self.started:
                self.sync_search_index(self.index, self.search_index)
        self.store_changed()

    def refresh_project(self) -> None:
        """Read the project file again if it changed; an invalid one is reported and the
        last good one kept."""
        if self.project.start != self.root:
            self.project = ProjectWatch(self.root)
        _, problem = self.project.refresh()
        if problem is not None:
            self.tell(
                f"memory-ls: {problem}. The previous settings stay in effect.",
                types.MessageType.Error,
            )

    def layers(self) -> tuple[Layer, ...]:
        """The settings' sources as last read, lowest precedence first: the project file,
        the editor's settings (their folders relative to the workspace folder), the flags."""
        project = self.project.project
        editor = (
            anchor_layer(self.init_layer, self.root),
            anchor_layer(self.workspace_layer, self.root),
        )
        return (*((project.layer,) if project is not None else ()), *editor, self.cli_layer)

    def sync_search_index(self, index: MemoryIndex, search_index: SearchIndex) -> None:
        """Bring the full-text index in line with the name index's files (off the loop)."""
        if index.scanned:
            files = index.files()

            def sync() -> None:
                if search_index.sync(files):
                    self.on_loop(lambda: self.search_changed(None))

            self.store_pool.submit(sync)

    def folders_changed(self) -> None:
        """Tell the features that the folders changed: re-index, re-watch (on the event loop)."""
        for listener in self.folder_listeners:
            listener()

    def paths_written(self, paths: list[str]) -> None:
        """Our own command wrote these paths: update now rather than wait for file events."""
        for listener in self.path_listeners:
            listener(paths)

    def search_changed(self, paths: set[str] | None) -> None:
        """Tell the features that the full-text index took in these paths (None: all)."""
        for listener in self.search_listeners:
            listener(paths)

    def store_changed(self) -> None:
        """Tell the features that memories or settings changed (on the event loop)."""
        for listener in self.store_listeners:
            listener()


def quiet_refusals(record: logging.LogRecord) -> bool:
    """Log a refusal (a store error sent as the answer) as one debug line, not a traceback.

    pygls logs every error a handler raises with its traceback, and a refusal such as
    `not-found` is a normal answer: the client's log would fill with alarming traces.
    """
    error = record.exc_info[1] if record.exc_info else None
    data = getattr(error, "data", None)
    if not (isinstance(data, dict) and isinstance(data.get("code"), str)):
        return True  # a real failure: keep the traceback
    if not logging.getLogger(record.name).isEnabledFor(logging.DEBUG):
        return False
    record.exc_info, record.exc_text = None, None
    record.levelno, record.levelname = logging.DEBUG, "DEBUG"
    record.msg, record.args = "refused [%s]: %s", (data["code"], error)
    return True


def exit_without_waiting(grace: float) -> None:
    """Give work in other threads `grace` seconds to finish, then exit without them.

    Python waits for every worker thread at exit, and a store call waiting for another
    process's lock would keep a server whose client is gone alive for a minute. An
    interrupted write leaves the old memory intact (writes are atomic).
    """
    current = threading.current_thread()
    deadline = time.monotonic() + grace
    for thread in threading.enumerate():
        if thread is not current and not thread.daemon:
            thread.join(max(0.0, deadline - time.monotonic()))
    if any(t is not current and not t.daemon and t.is_alive() for t in threading.enumerate()):
        logger.warning("exiting with store work unfinished after %.1fs", grace)
        logging.shutdown()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):  # closed with the session
                stream.flush()
        os._exit(0)
