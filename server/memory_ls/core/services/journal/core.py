"""A bounded journal of memory contents before each change a Store makes, for history and undo.

It lives in the user's cache (one SQLite file per store configuration, shared by the
CLI, the MCP server and the language server, which append at once), never in a memory
folder: it would be committed. Before-contents that hold a possible secret are not kept
where the store refuses secrets (the entry says they were withheld).

Changes made by other programs (an agent or a tool writing files, `git pull`, an editor
saving a file itself) are journaled by the long-lived servers that watch the folders
(`observe`, `sync_baseline`): the journal keeps each memory's bytes as last seen (the
`baseline` table), so that the content before such a change is at hand when it is seen.
A change the Store made updates the baseline as it is recorded, so its file event finds
nothing new; of two servers that see one change, the first records it.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
import zlib
from collections.abc import Iterator, Mapping, Sequence

from memory_ls.core.rules.secrets import find_secrets
from memory_ls.core.services.journal.entries import Entry
from memory_ls.core.services.journal.reading import JournalReader
from memory_ls.core.services.journal.schema import (
    BASELINE_COMPLETE,
    adopt_legacy_journal,
    is_complete,
    journal_path,
    previous_version,
)
from memory_ls.core.services.journal.seen import EXTERNAL_SOURCE, SEEN_SOURCES, Seen, seen_file
from memory_ls.core.storage.folders import StoreConfig
from memory_ls.core.storage.gate import version_of

# Entries kept per memory, and deflated before-contents kept in all; the oldest go first.
MAX_ENTRIES_PER_MEMORY = 50
MAX_TOTAL_BYTES = 32 * 1024 * 1024
# Entries in all (creations keep no bytes, yet each row costs some).
MAX_ENTRIES = 100_000
# A content larger than this is not kept (its entry says withheld): one file written from
# outside could otherwise fill the cache (the store refuses memories over maxMemoryBytes,
# 512 KiB by default, but another program writes what it likes).
MAX_KEPT_FILE_BYTES = 4 * 1024 * 1024
# A change seen within this long of the Store's own record of the same versions is that
# record (the other process saw the file before the writer recorded it), and a save the
# editor announces this long after a watcher saw it is the editor's.
RELABEL_SECONDS = 10.0


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
        # The connection and its lock, and the queries (reading and reviewing).
        self._reader = JournalReader(path)
        self._lock = self._reader.lock
        # Write transactions committed through this object (a relabel changes no count).
        self.writes = 0

    @classmethod
    def for_store(cls, config: StoreConfig) -> Journal:
        """The journal of a store configuration, withholding secrets where it refuses them."""
        adopt_legacy_journal(config)
        return cls(journal_path(config), withhold_secrets=config.secrets == "refuse")

    def _connect(self) -> sqlite3.Connection:
        return self._reader.connect()

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
            self.writes += 1

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
        withheld = before is not None and self._withholds(before)
        deflated = self._kept(before)
        v_before = None if before is None else version_of(before)
        v_after = None if after is None else version_of(after)
        kept = self._kept(after)
        with self._transaction() as db:
            # A watcher (another process's, say) saw the file before this writer recorded it.
            entry_id = self._relabel(db, name, v_before, v_after, source, action)
            if entry_id is None:
                self._fill_gap(db, name, path, v_before, v_after, before)
                entry_id = self._insert(
                    db,
                    action=action,
                    name=name,
                    path=path,
                    source=source,
                    deflated=deflated,
                    before_size=None if before is None else len(before),
                    withheld=withheld,
                    versions=(v_before, v_after),
                    after_size=None if after is None else len(after),
                    new_path=new_path,
                    new_name=new_name,
                )
            db.execute("DELETE FROM baseline WHERE path = ?", (path,))
            if after is not None:
                self._set_baseline(
                    db, new_path or path, new_name or name, _mtime_ns(new_path or path), after, kept
                )
        return entry_id

    def _fill_gap(
        self,
        db: sqlite3.Connection,
        name: str,
        path: str,
        v_before: str | None,
        v_after: str | None,
        before: bytes | None,
    ) -> None:
        """Journal a change made on disk since last seen (a pull no server watched) first."""
        # So each entry's content after is the next one's before (what a revert merges on).
        row = db.execute(
            "SELECT size, version, data FROM baseline WHERE path = ?", (path,)
        ).fetchone()
        # Also nothing when a watcher already saw this very write (the baseline is after).
        if row is None or str(row[1]) in (v_before, v_after):
            return
        self._insert(
            db,
            action="save" if before is not None else "delete",
            name=name,
            path=path,
            source=EXTERNAL_SOURCE,
            deflated=row[2],
            before_size=int(row[0]),
            withheld=row[2] is None,
            versions=(str(row[1]), v_before),
            after_size=None if before is None else len(before),
        )

    def _withholds(self, data: bytes) -> bool:
        """Whether a content is not kept: too large, or a possible secret (where refused)."""
        return len(data) > MAX_KEPT_FILE_BYTES or (self.withhold_secrets and _has_secret(data))

    def _kept(self, data: bytes | None) -> bytes | None:
        """What the baseline keeps of a content: deflated, or None (withheld)."""
        if data is None or self._withholds(data):
            return None
        return zlib.compress(data)

    def _insert(
        self,
        db: sqlite3.Connection,
        *,
        action: str,
        name: str,
        path: str,
        source: str,
        deflated: bytes | None,
        before_size: int | None,
        withheld: bool,
        versions: tuple[str | None, str | None],
        after_size: int | None,
        new_path: str | None = None,
        new_name: str | None = None,
    ) -> int:
        cursor = db.execute(
            "INSERT INTO entries (time, name, path, new_path, new_name, action, source,"
            " before, before_size, withheld, version_before, version_after, after_size)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                time.time(),
                name,
                path,
                new_path,
                new_name,
                action,
                source,
                deflated,
                before_size,
                int(withheld),
                versions[0],
                versions[1],
                after_size,
            ),
        )
        entry_id = int(cursor.lastrowid or 0)
        kept = 0 if deflated is None else len(deflated)
        db.execute("UPDATE totals SET bytes = bytes + ?", (kept,))
        self._trim(db, name)
        return entry_id

    @staticmethod
    def _relabel(
        db: sqlite3.Connection,
        name: str,
        v_before: str | None,
        v_after: str | None,
        source: str,
        action: str | None,
    ) -> int | None:
        """Give a recent entry seen on disk with these versions to the one who made it."""
        row = db.execute(
            "SELECT id, version_before, version_after, source, time FROM entries"
            " WHERE name = ? ORDER BY id DESC LIMIT 1",
            (name,),
        ).fetchone()
        if (
            row is None
            or row[3] not in SEEN_SOURCES
            or (row[1], row[2]) != (v_before, v_after)
            or time.time() - float(row[4]) > RELABEL_SECONDS
        ):
            return None
        if action is None:
            db.execute("UPDATE entries SET source = ? WHERE id = ?", (source, row[0]))
        else:
            db.execute(
                "UPDATE entries SET source = ?, action = ? WHERE id = ?", (source, action, row[0])
            )
        return int(row[0])

    @staticmethod
    def _set_baseline(
        db: sqlite3.Connection,
        path: str,
        name: str,
        mtime_ns: int,
        data: bytes,
        kept: bytes | None,
    ) -> None:
        db.execute(
            "INSERT OR REPLACE INTO baseline (path, name, mtime_ns, size, version, data)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (path, name, mtime_ns, len(data), version_of(data), kept),
        )

    # ----- changes seen on disk --------------------------------------------------------

    def observe(self, seen: Sequence[Seen], source: str = EXTERNAL_SOURCE) -> list[int]:
        """Journal the files as they are now against their bytes as last seen; the ids of
        the entries made (none for a file as last seen, or one seen for the first time
        before the baseline was complete). A `Seen` of its own source overrides `source`."""
        made: list[int] = []
        prepared = [(item, self._kept(item.data)) for item in seen]  # outside the lock
        with self._transaction() as db:
            complete = is_complete(db)
            for item, kept in prepared:
                entry_id = self._observe_one(db, item, kept, item.source or source, complete)
                if entry_id is not None:
                    made.append(entry_id)
        return made

    def _observe_one(
        self, db: sqlite3.Connection, item: Seen, kept: bytes | None, source: str, complete: bool
    ) -> int | None:
        row = db.execute(
            "SELECT name, size, version, data FROM baseline WHERE path = ?", (item.path,)
        ).fetchone()
        if item.data is None:
            if row is None:
                return None
            db.execute("DELETE FROM baseline WHERE path = ?", (item.path,))
            return self._insert(
                db,
                action="delete",
                name=str(row[0]),
                path=item.path,
                source=source,
                deflated=row[3],
                before_size=int(row[1]),
                withheld=row[3] is None,
                versions=(str(row[2]), None),
                after_size=None,
            )
        version = version_of(item.data)
        if row is not None and row[2] == version:
            db.execute(
                "UPDATE baseline SET mtime_ns = ? WHERE path = ?", (item.mtime_ns, item.path)
            )
            if source not in SEEN_SOURCES:  # the editor says the change a watcher saw is its
                self._relabel(db, item.name, previous_version(db, item.name), version, source, None)
            return None
        self._set_baseline(db, item.path, item.name, item.mtime_ns, item.data, kept)
        if row is None and not complete:
            return None  # never seen before: its earlier content is unknown
        return self._insert(
            db,
            action="save",
            name=item.name,
            path=item.path,
            source=source,
            deflated=None if row is None else row[3],
            before_size=None if row is None else int(row[1]),
            withheld=row is not None and row[3] is None,
            versions=(None if row is None else str(row[2]), version),
            after_size=len(item.data),
        )

    def sync_baseline(
        self, files: Mapping[str, tuple[str, int, int]], *, batch: int = 500
    ) -> list[int]:
        """Compare every memory (path: name, mtime_ns, size) with the baseline and journal
        what changed, appeared or went since it was last seen (while no server ran, say);
        the first sync only fills it. The ids of the entries made."""
        known = self.baseline_stamps()
        changed = [path for path, (_n, *stamp) in files.items() if known.get(path) != tuple(stamp)]
        gone = [path for path in known if path not in files]
        made: list[int] = []
        for start in range(0, len(changed), batch):
            seen = [
                item
                for path in changed[start : start + batch]
                if (item := seen_file(path, files[path][0])) is not None
            ]
            made += self.observe(seen)
        # A file still there is no memory any more (an ignore pattern now covers it): it
        # is forgotten, not journaled as deleted.
        still_there = [path for path in gone if os.path.lexists(path)]
        made += self.observe([Seen(path, "", None, 0) for path in gone if path not in still_there])
        with self._transaction() as db:
            db.executemany("DELETE FROM baseline WHERE path = ?", [(p,) for p in still_there])
            db.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES (?, '1')", (BASELINE_COMPLETE,)
            )
        return made

    # ----- reading and reviewing -------------------------------------------------------

    def baseline_stamps(self) -> dict[str, tuple[int, int]]:
        """The (mtime_ns, size) of every file in the baseline, by path."""
        return self._reader.baseline_stamps()

    def recent(self, limit: int = 50, before_id: int | None = None) -> list[Entry]:
        """The latest entries of every memory, newest first (older than `before_id`)."""
        return self._reader.recent(limit, before_id)

    def unreviewed(self) -> int:
        """How many entries nobody marked reviewed."""
        return self._reader.unreviewed()

    def latest_id(self) -> int:
        """The newest entry's id (0: none)."""
        return self._reader.latest_id()

    def after(self, entry: Entry) -> tuple[bytes | None, str]:
        """The content just after a change, and where it comes from: `journal` (the next
        change's before), `current` (the file now: no later change), or `withheld`."""
        return self._reader.after(entry)

    def history(self, name: str) -> list[Entry]:
        """The entries of a memory (by its name before, or after a move), newest first."""
        return self._reader.history(name)

    def entry(self, entry_id: int) -> Entry | None:
        """One entry by id (None when it was dropped or never was)."""
        return self._reader.entry(entry_id)

    def mark_reviewed(self, ids: Sequence[int] | None, reviewed: bool = True) -> int:
        """Mark entries reviewed (None: every entry); how many changed."""
        with self._transaction() as db:
            if ids is None:
                cursor = db.execute(
                    "UPDATE entries SET reviewed = ? WHERE reviewed != ?", (int(reviewed),) * 2
                )
            else:
                cursor = db.executemany(
                    "UPDATE entries SET reviewed = ? WHERE id = ? AND reviewed != ?",
                    [(int(reviewed), int(i), int(reviewed)) for i in ids],
                )
            return int(cursor.rowcount)

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

    def close(self) -> None:
        """Close the connection (a later use opens it again)."""
        self._reader.close()


def _has_secret(data: bytes) -> bool:
    """Whether a content holds something that looks like a credential."""
    return any(True for _hit in find_secrets(data.decode("utf-8", "replace")))


def _mtime_ns(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0  # unknown: the next sync reads the file again
