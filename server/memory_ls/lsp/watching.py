"""Live changes (SPEC 3.5): the client's file events and the server's own watcher.

The client's `workspace/didChangeWatchedFiles` is registered where the client allows
dynamic registration; the server also watches every configured folder (watchfiles),
so folders outside the workspace and clients without file events are covered too (the
watch itself, shared with the MCP server, is core/storage/watching.py).
Both sources feed one queue of paths; each path is re-read from disk once per batch,
so an event reported by both costs one update and at most one refresh.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import uuid
from collections.abc import Iterable
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from memory_ls.core.services.index import MemoryIndex, Update
from memory_ls.core.services.search import SearchIndex
from memory_ls.core.storage.folders import Folder
from memory_ls.core.storage.watching import (
    FolderWatch,
    SerialWorker,
    appeared_folders,
    arm,
    is_ancestor_or_same,
    server_watch_disabled,
)
from memory_ls.lsp.server import MemoryServer

# Events within this window are handled as one batch (an editor's save is several).
BATCH_DELAY_SECONDS = 0.03
# A batch this large is a burst (an agent writing many memories at once). The kernel's
# event queue can overflow in one (inotify keeps 16,384 events), and lost events would
# leave the index wrong until the next change: once the burst has been quiet this long,
# the directories it touched are read again.
BURST_PATHS = 200
BURST_QUIET_SECONDS = 1.0
WATCHED_FILES_METHOD = types.WORKSPACE_DID_CHANGE_WATCHED_FILES
MARKDOWN_GLOB = "**/*.md"

logger = logging.getLogger(__name__)


def register(server: MemoryServer) -> None:
    """Register file-event handling and follow the configured folders."""
    watcher = Watcher(server)
    server.folder_listeners.append(watcher.rearm)
    server.closers.append(watcher.stop)
    server.path_listeners.append(watcher.enqueue)
    server.unsettled_paths = watcher.unsettled

    @server.feature(WATCHED_FILES_METHOD)
    def did_change_watched_files(
        ls: MemoryServer, params: types.DidChangeWatchedFilesParams
    ) -> None:
        paths = [path for path in (to_fs_path(c.uri) for c in params.changes) if path]
        watcher.enqueue(paths)
        for listener in ls.client_file_listeners:
            listener(paths)


class Watcher:
    """Turns file events from either source into per-path index updates."""

    def __init__(self, ls: MemoryServer) -> None:
        self.ls = ls
        self._lock = threading.Lock()
        self._pending: set[str] = set()
        self._flush_scheduled = False
        # An index update is running in a store thread (set and read on the event loop).
        self._updating = False
        self._flush_when_updated = False
        # The paths of the update running now (read under _lock from any thread).
        self._in_flight: frozenset[str] = frozenset()
        # The server's own watches, recursive and flat (see watch_plan).
        self._watches: dict[bool, FolderWatch | None] = {}
        self._missing: tuple[str, ...] = ()
        # The configured folders watched flat (they held no folder when watched).
        self._flat: tuple[str, ...] = ()
        self._registration: str | None = None
        self._registered_for: tuple[str, ...] = ()
        self._burst_directories: set[str] = set()
        self._burst_timer: asyncio.TimerHandle | None = None
        self._serial = SerialWorker("memory-ls-watch")

    # ----- events --------------------------------------------------------------------

    def unsettled(self) -> set[str]:
        """Paths reported changed that the index has not caught up with yet (any thread)."""
        with self._lock:
            return self._pending | self._in_flight

    def enqueue(self, paths: Iterable[str]) -> None:
        """Queue changed paths (from any thread); they are handled in one batch."""
        with self._lock:
            self._pending.update(os.path.normpath(p) for p in paths)
            if self._flush_scheduled or not self._pending:
                return
            self._flush_scheduled = True
        self.ls.on_loop(self._schedule_flush)

    def _schedule_flush(self) -> None:
        loop = self.ls.loop
        if loop is not None:
            loop.call_later(BATCH_DELAY_SECONDS, self._flush)

    def _flush(self) -> None:
        if self._updating:
            # One update at a time: updates side by side only fight over the index's lock
            # and the GIL while completion waits. These paths go when this one is done.
            self._flush_when_updated = True
            return
        with self._lock:
            paths, self._pending = self._pending, set()
            self._flush_scheduled = False
            self._in_flight = frozenset(paths)
        index = self.ls.index
        # Something appeared on the way to a folder that did not exist: watch closer
        # (or the folder itself), and read whatever it already holds.
        related = [
            missing
            for missing in self._missing
            if any(
                is_ancestor_or_same(path, missing) or is_ancestor_or_same(missing, path)
                for path in paths
            )
        ]
        # A folder made in a folder watched flat: watched whole from now on, and read.
        related += appeared_folders(paths, self._flat)
        if len(paths) >= BURST_PATHS or self._burst_directories:
            # During a burst every batch counts: the folders are read again once nothing
            # at all has come for a while, not while the tail of the burst still runs.
            self._burst(paths)
        self._updating = True
        future = self.ls.store_pool.submit(_update_safely, index, paths)
        future.add_done_callback(
            lambda done: self.ls.on_loop(
                lambda: self._updated(index, paths, done.result(), related)
            )
        )

    def _burst(self, paths: set[str]) -> None:
        """Remember where a burst happened; read those directories again once it is over."""
        self._burst_directories.update(os.path.dirname(path) for path in paths)
        if self._burst_timer is not None:
            self._burst_timer.cancel()
        loop = self.ls.loop
        if loop is not None:
            self._burst_timer = loop.call_later(BURST_QUIET_SECONDS, self._after_burst)

    def _after_burst(self) -> None:
        self._burst_timer = None
        directories, self._burst_directories = self._burst_directories, set()
        self.enqueue(d for d in directories if os.path.isdir(d))

    def _updated(
        self, index: MemoryIndex, paths: set[str], update: Update, related: list[str]
    ) -> None:
        self._updating = False
        with self._lock:
            self._in_flight = frozenset()
        if update.paths:
            # The full-text index follows in a job of its own: its SQLite writes must not
            # hold back what completion and diagnostics see (searches re-read stale files).
            self.ls.store_pool.submit(
                _update_search_safely, self.ls, self.ls.search_index, update.paths
            )
        for listener in self.ls.index_listeners:
            listener(index, paths, update)
        if self._flush_when_updated:
            self._flush_when_updated = False
            self._flush()
        # A configured folder removed as a whole takes its watch along: watch for its return.
        vanished = any(
            not os.path.isdir(f.path) for f in index.config.folders if f.path not in self._missing
        )
        if related or vanished:
            self.rearm()
            # Files written before the new watch existed are found by reading the folder.
            self.enqueue(folder for folder in related if os.path.isdir(folder))
        if index is self.ls.index and update.names_changed:
            self.ls.store_changed()

    # ----- watching ------------------------------------------------------------------

    def rearm(self) -> None:
        """Watch the folders of the current configuration (client and server side)."""
        folders = self.ls.config.folders
        self._missing = tuple(f.path for f in folders if not os.path.isdir(f.path))
        # Indexing waits for this before it lists the folders: a file written between
        # the listing and an active watch would otherwise be missed for good.
        armed = self.ls.watch_armed = threading.Event()
        if not server_watch_disabled():
            # Off the event loop: setting up watches over large trees takes tens of ms,
            # and the first completion request is waiting. One thread keeps them in order.
            self._serial.submit(self._watch_on_server, folders, armed)
        else:
            armed.set()
        paths = tuple(f.path for f in folders)
        if paths != self._registered_for:
            self._registered_for = paths
            self.ls.on_loop(lambda: _spawn(self._register_with_client(folders)))

    def stop(self) -> None:
        """Stop the server's watcher."""
        self._serial.submit(self._stop_watches)

    def _stop_watches(self) -> None:
        watches, self._watches = self._watches, {}
        for watch in watches.values():
            if watch is not None:
                watch.stop()

    def _watch_on_server(self, folders: tuple[Folder, ...], armed: threading.Event) -> None:
        made: list[str] = []
        try:
            self._flat, made, _unwatched = arm(
                self._watches, [f.path for f in folders], self.enqueue
            )
        finally:
            armed.set()
        # A missing folder made before its watch was active sent no event: read it now.
        appeared = [f.path for f in folders if f.path in self._missing and os.path.isdir(f.path)]
        appeared += made
        if appeared:
            self.enqueue(appeared)

    async def _register_with_client(self, folders: tuple[Folder, ...]) -> None:
        ls = self.ls
        capability = _watched_files_capability(ls)
        if capability is None or not capability.dynamic_registration:
            return
        if self._registration is not None:
            old, self._registration = self._registration, None
            await ls.client_unregister_capability_async(
                types.UnregistrationParams(
                    unregisterations=[types.Unregistration(id=old, method=WATCHED_FILES_METHOD)]
                )
            )
        watchers = client_watchers(
            [f.path for f in folders], ls.root, bool(capability.relative_pattern_support)
        )
        if not watchers:
            return
        registration = str(uuid.uuid4())
        await ls.client_register_capability_async(
            types.RegistrationParams(
                registrations=[
                    types.Registration(
                        id=registration,
                        method=WATCHED_FILES_METHOD,
                        register_options=types.DidChangeWatchedFilesRegistrationOptions(
                            watchers=watchers
                        ),
                    )
                ]
            )
        )
        self._registration = registration


def _watched_files_capability(
    ls: MemoryServer,
) -> types.DidChangeWatchedFilesClientCapabilities | None:
    workspace = ls.client_capabilities.workspace
    return workspace.did_change_watched_files if workspace else None


def _update_safely(index: MemoryIndex, paths: set[str]) -> Update:
    """Update the index; a failure is logged, never lost in a thread."""
    try:
        # Read again whatever an event names, even when its stamp is as known: the stamp
        # cannot tell a copy that kept its time, or two writes within one clock tick.
        return index.update_paths(paths, reread=True)
    except Exception:
        logger.exception("updating the index for %s failed", sorted(paths))
        return Update()


def _update_search_safely(
    ls: MemoryServer, search_index: SearchIndex, paths: tuple[str, ...]
) -> None:
    """Update the full-text index the event was for (settings may have replaced it since);
    a failure is logged (searches read the files it lags on)."""
    try:
        search_index.apply(paths, reread=True)
    except Exception:
        logger.exception("updating the full-text index for %s failed", sorted(paths))
        return
    if ls.search_index is search_index:
        ls.on_loop(lambda: ls.search_changed(set(paths)))


def client_watchers(
    folders: list[str], root: str, relative_patterns: bool
) -> list[types.FileSystemWatcher]:
    """What the client should watch: each folder's Markdown files."""
    # Without RelativePattern support a glob can only name folders inside the
    # workspace; the server's own watcher covers the others.
    watchers: list[types.FileSystemWatcher] = []
    for folder in folders:
        pattern: types.GlobPattern
        if relative_patterns:
            pattern = types.RelativePattern(
                base_uri=from_fs_path(folder) or folder, pattern=MARKDOWN_GLOB
            )
        elif is_ancestor_or_same(root, folder):
            relative = os.path.relpath(folder, root).replace(os.sep, "/")
            pattern = MARKDOWN_GLOB if relative == "." else f"{relative}/{MARKDOWN_GLOB}"
        else:
            continue
        watchers.append(types.FileSystemWatcher(glob_pattern=pattern))
    return watchers


def _spawn(coroutine: Any) -> None:
    task = asyncio.ensure_future(coroutine)
    task.add_done_callback(_log_failure)


def _log_failure(task: asyncio.Future[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.warning("file watch registration failed: %s", task.exception())
