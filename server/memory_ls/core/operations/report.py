"""What a writer is told after a write: the findings `check` gives for the memory it touched.

Each finding says whether the write introduced it (compared with the same checks on the
memory's bytes before the write) and, where the store can tell, how to fix it: the
closest existing names for a broken link, the closest existing paths for a stale one.
The MCP server, the CLI and the language server's commands all answer with these, in
the same words.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memory_ls.core.operations.duplicates import near_duplicate_diagnostics
from memory_ls.core.operations.meaning_duplicates import meaning_duplicate_diagnostics
from memory_ls.core.rules.document import decode_memory
from memory_ls.core.rules.names import did_you_mean, split_qualified
from memory_ls.core.rules.stale_paths import suggest_paths
from memory_ls.core.rules.supersede import SupersedeGraph, declaration_of_text
from memory_ls.core.services.diagnostics import (
    Diagnostic,
    NameIndex,
    apply_severities,
    text_diagnostics,
)
from memory_ls.core.storage.git import RENAMES, list_files
from memory_ls.core.storage.memory import Change, MemoryFile
from memory_ls.core.store import Store

SEVERITY_RANK = {"error": 0, "warning": 1, "information": 2, "hint": 3}
# Lines of findings in a text answer; the structured answer has them all.
TEXT_LIMIT = 20


@dataclass(frozen=True)
class Finding:
    """One diagnostic of a written memory, as the writer is told it (line and column 1-based)."""

    code: str
    severity: str
    line: int
    column: int
    message: str
    new: bool
    fix: str | None = None

    def as_data(self) -> dict[str, Any]:
        """The finding in a structured answer."""
        data: dict[str, Any] = {
            "code": self.code,
            "severity": self.severity,
            "line": self.line,
            "column": self.column,
            "message": self.message,
            "new": self.new,
        }
        if self.fix is not None:
            data["fix"] = self.fix
        return data

    def as_line(self) -> str:
        """The finding as one short line for a reader (an agent or a terminal)."""
        age = "new" if self.new else "already there"
        fix = f" {self.fix}" if self.fix else ""
        return f"- {self.severity} {self.code}, line {self.line} ({age}): {self.message}{fix}"


class StoreNames:
    """The names a memory's checks ask about, looked up on disk (a few stats per reference):
    a write is answered without listing a store of 100,000 memories."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._index: NameIndex | None = None
        self._files: list[str] | None = None

    def has(self, name: str, is_global: bool) -> bool:
        """Whether a reference to `name` resolves (in its own scope, no fallback)."""
        return bool(self.store.locate_all(name, "global" if is_global else "project"))

    def has_qualified(self, qualified: str) -> bool:
        """Whether a memory named as Serena writes it (`global/x`) exists."""
        return self.has(*split_qualified(qualified))

    def all(self) -> NameIndex:
        """Every name, for "did you mean" (listed once, when a link is broken)."""
        if self._index is None:
            # Suggestions only: names are not validated (a third of the time at 10,000).
            index = NameIndex()
            for memory in self.store.scan():
                (index.global_ if memory.scope == "global" else index.project).add(memory.name)
            self._index = index
        return self._index

    def files(self) -> list[str]:
        """The workspace's files as git lists them, for the closest paths (listed once)."""
        if self._files is None:
            self._files = list_files(self.store.config.root) or []
        return self._files

    def shadowed(self, memory: MemoryFile) -> dict[str, MemoryFile]:
        """{path: the memory that hides it} for this memory, if another file of its name wins."""
        first = self.store.locate_all(memory.name, memory.scope)
        return {memory.path: first[0]} if first and first[0].path != memory.path else {}


def change_findings(store: Store, change: Change) -> list[Finding]:
    """The findings for the memory a write left behind, new ones marked (none for a delete)."""
    if change.after is None:
        return []
    index = StoreNames(store)
    shadowed = index.shadowed(change.memory)
    after = _diagnostics(store, index, shadowed, change.memory, change.after)
    before_memory = change.moved_from or change.memory
    before = (
        _diagnostics(store, index, shadowed, before_memory, change.before)
        if change.before is not None
        else []
    )
    known = Counter(_key(d) for d in before)
    findings = []
    for diagnostic in after:
        key = _key(diagnostic)
        was_there = known[key] > 0
        if was_there:
            known[key] -= 1
        findings.append(
            Finding(
                code=diagnostic.code,
                severity=diagnostic.severity,
                line=diagnostic.line + 1,
                column=diagnostic.col + 1,
                message=diagnostic.message,
                new=not was_there,
                fix=_fix(store, index, diagnostic),
            )
        )
    findings.sort(key=lambda f: (not f.new, SEVERITY_RANK.get(f.severity, 9), f.line, f.column))
    return findings


def _diagnostics(
    store: Store,
    index: StoreNames,
    shadowed: dict[str, MemoryFile],
    memory: MemoryFile,
    data: bytes,
) -> list[Diagnostic]:
    text, problem = decode_memory(data)
    # What the memory's own frontmatter says it supersedes (names that exist, no cycle
    # through itself); whether others supersede it is the read's to say.
    own = declaration_of_text(memory.qualified, text) if problem is None else None
    graph = SupersedeGraph([own] if own is not None else [], index.has_qualified)
    found = text_diagnostics(
        store.config,
        index,
        memory.path,
        text,
        memory,
        shadowed,
        len(data),
        problem,
        supersedes=graph if memory.valid and memory.path not in shadowed else None,
    )
    if problem is None and memory.valid:
        # From the full-text index's keys (synced with the disk by the first question of
        # a process); never by reading the whole store for one write.
        found.extend(
            near_duplicate_diagnostics(
                store, memory.path, memory.qualified, text, scan_fallback=False
            )
        )
        # By meaning too, where search by meaning is on (its vectors).
        found.extend(
            meaning_duplicate_diagnostics(store, memory.path, memory.qualified, text, found)
        )
    return apply_severities(found, store.config.severities)


def _key(diagnostic: Diagnostic) -> tuple[str, str]:
    """What makes two findings the same one, wherever its line moved."""
    others = diagnostic.data.get("others")
    if diagnostic.code == "near-duplicate" and isinstance(others, list) and others:
        return diagnostic.code, str(others[0])  # the same pair, however alike they are now
    return diagnostic.code, diagnostic.message.replace(diagnostic.path, "")


def _fix(store: Store, index: StoreNames, diagnostic: Diagnostic) -> str | None:
    """How to fix a finding, where the store knows better than the message."""
    data = diagnostic.data
    if diagnostic.code == "broken-link" and "heading" in data:
        return None  # a missing heading: its message names the closest one already
    if diagnostic.code == "broken-link" and isinstance(data.get("name"), str):
        name = data["name"]
        names = index.all()
        candidates = sorted(names.global_) if data.get("isGlobal") else sorted(names.project)
        close = did_you_mean(name, candidates)
        if close:
            prefix = "global/" if data.get("isGlobal") else ""
            return "Did you mean " + " or ".join(prefix + c for c in close) + "?"
        return None
    if diagnostic.code == "near-duplicate":
        others = data.get("others")
        if data.get("reason") == "body" and isinstance(others, list) and others:
            # Alike but not the same: often the newer facts about the same thing.
            return (
                f"If this memory replaces {others[0]} (its facts changed), say so in its "
                f"frontmatter: `supersedes: {others[0]}`; searches then rank it first and "
                f"readers of {others[0]} are pointed here."
            )
        return None
    if diagnostic.code == "stale-path":
        resolved, bases = data.get("resolved"), data.get("bases")
        written = data.get("path")
        if not (
            isinstance(resolved, list) and isinstance(bases, list) and isinstance(written, str)
        ):
            return None
        root = store.config.root
        suggestions = suggest_paths(
            resolved,
            bases,
            written.endswith("/"),
            RENAMES.renames(root),
            index.files(),
            lambda relative: os.path.lexists(os.path.join(root, relative)),
        )
        if not suggestions:
            return None
        first = suggestions[0]
        if first.moved:
            return f"Git moved it to {first.path}."
        closest = ", ".join(s.path for s in suggestions)
        return f"Closest existing path{'s' if len(suggestions) > 1 else ''}: {closest}."
    return None


def findings_text(findings: Sequence[Finding], limit: int = TEXT_LIMIT) -> str:
    """The findings as the lines an agent reads after its write."""
    if not findings:
        return "Checked: no problems found."
    new = sum(1 for f in findings if f.new)
    count = len(findings)
    head = f"Checked: {count} problem{'' if count == 1 else 's'}"
    head += f" ({new} new from this write):" if new else " (none new from this write):"
    lines = [head, *(f.as_line() for f in findings[:limit])]
    if count > limit:
        lines.append(f"... and {count - limit} more (see the structured result).")
    return "\n".join(lines)


def answer_with_findings(store: Store, result: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """A write's result with the findings of the memory it left behind, and their text."""
    change = store.changes[-1] if store.changes else None
    if change is None or change.after is None:
        return result, ""
    findings = change_findings(store, change)
    return {**result, "diagnostics": [f.as_data() for f in findings]}, findings_text(findings)


def index_note(result: dict[str, Any]) -> str:
    """What a write did to the agent's index (Claude Code's MEMORY.md) and its headroom."""
    index = result.get("index")
    if not index:
        return ""
    name = os.path.basename(index["path"])
    loaded, total, limit = index["loadedLines"], index["totalLines"], index["limitLines"]
    if loaded < total:
        room = f"{loaded} of its {total} lines loaded (the first {limit} at most)"
    else:
        room = f"{total} of {limit} lines loaded, {limit - total} to spare"
    change = index["change"]
    if change == "added":
        done = f"entry added on line {index['line']}"
    elif change == "removed":
        done = "its entry removed"
    elif change == "renamed":
        done = f"its entry on line {index['line']} now links the new name"
    else:
        done = f"entry on line {index['line']}" if index["line"] else "no entry"
    note = f"{name}: {done}; {room}."
    if change != "removed" and not index["entryLoaded"]:
        note += (
            f" The entry lies past what Claude Code loads, so it never finds this memory: "
            f"shorten {name} or move the entry up."
        )
    return note


def _names(rows: Sequence[str], more: int) -> str:
    """Names in a sentence: `a, b and c`, and how many more were left out."""
    items = list(rows) + ([f"{more} more"] if more else [])
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def broken_links_note(result: dict[str, Any]) -> str:
    """What a delete broke: the memories that link to the deleted one (empty if none)."""
    links = result.get("brokenLinks") or []
    if not links:
        return ""
    more = int(result.get("moreBrokenLinks") or 0)
    total = len(links) + more
    listed = _names([f"{link['name']} (line {link['line']})" for link in links], more)
    who = "1 memory links" if total == 1 else f"{total} memories link"
    now = "now has a broken link" if total == 1 else "now have broken links"
    return (
        f"{who} to it and {now}: {listed}. Edit {'it' if total == 1 else 'them'} to link "
        f"elsewhere, or write a memory named {result['name']} again."
    )


def rewritten_note(result: dict[str, Any]) -> str:
    """Which memories a rename rewrote references in (empty if none)."""
    names = result.get("rewritten") or []
    if not names:
        return ""
    return f"References rewritten in {_names(names, int(result.get('moreRewritten') or 0))}."
