"""The journal's SQLite file: where it lives, its schema and migrations, adopting a legacy one."""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3

from memory_ls.core.storage.folders import StoreConfig
from memory_ls.core.storage.fsio import user_cache_dir
from memory_ls.core.storage.git import work_tree_top

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
    # Each memory's bytes as last seen or written (deflated; NULL: withheld), by path.
    """CREATE TABLE IF NOT EXISTS baseline (
        path TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        mtime_ns INTEGER NOT NULL,
        size INTEGER NOT NULL,
        version TEXT NOT NULL,
        data BLOB
    )""",
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
)
# Columns added after the first journals were written (name, declaration).
_ADDED_COLUMNS = (
    ("reviewed", "INTEGER NOT NULL DEFAULT 0"),
    ("after_size", "INTEGER"),
)
# Set once every memory's bytes are in `baseline`: from then on a file without a row is new.
BASELINE_COMPLETE = "baseline-complete"


def journal_root(config: StoreConfig) -> str:
    """The directory whose store the journal belongs to: the project file's directory,
    else the top of the git work tree, else the store's root."""
    if config.project_file is not None:
        return os.path.dirname(config.project_file)
    return work_tree_top(config.root) or config.root


def journal_path(config: StoreConfig) -> str:
    """Where the journal of this store lives (the user's cache), one per store root: a
    change made through any surface (whatever its flags) is in every surface's history."""
    key = f"root:{journal_root(config)}".encode("utf-8", "surrogateescape")
    digest = hashlib.sha256(key).hexdigest()[:32]
    return str(user_cache_dir() / "journal" / f"{digest}.v{SCHEMA_VERSION}.sqlite3")


def legacy_journal_path(config: StoreConfig) -> str:
    """Where versions before the project file kept the journal: one per set of folders."""
    key = "\n".join(folder.path for folder in config.folders).encode("utf-8", "surrogateescape")
    digest = hashlib.sha256(key).hexdigest()[:32]
    return str(user_cache_dir() / "journal" / f"{digest}.v{SCHEMA_VERSION}.sqlite3")


def adopt_legacy_journal(config: StoreConfig) -> None:
    """Carry the history an earlier version journaled for these folders into the store's
    journal, once (when the store's journal does not exist yet): no history is lost."""
    path, legacy = journal_path(config), legacy_journal_path(config)
    if path == legacy or os.path.exists(path) or not os.path.exists(legacy):
        return
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    partial = f"{path}.{os.getpid()}.adopting"
    try:
        # SQLite's backup copies a consistent snapshot, write-ahead log included.
        with (
            contextlib.closing(sqlite3.connect(legacy)) as source,
            contextlib.closing(sqlite3.connect(partial)) as copy,
        ):
            source.backup(copy)
        if not os.path.exists(path):
            os.replace(partial, path)
    except (sqlite3.Error, OSError):
        pass  # the history stays where it was; the store's journal starts empty
    finally:
        with contextlib.suppress(OSError):
            os.unlink(partial)


def open_database(path: str) -> sqlite3.Connection:
    """A connection to the journal at `path`, its schema brought up to date."""
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    db = sqlite3.connect(
        path,
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
        have = {row[1] for row in db.execute("PRAGMA table_info(entries)")}
        for column, declaration in _ADDED_COLUMNS:
            if column not in have:
                db.execute(f"ALTER TABLE entries ADD COLUMN {column} {declaration}")
        db.execute("COMMIT")
    except BaseException:
        db.close()
        raise
    return db


def is_complete(db: sqlite3.Connection) -> bool:
    return (
        db.execute("SELECT 1 FROM meta WHERE key = ?", (BASELINE_COMPLETE,)).fetchone() is not None
    )


def previous_version(db: sqlite3.Connection, name: str) -> str | None:
    """The version before the memory's latest entry (what a relabel must match)."""
    row = db.execute(
        "SELECT version_before FROM entries WHERE name = ? ORDER BY id DESC LIMIT 1", (name,)
    ).fetchone()
    return None if row is None or row[0] is None else str(row[0])
