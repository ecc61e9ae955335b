"""Typed errors of the store, each carrying the SPEC error code."""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from typing import ClassVar


class MemoryStoreError(Exception):
    """A refused operation; nothing was written."""

    code: ClassVar[str] = "invalid-arguments"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class InvalidName(MemoryStoreError):
    """The name breaks the naming rules."""

    code = "invalid-name"


class NotFound(MemoryStoreError):
    """No memory has this name in the searched scope; `suggestions` are the closest names."""

    code = "not-found"

    def __init__(self, message: str, suggestions: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.suggestions: tuple[str, ...] = tuple(suggestions)


class Exists(MemoryStoreError):
    """The target name is already taken."""

    code = "exists"


class ReadOnly(MemoryStoreError):
    """The memory or target folder is read-only."""

    code = "read-only"


class TooLarge(MemoryStoreError):
    """The content is over the configured size limit."""

    code = "too-large"


class NoMatch(MemoryStoreError):
    """An edit's needle matched nothing."""

    code = "no-match"


class AmbiguousMatch(MemoryStoreError):
    """An edit's needle matched more than once without allowMultiple."""

    code = "ambiguous-match"


class OutsideStore(MemoryStoreError):
    """The operation would touch a path outside the configured folders."""

    code = "outside-store"


class Ignored(MemoryStoreError):
    """The memory matches Serena's `ignored_memory_patterns`: no operation may touch it."""

    code = "ignored"


class VersionConflict(MemoryStoreError):
    """The memory changed since the version the caller read (`expectedVersion`)."""

    code = "version-conflict"

    def __init__(self, message: str, current_version: str | None = None) -> None:
        super().__init__(message)
        # None: the memory no longer exists.
        self.current_version = current_version


class InvalidEncoding(MemoryStoreError):
    """Content that is not UTF-8 text: refused on writes, reported on reads."""

    code = "invalid-encoding"


class InvalidFrontmatter(MemoryStoreError):
    """A write whose frontmatter would not parse or would have the wrong types."""

    code = "invalid-frontmatter"


class PossibleSecret(MemoryStoreError):
    """A write to a project memory that holds something like a credential."""

    code = "possible-secret"


class MergeConflict(MemoryStoreError):
    """A write whose content holds git merge conflict markers (outside code)."""

    code = "merge-conflict"


class InvalidArguments(MemoryStoreError):
    """Arguments of the wrong type or shape."""

    code = "invalid-arguments"


class IoError(MemoryStoreError, OSError):
    """The file system refused: permission denied, disk full, read-only file system, ...

    Also an OSError carrying the OS's errno and the path, so code that skips a file it
    cannot read (a listing) goes on doing so.
    """

    code = "io-error"

    @classmethod
    def from_os(cls, action: str, path: str, exc: OSError, *, wrote: bool) -> IoError:
        """The error for an OSError raised while doing `action` ("write", "read", ...) on path."""
        name = errno.errorcode.get(exc.errno or 0, "")
        reason = f"{exc.strerror or exc}{f' ({name})' if name else ''}"
        if exc.filename and os.fspath(exc.filename) != path:
            reason += f" at {os.fspath(exc.filename)}"  # a temp file, a topic folder, a lock file
        tail = "; nothing was written." if wrote else "."
        error = cls(f"The file system refused to {action} {path}: {reason}{tail}")
        error.errno, error.strerror, error.filename = exc.errno, exc.strerror, path
        return error


ERROR_CODES: tuple[str, ...] = (
    "invalid-name",
    "not-found",
    "exists",
    "read-only",
    "too-large",
    "no-match",
    "ambiguous-match",
    "outside-store",
    "invalid-arguments",
    "ignored",
    "io-error",
    "version-conflict",
    "invalid-encoding",
    "invalid-frontmatter",
    "possible-secret",
    "merge-conflict",
)
