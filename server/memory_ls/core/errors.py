"""Typed errors of the store, each carrying the SPEC error code."""

from __future__ import annotations

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
    """No memory has this name in the searched scope."""

    code = "not-found"


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


class InvalidArguments(MemoryStoreError):
    """Arguments of the wrong type or shape."""

    code = "invalid-arguments"


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
)
