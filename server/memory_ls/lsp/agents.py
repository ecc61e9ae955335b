"""Other agents' files (CLAUDE.md, AGENTS.md, rules, auto memory): the set the features share.

Listing them runs `git ls-files` (core/operations/agent_files.py), so the set is kept
here, listed in a store thread once the session has started and again, a moment after
the last of them, when the settings or the memories change, when the client reports
files created, changed or deleted (the workspace's events that `stale-path` asks for, the
memory folders', and those of Claude Code's auto memory folder, asked for here where the
client takes a pattern outside the workspace), never on the event loop. Features read
`current` (None until the first listing) and are told when it is replaced.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import uuid
import weakref
from collections.abc import Callable
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path

from memory_ls.core.layouts import claude
from memory_ls.core.operations.agent_files import KnownAgentFiles, load_agent_files
from memory_ls.lsp.server import MemoryServer

# File events and store changes come in bursts: the files are listed once they settle.
REFRESH_DELAY_SECONDS = 0.1
WATCHED_FILES_METHOD = types.WORKSPACE_DID_CHANGE_WATCHED_FILES

logger = logging.getLogger(__name__)

_CACHES: weakref.WeakKeyDictionary[MemoryServer, AgentFiles] = weakref.WeakKeyDictionary()


def register(server: MemoryServer) -> None:
    """List the agents' files when the session starts, and again as they change."""
    agents = of(server)
    server.folder_listeners.append(agents.refresh)
    server.store_listeners.append(agents.refresh)
    server.client_file_listeners.append(agents.files_changed)


def of(server: MemoryServer) -> AgentFiles:
    """The agents' files of a server (made on first use)."""
    agents = _CACHES.get(server)
    if agents is None:
        agents = _CACHES[server] = AgentFiles(server)
    return agents


class AgentFiles:
    """The agents' files as last listed, and who to tell when they are listed again."""

    def __init__(self, ls: MemoryServer) -> None:
        self.ls = ls
        self.current: KnownAgentFiles | None = None
        # Called on the event loop once a new listing is in.
        self.listeners: list[Callable[[KnownAgentFiles], None]] = []
        self._timer: asyncio.TimerHandle | None = None
        self._running = False
        self._again = False
        self._registration: str | None = None
        self._watched: str | None = None
        self._listed = asyncio.Event()

    async def wait(self, timeout: float = 2.0) -> KnownAgentFiles | None:
        """The set, waiting (a bounded time) for the first listing."""
        if self.current is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._listed.wait(), timeout)
        return self.current

    def files_changed(self, paths: list[str]) -> None:
        """The client reported files created, changed or deleted (on the event loop)."""
        if paths:
            self.refresh()

    def refresh(self) -> None:
        """List the files again a moment after the last call (on the event loop)."""
        if not self.ls.started or self.ls.stopping:
            return
        if self._timer is not None:
            self._timer.cancel()
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(REFRESH_DELAY_SECONDS, self._start)

    def _start(self) -> None:
        self._timer = None
        if self._running:
            self._again = True  # one listing at a time; the next follows this one
            return
        self._running = True
        task = asyncio.ensure_future(self._list())
        task.add_done_callback(_log_failure)

    async def _list(self) -> None:
        try:
            known = await self.ls.in_store_thread(load_agent_files, self.ls.config.root)
        finally:
            self._running = False
            self._listed.set()  # a failed listing must not keep requests waiting
        if self.ls.stopping:
            return
        self.current = known
        for listener in self.listeners:
            listener(known)
        self._watch(known)
        if self._again:
            self._again = False
            self.refresh()

    # ----- the auto memory folder, outside the workspace -------------------------------

    def _watch(self, known: KnownAgentFiles) -> None:
        """Ask for the file events of Claude Code's auto memory folder, where it exists."""
        folder = claude.auto_memory_folder(known.repository)
        if folder is not None and not os.path.isdir(folder):
            folder = None
        if folder == self._watched:
            return
        self._watched = folder
        task = asyncio.ensure_future(self._register(folder))
        task.add_done_callback(_log_failure)

    async def _register(self, folder: str | None) -> None:
        ls = self.ls
        workspace = ls.client_capabilities.workspace
        capability = workspace.did_change_watched_files if workspace else None
        if capability is None or not capability.dynamic_registration:
            return
        if not capability.relative_pattern_support:
            return  # a glob cannot name a folder outside the workspace
        if self._registration is not None:
            old, self._registration = self._registration, None
            await ls.client_unregister_capability_async(
                types.UnregistrationParams(
                    unregisterations=[types.Unregistration(id=old, method=WATCHED_FILES_METHOD)]
                )
            )
        if folder is None:
            return
        registration = str(uuid.uuid4())
        self._registration = registration
        pattern = types.RelativePattern(base_uri=from_fs_path(folder) or folder, pattern="**/*")
        await ls.client_register_capability_async(
            types.RegistrationParams(
                registrations=[
                    types.Registration(
                        id=registration,
                        method=WATCHED_FILES_METHOD,
                        register_options=types.DidChangeWatchedFilesRegistrationOptions(
                            watchers=[types.FileSystemWatcher(glob_pattern=pattern)]
                        ),
                    )
                ]
            )
        )


def _log_failure(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.warning("listing the agents' files failed: %s", task.exception())
