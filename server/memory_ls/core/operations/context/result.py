"""What `memory-ls context` answers: the files loaded, what was not, and the total."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

AGENTS: Mapping[str, str] = {
    "claude": "Claude Code",
    "codex": "Codex",
    "cursor": "Cursor",
    "copilot": "GitHub Copilot",
    "serena": "Serena",
    "aicoder": "AI Coder",
}


@dataclass(frozen=True)
class Cut:
    """Where an agent stops reading a file: what it loads and what it never sees."""

    by: str  # "lines", "bytes" (the file's own limit) or "budget" (Codex's combined cap)
    line: int  # 0-based line of the first character not loaded
    col: int
    loaded_lines: int  # lines loaded whole
    total_lines: int
    loaded_bytes: int
    total_bytes: int

    def describe(self) -> str:
        """The cut for people: "lines 1–200 of 240 loaded; 40 lines not loaded"."""
        if self.by == "lines":
            lost = self.total_lines - self.loaded_lines
            return (
                f"lines 1–{self.loaded_lines} of {self.total_lines} loaded; "
                f"{lost} line{'s' if lost != 1 else ''} not loaded"
            )
        said = f"{self.loaded_bytes:,} of {self.total_bytes:,} bytes loaded"
        if self.col:
            said += f", cut inside line {self.line + 1}"
        first_lost = self.line + (2 if self.col else 1)  # 1-based, the first line lost whole
        if first_lost < self.total_lines:
            said += f"; lines {first_lost}–{self.total_lines} not loaded"
        elif first_lost == self.total_lines:
            said += f"; line {first_lost} not loaded"
        return said

    def to_json(self) -> dict[str, Any]:
        """The JSON form (1-based line)."""
        return {
            "by": self.by,
            "line": self.line + 1,
            "column": self.col,
            "loadedLines": self.loaded_lines,
            "totalLines": self.total_lines,
            "loadedBytes": self.loaded_bytes,
            "totalBytes": self.total_bytes,
            "text": self.describe(),
        }


@dataclass(frozen=True)
class Headroom:
    """How much of a file's own limit a file that is loaded whole uses."""

    lines: int
    max_lines: int | None
    bytes: int
    max_bytes: int

    def describe(self) -> str:
        """For people: "187 of 200 lines, 9,120 of 25,000 bytes: all loaded"."""
        parts = [f"{self.bytes:,} of {self.max_bytes:,} bytes"]
        if self.max_lines is not None:
            parts.insert(0, f"{self.lines} of {self.max_lines} lines")
        return ", ".join(parts) + ": all loaded"

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "lines": self.lines,
            "maxLines": self.max_lines,
            "bytes": self.bytes,
            "maxBytes": self.max_bytes,
            "text": self.describe(),
        }


@dataclass(frozen=True)
class LoadedFile:
    """A file the agent loads (or may choose to load), with what it costs."""

    path: str  # absolute
    shown: str  # for people: relative to the root, `~/...`, or absolute
    kind: str  # "managed", "user", "user-rule", "ancestor", "project", "local", "rule",
    # "subfolder", "import", "memory-index", "instructions", "memory-names", "autoload"
    why: str  # why the agent loads it
    tokens: int  # of the part loaded
    loaded_bytes: int
    total_bytes: int
    depth: int = 0  # import hops from the file that started the chain
    imported_by: str | None = None  # the importing file, as shown
    cut: Cut | None = None
    headroom: Headroom | None = None
    names: tuple[str, ...] = ()  # Serena: the memory names listed

    @property
    def label(self) -> str:
        """The file as listed: imports indented under their importer."""
        indent = "  " * self.depth
        suffix = f" (imported by {self.imported_by})" if self.imported_by else ""
        return f"{indent}{self.shown}{suffix}"

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        found: dict[str, Any] = {
            "path": self.path,
            "shown": self.shown,
            "kind": self.kind,
            "why": self.why,
            "tokens": self.tokens,
            "loadedBytes": self.loaded_bytes,
            "totalBytes": self.total_bytes,
            "depth": self.depth,
            "importedBy": self.imported_by,
            "cut": self.cut.to_json() if self.cut else None,
            "headroom": self.headroom.to_json() if self.headroom else None,
        }
        if self.kind == "memory-names":
            found["names"] = list(self.names)
        return found


@dataclass(frozen=True)
class Skipped:
    """A file the agent would look at but does not load, and why."""

    path: str
    shown: str
    reason: str  # "missing", "cycle", "too-deep", "already-loaded", "unreadable",
    # "empty", "over-budget", "not-matched", "manual", "folder"
    detail: str  # for people
    imported_by: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "path": self.path,
            "shown": self.shown,
            "reason": self.reason,
            "detail": self.detail,
            "importedBy": self.imported_by,
        }


@dataclass(frozen=True)
class AgentContext:
    """What an agent loads working on a file, in load order, against a budget."""

    agent: str
    root: str
    file: str | None  # relative to the root, `/`-separated; None: no file touched yet
    budget: int
    loaded: tuple[LoadedFile, ...]
    optional: tuple[LoadedFile, ...] = ()  # Cursor: rules the agent may choose
    skipped: tuple[Skipped, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def agent_name(self) -> str:
        """The agent's name for people."""
        return AGENTS[self.agent]

    @property
    def total(self) -> int:
        """Estimated tokens of everything loaded (the optional rules left out)."""
        return sum(item.tokens for item in self.loaded)

    @property
    def over_budget(self) -> bool:
        """Whether the total exceeds the budget (`memory-ls context` exits 1)."""
        return self.total > self.budget

    def to_json(self) -> dict[str, Any]:
        """The JSON form printed by `memory-ls context --json`."""
        return {
            "agent": self.agent,
            "agentName": self.agent_name,
            "root": self.root,
            "file": self.file,
            "budget": self.budget,
            "total": self.total,
            "overBudget": self.over_budget,
            "tokensPerCharacter": 0.25,
            "loaded": [item.to_json() for item in self.loaded],
            "optional": [item.to_json() for item in self.optional],
            "skipped": [item.to_json() for item in self.skipped],
            "notes": list(self.notes),
        }


def render_text(context: AgentContext) -> str:
    """The human-readable form printed by `memory-ls context`."""
    where = (
        f"working on {context.file}"
        if context.file is not None
        else "at the start of a session in the store's root, before any file is touched"
    )
    lines = [f"{context.agent_name} loads, {where} (estimated tokens, 4 characters each):"]
    rows = list(context.loaded)
    width = min(max((len(item.label) for item in (*rows, *context.optional)), default=0), 60)
    digits = max((len(f"{item.tokens:,}") for item in (*rows, *context.optional)), default=1)
    number = len(str(len(rows)))
    for position, item in enumerate(rows, start=1):
        lines.append(_row(f"{position:>{number}}.", item, width, digits))
    if not rows:
        lines.append("   (nothing)")
    percent = round(100 * context.total / context.budget) if context.budget else 0
    total = f"Total: {context.total:,} of a {context.budget:,}-token budget ({percent}%)"
    if context.over_budget:
        total += f": {context.total - context.budget:,} over"
    lines.append(total + ".")
    if context.optional:
        lines += ["", "May be chosen by the agent (not counted in the total):"]
        lines += [_row("-", item, width, digits) for item in context.optional]
    if context.skipped:
        lines += ["", "Not loaded:"]
        for skipped in context.skipped:
            by = f" (imported by {skipped.imported_by})" if skipped.imported_by else ""
            lines.append(f"   - {skipped.shown}{by}: {skipped.detail}")
    if context.notes:
        lines.append("")
        lines += [f"Note: {note}" for note in context.notes]
    return "\n".join(lines)


def _row(marker: str, item: LoadedFile, width: int, digits: int) -> str:
    remark = item.cut.describe() if item.cut else item.headroom.describe() if item.headroom else ""
    row = f"   {marker} {item.label:<{width}}  {item.tokens:>{digits},}"
    return f"{row}  ({remark})" if remark else row
