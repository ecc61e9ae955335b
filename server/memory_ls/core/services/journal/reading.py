"""The journal's connection and queries: entries newest first, a memory's history, one entry."""

from __future__ import annotations

import sqlite3
import threading

from memory_ls.core.services.journal.entries import COLUMNS, Entry, entry_of
from memory_ls.core.services.journal.schema import open_database


class JournalReader:
    """The connection to one journal file (opened on first use), its lock, and its queries."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    def connect(self) -> sqlite3.Connection:
        """The connection, opened now if it is not yet (the lock held or not needed)."""
        if self._db is None:
            self._db = open_database(self.path)
        return self._db

    def close(self) -> None:
        """Close the connection (a later use opens it again)."""
        with self.lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def baseline_stamps(self) -> dict[str, tuple[int, int]]:
        """The (mtime_ns, size) of every file in the baseline, by path."""
        with self.lock:
            rows = self.connect().execute("SELECT path, mtime_ns, size FROM baseline")
            return {str(path): (int(mtime), int(size)) for path, mtime, size in rows}

    def recent(self, limit: int = 50, before_id: int | None = None) -> list[Entry]:
        """The latest entries of every memory, newest first (older than `before_id`)."""
        with self.lock:
            rows = self.connect().execute(
                f"SELECT {COLUMNS} FROM entries WHERE id < ? ORDER BY id DESC LIMIT ?",
                (before_id if before_id is not None else 2**62, limit),
            )
            return [entry_of(row) for row in rows]

    def unreviewed(self) -> int:
        """How many entries nobody marked reviewed."""
        with self.lock:
            return int(
                self.connect()
                .execute("SELECT COUNT(*) FROM entries WHERE NOT reviewed")
                .fetchone()[0]
            )

    def latest_id(self) -> int:
        """The newest entry's id (0: none)."""
        with self.lock:
            row = self.connect().execute("SELECT MAX(id) FROM entries").fetchone()
        return int(row[0] or 0)

    def after(self, entry: Entry) -> tuple[bytes | None, str]:
        """The content just after a change, and where it comes from: `journal` (the next
        change's before), `current` (the file now: no later change), or `withheld`."""
        name = entry.new_name or entry.name
        path = entry.new_path or entry.path
        with self.lock:
            row = (
                self.connect()
                .execute(
                    f"SELECT {COLUMNS} FROM entries WHERE id > ? AND (name = ? OR path = ?)"
                    " ORDER BY id LIMIT 1",
                    (entry.id, name, path),
                )
                .fetchone()
            )
        if row is not None:
            following = entry_of(row)
            if following.version_before == entry.version_after:
                if following.withheld:
                    return None, "withheld"
                return following.before, "journal"
        if entry.version_after is None:
            return None, "journal"
        try:
            with open(path, "rb") as handle:
                return handle.read(), "current"
        except OSError:
            return None, "current"

    def history(self, name: str) -> list[Entry]:
        """The entries of a memory (by its name before, or after a move), newest first."""
        with self.lock:
            rows = self.connect().execute(
                f"SELECT {COLUMNS} FROM entries WHERE name = ? OR new_name = ? ORDER BY id DESC",
                (name, name),
            )
            return [entry_of(row) for row in rows]

    def entry(self, entry_id: int) -> Entry | None:
        """One entry by id (None when it was dropped or never was)."""
        with self.lock:
            row = (
                self.connect()
                .execute(f"SELECT {COLUMNS} FROM entries WHERE id = ?", (entry_id,))
                .fetchone()
            )
        return None if row is None else entry_of(row)
