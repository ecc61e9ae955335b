"""File I/O at the edge of the store: containment checks, atomic writes and locks."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from memory_ls.core.rules.errors import IoError, OutsideStore

if TYPE_CHECKING:
    from filelock import FileLock

TEMP_SUFFIX = ".memory-ls-tmp"
TEMP_PREFIX = "."
# OS errors of a read that mean the file system refused (SPEC `io-error`), not that the
# file is in another state than expected (ENOENT, ELOOP, ...), which callers decide on.
_REFUSED_NAMES = (
    "EACCES EPERM ENOSPC EDQUOT EROFS EIO EFBIG ETXTBSY EMFILE ENFILE ENOMEM EBUSY "
    "ENAMETOOLONG ENXIO ENODEV ESTALE"
)
REFUSED_ERRNOS = frozenset(getattr(errno, n) for n in _REFUSED_NAMES.split() if hasattr(errno, n))


@contextlib.contextmanager
def refusals(action: str, path: str, *, wrote: bool) -> Iterator[None]:
    """Turn an OSError by which the file system refuses into IoError naming path and reason.

    A failed write is a refusal whatever the errno (no caller expects one); a read keeps
    the errors callers decide on (a file gone, a link refused) as they are.
    """
    try:
        yield
    except IoError:
        raise
    except OSError as exc:
        if wrote or exc.errno in REFUSED_ERRNOS:
            raise IoError.from_os(action, path, exc, wrote=wrote) from exc
        raise


def is_within(path: str, folder_real: str) -> bool:
    """Whether the real location of `path` is inside the real folder `folder_real`."""
    real = os.path.realpath(path)
    return real == folder_real or real.startswith(folder_real.rstrip(os.sep) + os.sep)


def check_writable_path(path: str, folder_real: str) -> None:
    """Refuse a write whose real target (symlinks followed) lies outside its folder."""
    if not is_within(path, folder_real):
        raise OutsideStore(
            f"Refused to write {path}: it leads outside the memory folder {folder_real} "
            "(a symbolic link points elsewhere)."
        )


def is_temp_file(name: str) -> bool:
    """Whether a file name is a leftover of an interrupted atomic write."""
    return name.startswith(TEMP_PREFIX) and TEMP_SUFFIX in name


def atomic_write(path: str, text: str | bytes, folder_real: str) -> None:
    """Write `text` to `path` atomically: temp file in the same folder, fsync, rename.

    Parent topic folders are created inside the memory folder only; a symlink on the
    way that leads outside it is refused before anything is created. When the file
    system refuses (IoError), the temp file and the folders made for it are removed.
    """
    check_writable_path(path, folder_real)
    parent = os.path.dirname(path)
    created: list[str] = []
    with refusals("write", path, wrote=True):
        try:
            _make_dirs_inside(parent, folder_real, created)
            check_writable_path(path, folder_real)
            _write_and_rename(path, text, parent)
        except BaseException:
            for folder in reversed(created):
                with contextlib.suppress(OSError):
                    os.rmdir(folder)
            raise
    _fsync_dir(parent)


def _write_and_rename(path: str, text: str | bytes, parent: str) -> None:
    """The temp file written, flushed to disk and renamed over `path`; removed on failure."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    fd, tmp = tempfile.mkstemp(
        prefix=TEMP_PREFIX + _temp_stem(os.path.basename(path)) + ".",
        suffix=TEMP_SUFFIX,
        dir=parent,
    )
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(OSError):
            # Keep the mode of the file being replaced, else the usual 0644 (mkstemp gives 0600).
            os.chmod(tmp, os.stat(path).st_mode & 0o7777 if os.path.exists(path) else 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _temp_stem(basename: str, max_bytes: int = 200) -> str:
    """The file name cut so `.<stem>.<random>.memory-ls-tmp` fits the 255-byte name limit."""
    data = basename.encode("utf-8", "surrogateescape")
    if len(data) <= max_bytes:
        return basename
    return data[:max_bytes].decode("utf-8", "ignore")


def ensure_folder(path: str) -> None:
    """Create a configured primary or global folder on first save."""
    with refusals("create the folder", path, wrote=True):
        os.makedirs(path, exist_ok=True)


def _make_dirs_inside(directory: str, folder_real: str, created: list[str]) -> None:
    """Create missing topic folders one level at a time, never through an escaping link."""
    missing: list[str] = []
    current = directory
    while not os.path.isdir(current):
        missing.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    for folder in reversed(missing):
        check_writable_path(folder, folder_real)
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder)
            created.append(folder)


def _fsync_dir(directory: str) -> None:
    """Persist the rename itself (where the platform allows opening directories)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def remove_file(path: str, folder_real: str) -> None:
    """Delete a memory file; a symlink is removed itself, never its target."""
    if not os.path.islink(path):
        check_writable_path(path, folder_real)
    with refusals("delete", path, wrote=True):
        os.unlink(path)
    _fsync_dir(os.path.dirname(path))


def read_utf8(path: str) -> str | None:
    """A memory's text for a read-modify-write; None when it is not UTF-8 text.

    Writing back a lossy decoding would destroy the bytes we could not read.
    """
    return utf8_or_none(read_bytes(path))


def utf8_or_none(data: bytes) -> str | None:
    """The text of UTF-8 bytes; None when they are not (or hold NULs: binary)."""
    if b"\x00" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def read_text(path: str) -> str:
    """Read a memory's text; invalid UTF-8 is replaced rather than failing the read."""
    return read_bytes(path).decode("utf-8", errors="replace")


def read_bytes(path: str) -> bytes:
    """A file's bytes (a memory to read or to move)."""
    with refusals("read", path, wrote=False), open(path, "rb") as handle:
        return handle.read()


def remove_leftovers(directory: str) -> int:
    """Remove leftovers of interrupted atomic writes under `directory`; return how many.

    Call it holding the folder's lock: writers hold it while their temp file exists, so
    any temp file seen then belongs to a writer that died.
    """
    removed = 0
    for current, dirs, files in os.walk(directory):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if is_temp_file(name):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(current, name))
                    removed += 1
    return removed


def user_cache_dir() -> Path:
    """memory-ls's directory in the user's cache (XDG_CACHE_HOME), never in memory folders."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "memory-ls"


def _lock_dir() -> Path:
    """Where cross-process lock files live: the user's cache, never the memory folders."""
    path = user_cache_dir() / "locks"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        path = Path(tempfile.gettempdir()) / f"memory-ls-locks-{os.getuid()}"
        path.mkdir(parents=True, exist_ok=True)
    return path


_locks: dict[str, tuple[threading.RLock, FileLock]] = {}
_locks_guard = threading.Lock()


def _locks_for(key: str) -> tuple[threading.RLock, FileLock]:
    """One thread lock and one (re-entrant) file lock per folder, shared by the process."""
    with _locks_guard:
        pair = _locks.get(key)
        if pair is None:
            # Imported here: only writes take locks, and reading commands start faster.
            from filelock import FileLock

            digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]
            lock_file = str(_lock_dir() / f"{digest}.lock")
            pair = (threading.RLock(), FileLock(lock_file, timeout=60, thread_local=False))
            _locks[key] = pair
        return pair


@contextlib.contextmanager
def folder_lock(*folders_real: str) -> Iterator[None]:
    """Hold the write lock of each folder (threads and processes), in a fixed order."""
    with contextlib.ExitStack() as stack:
        for key in sorted(set(folders_real)):
            with refusals("lock the folder", key, wrote=True):
                thread_lock, file_lock = _locks_for(key)
                stack.enter_context(thread_lock)
                stack.enter_context(file_lock)
        yield
