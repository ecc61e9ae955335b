"""A flat watch over folders with Linux's inotify, asked only for the changes that matter.

watchfiles (the Rust notify crate under it) asks inotify for an event each time a file in
a watched folder is opened (IN_OPEN), reads each on its own thread and drops it. A search
that reads 100,000 memories while the first indexing runs made 100,000 of them: 0.25 s of
CPU on that thread and 0.2 s more in the search's own opens (the same reads, 0.56 s alone,
0.74 s watched), and the indexing workers' reads as many again. This watch asks for
creations, writes, renames and removals only, so reading a memory, ours or anyone's,
costs nothing. It answers `watch()` as watchfiles' watcher does (core/storage/watching.py).

Flat only: a folder made in a watched one is reported as added, and the owner then
watches it recursively with watchfiles (`watching.arm`).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import struct
import sys
import threading
import time
from typing import Any

# <sys/inotify.h>
IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = 0o2000000
# What a watch asks for: no IN_OPEN, IN_ACCESS or IN_CLOSE_NOWRITE (reads).
MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
)
# watchfiles.Change
ADDED, MODIFIED, DELETED = 1, 2, 3
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then the name, NUL padded
# Events read at once: many hundreds (the smallest is 16 bytes, one with a name longer).
_READ_BYTES = 64 * 1024

_libc: Any = None


def available() -> bool:
    """Whether this system has inotify (Linux with a C library that offers it)."""
    return sys.platform == "linux" and _functions() is not None


def _functions() -> Any:
    global _libc
    if _libc is None:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.inotify_init1.argtypes = [ctypes.c_int]
            libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
            _libc = libc
        except (OSError, AttributeError):
            _libc = False
    return _libc or None


def _failed(call: str, path: str | None = None) -> OSError:
    number = ctypes.get_errno()
    return OSError(number, f"{call}: {os.strerror(number)}", path)


class FlatInotify:
    """An inotify instance watching `paths` (folders, not what lies below them), active
    once made; raises OSError when a folder cannot be watched (gone, too many watches)."""

    def __init__(self, paths: list[str]) -> None:
        libc = _functions()
        if libc is None:
            raise OSError("inotify is not available here")
        descriptor = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if descriptor < 0:
            raise _failed("inotify_init1")
        self._descriptor = descriptor
        self._folders: dict[int, str] = {}
        self._closing = threading.Lock()
        try:
            for path in paths:
                watch = libc.inotify_add_watch(descriptor, os.fsencode(path), MASK)
                if watch < 0:
                    raise _failed("inotify_add_watch", path)
                self._folders[watch] = path
            self._poll = select.poll()
            self._poll.register(descriptor, select.POLLIN)
        except BaseException:
            os.close(descriptor)
            raise

    def watch(
        self, debounce_ms: int, step_ms: int, timeout_ms: int, stop_event: threading.Event
    ) -> set[tuple[int, str]] | str:
        """The changes seen, grouped as watchfiles groups them: handed over once nothing
        new came for `step_ms`, or `debounce_ms` after the first; "stop" once `stop_event`
        is set, "timeout" after `timeout_ms` with no change (0: never)."""
        changes: set[tuple[int, str]] = set()
        began = time.monotonic()
        first: float | None = None
        while True:
            if stop_event.is_set():
                return "stop"
            ready = self._poll.poll(step_ms)
            fresh = self._read(changes) if ready else False
            now = time.monotonic()
            if changes:
                if first is None:
                    first = now
                if not fresh or (now - first) * 1000 >= debounce_ms:
                    return changes
            elif timeout_ms and (now - began) * 1000 >= timeout_ms:
                return "timeout"

    def _read(self, changes: set[tuple[int, str]]) -> bool:
        """Take in the events waiting; whether there were any."""
        try:
            data = os.read(self._descriptor, _READ_BYTES)
        except BlockingIOError:
            return False
        at = 0
        while at + _EVENT.size <= len(data):
            watch, mask, _cookie, length = _EVENT.unpack_from(data, at)
            name = data[at + _EVENT.size : at + _EVENT.size + length].rstrip(b"\0")
            at += _EVENT.size + length
            self._take(watch, mask, os.fsdecode(name), changes)
        return bool(data)

    def _take(self, watch: int, mask: int, name: str, changes: set[tuple[int, str]]) -> None:
        if mask & IN_Q_OVERFLOW:
            # Events were lost: each folder as if it had just appeared, read again whole.
            changes.update((ADDED, folder) for folder in self._folders.values())
            return
        folder = self._folders.get(watch)
        if folder is None:
            return
        if mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED):
            changes.add((DELETED, folder))
            return
        path = os.path.join(folder, name) if name else folder
        if mask & (IN_CREATE | IN_MOVED_TO):
            changes.add((ADDED, path))
        elif mask & (IN_DELETE | IN_MOVED_FROM):
            changes.add((DELETED, path))
        else:
            changes.add((MODIFIED, path))

    def close(self) -> None:
        """Stop watching (once; later calls do nothing)."""
        with self._closing:
            if self._descriptor >= 0:
                with contextlib.suppress(OSError):
                    os.close(self._descriptor)
                self._descriptor = -1
