"""What a layout is: one agent's conventions for where and how its memories are kept."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from memory_ls.core.rules.context_limits import ContextLimit


@dataclass(frozen=True)
class MemoryPatterns:
    """Compiled patterns and the problems met loading them (shown to the user, never fatal)."""

    read_only: tuple[re.Pattern[str], ...] = ()
    ignored: tuple[re.Pattern[str], ...] = ()
    sources: tuple[str, ...] = ()  # the files they came from, for messages and watching
    problems: tuple[str, ...] = field(default=(), compare=False)

    def is_ignored(self, name: str) -> bool:
        """Whether a memory (Serena's name, `global/` included) is hidden from every operation."""
        return any(pattern.fullmatch(name) for pattern in self.ignored)

    def is_read_only(self, name: str) -> bool:
        """Whether a memory (Serena's name) may be read but not written."""
        return any(pattern.fullmatch(name) for pattern in self.read_only)

    @property
    def where(self) -> str:
        """The files the patterns come from, for messages."""
        return " and ".join(self.sources) if self.sources else "Serena's configuration"


NO_PATTERNS = MemoryPatterns()


def _no_patterns(root: str, environ: Mapping[str, str]) -> MemoryPatterns:
    return NO_PATTERNS


def _no_files(root: str, environ: Mapping[str, str]) -> list[str]:
    return []


@dataclass(frozen=True)
class AgentFile:
    """A file an agent reads as instructions or memory, found in a repository or home."""

    path: str  # absolute
    layout: str  # the layout that knows it: "claude", "cursor", ...
    kind: str  # "instructions", "rule", "memory-index", "topic", "memory-bank"
    scope: str = "project"  # "project" (in the repository) or "user" (the user's home)


@dataclass(frozen=True)
class Repository:
    """What discovery is told about a repository: its root and the files git would track."""

    root: str  # absolute: the store's root
    top: str  # the canonical git top (the main worktree's), or the root outside git
    files: tuple[str, ...]  # relative to `root`, `/`-separated; ignored files left out
    home: str  # the user's home folder
    environ: Mapping[str, str]


@dataclass(frozen=True)
class IndexChange:
    """What a write did to an agent's index file, and how much of the index is loaded."""

    path: str
    change: str  # "added", "removed", "renamed" or "unchanged"
    line: int | None  # 0-based line of the entry added or renamed
    loaded_lines: int  # lines the agent loads
    total_lines: int
    limit_lines: int
    loaded_bytes: int
    total_bytes: int
    limit_bytes: int

    @property
    def entry_loaded(self) -> bool:
        """Whether the entry this change is about lies in what the agent loads."""
        return self.line is None or self.line < self.loaded_lines

    def as_dict(self) -> dict[str, object]:
        """The JSON form (1-based line) in answers."""
        return {
            "path": self.path,
            "change": self.change,
            "line": None if self.line is None else self.line + 1,
            "entryLoaded": self.entry_loaded,
            "loadedLines": self.loaded_lines,
            "totalLines": self.total_lines,
            "limitLines": self.limit_lines,
            "totalBytes": self.total_bytes,
            "limitBytes": self.limit_bytes,
        }


@dataclass(frozen=True)
class IndexRules:
    """An agent's index of its memory folder (Claude Code's MEMORY.md): kept as it keeps it."""

    file_name: str  # in the primary folder
    # (index text or None, file name, memory text) -> new index text, or None: no change.
    add: Callable[[str | None, str, str], str | None]
    remove: Callable[[str, str], str | None]  # (index text, file name)
    rename: Callable[[str, str, str], str | None]  # (index text, old file, new file)
    # (index path, index text, file name or None) -> the state of the index.
    describe: Callable[[str, str, str | None, str], IndexChange]


@dataclass(frozen=True)
class Layout:
    """One agent's memory conventions: folders, global scope, patterns and context limits."""

    name: str  # the value of the `layout` setting
    agent: str  # the agent's name, for people
    primary_folder: str  # relative to the store's root, `/`-separated
    # The global folder for an environment (`~` allowed: expanded when resolved).
    global_folder: Callable[[Mapping[str, str]], str]
    # The read-only and ignored patterns in force for a root (read from the agent's files).
    patterns: Callable[[str, Mapping[str, str]], MemoryPatterns] = _no_patterns
    # The files whose change changes those patterns (followed by the language server).
    pattern_files: Callable[[str, Mapping[str, str]], list[str]] = _no_files
    # The files the agent loads into every prompt and where it cuts them.
    context_limits: tuple[ContextLimit, ...] = ()
    # Where the primary folder is when it is not under the root (Claude Code's auto memory).
    primary_at: Callable[[str, Mapping[str, str]], str] | None = None
    # Whether a global folder exists by default (Claude Code keeps none).
    has_global: bool = True
    # The index the agent keeps of its folder, updated on every save, delete and move.
    index: IndexRules | None = None

    def primary_path(self, root: str, environ: Mapping[str, str]) -> str:
        """The primary folder for a root (absolute, or relative to the root)."""
        return self.primary_at(root, environ) if self.primary_at else self.primary_folder


@dataclass(frozen=True)
class AgentLayout:
    """An agent whose instruction and memory files are checked and navigated, not routed to:
    Claude Code, Codex (AGENTS.md), Cursor, Copilot, Cline."""

    name: str  # the value of `context --agent`
    agent: str  # the agent's name, for people
    # The agent's files in a repository (and the user's home), found without reading them.
    agent_files: Callable[[Repository], list[AgentFile]]
