"""A bounded journal of memory contents before each change a Store makes, for history and undo.

It lives in the user's cache (one SQLite file per store configuration, shared by the
CLI, the MCP server and the language server, which append at once), never in a memory
folder: it would be committed. Before-contents that hold a possible secret are not kept
where the store refuses secrets (the entry says they were withheld).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import threading
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

from memory_ls.core.folders import StoreConfig
from memory_ls.core.fsio import user_cache_dir
from memory_ls.core.gate import version_of
from memory_ls.core.secrets import find_secrets

# Entries kept per memory, and deflated before-contents kept in all; the oldest go first.
MAX_ENTRIES_PER_MEMORY = 50
MAX_TOTAL_BYTES = 32 * 1024 * 1024
# Entries in all (creations keep no bytes, yet each row costs some).
MAX_ENTRIES = 100_000
BUSY_TIMEOUT_SECONDS = 30.0
SCHEMA_VERSION = 1

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS entries (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        time REAL NOT NULL,
        name TEXT NOT NULL,
        path TEXT NOT NULL,
        new_path TEXT,
        new_name TEXT,
        action TEXT NOT NULL,
        source TEXT NOT NULL,
        before BLOB,
        before_size INTEGER,
        withheld INTEGER NOT NULL DEFAULT 0,
        version_before TEXT,
        version_after TEXT
    )""",
    "CREATE INDEX IF NOT EXISTS entries_name ON entries (name, id)",
    "CREATE INDEX IF NOT EXISTS entries_new_name ON entries (new_name, id)",
    # The deflated bytes kept in all, so a write does not sum every entry to stay bounded.
    "CREATE TABLE IF NOT EXISTS totals (bytes INTEGER NOT NULL)",
    "INSERT INTO totals (bytes) SELECT COALESCE(SUM(LENGTH(before)), 0) FROM entries"
    " WHERE NOT EXISTS (SELECT 1 FROM totals)",
)


@dataclass(frozen=True)
class Entry:
    """One change: the memory's content before it (None: the file did not exist)."""

    id: int
    time: float
    name: str  # qualified name of the memory before the change
    path: str  # where the file was before the change
    action: str  # save, edit, delete, move, revert
    source: str  # who made it: cli, mcp:<client>, editor, core
    before_size: int | None  # bytes before; None when there was no file
    withheld: bool  # the before-content held a possible secret and was not kept
    version_before: str | None
    version_after: str | None
    new_path: str | None = None  # a move: where the file went
    new_name: str | None = None  # a move: the memory's new qualified name
    deflated: bytes | None = None

    @property
    def before(self) -> bytes | None:
        """The content before the change (None: no file, or withheld)."""
        return None if self.deflated is None else zlib.decompress(self.deflated)

    def as_json(self) -> dict[str, object]:
        """The entry as `history --json` shows it."""
        shown: dict[str, object] = {
            "id": self.id,
            "time": self.time,
            "name": self.name,
            "path": self.path,
            "action": self.action,
            "source": self.source,
            "versionBefore": self.version_before,
            "versionAfter": self.version_after,
            "sizeBefore": self.before_size,
            "withheld": self.withheld,
        }
        if self.new_path is not None:
            shown["newPath"] = self.new_path
            shown["newName"] = self.new_name
        return shown


def journal_path(config: StoreConfig) -> str:
    """Where the journal of this store's folders lives (the user's cache)."""
    key = "\n".join(folder.path for folder in config.folders).encode("utf-8", "surrogateescape")
    digest = hashlib.sha256(key).hexdigest()[:32]
    return str(user_cache_dir() / "journal" / f"{digest}.v{SCHEMA_VERSION}.sqlite3")


class Journal:
    """The journal file of one store configuration; the connection is opened on first use."""

    def __init__(
        self,
        path: str,
        *,
        withhold_secrets: bool = True,
        max_per_memory: int = MAX_ENTRIES_PER_MEMORY,
        max_bytes: int = MAX_TOTAL_BYTES,
        max_entries: int = MAX_ENTRIES,
    ) -> None:
        self.path = path
        self.withhold_secrets = withhold_secrets
        self.max_per_memory = max_per_memory
        self.max_bytes = max_bytes
        self.max_entries = max_entries
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    @classmethod
    def for_store(cls, config: StoreConfig) -> Journal:
        """The journal of a store configuration, withholding secrets where it refuses them."""
        return cls(journal_path(config), withhold_secrets=config.secrets == "refuse")

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
            db = sqlite3.connect(
                self.path,
                timeout=BUSY_TIMEOUT_SECONDS,
                isolation_level=None,
                check_same_thread=False,
            )
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute("BEGIN IMMEDIATE")
                for statement in _SCHEMA:
                    db.execute(statement)
                db.execute("COMMIT")
            except BaseException:
                db.close()
                raise
            self._db = db
        return self._db

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            db = self._connect()
            # IMMEDIATE: the bound is enforced on what other processes appended too.
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def record(
        self,
        *,
        action: str,
        name: str,
        path: str,
        before: bytes | None,
        after: bytes | None,
        source: str,
        new_path: str | None = None,
        new_name: str | None = None,
    ) -> int | None:
        """Append an entry for a change; its id, or None when the change changed nothing."""
        if before == after and new_path is None:
            return None
        withheld = before is not None and self.withhold_secrets and _has_secret(before)
        deflated = zlib.compress(before) if before is not None and not withheld else None
        with self._transaction() as db:
            cursor = db.execute(
                "INSERT INTO entries (time, name, path, new_path, new_name, action, source,"
                " before, before_size, withheld, version_before, version_after)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    time.time(),
                    name,
                    path,
                    new_path,
                    new_name,
                    action,
                    source,
                    deflated,
                    None if before is None else len(before),
                    int(withheld),
                    None if before is None else version_of(before),
                    None if after is None else version_of(after),
                ),
            )
            entry_id = cursor.lastrowid
            kept = 0 if deflated is None else len(deflated)
            db.execute("UPDATE totals SET bytes = bytes + ?", (kept,))
            self._trim(db, name)
        return entry_id

    def _trim(self, db: sqlite3.Connection, name: str) -> None:
        """Drop the memory's entries beyond its count, then the oldest beyond the bounds."""
        row = db.execute(
            "SELECT id FROM entries WHERE name = ? ORDER BY id DESC LIMIT 1 OFFSET ?",
            (name, self.max_per_memory),
        ).fetchone()
        if row is not None:
            freed = db.execute(
                "SELECT COALESCE(SUM(LENGTH(before)), 0) FROM entries WHERE name = ? AND id <= ?",
                (name, row[0]),
            ).fetchone()[0]
            db.execute("DELETE FROM entries WHERE name = ? AND id <= ?", (name, row[0]))
            db.execute("UPDATE totals SET bytes = bytes - ?", (freed,))
        # Ids only grow: none older than the last max_entries ids is kept.
        oldest_kept = db.execute("SELECT MAX(id) FROM entries").fetchone()[0] - self.max_entries
        freed = db.execute(
            "SELECT COALESCE(SUM(LENGTH(before)), 0) FROM entries WHERE id <= ?", (oldest_kept,)
        ).fetchone()[0]
        db.execute("DELETE FROM entries WHERE id <= ?", (oldest_kept,))
        db.execute("UPDATE totals SET bytes = bytes - ?", (freed,))
        total = db.execute("SELECT bytes FROM totals").fetchone()[0]
        if total <= self.max_bytes:
            return
        cut = None
        for entry_id, size in db.execute(
            "SELECT id, COALESCE(LENGTH(before), 0) FROM entries ORDER BY id"
        ):
            if total <= self.max_bytes:
                break
            total -= size
            cut = entry_id
        if cut is not None:
            db.execute("DELETE FROM entries WHERE id <= ?", (cut,))
            db.execute("UPDATE totals SET bytes = ?", (total,))

    def history(self, name: str) -> list[Entry]:
        """The entries of a memory (by its name before, or after a move), newest first."""
        with self._lock:
            rows = self._connect().execute(
                f"SELECT {_COLUMNS} FROM entries WHERE name = ? OR new_name = ? ORDER BY id DESC",
                (name, name),
            )
            return [_entry(row) for row in rows]

    def entry(self, entry_id: int) -> Entry | None:
        """One entry by id (None when it was dropped or never was)."""
        with self._lock:
            row = (
                self._connect()
                .execute(f"SELECT {_COLUMNS} FROM entries WHERE id = ?", (entry_id,))
                .fetchone()
            )
        return None if row is None else _entry(row)

    def close(self) -> None:
        """Close the connection (a later use opens it again)."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


_COLUMNS = (
    "id, time, name, path, action, source, before_size, withheld, version_before,"
    " version_after, new_path, new_name, before"
)


def _entry(row: tuple[object, ...]) -> Entry:
    (entry_id, at, name, path, action, source, size, withheld, v_before, v_after) = row[:10]
    new_path, new_name, deflated = row[10:]
    return Entry(
        id=int(str(entry_id)),
        time=float(str(at)),
        name=str(name),
        path=str(path),
        action=str(action),
        source=str(source),
        before_size=None if size is None else int(str(size)),
        withheld=bool(withheld),
        version_before=None if v_before is None else str(v_before),
        version_after=None if v_after is None else str(v_after),
        new_path=None if new_path is None else str(new_path),
        new_name=None if new_name is None else str(new_name),
        deflated=deflated if isinstance(deflated, bytes) else None,
    )


def _has_secret(data: bytes) -> bool:
    """Whether a content holds something that looks like a credential."""
    return any(True for _hit in find_secrets(data.decode("utf-8", "replace")))
