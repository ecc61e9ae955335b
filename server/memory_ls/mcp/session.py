"""The versions of the memories this MCP session read: no lost update without a version.

Over stdio one server process is one session. A read (read_memory: the only tool that
answers a memory's whole text) remembers the version it answered; so does each of the
session's own writes, edits and renames. A write, edit, rename or delete of a remembered
memory without `expected_version` is made against the remembered version: if anyone else
changed the memory since, it is refused `[version-conflict]`, naming what changed (from
the journal) and nothing is written. A memory the session never read nor wrote keeps
Serena's behaviour (overwritten, edited, renamed, deleted as it is now).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memory_ls.core.rules.errors import MemoryStoreError, NotFound, VersionConflict
from memory_ls.core.services.journal import Entry
from memory_ls.core.storage.gate import version_of
from memory_ls.core.store import Store

# Memories remembered at most; the least recently used is forgotten first (it then keeps
# Serena's behaviour, as a memory never read does). Some 200 bytes each.
MAX_REMEMBERED = 10_000
# Journal entries named in a refusal, newest last; older ones are counted.
CHANGES_SHOWN = 3
# Journal entries read back after a rename, a page at a time, for the references it rewrote.
JOURNAL_PAGE = 200
# Who made a change, as the journal's source says it.
_WHO = {
    "external": "outside memory-ls (a person, an editor or another program)",
    "git": "by git",
    "editor": "in the editor",
    "cli": "by the memory-ls command line",
    "core": "by memory-ls",
}


@dataclass(frozen=True)
class Known:
    """A memory as this session last read or wrote it."""

    path: str
    name: str  # its qualified name then
    version: str
    wrote: bool = False  # the session's own write left it so (else a read)


class SessionVersions:
    """The version of each memory this session read or wrote, by file path (bounded)."""

    def __init__(self, limit: int = MAX_REMEMBERED) -> None:
        self.limit = limit
        self._known: OrderedDict[str, Known] = OrderedDict()
        # Tool calls may run on worker threads.
        self._lock = threading.Lock()

    def get(self, path: str) -> Known | None:
        """What this session knows of the memory at `path`, if anything."""
        with self._lock:
            return self._known.get(path)

    def read(self, path: str, name: str, version: str, *, wrote: bool = False) -> None:
        """The session saw the memory at this version (a read, or its own write)."""
        with self._lock:
            self._known[path] = Known(path, name, version, wrote)
            self._known.move_to_end(path)
            while len(self._known) > self.limit:
                self._known.popitem(last=False)

    def forget(self, path: str) -> None:
        """The session no longer knows the memory at `path` (it deleted it, or read it gone)."""
        with self._lock:
            self._known.pop(path, None)

    def forget_name(self, store: Store, raw_name: object, scope: object) -> None:
        """A read found no memory of this name: a later write of it creates it freely."""
        path = _target(store, raw_name, scope)
        if path is not None:
            self.forget(path)

    def guarded(
        self,
        store: Store,
        raw_name: object,
        scope: object,
        expected_version: str | None,
        write: Callable[[str | None], dict[str, Any]],
        *,
        check: bool = True,
        follow_journal: bool = False,
    ) -> dict[str, Any]:
        """Run `write` with the version to expect: the caller's, else the one this session
        knows of the memory `raw_name` means (none: Serena's behaviour); then remember what
        the write left. `check` false (create_only) expects nothing: nothing is replaced.
        `follow_journal`: the write rewrote other memories (a rename's references)."""
        known = None
        if expected_version is None and check:
            path = _target(store, raw_name, scope)
            known = self.get(path) if path is not None else None
        start = _latest_id(store) if follow_journal else None
        seen = len(store.changes)
        try:
            result = write(expected_version if known is None else known.version)
        except VersionConflict as exc:
            if known is None:
                raise  # the caller's own expected_version: the store's words
            raise self.conflict(store, known, exc.current_version) from exc
        except NotFound as exc:
            # The memory this session read is gone (deleted or renamed by someone else).
            if known is None:
                raise
            raise self.conflict(store, known, None) from exc
        self._follow_changes(store, seen, result)
        if start is not None:
            self._follow_journal(store, start)
        return result

    def _follow_changes(self, store: Store, seen: int, result: dict[str, Any]) -> None:
        """Remember what this write left: the memory written (own writes count as read),
        and any other memory it changed that the session knew as it was before."""
        for change in list(store.changes)[seen:]:
            old = change.moved_from.path if change.moved_from is not None else change.memory.path
            before = None if change.before is None else version_of(change.before)
            after = None if change.after is None else version_of(change.after)
            if change.memory.path == result.get("path"):  # the memory written
                self.forget(old)
                if after is not None:
                    self.read(change.memory.path, change.memory.qualified, after, wrote=True)
            else:  # an agent's index file the write updated
                now = (
                    None
                    if after is None
                    else Known(change.memory.path, change.memory.qualified, after, wrote=True)
                )
                self._follow(old, before, now)

    def _follow_journal(self, store: Store, start: int) -> None:
        """Memories this session's rename rewrote (journaled, not in the store's changes):
        known as they were just before, they are known as rewritten."""
        fresh: list[Entry] = []
        before_id: int | None = None
        try:
            while True:
                page = store.journal.recent(JOURNAL_PAGE, before_id)
                fresh += [entry for entry in page if entry.id > start]
                if not page or page[-1].id <= start:
                    break
                before_id = page[-1].id
        except (sqlite3.Error, OSError):
            return  # unknown: the next write of them is refused until read again (safe)
        for entry in reversed(fresh):
            if entry.source != store.source or entry.action != "edit":
                continue
            if entry.version_after is not None:
                known = Known(entry.path, entry.name, entry.version_after, wrote=True)
                self._follow(entry.path, entry.version_before, known)

    def _follow(self, path: str, before: str | None, now: Known | None) -> None:
        """A change from `before`: followed only where the session knew exactly that version
        (a change on top of someone else's is not the session's to know)."""
        with self._lock:
            known = self._known.get(path)
            if known is None or before is None or known.version != before:
                return
            del self._known[path]
        if now is not None:
            self.read(now.path, now.name, now.version, wrote=now.wrote)

    def conflict(self, store: Store, known: Known, current: str | None) -> VersionConflict:
        """The refusal of a write made without a version over someone else's change:
        the version read, the version now, what the journal says changed it, what to do."""
        story = _story(store, known)
        renamed = next((e for e in reversed(story) if _renamed_away(e, known)), None)
        saw = "wrote" if known.wrote else "read"
        if current is None:
            head = (
                f"Memory {known.name!r} no longer exists; this session {saw} it at version "
                f"{known.version}"
            )
        else:
            head = (
                f"Memory {known.name!r} changed since this session {saw} it: it was version "
                f"{known.version}, it is now version {current}"
            )
        if story:
            shown = [_said(entry, known) for entry in story[-CHANGES_SHOWN:]]
            earlier = len(story) - len(shown)
            head += "; since then it was " + ", then ".join(shown)
            if earlier:
                head += f" (and {earlier} earlier change{'' if earlier == 1 else 's'})"
        if current is not None:
            tail = (
                "Read it again, apply your change to what is there now, and retry "
                "(a write without expected_version is checked against what you last read)."
            )
        elif renamed is not None and renamed.new_name:
            tail = f"Read {renamed.new_name!r} and make your change there, if it still applies."
        else:
            tail = (
                "If it should exist again, write it with create_only=true (or read it again: "
                "once read as missing, a write creates it)."
            )
        return VersionConflict(f"{head}. Nothing was changed. {tail}", current)


def _target(store: Store, raw_name: object, scope: object) -> str | None:
    """The file a write of this name would touch: the memory it means, else where a new
    one would go; None when the name is refused (the write itself says why)."""
    try:
        path = store.route(raw_name, scope)["path"]
    except MemoryStoreError:
        return None
    return path if isinstance(path, str) else None


def _latest_id(store: Store) -> int | None:
    """The journal's newest entry before a write (None: the journal cannot be read)."""
    try:
        return store.journal.latest_id()
    except (sqlite3.Error, OSError):
        return None


def _story(store: Store, known: Known) -> list[Entry]:
    """The journal's changes to the memory since the version the session knew, oldest
    first; empty when the journal does not reach back to that version."""
    try:
        history = store.journal.history(known.name)
    except (sqlite3.Error, OSError):
        return []
    since: list[Entry] = []
    for entry in history:  # newest first
        if known.path not in (entry.path, entry.new_path):
            continue
        since.append(entry)
        if entry.version_before == known.version and entry.path == known.path:
            return since[::-1]
    return []


def _renamed_away(entry: Entry, known: Known) -> bool:
    return entry.action == "move" and entry.path == known.path and entry.new_path != known.path


def _said(entry: Entry, known: Known) -> str:
    """One change in a sentence: what, by whom, when."""
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(entry.time))
    who = _WHO.get(entry.source, f"by {entry.source}")
    if _renamed_away(entry, known):
        what = f"renamed to {entry.new_name!r}"
    elif entry.action == "move":
        what = f"replaced by {entry.name!r}, renamed to this name"
    elif entry.version_after is None:
        what = "deleted"
    elif entry.version_before is None:
        what = "created again"
    else:
        what = {"edit": "edited", "revert": "reverted"}.get(entry.action, "changed")
    return f"{what} {who} at {when}"
