"""`stale-path` in the editor: repository files appearing and going away, and the quick fix.

The server watches only memory folders; the rest of the repository is the client's to
watch. Where `stale-path` is on, the server asks the client for create and delete events
of every file in the workspace (`**/*`; changes to contents do not matter). An event
re-checks the open memories only when one of them mentions the path (or a path under it);
the workspace diagnostics re-check the memories on disk that mention it. Where it is off
only because the workspace is not a git repository, the server asks for the events of
the workspace's `.git`: after `git init` the settings are applied again and `stale-path`
comes on, without a restart (and goes off when `.git` goes). Clients without file events
see repository changes at the next edit or store change. Whether a path exists is a stat
at each check of a document: a memory mentions few paths, and a stat is always current.

The quick fix offers where git saw the file moved (`git log --follow`-style rename
detection, run once per workspace and again only after git's state changed), else the
closest existing paths (rapidfuzz over `git ls-files`, read once and again after file
events).
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

from memory_ls.core.operations.navigation import Replacement
from memory_ls.core.rules.stale_paths import (
    find_path_mentions,
    resolutions,
    suggest_paths,
    write_like,
)
from memory_ls.core.storage.git import RENAMES, list_files
from memory_ls.lsp.edits import FileEdit, workspace_edit
from memory_ls.lsp.server import MemoryServer

WATCHED_FILES_METHOD = types.WORKSPACE_DID_CHANGE_WATCHED_FILES
# A build or a checkout reports many files at once: re-check once they have settled.
REFRESH_DELAY_SECONDS = 0.3
QUICK_FIX = types.CodeActionKind.QuickFix

logger = logging.getLogger(__name__)


def register(server: MemoryServer) -> None:
    """Follow repository files where `stale-path` is on."""
    repository = Repository(server)
    server.repository = repository
    server.store_listeners.append(repository.follow_settings)
    server.folder_listeners.append(repository.follow_settings)
    server.client_file_listeners.append(repository.files_changed)


class Repository:
    """The client's file events for the whole workspace, and the workspace's file list."""

    def __init__(self, ls: MemoryServer) -> None:
        self.ls = ls
        # What the client is asked to report: every file ("files", stale-path on), only
        # the workspace's `.git` ("git", off because the workspace is no repository yet)
        # or nothing (configured off).
        self._active: str | None = None
        self._reconfigure: asyncio.TimerHandle | None = None
        self._registration: str | None = None
        self._refresh: asyncio.TimerHandle | None = None
        self._lock = threading.Lock()
        self._files_lock = threading.Lock()
        self._files: list[str] | None = None  # `git ls-files`, for the closest paths
        # Counts file events; the list is read again when it is older than the last one.
        self._events = 0
        self._files_at = -1
        # Each open memory's looked-for paths, by URI: (version, absolute paths).
        self._mentioned: dict[str, tuple[int | None, frozenset[str]]] = {}

    # ----- events --------------------------------------------------------------------

    def follow_settings(self) -> None:
        """Ask for the workspace's file events while `stale-path` is on, else for its
        `.git` while it is off only because there is no repository (on the event loop)."""
        if not self.ls.started:
            return
        if self.ls.config.severities.get("stale-path") != "off":
            active: str | None = "files"
        elif "stale-path" not in self.ls.settings.configured_diagnostics:
            active = "git"
        else:
            active = None
        if active != self._active:
            self._active = active
            _spawn(self._register(active))

    def files_changed(self, paths: Iterable[str]) -> None:
        """The client reported files created or deleted (on the event loop)."""
        if self._active is None:
            return
        changed = [os.path.normpath(p) for p in paths]
        git = os.path.join(os.path.normpath(self.ls.config.root), ".git")
        if git in changed:
            # `git init`, or the repository removed: whether stale-path is on by default
            # changes. Once git has written its files, the settings are applied again.
            if self._reconfigure is not None:
                self._reconfigure.cancel()
            loop = self.ls.loop
            if loop is not None:
                self._reconfigure = loop.call_later(REFRESH_DELAY_SECONDS, self._reconfigure_now)
        if self._active != "files":
            return
        self._events += 1  # on the event loop only: never waits for a git run
        future = self.ls.store_pool.submit(self._matters, changed)
        future.add_done_callback(
            lambda done: (
                self.ls.on_loop(self._schedule_refresh)
                if not done.exception() and done.result()
                else None
            )
        )

    def _matters(self, changed: list[str]) -> bool:
        """Whether an open project memory mentions a changed path, or a path under one."""
        with self._lock:  # event batches may be checked side by side
            return self._mentions_changed(changed)

    def _mentions_changed(self, changed: list[str]) -> bool:
        wanted: set[str] = set()
        documents = list(self.ls.workspace.text_documents.values())
        open_uris = {document.uri for document in documents}
        for uri in [uri for uri in self._mentioned if uri not in open_uris]:
            del self._mentioned[uri]
        for document in documents:
            path = to_fs_path(document.uri)
            memory = self.ls.index.memory_for(path) if path else None
            if path is None or memory is None or memory.scope != "project":
                continue
            known = self._mentioned.get(document.uri)
            if known is None or known[0] != document.version:
                paths = frozenset(
                    candidate
                    for mention in find_path_mentions(document.source)
                    for _, candidate in resolutions(mention, path, self.ls.config.root)
                )
                known = (document.version, paths)
                self._mentioned[document.uri] = known
            wanted |= known[1]
        if not wanted:
            return False
        for path in changed:
            inside = path + os.sep
            if path in wanted or any(w.startswith(inside) for w in wanted):
                return True
        return False

    def _schedule_refresh(self) -> None:
        if self._refresh is not None:
            self._refresh.cancel()
        loop = self.ls.loop
        if loop is not None:
            self._refresh = loop.call_later(REFRESH_DELAY_SECONDS, self._refresh_now)

    def _refresh_now(self) -> None:
        self._refresh = None
        self.ls.store_changed()

    def _reconfigure_now(self) -> None:
        self._reconfigure = None
        self.ls.reconfigure()

    async def _register(self, active: str | None) -> None:
        ls = self.ls
        workspace = ls.client_capabilities.workspace
        capability = workspace.did_change_watched_files if workspace else None
        if capability is None or not capability.dynamic_registration:
            return
        if self._registration is not None:
            old, self._registration = self._registration, None
            await ls.client_unregister_capability_async(
                types.UnregistrationParams(
                    unregisterations=[types.Unregistration(id=old, method=WATCHED_FILES_METHOD)]
                )
            )
        if active is None:
            return
        glob = "**/*" if active == "files" else ".git"
        pattern: types.GlobPattern = glob if active == "files" else "**/.git"
        if capability.relative_pattern_support:
            pattern = types.RelativePattern(
                base_uri=from_fs_path(ls.config.root) or ls.config.root, pattern=glob
            )
        registration = str(uuid.uuid4())
        self._registration = registration
        await ls.client_register_capability_async(
            types.RegistrationParams(
                registrations=[
                    types.Registration(
                        id=registration,
                        method=WATCHED_FILES_METHOD,
                        register_options=types.DidChangeWatchedFilesRegistrationOptions(
                            watchers=[
                                types.FileSystemWatcher(
                                    glob_pattern=pattern,
                                    kind=types.WatchKind.Create | types.WatchKind.Delete,
                                )
                            ]
                        ),
                    )
                ]
            )
        )

    # ----- the quick fix (blocking: run in a store thread) ---------------------------

    def files(self) -> list[str]:
        """The workspace's files as git lists them (read again after file events)."""
        with self._files_lock:
            if self._files is None or self._files_at != self._events:
                self._files_at = self._events
                self._files = list_files(self.ls.config.root) or []
            return self._files

    def fixes(
        self, uri: str, text: str, version: int | None, diagnostic: types.Diagnostic
    ) -> list[tuple[str, types.CodeAction]]:
        """ "Change to" the path git moved the file to, else to the closest existing paths."""
        data: Any = diagnostic.data
        path = to_fs_path(uri)
        if not isinstance(data, dict) or path is None:
            return []
        lines = text.split("\n")
        codec = self.ls.workspace.position_codec
        start = codec.position_from_client_units(lines, diagnostic.range.start)
        end = codec.position_from_client_units(lines, diagnostic.range.end)
        written = data.get("path")
        resolved, bases = data.get("resolved"), data.get("bases")
        line = lines[start.line] if start.line < len(lines) else ""
        # A diagnostic of an older text may no longer sit on the path it was about.
        if (
            start.line != end.line
            or line[start.character : end.character] != written
            or not isinstance(resolved, list)
            or not isinstance(bases, list)
            or len(resolved) != len(bases)
        ):
            return []
        root = self.ls.config.root
        mention = next(
            (
                m
                for m in find_path_mentions(text)
                if (m.line, m.start, m.written) == (start.line, start.character, written)
            ),
            None,
        )
        if mention is None:
            return []
        suggestions = suggest_paths(
            resolved,
            bases,
            written.endswith("/"),
            RENAMES.renames(root),
            self.files(),
            lambda relative: os.path.lexists(os.path.join(root, relative)),
        )
        actions = []
        for position, suggestion in enumerate(suggestions):
            new_text = write_like(mention, suggestion, path, root)
            why = "git moved it there" if suggestion.moved else "the closest existing path"
            edit = FileEdit(
                uri,
                version,
                lines,
                [Replacement(start.line, start.character, end.character, new_text)],
            )
            actions.append(
                (
                    f"stale:{start.line}:{start.character}:{new_text}",
                    types.CodeAction(
                        title=f"Change to {new_text} ({why})",
                        kind=QUICK_FIX,
                        diagnostics=[diagnostic],
                        is_preferred=(suggestion.moved and position == 0) or None,
                        edit=workspace_edit(self.ls, [edit]),
                    ),
                )
            )
        return actions


def _spawn(coroutine: Any) -> None:
    task = asyncio.ensure_future(coroutine)
    task.add_done_callback(_log_failure)


def _log_failure(task: asyncio.Future[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.warning("repository file watch registration failed: %s", task.exception())
