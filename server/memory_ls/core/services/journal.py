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
import hashlib
import os
import pickle
import sqlite3
import stat
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from memory_ls.core.rules.secrets import find_secrets
from memory_ls.core.storage.folders import StoreConfig
from memory_ls.core.storage.fsio import user_cache_dir
from memory_ls.core.storage.gate import version_of
from memory_ls.core.storage.git import work_tree_top
from memory_ls.core.storage.memory import scan_config

# Entries kept per memory, and deflated before-contents kept in all; the oldest go first.
MAX_ENTRIES_PER_MEMORY = 50
MAX_TOTAL_BYTES = 32 * 1024 * 1024
# Entries in all (creations keep no bytes, yet each row costs some).
MAX_ENTRIES = 100_000
# A content larger than this is not kept (its entry says withheld): one file written from
# outside could otherwise fill the cache (the store refuses memories over maxMemoryBytes,
# 512 KiB by default, but another program writes what it likes).
MAX_KEPT_FILE_BYTES = 4 * 1024 * 1024
BUSY_TIMEOUT_SECONDS = 30.0
SCHEMA_VERSION = 1
# A change seen within this long of the Store's own record of the same versions is that
# record (the other process saw the file before the writer recorded it), and a save the
# editor announces this long after a watcher saw it is the editor's.
RELABEL_SECONDS = 10.0
# A change to a file this close in time to a move of the repository's HEAD (its reflog,
# ORIG_HEAD) is taken for git's (checkout, pull, merge, reset, rebase).
GIT_WINDOW_NS = 2_000_000_000
# Who made a change seen on disk (no Store of ours made it).
# The catch-up with the disk (`sync_baseline_elsewhere`) runs at this niceness (POSIX).
BASELINE_NICENESS = 10
# What the catch-up's process runs: this process's import path first (an editor's bundled
# libraries), then the job.
BASELINE_CODE = (
    "import pickle, sys; sys.path[:0] = pickle.load(sys.stdin.buffer); "
    "from memory_ls.core.services.journal import baseline_main; baseline_main()"
)
EXTERNAL_SOURCE = "external"
GIT_SOURCE = "git"
EDITOR_SAVE_SOURCE = "editor"
# Observed sources a later, better-informed record may rename.
_SEEN_SOURCES = (EXTERNAL_SOURCE, GIT_SOURCE)

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
_BASELINE_COMPLETE = "baseline-complete"


@dataclass(frozen=True)
class Entry:
    """One change: the memory's content before it (None: the file did not exist)."""

    id: int
    time: float
    name: str  # qualified name of the memory before the change
    path: str  # where the file was before the change
    action: str  # save, edit, delete, move, revert
    source: str  # who made it: cli, mcp:<client>, editor, core, external, git
    before_size: int | None  # bytes before; None when there was no file
    withheld: bool  # the before-content was not kept (a possible secret, or too large)
    version_before: str | None
    version_after: str | None
    new_path: str | None = None  # a move: where the file went
    new_name: str | None = None  # a move: the memory's new qualified name
    deflated: bytes | None = None
    reviewed: bool = False
    after_size: int | None = None  # bytes after; None when there is no file after

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
            "sizeAfter": self.after_size,
            "reviewed": self.reviewed,
        }
        if self.new_path is not None:
            shown["newPath"] = self.new_path
            shown["newName"] = self.new_name
        return shown


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
        # Write transactions committed through this object (a relabel changes no count).
        self.writes = 0

    @classmethod
    def for_store(cls, config: StoreConfig) -> Journal:
        """The journal of a store configuration, withholding secrets where it refuses them."""
        adopt_legacy_journal(config)
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
                have = {row[1] for row in db.execute("PRAGMA table_info(entries)")}
                for column, declaration in _ADDED_COLUMNS:
                    if column not in have:
                        db.execute(f"ALTER TABLE entries ADD COLUMN {column} {declaration}")
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
            or row[3] not in _SEEN_SOURCES
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
            complete = _is_complete(db)
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
            if source not in _SEEN_SOURCES:  # the editor says the change a watcher saw is its
                self._relabel(
                    db, item.name, _previous_version(db, item.name), version, source, None
                )
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

    def baseline_stamps(self) -> dict[str, tuple[int, int]]:
        """The (mtime_ns, size) of every file in the baseline, by path."""
        with self._lock:
            rows = self._connect().execute("SELECT path, mtime_ns, size FROM baseline")
            return {str(path): (int(mtime), int(size)) for path, mtime, size in rows}

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
                "INSERT OR IGNORE INTO meta (key, value) VALUES (?, '1')", (_BASELINE_COMPLETE,)
            )
        return made

    # ----- reading and reviewing -------------------------------------------------------

    def recent(self, limit: int = 50, before_id: int | None = None) -> list[Entry]:
        """The latest entries of every memory, newest first (older than `before_id`)."""
        with self._lock:
            rows = self._connect().execute(
                f"SELECT {_COLUMNS} FROM entries WHERE id < ? ORDER BY id DESC LIMIT ?",
                (before_id if before_id is not None else 2**62, limit),
            )
            return [_entry(row) for row in rows]

    def unreviewed(self) -> int:
        """How many entries nobody marked reviewed."""
        with self._lock:
            return int(
                self._connect()
                .execute("SELECT COUNT(*) FROM entries WHERE NOT reviewed")
                .fetchone()[0]
            )

    def latest_id(self) -> int:
        """The newest entry's id (0: none)."""
        with self._lock:
            row = self._connect().execute("SELECT MAX(id) FROM entries").fetchone()
        return int(row[0] or 0)

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

    def after(self, entry: Entry) -> tuple[bytes | None, str]:
        """The content just after a change, and where it comes from: `journal` (the next
        change's before), `current` (the file now: no later change), or `withheld`."""
        name = entry.new_name or entry.name
        path = entry.new_path or entry.path
        with self._lock:
            row = (
                self._connect()
                .execute(
                    f"SELECT {_COLUMNS} FROM entries WHERE id > ? AND (name = ? OR path = ?)"
                    " ORDER BY id LIMIT 1",
                    (entry.id, name, path),
                )
                .fetchone()
            )
        if row is not None:
            following = _entry(row)
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
    " version_after, new_path, new_name, before, reviewed, after_size"
)


def _entry(row: tuple[object, ...]) -> Entry:
    (entry_id, at, name, path, action, source, size, withheld, v_before, v_after) = row[:10]
    new_path, new_name, deflated, reviewed, after_size = row[10:]
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
        reviewed=bool(reviewed),
        after_size=None if after_size is None else int(str(after_size)),
    )


def _has_secret(data: bytes) -> bool:
    """Whether a content holds something that looks like a credential."""
    return any(True for _hit in find_secrets(data.decode("utf-8", "replace")))


@dataclass(frozen=True)
class Seen:
    """A memory file as seen on disk now (data None: it is gone)."""

    path: str
    name: str  # qualified
    data: bytes | None
    mtime_ns: int
    source: str | None = None  # who changed it, when known (else the observer's default)


def seen_file(path: str, name: str, source: str | None = None) -> Seen | None:
    """A memory file as it is now (gone: data None); None when it cannot be read."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            return Seen(path, name, None, 0, source)
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return Seen(path, name, None, 0, source)
    except OSError:
        return None
    return Seen(path, name, data, info.st_mtime_ns, source)


def observe_paths(
    journal: Journal,
    config: StoreConfig,
    paths: Iterable[str],
    source_of: Callable[[str, int], str] | None = None,
) -> list[int]:
    """Journal the memory files among `paths` as they are now (changed, created or gone);
    `source_of(path, mtime_ns)` says who changed one (default: `seen_source`)."""
    seen: list[Seen] = []
    for path in paths:
        name = config.qualified_name_of(path)
        if name is None:
            continue
        item = seen_file(path, name)
        if item is not None:
            source = (source_of or seen_source)(path, item.mtime_ns)
            seen.append(Seen(item.path, name, item.data, item.mtime_ns, source))
    return journal.observe(seen) if seen else []


def seen_source(path: str, mtime_ns: int | None = None) -> str:
    """`git` when a file changed with a move of its repository's HEAD (checkout, pull,
    merge, reset, rebase: HEAD's reflog or ORIG_HEAD written within GIT_WINDOW_NS of the
    file), else `external`. `git status` and fetches touch neither."""
    git_dir = _git_dir(os.path.dirname(path))
    if git_dir is None:
        return EXTERNAL_SOURCE
    when = mtime_ns if mtime_ns else time.time_ns()
    for marker in ("logs/HEAD", "ORIG_HEAD", "HEAD"):
        try:
            moved = os.stat(os.path.join(git_dir, marker)).st_mtime_ns
        except OSError:
            continue
        if abs(moved - when) <= GIT_WINDOW_NS:
            return GIT_SOURCE
    return EXTERNAL_SOURCE


def _git_dir(directory: str) -> str | None:
    """The git directory of the repository holding `directory` (None: no repository)."""
    current = os.path.abspath(directory)
    while True:
        candidate = os.path.join(current, ".git")
        if os.path.isdir(candidate):
            return candidate
        if os.path.isfile(candidate):  # a linked worktree or submodule: `gitdir: PATH`
            try:
                with open(candidate, encoding="utf-8") as handle:
                    line = handle.readline().strip()
            except OSError:
                return None
            if line.startswith("gitdir:"):
                return os.path.join(current, line[len("gitdir:") :].strip())
            return None
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _mtime_ns(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0  # unknown: the next sync reads the file again


def _is_complete(db: sqlite3.Connection) -> bool:
    return (
        db.execute("SELECT 1 FROM meta WHERE key = ?", (_BASELINE_COMPLETE,)).fetchone() is not None
    )


def _previous_version(db: sqlite3.Connection, name: str) -> str | None:
    """The version before the memory's latest entry (what a relabel must match)."""
    row = db.execute(
        "SELECT version_before FROM entries WHERE name = ? ORDER BY id DESC LIMIT 1", (name,)
    ).fetchone()
    return None if row is None or row[0] is None else str(row[0])


def sync_baseline_elsewhere(config: StoreConfig) -> int:
    """`Journal.sync_baseline` of every memory of the store, in a process of its own at
    low priority: the first catch-up reads and compresses every memory (4.5 s of CPU at
    100,000 memories), which a server's searches and keystrokes should neither wait for
    nor share a GIL with, and the list of files (tens of MB) is made there too. How many
    entries it made; done here when no process can be started."""
    try:
        process = subprocess.Popen(
            [sys.executable, "-c", BASELINE_CODE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            close_fds=True,
        )
    except OSError:
        return _sync_baseline(config)
    out, err = process.communicate(pickle.dumps(sys.path) + pickle.dumps(config))
    if process.returncode != 0:
        raise RuntimeError(
            f"the change journal's catch-up stopped ({process.returncode}): "
            + err.decode("utf-8", errors="replace").strip()[-2000:]
        )
    return int(out.strip() or 0)


def baseline_main() -> None:
    """The catch-up process (`sync_baseline_elsewhere`): the store's configuration on
    stdin, the count of entries made on stdout."""
    config = pickle.load(sys.stdin.buffer)
    if hasattr(os, "nice"):  # background work: the server and the user go first
        os.nice(BASELINE_NICENESS)
    sys.stdout.write(str(_sync_baseline(config)))


def _sync_baseline(config: StoreConfig) -> int:
    files: dict[str, tuple[str, int, int]] = {}
    for memory in scan_config(config):
        try:
            info = os.stat(memory.path)
        except OSError:
            continue  # gone since: the next catch-up sees it gone
        files[memory.path] = (memory.qualified, info.st_mtime_ns, info.st_size)
    journal = Journal.for_store(config)
    try:
        return len(journal.sync_baseline(files))
    finally:
        journal.close()
