"""The index's SQLite database: opened (made again when stale or broken), its manifest kept."""

from __future__ import annotations

import contextlib
import logging
import marshal
import os
import threading
import zlib
from collections.abc import Sequence
from typing import Any

from memory_ls.core.services.search.schema import (
    _MANIFEST_SCHEMA,
    _SCHEMA,
    MANIFEST_FORMAT,
    IndexUnusable,
    Listing,
    Packed,
    _well_formed,
    fingerprint,
    fts5_available,
    search_index_path,
    sqlite3,
)
from memory_ls.core.storage.folders import StoreConfig

logger = logging.getLogger(__name__)

# How long a writer waits for another process's transaction before it gives up (the
# search is then answered by reading the files).
BUSY_TIMEOUT_SECONDS = 2.0


class Database:
    """The database of one store configuration's index, and the lock held around every use
    of it (thread-safe; shared by the index's parts)."""

    def __init__(self, config: StoreConfig, path: str | None = None) -> None:
        self.config = config
        self.path = path or search_index_path(config)
        self.lock = threading.RLock()
        self.db: Any = None
        self.broken = False
        # The `folder` of each file's row: its folder's position in the configuration.
        self.ranks = {folder.path: rank for rank, folder in enumerate(config.folders)}

    def connect(self) -> Any:
        """The open database, made or rebuilt first when missing or stale (lock held)."""
        if self.db is not None:
            return self.db
        if self.broken or not fts5_available():
            raise IndexUnusable("SQLite's FTS5 is not available")
        try:
            self.db = self._open()
        except (sqlite3.Error, OSError) as exc:
            # A corrupt file is made again; anything else (no cache directory) gives up.
            logger.info("search index %s unusable (%s); rebuilding it", self.path, exc)
            self._discard_file()
            try:
                self.db = self._open()
            except (sqlite3.Error, OSError) as again:
                self.broken = True
                raise IndexUnusable(str(again)) from again
        return self.db

    def _open(self) -> Any:
        os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
        db = sqlite3.connect(
            self.path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None, check_same_thread=False
        )
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
            wanted = fingerprint(self.config)
            if "meta" in tables:
                stored = dict(db.execute("SELECT key, value FROM meta").fetchall())
                if stored.get("fingerprint") == wanted:
                    if "manifest" not in tables:  # an index made before the manifest
                        db.execute("BEGIN IMMEDIATE")
                        for statement in _MANIFEST_SCHEMA:
                            db.execute(statement)
                        db.execute("COMMIT")
                    return db
            db.execute("BEGIN IMMEDIATE")
            for table in (
                "vocab",
                "fts",
                "successors",
                "dupkeys",
                "bodies",
                "files",
                "meta",
                "manifest",
                # Search by meaning's (core/services/meaning/vectors.py): by `files` row.
                "embedded",
                "vectors",
                "vector_meta",
            ):
                db.execute(f"DROP TABLE IF EXISTS {table}")
            for statement in (*_SCHEMA, *_MANIFEST_SCHEMA):
                db.execute(statement)
            db.execute("INSERT INTO meta VALUES ('fingerprint', ?)", (wanted,))
            db.execute("COMMIT")
            return db
        except BaseException:
            db.close()
            raise

    def _discard_file(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(OSError):
                os.unlink(self.path + suffix)

    def close(self) -> None:
        """Close the database."""
        with self.lock:
            if self.db is not None:
                self.db.close()
                self.db = None

    def manifest(self) -> Packed | None:
        """The packed listing of what `files` holds; None when there is none or it is not
        one this process can read (lock held)."""
        row = self.connect().execute("SELECT data FROM manifest WHERE id = 0").fetchone()
        if row is None or row[0] is None:
            return None
        try:
            value = marshal.loads(zlib.decompress(row[0]))
        except (EOFError, ValueError, TypeError, zlib.error):  # written by another Python, say
            return None
        if not (isinstance(value, tuple) and len(value) == 5 and value[0] == MANIFEST_FORMAT):
            return None
        packed: Packed = value[1:]
        return packed if _well_formed(packed) else None

    def data_version(self) -> tuple[int, int]:
        """What changes when anyone commits to the index: another connection (SQLite's
        data_version) or this one (its count of changed rows) (lock held)."""
        db = self.connect()
        return int(db.execute("PRAGMA data_version").fetchone()[0]), int(db.total_changes)

    def write_manifest(
        self,
        listing: Listing,
        matched_at: tuple[int, int],
        changed: tuple[Sequence[tuple[int, str]], set[tuple[int, str, int, int]]] | None,
    ) -> None:
        """Record that `files` holds what `listing` found, in one transaction (lock held).

        Cheaply when `files` held it at `matched_at` (a `data_version`) but for the files
        `changed` names, which this sync indexed since ((keys, the rows they should have
        now); None: too many to say), and nobody else wrote since; else only if all the
        rows say so. A file changed since the walk, or one that could not be read, is
        left for the next sync to see.
        """
        db = self.connect()
        db.execute("BEGIN IMMEDIATE")
        try:
            if self.data_version() == matched_at and changed is not None:
                keys, expected = changed
                now = set()
                for rank, name in keys:
                    row = db.execute(
                        "SELECT folder, name, mtime_ns, size FROM files WHERE name = ? AND "
                        "folder = ?",
                        (name, rank),
                    ).fetchone()
                    if row is not None:
                        now.add(tuple(row))
                matches = now == expected
            else:
                matches = listing.rows() == set(
                    db.execute("SELECT folder, name, mtime_ns, size FROM files")
                )
            if matches:
                # Compressed: the names repeat their folders and prefixes (4 MB -> 1.2 MB at
                # 100,000 memories, 11 ms to unpack; a third of the index's growth budget).
                value = zlib.compress(marshal.dumps((MANIFEST_FORMAT, *listing.packed())), 1)
                db.execute("INSERT OR REPLACE INTO manifest VALUES (0, ?)", (value,))
            db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            raise

    def built(self) -> bool:
        """Whether the index holds any file (some process indexed this store before)."""
        try:
            return self.connect().execute("SELECT 1 FROM files LIMIT 1").fetchone() is not None
        except (IndexUnusable, sqlite3.Error):
            return False
