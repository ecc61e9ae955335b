"""Stating and reading memory files fast: many at once, half of them in a forked helper process."""

from __future__ import annotations

import array
import contextlib
import marshal
import os
import stat
import struct
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

# Listings and search never read files this many times over maxMemoryBytes (their names
# are still searched); the same bound as the store's listings.
READ_LIMIT_FACTOR = 4
# From this many files on, a walk stats them in two processes (see stat_files).
PARALLEL_STAT_FILES = 20_000
# What `stat_files` gives as the size of a folder (of anything else but a file: -1).
FOLDER_SIZE = -2
# What the first read of a memory file asks for: most are smaller, read in one call.
FIRST_READ = 1 << 16


def _read_small(path: str, limit: int, buffer: bytearray | None = None) -> bytes | None:
    """A memory file's bytes: b"" when larger than `limit` (found by its name only), None
    when unreadable. Memories are small: one read of FIRST_READ bytes, no fstat (at
    100,000 files a quarter of the syscalls) and no file object (more than the read).

    Read into `buffer` (FIRST_READ bytes, reused; POSIX), the bytes object made is the
    file's size: `os.read` makes one of FIRST_READ bytes and shrinks it, which leaves
    each small memory in the C heap instead of Python's own small-object pools, and at
    100,000 memories kept for searches the server's memory 16 MiB higher.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY)
        try:
            if buffer is not None:
                count = os.readv(descriptor, [buffer])
                with memoryview(buffer) as view:
                    data = view[:count].tobytes()
            else:
                data = os.read(descriptor, FIRST_READ)
            if len(data) == FIRST_READ:
                if os.fstat(descriptor).st_size > limit:
                    return b""
                data += _read_rest(descriptor)
        finally:
            os.close(descriptor)
    except OSError:
        return None
    return b"" if len(data) > limit else data


def _read_rest(descriptor: int) -> bytes:
    chunks = []
    while chunk := os.read(descriptor, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


T = TypeVar("T")
U = TypeVar("U")


class FileHelper:
    """A process forked once, while this one ran no other thread, that states or reads
    the second half of each long list of paths meanwhile: a server running threads may
    not fork per walk (the MCP server compares every memory file with the index before
    it trusts it), and a search while the first indexing runs reads every file."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        requests_in, requests_out = os.pipe()
        answers_in, answers_out = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            for end in (requests_in, requests_out, answers_in, answers_out):
                os.close(end)
            raise
        if pid == 0:  # the helper: lists in, stamps or contents out, until this process is gone
            status = 0
            try:
                os.close(requests_out)
                os.close(answers_in)
                # Off the client's pipes (a server on stdio): its end of them is this
                # process's alone.
                null = os.open(os.devnull, os.O_RDWR)
                for standard in (0, 1):
                    os.dup2(null, standard)
                os.close(null)
                _serve_files(requests_in, answers_out)
            except BaseException:
                status = 1
            finally:
                os._exit(status)
        os.close(requests_in)
        os.close(answers_out)
        self.pid = pid
        self._requests = os.fdopen(requests_out, "wb")
        self._answers = os.fdopen(answers_in, "rb")
        self.working = True

    def close(self) -> None:
        """Let the helper go (it leaves when its requests' pipe closes)."""
        self.working = False
        for pipe in (self._requests, self._answers):
            with contextlib.suppress(OSError):
                pipe.close()
        with contextlib.suppress(OSError):
            os.waitpid(self.pid, 0)  # it leaves at once on the closed pipe: no zombie kept

    def stat_files(self, paths: Sequence[str]) -> tuple[array.array[int], array.array[int]]:
        """`stat_files` with the second half stated by the helper meanwhile."""
        half = len(paths) // 2
        shared = self._share(
            ("stat", list(paths[half:]), 0),
            lambda: _stat_each(paths[:half]),
            lambda answer: _stamp_arrays(answer, len(paths) - half),
        )
        if shared is None:
            return _stat_each(paths)
        first, second = shared
        return first[0] + second[0], first[1] + second[1]

    def read_files(self, paths: Sequence[str], limit: int) -> list[bytes | None]:
        """`_read_small` of each path, the second half read by the helper meanwhile."""
        half = len(paths) // 2
        buffer = bytearray(FIRST_READ) if hasattr(os, "readv") else None
        shared = self._share(
            ("read", list(paths[half:]), limit),
            lambda: [_read_small(path, limit, buffer) for path in paths[:half]],
            lambda answer: _contents(answer, len(paths) - half),
        )
        if shared is None:
            return [_read_small(path, limit, buffer) for path in paths]
        return shared[0] + shared[1]

    def _share(
        self,
        request: tuple[str, list[str], int],
        own: Callable[[], T],
        check: Callable[[Any], U | None],
    ) -> tuple[T, U] | None:
        """Ask the helper for `request`, do `own` meanwhile: both results, or None when the
        helper is gone or answered what it was not asked (it then helps no more)."""
        with self._lock:
            if not self.working:
                return None
            answer: U | None = None
            try:
                _send(self._requests, marshal.dumps(request))
                mine = own()
                answer = check(marshal.loads(_receive(self._answers)))
            except (OSError, EOFError, ValueError, TypeError):
                pass
            finally:
                if answer is None:
                    # Gone, confused or interrupted: an answer left in the pipe would
                    # answer the next request, so this process works alone from now on.
                    self.close()
            return None if answer is None else (mine, answer)


def _send(pipe: Any, data: bytes) -> None:
    pipe.write(struct.pack("<Q", len(data)) + data)
    pipe.flush()


def _receive(pipe: Any) -> bytes:
    head = pipe.read(8)
    if len(head) < 8:
        raise EOFError("the file helper is gone")
    (size,) = struct.unpack("<Q", head)
    data: bytes = pipe.read(size)
    if len(data) < size:
        raise EOFError("the file helper is gone")
    return data


def _serve_files(requests: int, answers: int) -> None:
    """The helper's loop (in the child): until the requests' pipe closes."""
    with os.fdopen(requests, "rb") as incoming, os.fdopen(answers, "wb") as outgoing:
        while True:
            try:
                kind, paths, limit = marshal.loads(_receive(incoming))
            except EOFError:
                return
            if kind == "read":
                buffer = bytearray(FIRST_READ) if hasattr(os, "readv") else None
                answer = marshal.dumps([_read_small(path, limit, buffer) for path in paths])
            else:
                mtimes, sizes = _stat_each(paths)
                answer = marshal.dumps((mtimes.tobytes(), sizes.tobytes()))
            _send(outgoing, answer)


def _contents(value: object, count: int) -> list[bytes | None] | None:
    """The contents a helper sent, if they are what it was asked for."""
    if not isinstance(value, list) or len(value) != count:
        return None
    if not all(item is None or isinstance(item, bytes) for item in value):
        return None
    return value


# The file helper of this process, when it started one (`start_file_helper`).
_HELPER: FileHelper | None = None
# Paths from which a walk shares its stats, and a search its reads, with the helper
# (below, the pipe costs more).
HELPER_FILES = 2_000


def start_file_helper() -> bool:
    """Fork the file helper now, if this process may (call it before any thread starts)."""
    global _HELPER
    if _HELPER is None and _may_fork():
        try:
            _HELPER = FileHelper()
        except OSError:
            return False
    return _HELPER is not None


def read_files(paths: Sequence[str], limit: int) -> list[bytes | None]:
    """`_read_small` of each path; many in two processes at once, where a helper runs."""
    helper = _HELPER
    if helper is not None and helper.working and len(paths) >= HELPER_FILES:
        return helper.read_files(paths, limit)
    buffer = bytearray(FIRST_READ) if hasattr(os, "readv") else None
    return [_read_small(path, limit, buffer) for path in paths]


def stat_files(paths: Sequence[str]) -> tuple[array.array[int], array.array[int]]:
    """The mtime and size of each path that is a regular file (links followed, as a read
    follows them), else 0 and a negative size (FOLDER_SIZE for a folder); many paths in
    two processes at once.

    One stat costs a few microseconds of system time, and threads do not help (each holds
    the GIL around a call that short); a forked child stats the second half meanwhile.
    Only where forking is safe: Linux, this process running no other thread.
    """
    helper = _HELPER
    if helper is not None and helper.working and len(paths) >= HELPER_FILES:
        return helper.stat_files(paths)
    if len(paths) < PARALLEL_STAT_FILES or not _may_fork():
        return _stat_each(paths)
    half = len(paths) // 2
    try:
        reader, writer = os.pipe()
    except OSError:
        return _stat_each(paths)
    try:
        child = os.fork()
    except OSError:
        os.close(reader)
        os.close(writer)
        return _stat_each(paths)
    if child == 0:  # the child: its half to the pipe, then gone without any cleanup
        status = 1
        try:
            os.close(reader)
            mtimes, sizes = _stat_each(paths[half:])
            unsent = memoryview(marshal.dumps((mtimes.tobytes(), sizes.tobytes())))
            while unsent:
                unsent = unsent[os.write(writer, unsent) :]
            status = 0
        finally:
            os._exit(status)
    os.close(writer)
    try:
        first = _stat_each(paths[:half])
        with os.fdopen(reader, "rb") as pipe:
            received = pipe.read()
    finally:
        _, status = os.waitpid(child, 0)
    second = None
    if status == 0:
        with contextlib.suppress(EOFError, ValueError, TypeError):
            second = _stamp_arrays(marshal.loads(received), len(paths) - half)
    if second is None:
        second = _stat_each(paths[half:])  # the child failed: nothing lost but time
    return first[0] + second[0], first[1] + second[1]


def _stamp_arrays(value: object, count: int) -> tuple[array.array[int], array.array[int]] | None:
    """The two arrays a child sent, if they are what it was asked for."""
    if not (isinstance(value, tuple) and len(value) == 2):
        return None
    mtimes, sizes = array.array("q"), array.array("q")
    mtimes.frombytes(value[0])
    sizes.frombytes(value[1])
    return (mtimes, sizes) if len(mtimes) == len(sizes) == count else None


def _may_fork() -> bool:
    """Whether a child process may be forked here, and would run beside this one."""
    return sys.platform == "linux" and (os.cpu_count() or 1) > 1 and threading.active_count() == 1


def _stat_each(paths: Sequence[str]) -> tuple[array.array[int], array.array[int]]:
    mtimes: list[int] = []
    sizes: list[int] = []
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:
            mtimes.append(0)
            sizes.append(-1)
            continue
        kind = info.st_mode & 0o170000
        if kind == stat.S_IFREG:
            mtimes.append(info.st_mtime_ns)
            sizes.append(info.st_size)
        else:
            mtimes.append(0)
            sizes.append(FOLDER_SIZE if kind == stat.S_IFDIR else -1)
    return array.array("q", mtimes), array.array("q", sizes)


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size
