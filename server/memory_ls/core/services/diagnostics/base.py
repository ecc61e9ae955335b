"""Diagnostics as data: the Diagnostic, the names a check asks about, severities, files to check."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from memory_ls.config import Severity
from memory_ls.core.rules.document import decode_memory
from memory_ls.core.rules.names import GLOBAL_PREFIX
from memory_ls.core.storage.memory import MemoryFile

SEVERITY_ORDER = ("error", "warning", "information", "hint")
# Files over this many times maxMemoryBytes are only reported as too large, never read.
READ_LIMIT_FACTOR = 4


@dataclass(frozen=True)
class Diagnostic:
    """A problem in a file; line and columns are 0-based, columns in code points."""

    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    code: str
    message: str
    severity: Severity = "warning"
    data: Mapping[str, Any] = field(default_factory=dict)
    # The severity is the finding's own, not the code's setting (which can only turn it
    # off): a supersede relation that cannot hold is an error, however quiet its hint.
    fixed: bool = False


class Names(Protocol):
    """Whether a reference resolves: a NameIndex, or a look at the disk for the few names asked."""

    def has(self, name: str, is_global: bool) -> bool:
        """Whether a memory `name` exists in its scope (global or project)."""
        ...


@dataclass
class NameIndex:
    """Which names exist, per scope, to tell broken links from good ones."""

    project: set[str] = field(default_factory=set)
    global_: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, memories: Iterable[MemoryFile]) -> NameIndex:
        """Index the valid names of scanned memories."""
        index = cls()
        for memory in memories:
            if memory.valid:
                (index.global_ if memory.scope == "global" else index.project).add(memory.name)
        return index

    def has(self, name: str, is_global: bool) -> bool:
        """Whether a reference to `name` resolves: in its own scope, never falling back."""
        return name in (self.global_ if is_global else self.project)

    def has_qualified(self, name: str) -> bool:
        """Whether a memory has this name as Serena writes it (`global/x` or `x`)."""
        if name.startswith(GLOBAL_PREFIX):
            return name[len(GLOBAL_PREFIX) :] in self.global_
        return name in self.project

    def names(self) -> list[str]:
        """Every known name as Serena writes it, for "did you mean"."""
        return sorted(self.project | {GLOBAL_PREFIX + name for name in self.global_})


def apply_severities(
    diagnostics: Iterable[Diagnostic], severities: Mapping[str, Severity]
) -> list[Diagnostic]:
    """Give each diagnostic its configured severity; drop the codes turned off."""
    result = []
    for diagnostic in diagnostics:
        severity = severities.get(diagnostic.code, "warning")
        if severity != "off":
            if diagnostic.fixed:
                severity = diagnostic.severity
            result.append(replace(diagnostic, severity=severity))
    return result


def read_for_check(path: str, max_memory_bytes: int) -> tuple[str | None, int, str | None]:
    """(text or None when too big to read, size, encoding problem) of a file to check."""
    size = os.path.getsize(path)
    # A file far over the limit is reported as too large without reading it (bounded memory).
    if size > READ_LIMIT_FACTOR * max_memory_bytes:
        return None, size, None
    with open(path, "rb") as handle:
        data = handle.read()
    text, problem = decode_memory(data)
    return text, len(data), problem


def expand_paths(paths: Sequence[str]) -> list[str]:
    """Files named on the command line; folders give their Markdown files."""
    files: list[str] = []
    for path in paths:
        absolute = os.path.abspath(path)
        if os.path.isdir(absolute):
            for directory, dirs, names in os.walk(absolute):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                files.extend(os.path.join(directory, n) for n in sorted(names) if n.endswith(".md"))
        else:
            files.append(absolute)
    return files
