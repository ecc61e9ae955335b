"""Serena's memory patterns apply live (SPEC 2.2): their files are looked at once a second.

The files (`.serena/project.yml`, `project.local.yml`, `$SERENA_HOME/serena_config.yml`)
lie outside the memory folders the watcher follows, and three `stat` calls a second cost
nothing; a change re-reads the settings, which re-indexes when the patterns changed.
"""

from __future__ import annotations

import asyncio
import os

from lsprotocol import types

from memory_ls.core.layouts import watched_files
from memory_ls.lsp.server import MemoryServer

POLL_SECONDS = 1.0

Signature = tuple[tuple[int, int, int] | None, ...]


def register(server: MemoryServer) -> None:
    """Follow the pattern files from the first configuration on."""
    follower = PatternFiles(server)
    server.folder_listeners.append(follower.start)
    server.closers.append(follower.stop)


def signature(paths: list[str]) -> Signature:
    """What tells one version of the files from another: inode, size and time, or absent."""
    found: list[tuple[int, int, int] | None] = []
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:
            found.append(None)
        else:
            found.append((info.st_ino, info.st_size, info.st_mtime_ns))
    return tuple(found)


class PatternFiles:
    """Polls the pattern files and re-reads the settings when one changed."""

    def __init__(self, ls: MemoryServer) -> None:
        self.ls = ls
        self._task: asyncio.Task[None] | None = None
        self._seen: Signature = ()

    def start(self) -> None:
        """Begin polling (on the event loop; again after a change of folders is a no-op)."""
        if self._task is None and not self.ls.stopping:
            self._seen = signature(watched_files(self.ls.root, os.environ))
            self._say_problems()
            self._task = asyncio.ensure_future(self._poll())

    def stop(self) -> None:
        """Stop polling."""
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def _poll(self) -> None:
        while not self.ls.stopping:
            await asyncio.sleep(POLL_SECONDS)
            now = signature(watched_files(self.ls.root, os.environ))
            if now != self._seen:
                self._seen = now
                self.ls.reconfigure()
                self._say_problems()

    def _say_problems(self) -> None:
        for problem in self.ls.config.patterns.problems:
            self.ls.tell_once(f"memory-ls: {problem}", types.MessageType.Warning)
