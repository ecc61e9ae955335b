"""Full-text search (SPEC 2.6): an SQLite FTS5 index on disk (the query language and the
ranking are core/services/relevance.py's).

The index holds each memory's words as written (relevance mode looks a word up under
every indexed word of its stem, found in FTS5's vocabulary), its name and first heading
in a column of their own (weighed above the body), and which memories it supersedes.

The index is one SQLite database per store configuration in the user's cache directory,
shared by the CLI, the MCP server and the language server (WAL, busy timeout). It never
answers for the disk: the language server keeps it current from its file events and
checks the stamps of what it returns; the CLI and the MCP server compare the size and
modification time of every file with the index before each search. Whatever goes wrong
with it (no FTS5 in this Python's SQLite, a corrupt, locked or unwritable cache), the
caller gets None and searches by reading every memory, with the same query semantics.
"""

from __future__ import annotations

import array
import contextlib
import functools
import hashlib
import json
import logging
import marshal
import os
import pickle
import re
import stat
import struct
import subprocess
import sys
import threading
import time
import unicodedata
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from memory_ls.core.rules.document import Document, parse_document
from memory_ls.core.rules.errors import MemoryStoreError
from memory_ls.core.rules.names import GLOBAL_PREFIX, is_valid_name
from memory_ls.core.rules.similarity import SHINGLE_KEY, SKETCH_MATCHES, bucket_limit, words
from memory_ls.core.rules.similarity import keys as duplicate_keys
from memory_ls.core.rules.stemming import stem
from memory_ls.core.rules.supersede import KEY_WORD as SUPERSEDE_WORD
from memory_ls.core.rules.supersede import SUPERSEDED_BY_KEY, SUPERSEDES_KEY, relations
from memory_ls.core.services.backlinks import SERENA_MARK
from memory_ls.core.services.index import facts_of_text
from memory_ls.core.services.relevance import (
    NAME_WEIGHT,
    SEARCH_MODES,
    Found,
    Hit,
    Part,
    Query,
    describe,
    enough,
    order_by_supersession,
    parse_query,
    score_of,
    title_text,
    tokens,
)
from memory_ls.core.storage.folders import Folder, StoreConfig
from memory_ls.core.storage.fsio import is_temp_file, read_text, user_cache_dir
from memory_ls.core.storage.memory import MemoryFile

__all__ = ["SEARCH_MODES", "Part", "Query", "SearchIndex", "parse_query"]

try:
    import sqlite3
except ImportError:  # a Python built without it: search reads the files
    sqlite3 = None  # type: ignore[assignment]

logger = logging.getLogger(__name__)

# 2: files.hidden_refs, for renames; 3: dupkeys, for near-duplicates; 4: hidden_refs also
# marks frontmatter that may declare supersede relations; 5: the first heading as its own
# column, supersedes and superseded_by, the vocabulary of stems; 6: dupkeys in one
# b-tree, bodies as raw deflate (an index of another version is another file).
SCHEMA_VERSION = 6
# A hint (a read's "superseded by") builds a missing index for at most this many memories
# (about a second here); a bigger store waits for a search, a rename or the editor to.
HINT_BUILD_LIMIT = 2000
# The rules of core/rules/similarity.py's keys: change with them (an index of others is another).
DUPLICATE_KEYS_VERSION = 1
# Near-duplicate keys are kept as their low 31 bits (the key's kind is in its low 2 bits).
DUPKEY_MASK = 0x7FFFFFFF
# unicode61 splits on everything but letters and digits; remove_diacritics 2 folds
# accents (the query side is folded the same way by `fold`).
TOKENIZER = "unicode61 remove_diacritics 2"
# How long a writer waits for another process's transaction before it gives up (the
# search is then answered by reading the files).
BUSY_TIMEOUT_SECONDS = 2.0
# Files are (re)indexed this many to a transaction: other processes wait at most that long.
BATCH_FILES = 500
# Listings and search never read files this many times over maxMemoryBytes (their names
# are still searched); the same bound as the store's listings.
READ_LIMIT_FACTOR = 4
# From this many files on, a walk stats them in two processes (see stat_files).
PARALLEL_STAT_FILES = 20_000
# What `stat_files` gives as the size of a folder (of anything else but a file: -1).
FOLDER_SIZE = -2
# While the first indexing runs in this process, searches get the interpreter for up to
# this share of the time (the indexing waits for them between batches; see `Turns`).
SEARCH_SHARE = 0.5
# The share of work that does not make the index (the facts of files a worker did not
# read, the workspace check): a search reading files waits a switch interval for the GIL
# after each read while such work runs, so it is let run only when searches had this.
BACKGROUND_SEARCH_SHARE = 0.9
# An indexing waits for searches this many seconds in all even before they are owed
# that by their share: the first search, sent as the server starts (an agent's first
# question), has the interpreter to itself rather than a share of an indexing just begun.
SEARCH_HEAD_START = 2.0
# A search waits this long at most for an announced first sync to begin (the names are
# listed first: a second or two at 100,000 memories).
FIRST_SYNC_WAIT = 10.0
# What searches keep of the files a first indexing has not reached (`read_unindexed`):
# most of 100,000 memories of a few hundred bytes (a bound on the server's memory).
UNREAD_CACHE_BYTES = 32 * 2**20
# What the first read of a memory file asks for: most are smaller, read in one call.
FIRST_READ = 1 << 16
# The indexing workers' niceness (POSIX): the server's searches and answers, and whatever
# else the user runs, get the cores first (a first search at 100,000 memories: half the time).
WORKER_NICENESS = 10
# A first indexing of this many files or more runs in a worker process (`_index_in_workers`).
WORKER_FILES = 2_000
# At most this many worker processes (one a core): they share the database's write lock
# only for their inserts.
MAX_WORKERS = 2
# How long a worker waits for the database's write lock (the other's inserts, a busy
# machine) before it gives up (the server indexes what it left).
WORKER_BUSY_SECONDS = 60.0
# What the worker runs: this process's import path first (an editor's bundled libraries).
WORKER_CODE = (
    "import pickle, sys; sys.path[:0] = pickle.load(sys.stdin.buffer); "
    "from memory_ls.core.services.fulltext import worker_main; worker_main()"
)
# A search re-reads stale memories it was about to return and asks again, this often.
STALE_RETRIES = 3
# A relevance search looks a word's stem up under at most this many indexed words (the
# most frequent), and an OR of them is answered in one pass.
MAX_VARIANTS = 24
# Arrays are packed in this machine's byte order: a manifest from another never matches.
MANIFEST_FORMAT = f"listing-2-{sys.byteorder}"
# Link keys whose words both tokenizers cut alike (ASCII letters and digits, split by
# what names may hold besides): the only ones the index looks up by their words.
_PLAIN_KEY = re.compile(r"[A-Za-z0-9_. /-]*")

_SCHEMA = (
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # One row per indexed file: `folder` is its folder's position in the configuration,
    # `name` its name in that folder as on disk; `tags` are newline-delimited;
    # `hidden_refs` is 1 when the file may hold a reference outside its indexed body
    # (`mem:`, `[[` or a supersede relation in its frontmatter, or a body too large to
    # index).
    "CREATE TABLE files(id INTEGER PRIMARY KEY, folder INTEGER NOT NULL, name TEXT NOT NULL, "
    "mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL, valid INTEGER NOT NULL, "
    "tags TEXT NOT NULL, body_line INTEGER NOT NULL, hidden_refs INTEGER NOT NULL, "
    "superseded_by TEXT NOT NULL, UNIQUE(name, folder))",
    "CREATE INDEX files_hidden_refs ON files(id) WHERE hidden_refs",
    # The indexed body, compressed: FTS5 needs the old text to drop a row from a
    # contentless table (SQLite before 3.43), and the lines of a hit come from it.
    "CREATE TABLE bodies(id INTEGER PRIMARY KEY, data BLOB NOT NULL)",
    # `title`: the first heading, unless it only repeats the name (`relevance.title_text`).
    f"CREATE VIRTUAL TABLE fts USING fts5(name, title, body, content='', tokenize='{TOKENIZER}')",
    # The indexed words with the number of memories holding each: a stem's words are
    # found here.
    "CREATE VIRTUAL TABLE vocab USING fts5vocab(fts, 'row')",
    # `supersedes: OLDER` in a memory's frontmatter (qualified names, core/rules/supersede.py);
    # `superseded_by` is in `files` (newline-delimited).
    "CREATE TABLE successors(older TEXT NOT NULL, newer INTEGER NOT NULL)",
    "CREATE INDEX successors_older ON successors(older)",
    "CREATE INDEX successors_newer ON successors(newer)",
    # Each file's near-duplicate keys (core/rules/similarity.py, cut to DUPKEY_BITS): who may
    # nearly duplicate whom. One b-tree: a file's keys are dropped by computing them again
    # from its indexed body (a second index by id cost 30% of the table).
    "CREATE TABLE dupkeys(key INTEGER NOT NULL, id INTEGER NOT NULL, PRIMARY KEY(key, id))"
    " WITHOUT ROWID",
)
# What `files` holds, in one value: the `Listing` of the walk that found the files as
# indexed (marshal of MANIFEST_FORMAT and `Listing.packed`, deflated). A new process whose walk
# packs the same knows that nothing changed without a single object per file. Any change
# to `files` removes it (the triggers); the next sync that finds it missing writes it.
_MANIFEST_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS manifest(id INTEGER PRIMARY KEY CHECK (id = 0), data BLOB)",
    *(
        f"CREATE TRIGGER IF NOT EXISTS files_{event.lower()} AFTER {event} ON files "
        "BEGIN DELETE FROM manifest; END"
        for event in ("INSERT", "DELETE", "UPDATE")
    ),
)


# ----- which files are memories -----------------------------------------------------------


def _memory_stamp(folder: Folder, name: str, path: str) -> tuple[int, int] | None:
    """The stamp of the file of `folder` named `name` if it is a memory now (by the
    directory scan's rules: no temporary file, no ignored name, a file), else None."""
    if is_temp_file(os.path.basename(path)):
        return None
    if folder.patterns.ignored and folder.patterns.is_ignored(folder.qualified(name)):
        return None
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size) if stat.S_ISREG(info.st_mode) else None


def fingerprint(config: StoreConfig) -> str:
    """What decides which files are memories and what is read of them."""
    return json.dumps(
        {
            "schema": SCHEMA_VERSION,
            "tokenizer": TOKENIZER,
            "folders": [[f.path, f.kind] for f in config.folders],
            "ignored": [p.pattern for p in config.patterns.ignored],
            "maxMemoryBytes": config.max_memory_bytes,
            # Near-duplicate keys are dropped by computing them again: every process that
            # shares the file must compute them alike (Unicode data, the key rules).
            "unicode": unicodedata.unidata_version,
            "duplicateKeys": DUPLICATE_KEYS_VERSION,
        },
        sort_keys=True,
    )


def search_index_path(config: StoreConfig) -> str:
    """Where the search index of this store configuration lives."""
    key = hashlib.sha256(fingerprint(config).encode("utf-8", "surrogateescape")).hexdigest()
    return str(user_cache_dir() / "index" / f"{key[:32]}.search.sqlite3")


@functools.cache
def fts5_available() -> bool:
    """Whether this Python's SQLite has FTS5 compiled in."""
    if sqlite3 is None:
        return False
    try:
        with contextlib.closing(sqlite3.connect(":memory:")) as probe:
            probe.execute("CREATE VIRTUAL TABLE probe USING fts5(x)")
    except sqlite3.Error:
        return False
    return True


# A listing as the manifest keeps it: ranks, names joined by NUL (no file name holds
# one), mtimes and sizes, the numbers as packed arrays.
Packed = tuple[bytes, str, bytes, bytes]


@dataclass(frozen=True)
class Listing:
    """The memory files a walk found, in the walk's order, with their stamps."""

    ranks: array.array[int]  # the position of each file's folder in the configuration
    names: list[str]  # each file's name in its folder
    mtimes: array.array[int]
    sizes: array.array[int]  # negative: no file when stated (gone, a folder: FOLDER_SIZE)

    def rows(self) -> set[tuple[int, str, int, int]]:
        """(folder, name, mtime, size) of each file, as the index's `files` has them."""
        return {
            (rank, name, mtime, size)
            for rank, name, mtime, size in zip(
                self.ranks, self.names, self.mtimes, self.sizes, strict=True
            )
            if size >= 0
        }

    def packed(self) -> Packed:
        """The listing in a few values that compare in C (the same files in the same
        order with the same stamps pack the same)."""
        joined = "\0".join(self.names)
        return self.ranks.tobytes(), joined, self.mtimes.tobytes(), self.sizes.tobytes()

    @staticmethod
    def unpacked(packed: Packed) -> Listing:
        """The listing `packed` was made of (one that `_well_formed` accepts)."""
        ranks, mtimes, sizes = array.array("i"), array.array("q"), array.array("q")
        ranks.frombytes(packed[0])
        mtimes.frombytes(packed[2])
        sizes.frombytes(packed[3])
        # Counted by the ranks: no file and one named "" (a file `.md`) join the same.
        names = packed[1].split("\0") if ranks else []
        return Listing(ranks, names, mtimes, sizes)


def _well_formed(packed: tuple[object, ...]) -> bool:
    """Whether a packed listing has a rank, a name, an mtime and a size for each file."""
    ranks, joined, mtimes, sizes = packed
    if not (isinstance(ranks, bytes) and isinstance(joined, str)):
        return False
    if not (isinstance(mtimes, bytes) and isinstance(sizes, bytes)):
        return False
    width = array.array("i").itemsize
    count = len(ranks) // width
    if count == 0:
        return not (joined or mtimes or sizes)
    named = joined.count("\0") + 1
    return len(ranks) == width * named and len(mtimes) == len(sizes) == 8 * named


class IndexUnusable(Exception):
    """The index cannot answer now (missing FTS5, a broken, locked or unwritable cache)."""


class SearchIndex:
    """The full-text index of one store configuration (thread-safe; one per process)."""

    def __init__(self, config: StoreConfig, path: str | None = None, *, live: bool) -> None:
        self.config = config
        self.path = path or search_index_path(config)
        # Live: the caller reports every change (`apply`); else each search checks the disk.
        self.live = live
        self._lock = threading.RLock()
        self._db: Any = None
        self._ranks = {folder.path: rank for rank, folder in enumerate(config.folders)}
        # Live mode: complete once `sync` has run; paths whose update failed, to retry.
        self._complete = False
        self._big: bool | None = None  # more memories than a hint builds an index for
        self._failed: set[str] = set()
        self._broken = False
        # Live mode, while the first sync runs: the files it has not indexed yet (by key),
        # which a search reads itself (`search_partial`).
        self._unsynced: dict[tuple[int, str], str] | None = None
        # The tags `tags_in` gave last, with what they were of (scope, index version).
        self._tags_kept: tuple[tuple[object, ...], tuple[str, ...]] | None = None
        # Searches under way, which the first indexing lets run (`Turns`).
        self.turns = Turns()
        # The bytes of files not indexed yet, as searches read them (`read_unindexed`).
        self._unread: dict[str, bytes] = {}
        self._unread_bytes = 0
        self._unread_lock = threading.Lock()
        # In the indexing worker: each file read, for its facts (`worker_main`).
        self._seen: list[tuple[str, tuple[int, int], str, Document]] | None = None
        # Set once a first sync the owner announced (`expect_sync`) has begun or ended.
        self._sync_begun: threading.Event | None = None
        # Set when a sync ended (done or not): work that should not share the first
        # indexing's time waits for it (`wait_synced`).
        self._sync_ended = threading.Event()

    # ----- the database ------------------------------------------------------------------

    def _connect(self) -> Any:
        """The open database, made or rebuilt first when missing or stale (lock held)."""
        if self._db is not None:
            return self._db
        if self._broken or not fts5_available():
            raise IndexUnusable("SQLite's FTS5 is not available")
        try:
            self._db = self._open()
        except (sqlite3.Error, OSError) as exc:
            # A corrupt file is made again; anything else (no cache directory) gives up.
            logger.info("search index %s unusable (%s); rebuilding it", self.path, exc)
            self._discard_file()
            try:
                self._db = self._open()
            except (sqlite3.Error, OSError) as again:
                self._broken = True
                raise IndexUnusable(str(again)) from again
        return self._db

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
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    def _key(self, path: str) -> tuple[int, str] | None:
        owned = self.config.name_of(path)
        if owned is None:
            return None
        folder, name = owned
        return self._ranks[folder.path], name

    # ----- keeping it current -------------------------------------------------------------

    def sync(
        self,
        memories: Iterable[MemoryFile] | None = None,
        stamps: Mapping[str, tuple[int, int]] | None = None,
        report: Callable[[int, int], None] | None = None,
        learnt: Callable[[list[Any]], None] | None = None,
        *,
        walked: Listing | None = None,
    ) -> bool:
        """Bring the index in line with the memory files on disk now: `memories` when the
        caller has their list (with the (mtime, size) it knows by path in `stamps`), else
        a walk of the folders. `report(done, total)`: files (re)indexed so far; `learnt`:
        given the facts of the files a worker process read (`MemoryIndex.learn_facts`).

        Live and not complete yet (a language server's first indexing), many files are
        indexed by a worker process (`_index_in_workers`) while searches read what it has
        not reached (`search_partial`).

        Returns whether it now matches (False: it could not be written; searches read
        the files instead until it does).
        """
        # `walked`: the caller's own `walk` just now (the MCP server lists the folders once).
        listing = (walked if walked is not None else self.walk()) if memories is None else None
        synced = False
        found_at: dict[tuple[int, str], str] = {}  # where the files to index are, when known
        try:
            with self._lock:
                # Changes by other processes from here on show in `data_version`.
                version = self._data_version()
                manifest = self._manifest()
                if listing is not None and manifest == listing.packed():
                    self._complete = True  # nothing changed since the manifest was written
                    return True
                if manifest is not None:
                    indexed = Listing.unpacked(manifest).rows()
                else:
                    indexed = set(
                        self._connect().execute("SELECT folder, name, mtime_ns, size FROM files")
                    )
            if listing is not None:
                on_disk = listing.rows()
            elif not indexed:
                # Nothing indexed: every file is to be, and no stamp is worth taking here
                # (100,000 stats that a first search would wait for); files gone since
                # are left out when indexed.
                on_disk = set()
                # In the order they are indexed in: what searches read is this itself.
                found_at = dict(
                    sorted(
                        {
                            (self._ranks[memory.folder.path], memory.name): memory.path
                            for memory in memories or ()
                        }.items()
                    )
                )
                differing = list(found_at)
            else:
                on_disk = set()
                known = stamps or {}
                for memory in memories or ():
                    stamp = known.get(memory.path) or _stamp(memory.path)
                    if stamp is not None:
                        on_disk.add((self._ranks[memory.folder.path], memory.name, *stamp))
            if listing is not None or indexed:
                # Sets compared in C: a store of 100,000 memories is checked in milliseconds.
                differing = sorted({(rank, name) for rank, name, _m, _s in on_disk ^ indexed})
            # The rows the differing files should have once indexed (a few, mostly).
            expected = on_disk - indexed if len(differing) <= BATCH_FILES else None
            # Gone before the long part: at 100,000 memories these are tens of MB, which,
            # freed only at the end, a server running meanwhile never gets back.
            del indexed, on_disk
            folders = self.config.folders
            own_changes = 0  # rows this sync changed, to tell its writes from others'
            unsynced = None
            remaining = differing
            if self.live and not self._complete:
                # What searches read themselves until it is indexed (`search_partial`).
                unsynced = (
                    found_at
                    if len(found_at) == len(differing)
                    else {
                        key: found_at.get(key) or folders[key[0]].file_for(key[1])
                        for key in differing
                    }
                )
                del found_at  # 100,000 entries, not kept for the rest of the indexing
                with self._lock:
                    self._unsynced = unsynced
                    if self._sync_begun is not None:
                        self._sync_begun.set()
                if len(differing) >= WORKER_FILES:
                    remaining = self._index_in_workers(differing, unsynced, report, learnt)
            pause = self.turns.pauser()
            # Batch by batch, the lock let go in between: file events and searches (which
            # read what is not indexed yet meanwhile) do not wait for a whole first indexing.
            for start in range(0, len(remaining), BATCH_FILES):
                batch = remaining[start : start + BATCH_FILES]
                if unsynced is not None:
                    pause()
                with self._lock:
                    before = self._connect().total_changes
                    self._apply_now([(key, folders[key[0]].file_for(key[1])) for key in batch])
                    own_changes += self._connect().total_changes - before
                    if unsynced is not None:
                        self._indexed_now(unsynced, batch)
                if report is not None:
                    report(len(differing) - len(remaining) + start + len(batch), len(differing))
            # For new processes (the CLI, MCP), from their walk. Not from a live index: the
            # editor's next change removes it again.
            if listing is not None:
                with self._lock:
                    changed = None if expected is None else (differing, expected)
                    self._write_manifest(listing, (version[0], version[1] + own_changes), changed)
            synced = True
        except IndexUnusable:
            return False
        except sqlite3.Error as exc:
            logger.info("search index not brought up to date: %s", exc)
            return False
        finally:
            with self._lock:
                # At once: a search in between would find neither (and read every file).
                self._complete = self._complete or synced
                self._unsynced = None
                if self._sync_begun is not None:
                    self._sync_begun.set()
                self._sync_ended.set()
            with self._unread_lock:
                self._unread.clear()
                self._unread_bytes = 0
        return True

    def wait_synced(self, timeout: float) -> bool:
        """Wait until a sync of the index has ended (at most `timeout` seconds): whether
        one has."""
        return self._sync_ended.wait(timeout)

    def _indexed_now(
        self, unsynced: dict[tuple[int, str], str], keys: Iterable[tuple[int, str]]
    ) -> None:
        """These files are indexed: searches no longer read them (lock held)."""
        paths = [path for key in keys if (path := unsynced.pop(key, None)) is not None]
        self._forget_unread(paths)

    def _forget_unread(self, paths: Iterable[str]) -> None:
        with self._unread_lock:
            for path in paths:
                data = self._unread.pop(path, None)
                if data is not None:
                    self._unread_bytes -= len(data)

    def read_unindexed(self, path: str) -> bytes | None:
        """A memory file the first indexing has not reached, as a search reads it: b""
        when far too large to read (found by its name only), None when unreadable. Kept
        for the next search until it is indexed (UNREAD_CACHE_BYTES in all): searches
        back to back do not read the store again each time."""
        return self.read_unindexed_many([path])[0]

    def read_unindexed_many(self, paths: Sequence[str]) -> list[bytes | None]:
        """`read_unindexed` of each path, the cache's lock taken once for them all."""
        cached = self._unread
        limit = READ_LIMIT_FACTOR * self.config.max_memory_bytes
        found: list[bytes | None] = [cached.get(path) for path in paths]
        unread = [number for number, data in enumerate(found) if data is None]
        fresh: list[tuple[str, bytes]] = []
        # Many at once (a search while the first indexing runs): half in the file helper.
        read = read_files([paths[number] for number in unread], limit)
        for number, data in zip(unread, read, strict=True):
            found[number] = data
            if data:
                fresh.append((paths[number], data))
        if fresh:
            with self._unread_lock:
                if self._unsynced is not None:
                    for path, data in fresh:
                        if (
                            self._unread_bytes + len(data) <= UNREAD_CACHE_BYTES
                            and path not in cached
                        ):
                            cached[path] = data
                            self._unread_bytes += len(data)
        return found

    def expect_sync(self) -> None:
        """Say that a first sync is on its way (live): until it begins, a search waits for
        it (at most FIRST_SYNC_WAIT) rather than read every file."""
        with self._lock:
            if not self._complete and self._sync_begun is None:
                self._sync_begun = threading.Event()

    def _index_in_workers(
        self,
        differing: Sequence[tuple[int, str]],
        unsynced: dict[tuple[int, str], str],
        report: Callable[[int, int], None] | None,
        learnt: Callable[[list[Any]], None] | None,
    ) -> list[tuple[int, str]]:
        """Index `differing` in worker processes (other cores, no share of this one's
        GIL; each file read and parsed once, for `learnt` too); return the keys they did
        not index (the caller does them: a worker could not start, or stopped)."""
        count = max(1, min(MAX_WORKERS, (os.cpu_count() or 1)))
        # A search under way (the first, sent as the server starts) reads every file now:
        # beside workers reading the same files it took half as long again, and they begin
        # with 100,000 facts for this process to take in. They start once it is answered.
        self.turns.pauser()()
        progress = threading.Lock()
        indexed = 0

        def follow(worker: subprocess.Popen[bytes], message: bytes) -> None:
            nonlocal indexed
            assert worker.stdin is not None and worker.stdout is not None
            try:
                with contextlib.suppress(OSError):
                    worker.stdin.write(message)
                    worker.stdin.close()
                # A message each time a batch is committed: which keys it held, and the
                # facts of the files it read.
                while True:
                    try:
                        start, end, facts = pickle.loads(_receive(worker.stdout))
                    except (EOFError, ValueError, TypeError, pickle.UnpicklingError):
                        return
                    batch = differing[int(start) : int(end)]
                    with self._lock:
                        self._indexed_now(unsynced, batch)
                    with progress:
                        indexed += len(batch)
                        if learnt is not None and facts:
                            learnt(facts)
                        if report is not None:
                            report(indexed, len(differing))
            finally:
                if worker.poll() is None:
                    worker.kill()
                worker.wait()
                worker.stdout.close()

        followers = []
        for first in range(count):
            job = {
                "config": self.config,
                "db": self.path,
                "keys": list(differing),
                "batch": BATCH_FILES,
                "facts": learnt is not None,
                "first": first,
                "workers": count,
            }
            try:
                worker = subprocess.Popen(
                    [sys.executable, "-c", WORKER_CODE],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    close_fds=True,
                )
            except OSError as exc:
                logger.info("no indexing worker (%s): indexing here", exc)
                break
            message = pickle.dumps(sys.path) + pickle.dumps(job)
            follower = threading.Thread(target=follow, args=(worker, message), daemon=True)
            follower.start()
            followers.append(follower)
        for follower in followers:
            follower.join()
        with self._lock:
            remaining = [key for key in differing if key in unsynced]
        if remaining:
            logger.info("indexing workers left %d of %d files", len(remaining), len(differing))
        return remaining

    def _current(self) -> bool:
        """Bring the index in line before a question (lock held): a live one by its owner's
        events, else by a walk; False when it cannot answer now."""
        if self.live:
            if self._failed:
                self.apply(())
            return self._complete and not self._failed
        return self.sync()

    def _too_big_for_hints(self) -> bool:
        """Whether the store has more memory files than a hint builds an index for (counted
        once a process: names only, stopping at the limit)."""
        if self._big is None:
            count = 0
            for folder in self.config.folders:
                for _directory, _dirs, files in os.walk(folder.path):
                    count += sum(1 for name in files if name.endswith(".md"))
                    if count > HINT_BUILD_LIMIT:
                        break
                if count > HINT_BUILD_LIMIT:
                    break
            self._big = count > HINT_BUILD_LIMIT
        return self._big

    def tags_in(self, scope: str | None) -> list[str] | None:
        """Every tag of the memories of `scope` (None: all), each once, from the index; None
        when it cannot answer for the disk now."""
        if self.live and not self._complete:
            return None
        ranks = [r for r, f in enumerate(self.config.folders) if scope is None or f.scope == scope]
        with self._lock:
            if not self._current():
                return None
            try:
                # Kept until the index changes (by any process): a search that matches
                # nothing asks for them, 60 ms at 100,000 memories.
                key = (tuple(ranks), self._data_version())
                if self._tags_kept is not None and self._tags_kept[0] == key:
                    return list(self._tags_kept[1])
                marks = ",".join("?" * len(ranks))
                rows = self._connect().execute(
                    f"SELECT DISTINCT tags FROM files WHERE folder IN ({marks})", ranks
                )
                tags = list({tag for (text,) in rows for tag in text.split("\n") if tag})
                self._tags_kept = (key, tuple(tags))
                return tags
            except (IndexUnusable, sqlite3.Error) as exc:
                logger.info("search index query failed: %s", exc)
                return None

    def holds_files(self) -> bool:
        """Whether the index holds any file (False too when it cannot be used)."""
        with self._lock:
            return self._built()

    def _built(self) -> bool:
        """Whether the index holds any file (some process indexed this store before)."""
        try:
            return self._connect().execute("SELECT 1 FROM files LIMIT 1").fetchone() is not None
        except (IndexUnusable, sqlite3.Error):
            return False

    def _manifest(self) -> Packed | None:
        """The packed listing of what `files` holds; None when there is none or it is not
        one this process can read (lock held)."""
        row = self._connect().execute("SELECT data FROM manifest WHERE id = 0").fetchone()
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

    def _data_version(self) -> tuple[int, int]:
        """What changes when anyone commits to the index: another connection (SQLite's
        data_version) or this one (its count of changed rows) (lock held)."""
        db = self._connect()
        return int(db.execute("PRAGMA data_version").fetchone()[0]), int(db.total_changes)

    def _write_manifest(
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
        db = self._connect()
        db.execute("BEGIN IMMEDIATE")
        try:
            if self._data_version() == matched_at and changed is not None:
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

    def walk(self) -> Listing:
        """Every memory file with its stamp, by `store.scan_folder`'s rules.

        A leaner walk than the store's scan: what a search from a new process spends
        most of its time on. Directories are listed by name (no object per entry), and
        the `.md` names are stated all at once (`stat_files`, in two processes); that
        also finds the rare folder named `x.md`, whose files a second round lists.
        """
        ranks: list[int] = []
        names: list[str] = []
        paths: list[str] = []
        mtimes: array.array[int] = array.array("q")
        sizes: array.array[int] = array.array("q")
        folders = self.config.folders
        roots = {folder.path for folder in folders}
        pending: list[_Directory] = []
        for rank, folder in enumerate(folders):
            real = os.path.realpath(folder.path)
            pending.append((rank, folder.path, real, "", frozenset((real,))))
        while pending:
            start = len(paths)
            where: list[int] = []  # the directory in `pending` of each path listed now
            named_md: list[_Directory] = []  # folders named `x.md`: the next round's
            at = 0
            while at < len(pending):  # grows with the subfolders found on the way
                place = pending[at]
                rank, directory, _real, prefix, _above = place
                try:
                    entries = os.listdir(directory)
                except OSError:
                    entries = []
                folder = folders[rank]
                ignored = folder.patterns.is_ignored if folder.patterns.ignored else None
                qualify = folder.qualified
                markdown = [name for name in entries if name.endswith(".md")]
                if len(markdown) < len(entries):
                    others = [name for name in entries if not name.endswith(".md")]
                    pending += _subfolders(place, others, roots)
                base = directory if directory.endswith(os.sep) else directory + os.sep
                if ignored is None and not any(name[0] == "." for name in markdown):
                    # Most directories: every name a memory, made in C-speed loops.
                    names += [prefix + name[:-3] for name in markdown]
                    paths += [base + name for name in markdown]
                    ranks += [rank] * len(markdown)
                    where += [at] * len(markdown)
                    markdown = []
                for name in markdown:
                    memory = f"{prefix}{name[:-3]}"
                    if (name[0] == "." and is_temp_file(name)) or (
                        ignored is not None and ignored(qualify(memory))
                    ):
                        # No memory; but a folder so named is listed all the same.
                        named_md += _subfolders(place, [name], roots, links=False)
                        continue
                    ranks.append(rank)
                    names.append(memory)
                    paths.append(base + name)
                    where.append(at)
                at += 1
            found_mtimes, found_sizes = stat_files(paths[start:])
            mtimes += found_mtimes
            sizes += found_sizes
            for offset, size in enumerate(found_sizes):
                if size == FOLDER_SIZE:  # a link to a folder is no memory, and not followed
                    name = os.path.basename(paths[start + offset])
                    named_md += _subfolders(pending[where[offset]], [name], roots, links=False)
            pending = named_md
        return Listing(array.array("i", ranks), names, mtimes, sizes)

    def apply(self, paths: Iterable[str], *, reread: bool = False) -> None:
        """Bring these paths (files that changed, appeared or went) up to date in the index;
        `reread`: a file event said they changed, so each is read again even when its size
        and modification time are as indexed (a copy that kept its time, two writes within
        one tick of the file system's clock)."""
        wanted = set(paths)
        self._forget_unread(wanted)  # a search reads them again as they are now
        with self._lock:
            wanted |= self._failed
            if not wanted:
                return
            try:
                self._connect()
                keyed = [(key, path) for path in sorted(wanted) if (key := self._key(path))]
                self._apply_batches(keyed, reread=reread)
                self._failed.clear()
            except (IndexUnusable, sqlite3.Error, OSError, zlib.error) as exc:
                logger.info("search index update failed (%s); searches read the files", exc)
                self._failed = wanted

    def _apply_batches(
        self, keyed: Sequence[tuple[tuple[int, str], str]], *, reread: bool = False
    ) -> None:
        for start in range(0, len(keyed), BATCH_FILES):
            with self._lock:
                self._apply_now(keyed[start : start + BATCH_FILES], reread=reread)

    def _apply_now(
        self,
        keyed: Sequence[tuple[tuple[int, str], str]],
        prepared: Mapping[tuple[int, str], _Row] | None = None,
        *,
        reread: bool = False,
    ) -> None:
        """Each file as the disk has it now, in one transaction (lock held).

        The files are looked at inside the write transaction, so of two processes
        indexing the same file, the one that writes last has seen it last: a row
        `prepared` before it (by key) is written only if the file's stamp is still its.
        """
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            for key, path in keyed:
                found = db.execute(
                    "SELECT id, mtime_ns, size FROM files WHERE name = ? AND folder = ?",
                    (key[1], key[0]),
                ).fetchone()
                folder = self.config.folders[key[0]]
                stamp = _memory_stamp(folder, key[1], path)
                if (
                    not reread
                    and found is not None
                    and stamp is not None
                    and tuple(found[1:]) == stamp
                ):
                    continue
                if found is not None:
                    self._drop(db, found[0], key)
                if stamp is not None:
                    row = prepared.get(key) if prepared is not None else None
                    if row is not None and row.stamp == stamp:
                        self._insert(db, row)
                    else:
                        self._add(db, folder, key[1], path, stamp)
            db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            raise

    def _drop(self, db: Any, ident: int, key: tuple[int, str]) -> None:
        (data,) = db.execute("SELECT data FROM bodies WHERE id = ?", (ident,)).fetchone() or (None,)
        folder = self.config.folders[key[0]]
        if data is not None:
            qualified = folder.qualified(key[1])
            body = _unpack_body(data)
            db.execute(
                "INSERT INTO fts(fts, rowid, name, title, body) VALUES ('delete', ?, ?, ?, ?)",
                (ident, qualified, title_text(qualified, body), body),
            )
        db.execute("DELETE FROM successors WHERE newer = ?", (ident,))
        db.execute("DELETE FROM bodies WHERE id = ?", (ident,))
        if data is None:
            db.execute("DELETE FROM dupkeys WHERE id = ?", (ident,))  # not expected: a scan
        else:
            db.executemany(
                "DELETE FROM dupkeys WHERE key = ? AND id = ?",
                [(k, ident) for k in _stored_keys(folder, key[1], body)],
            )
        db.execute("DELETE FROM files WHERE id = ?", (ident,))

    def _add(self, db: Any, folder: Folder, name: str, path: str, stamp: tuple[int, int]) -> None:
        """Index one file (one that cannot be read is left out, and tried again next time)."""
        row = self._prepare(folder, name, path, stamp)
        if row is not None:
            self._insert(db, row)

    def _prepare(self, folder: Folder, name: str, path: str, stamp: tuple[int, int]) -> _Row | None:
        """What indexing one file writes, worked out without the database (None: the file
        cannot be read)."""
        body, body_line, hidden_refs = "", 0, True
        tags: tuple[str, ...] = ()
        supersedes: tuple[str, ...] = ()
        superseded_by: tuple[str, ...] = ()
        if stamp[1] <= READ_LIMIT_FACTOR * self.config.max_memory_bytes:
            try:
                text = read_text(path)
                doc = parse_document(text)
            except (OSError, MemoryStoreError):
                return None
            body, body_line, tags = doc.body, doc.body_line, tuple(doc.tags)
            if self._seen is not None:
                self._seen.append((path, stamp, text, doc))
            # The body is the end of the text: what comes before it is not indexed.
            head = text[: len(text) - len(body)]
            hidden_refs = "mem:" in head or "[[" in head or SUPERSEDE_WORD in head
            replaced = relations(doc.metadata)
            supersedes, superseded_by = replaced.supersedes, replaced.superseded_by
        qualified = folder.qualified(name)
        return _Row(
            stamp,
            (
                self._ranks[folder.path],
                name,
                stamp[0],
                stamp[1],
                int(is_valid_name(name)),
                _tag_text(tags),
                body_line,
                int(hidden_refs),
                "\n".join(superseded_by),
            ),
            _pack_body(body),
            (qualified, title_text(qualified, body), body),
            supersedes,
            _stored_keys(folder, name, body),
        )

    @staticmethod
    def _insert(db: Any, row: _Row) -> None:
        cursor = db.execute(
            "INSERT INTO files(folder, name, mtime_ns, size, valid, tags, body_line, "
            "hidden_refs, superseded_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            row.file,
        )
        ident = int(cursor.lastrowid or 0)
        db.execute("INSERT INTO bodies(id, data) VALUES (?, ?)", (ident, row.packed))
        db.execute(
            "INSERT INTO fts(rowid, name, title, body) VALUES (?, ?, ?, ?)", (ident, *row.text)
        )
        if row.supersedes:
            db.executemany(
                "INSERT INTO successors(older, newer) VALUES (?, ?)",
                [(older, ident) for older in row.supersedes],
            )
        db.executemany("INSERT INTO dupkeys VALUES (?, ?)", [(k, ident) for k in row.dupkeys])

    # ----- renames ---------------------------------------------------------------------

    def reference_sources(
        self, keys: Sequence[str], *, fresh: bool = True, current: bool = False
    ) -> list[str] | None:
        """The memory files that may hold any of these link keys (core/services/backlinks.py), for
        a rename to read only those; None when the index cannot tell (a rename then reads
        every memory).

        Not live: the disk is compared with the index first, so a file changed since it
        was indexed is read as it is now. A key's name is written whole in every reference
        to it (`[[ NAME.md ]]`, `mem:global/NAME`), between characters that are no part of
        a word, so the files that hold it are among those whose body has its words in a
        row, the last maybe longer (`mem:NAME` before a letter no name holds), and those
        whose references the body does not show (`hidden_refs`). A supersede relation
        (core/rules/supersede.py) is declared in frontmatter: its holders are among the latter.
        """
        if self.live and not (current and self._complete):
            # Only as current as the events its owner reported: that owner answers from its
            # own link index and what it has not caught up with; `current`: the owner has
            # applied every event so far (the MCP server, before its link index is built).
            return None
        phrases = []
        for key in keys:
            if key[:1] in (SUPERSEDES_KEY, SUPERSEDED_BY_KEY):
                # Declared in frontmatter, which is not indexed: among the hidden_refs files.
                continue
            words = tokens(key.removeprefix(SERENA_MARK))
            if not words or not _PLAIN_KEY.fullmatch(key.removeprefix(SERENA_MARK)):
                return None  # words the two tokenizers may cut differently
            phrases.append(f"({Part(tuple(words), prefix=True).expression()})")
        if not keys:
            return []
        with self._lock:
            # A hint (who supersedes a memory being read) takes the index as some process
            # last brought it in line: a read is not worth a walk of the store (0.3 s at
            # 100,000). A rename must see the disk as it is now.
            if not self.live and (fresh or not self._built()):
                if not fresh and self._too_big_for_hints():
                    return None  # nor does a hint wait for a big store to be indexed
                if not self.sync():
                    return None
            try:
                db = self._connect()
                if phrases:
                    found = db.execute(
                        "SELECT folder, name FROM files WHERE hidden_refs UNION "
                        "SELECT folder, name FROM files WHERE id IN "
                        "(SELECT rowid FROM fts WHERE fts MATCH ?)",
                        ("{body} : (" + " OR ".join(phrases) + ")",),
                    ).fetchall()
                else:
                    found = db.execute(
                        "SELECT folder, name FROM files WHERE hidden_refs"
                    ).fetchall()
            except (IndexUnusable, sqlite3.Error) as exc:
                logger.info("search index could not name a rename's referrers: %s", exc)
                return None
        folders = self.config.folders
        return [folders[rank].file_for(name) for rank, name in found]

    # ----- files that hold some words -------------------------------------------------

    def files_with_phrases(self, phrases: Sequence[Sequence[str]]) -> list[str] | None:
        """The memory files whose indexed body holds any of these phrases (folded words in
        a row), for a caller that reads and confirms each; None when the index cannot tell.

        Not live: the disk is compared with the index first. Live: as current as the
        events its owner reported (as `search`), so a file changed since is read as it is
        now by the caller, and one not yet reported is missed as a search misses it.
        """
        expressions = [f"({Part(tuple(words)).expression()})" for words in phrases if words]
        if not expressions:
            return []
        if self.live and not self._complete:
            return None
        with self._lock:
            if not self._current():
                return None
            try:
                found = (
                    self._connect()
                    .execute(
                        "SELECT folder, name FROM files WHERE id IN "
                        "(SELECT rowid FROM fts WHERE fts MATCH ?)",
                        ("{body} : (" + " OR ".join(expressions) + ")",),
                    )
                    .fetchall()
                )
            except (IndexUnusable, sqlite3.Error) as exc:
                logger.info("search index could not name the files holding words: %s", exc)
                return None
        folders = self.config.folders
        return [folders[rank].file_for(name) for rank, name in found]

    # ----- searching ---------------------------------------------------------------------

    def search(
        self,
        query: Query,
        tags: Sequence[str],
        scope: str | None,
        limit: int,
        *,
        per_memory: bool = False,
        offset: int = 0,
        count: bool = False,
    ) -> Found | None:
        """The memories that answer a query, best first: enough for `limit` lines (or,
        `per_memory`, `limit` memories after `offset`), with the number of memories that
        match in all when `count`; None when the index cannot answer for the disk now
        (not live: the disk is compared with the index first)."""
        if self.live and not self._complete:
            return None  # the first indexing runs: no waiting for it
        with self._lock:
            if not self._current():
                return None
            try:
                for _attempt in range(STALE_RETRIES):
                    search = _Search(self, query, tags, scope)
                    found = search.run(limit, per_memory, offset, count)
                    if not search.stale:
                        return found
                    # Changed behind the index's back: read again, then ask again.
                    self._apply_batches([(k, p) for p in search.stale if (k := self._key(p))])
            except (IndexUnusable, sqlite3.Error) as exc:
                logger.info("search index query failed: %s", exc)
            return None

    def search_partial(
        self,
        query: Query,
        tags: Sequence[str],
        scope: str | None,
        limit: int,
        *,
        per_memory: bool = False,
        count: bool = False,
    ) -> tuple[Found, list[Unindexed]] | None:
        """While the first indexing runs (live): the best memories among those indexed
        (enough for `limit`, no offset), and the files in `scope` not indexed yet, for the
        caller to read (`hidden` tells which another memory hides); None when no first
        indexing runs or the index cannot answer."""
        begun = self._sync_begun
        if begun is not None and not self._complete:
            begun.wait(FIRST_SYNC_WAIT)
        with self._lock:
            unsynced = self._unsynced
            if unsynced is None:
                return None
            try:
                search = _Search(self, query, tags, scope, unsynced)
                found = search.run(limit, per_memory, 0, count)
            except (IndexUnusable, sqlite3.Error) as exc:
                logger.info("search index query failed: %s", exc)
                return None
            folders = self.config.folders
            # What a folder's names are qualified with, for the folders of `scope`.
            prefixes = {
                r: f.qualified("")
                for r, f in enumerate(folders)
                if scope is None or f.scope == scope
            }
            rest = [
                (prefixes[rank] + name, path, rank, name)
                for (rank, name), path in unsynced.items()
                if rank in prefixes
            ]
            # Changed behind the index's back: read as they are now, with the rest.
            rest += [
                (folders[key[0]].qualified(key[1]), path, *key)
                for path in search.stale
                if (key := self._key(path)) is not None and key not in unsynced
            ]
            return found, rest

    def hidden(self, rank: int, name: str) -> bool:
        """Whether a memory (of the folder at `rank`) is hidden by one of the same name
        earlier in lookup order, indexed or not yet (a project memory by another)."""
        folders = self.config.folders
        if folders[rank].kind == "global" or not is_valid_name(name):
            return False
        earlier = [r for r in range(rank) if folders[r].kind != "global"]
        with self._lock:
            unsynced = self._unsynced or {}
            if any((r, name) in unsynced for r in earlier):
                return True
            try:
                found = (
                    self._connect()
                    .execute(
                        "SELECT folder FROM files WHERE name = ? AND folder < ? AND valid",
                        (name, rank),
                    )
                    .fetchall()
                )
            except (IndexUnusable, sqlite3.Error):
                return False
        return any(row[0] in earlier for row in found)

    # ----- near-duplicates (core/operations/duplicates.py) ------------------------------

    def duplicate_candidates(
        self, keys: Sequence[int], written: Iterable[str] = ()
    ) -> list[tuple[str, str, bool]] | None:
        """(path, qualified name, global) of the memories sharing one of these near-duplicate
        keys, or None when the index cannot answer now.

        Not live, the first question brings the index in line with the disk (a walk);
        later ones bring only the files just `written` up to date: a walk of 10,000
        files costs more than the whole answer, and whoever else writes keeps the shared
        index current too (a language server, every search).
        """
        if self.live and not self._complete:
            return None
        with self._lock:
            if self.live:  # its own file events keep it current
                if self._failed:
                    self.apply(())
                if not self._complete or self._failed:
                    return None
            elif self._complete:
                self.apply(written)
                if self._failed:
                    return None
            elif not self.sync():
                return None
            try:
                db = self._connect()
                ids: set[int] = set()
                sketched: dict[int, int] = {}  # id -> sketch keys shared
                for key in {k & DUPKEY_MASK for k in keys}:
                    limit = bucket_limit(key)
                    rows = db.execute(
                        "SELECT id FROM dupkeys WHERE key = ? LIMIT ?",
                        (key, limit + 1),
                    ).fetchall()
                    if len(rows) > limit:  # a template's phrase: it proposes nothing
                        continue
                    for (ident,) in rows:
                        if key & 3 == SHINGLE_KEY:
                            sketched[ident] = sketched.get(ident, 0) + 1
                        else:
                            ids.add(ident)
                ids.update(i for i, count in sketched.items() if count >= SKETCH_MATCHES)
                found = [
                    db.execute("SELECT folder, name FROM files WHERE id = ?", (i,)).fetchone()
                    for i in sorted(ids)
                ]
            except (IndexUnusable, sqlite3.Error) as exc:
                logger.info("search index query failed: %s", exc)
                return None
        folders = self.config.folders
        return [
            (
                folders[rank].file_for(name),
                folders[rank].qualified(name),
                folders[rank].scope == "global",
            )
            for rank, name in (row for row in found if row is not None)
        ]

    def duplicate_groups(self) -> list[tuple[int, list[tuple[str, str, bool]]]] | None:
        """Each near-duplicate key that more than one memory and not too many share, with
        those memories as `duplicate_candidates` gives them; None when it cannot answer."""
        with self._lock:
            if not self._complete or self._failed:
                return None
            try:
                db = self._connect()
                shared = [
                    (key, [int(i) for i in joined.split(",")])
                    for key, joined in db.execute(
                        "SELECT key, group_concat(id) FROM dupkeys GROUP BY key HAVING count(*) > 1"
                    )
                ]
                shared = [(key, ids) for key, ids in shared if len(ids) <= bucket_limit(key)]
                rows = {
                    ident: (rank, name)
                    for ident in sorted({i for _key, ids in shared for i in ids})
                    for rank, name in db.execute(
                        "SELECT folder, name FROM files WHERE id = ?", (ident,)
                    )
                }
            except (IndexUnusable, sqlite3.Error) as exc:
                logger.info("search index query failed: %s", exc)
                return None
        folders = self.config.folders
        return [
            (
                key,
                [
                    (folders[r].file_for(n), folders[r].qualified(n), folders[r].scope == "global")
                    for r, n in (rows[i] for i in ids if i in rows)
                ],
            )
            for key, ids in shared
        ]


@dataclass(frozen=True)
class _Row:
    """What indexing one file writes (`SearchIndex._prepare`)."""

    stamp: tuple[int, int]
    file: tuple[Any, ...]  # the `files` row but its id
    packed: bytes  # the body as `bodies` keeps it
    text: tuple[str, str, str]  # name, title and body for `fts`
    supersedes: tuple[str, ...]
    dupkeys: list[int]


# A file not indexed yet, as a search reads it: (qualified name, path, folder rank, name).
Unindexed = tuple[str, str, int, str]


class Turns:
    """Searches under way, which a first indexing in this process lets run: each of a
    search's file reads would wait a switch interval for the GIL while the indexing holds
    it. Searches get up to SEARCH_SHARE of the time: back to back, they do not stop it."""

    def __init__(self) -> None:
        self._changed = threading.Condition(threading.Lock())
        self._searches = 0

    @contextlib.contextmanager
    def searching(self) -> Iterator[None]:
        """Around a search."""
        with self._changed:
            self._searches += 1
        try:
            yield
        finally:
            with self._changed:
                self._searches -= 1
                self._changed.notify_all()

    def pauser(self, share: float = SEARCH_SHARE) -> Callable[[], None]:
        """For one indexing (or other work over every file): a call between its steps
        that waits while searches run, as long as they had less than `share` of the time
        since this call (or SEARCH_HEAD_START seconds in all)."""
        began = time.monotonic()
        waited = 0.0

        def pause() -> None:
            nonlocal waited
            with self._changed:
                while self._searches:
                    owed = max(share * (time.monotonic() - began), SEARCH_HEAD_START)
                    allowed = owed - waited
                    if allowed <= 0:
                        return
                    at = time.monotonic()
                    self._changed.wait(allowed)
                    waited += time.monotonic() - at

        return pause


def worker_main() -> None:
    """The indexing worker (`SearchIndex._index_in_workers`): the keys it is given on
    stdin indexed batch by batch, after each the count done so far on stdout."""
    job = pickle.load(sys.stdin.buffer)
    if hasattr(os, "nice"):  # background work: a search or a keystroke goes first
        os.nice(WORKER_NICENESS)
    index = SearchIndex(job["config"], job["db"], live=False)
    folders = index.config.folders
    keys: list[tuple[int, str]] = job["keys"]
    out = sys.stdout.buffer
    seen: list[tuple[str, tuple[int, int], str, Document]] | None = None
    if job["facts"]:
        seen = index._seen = []
    with index._lock:
        # Another worker may hold the write lock for a batch's inserts: wait for it.
        index._connect().execute(f"PRAGMA busy_timeout = {int(WORKER_BUSY_SECONDS * 1000)}")
        step = job["batch"]
        # Of several workers, each takes every `workers`-th batch; each reads and parses
        # its batch before it takes the database's write lock, so they share that lock
        # only for the inserts.
        for start in range(job["first"] * step, len(keys), job["workers"] * step):
            batch = keys[start : start + step]
            keyed = [(key, folders[key[0]].file_for(key[1])) for key in batch]
            prepared = {}
            for key, path in keyed:
                stamp = _memory_stamp(folders[key[0]], key[1], path)
                row = (
                    None if stamp is None else index._prepare(folders[key[0]], key[1], path, stamp)
                )
                if row is not None:
                    prepared[key] = row
            # What was read for facts is what was written, unless it changed meanwhile.
            read_first = [] if seen is None else list(seen)
            if seen is not None:
                seen.clear()
            index._apply_now(keyed, prepared)
            if seen is not None:
                written = {path for path, *_rest in seen}
                seen[:0] = [entry for entry in read_first if entry[0] not in written]
            facts = []
            if seen is not None:
                facts = [
                    (path, *stamp, facts_of_text(text, doc)) for path, stamp, text, doc in seen
                ]
                seen.clear()
            _send(out, pickle.dumps((start, start + len(batch), facts)))


class _Search:
    """One search through the index (its lock held)."""

    def __init__(
        self,
        index: SearchIndex,
        query: Query,
        tags: Sequence[str],
        scope: str | None,
        unsynced: Mapping[tuple[int, str], str] | None = None,
    ) -> None:
        self.db = index._connect()
        # Files the first indexing has not reached: their rows (if any) are not believed.
        self.unsynced = unsynced or {}
        self.query = query
        self.folders = index.config.folders
        self.allowed = {
            rank for rank, f in enumerate(self.folders) if scope is None or f.scope == scope
        }
        self.global_rank = next(
            (r for r, f in enumerate(self.folders) if f.kind == "global"), len(self.folders)
        )
        self.wanted_tags = [_tag_text((tag,)) for tag in tags]
        self.stale: list[str] = []
        variants = self._variants() if query.stemmed else {}
        every = query.expression(variants)
        # Memories whose name holds every term come first, then those holding every term;
        # ranking those alone is cheap, and most searches need nothing more. In relevance
        # mode, those holding some term are ranked only when those do not fill the results.
        self.tiers = [(2, f"{{name title}} : ({every})"), (1, every)]
        if query.stemmed and len(query.terms) > 1:
            self.tiers.append((0, query.any_expression(variants)))

    def run(self, limit: int, per_memory: bool, offset: int, count: bool) -> Found:
        hits: list[Hit] = []
        seen: set[int] = set()
        wanted = limit + offset
        for tier, expression in self.tiers:
            if enough(hits, wanted, per_memory):
                break
            # Ranked alone, each file looked up while the ranking is read: SQLite drops the
            # ORDER BY of a subquery that is joined.
            ranked = self.db.execute(
                "SELECT rowid, bm25(fts, ?, ?, 1.0) AS r FROM fts WHERE fts MATCH ? "
                "ORDER BY r, rowid",
                (NAME_WEIGHT, NAME_WEIGHT, expression),
            )
            for ident, rank in ranked:
                if ident in seen:
                    continue
                seen.add(ident)
                hit = self._hit(ident, score_of(tier, -rank))
                if hit is not None:
                    hits.append(hit)
                    if enough(hits, wanted, per_memory):
                        break
        ordered = order_by_supersession(hits, self._fetch)
        if per_memory:
            ordered = ordered[offset : offset + limit]
        return Found(ordered, self._count() if count else None)

    def _variants(self) -> dict[str, list[str]]:
        """The indexed words of each term's stem, the most frequent first."""
        variants: dict[str, list[str]] = {}
        for part in self.query.terms:
            wanted = part.stem
            if wanted is None or wanted in variants:
                continue
            # A word begins with its stem but for the stem's last letter (`happi`, `happy`).
            low = wanted[:-1]
            high = low[:-1] + chr(ord(low[-1]) + 1)
            found = [
                (-docs, term)
                for term, docs in self.db.execute(
                    "SELECT term, doc FROM vocab WHERE term >= ? AND term < ?", (low, high)
                )
                if stem(term) == wanted
            ]
            found.sort()
            variants[wanted] = [term for _docs, term in found[:MAX_VARIANTS]]
        return variants

    def _hit(self, ident: int, score: float) -> Hit | None:
        """The hit of an indexed file, if it is a memory the search may return."""
        db = self.db
        row = db.execute(
            "SELECT folder, name, mtime_ns, size, valid, tags, body_line, superseded_by "
            "FROM files WHERE id = ?",
            (ident,),
        ).fetchone()
        if row is None:
            return None
        folder_rank, name, mtime, size, valid, tag_text, body_line, declared = row
        if folder_rank not in self.allowed or any(t not in tag_text for t in self.wanted_tags):
            return None
        if self.unsynced and (
            (folder_rank, name) in self.unsynced
            or (
                valid
                and folder_rank < self.global_rank
                and any((r, name) in self.unsynced for r in range(folder_rank))
            )
        ):
            return None  # read by the caller, or maybe hidden by a memory not indexed yet
        if valid and folder_rank < self.global_rank and self._shadowed(name, folder_rank):
            return None
        folder = self.folders[folder_rank]
        path = folder.file_for(name)
        if _stamp(path) != (mtime, size):
            self.stale.append(path)
            return None
        (data,) = db.execute("SELECT data FROM bodies WHERE id = ?", (ident,)).fetchone()
        body = _unpack_body(data)
        qualified = folder.qualified(name)
        newer = dict.fromkeys(declared.split("\n") if declared else ())
        for (successor,) in db.execute(
            "SELECT newer FROM successors WHERE older = ?", (qualified,)
        ).fetchall():
            found = db.execute(
                "SELECT folder, name FROM files WHERE id = ?", (successor,)
            ).fetchone()
            if found is not None:
                newer[self.folders[found[0]].qualified(found[1])] = None
        newer.pop(qualified, None)
        return describe(self.query, qualified, path, body, body_line, score, tuple(newer))

    def _shadowed(self, name: str, folder_rank: int) -> bool:
        """Whether a project memory is hidden by one of the same name earlier in lookup order."""
        found = self.db.execute(
            "SELECT 1 FROM files WHERE name = ? AND folder < ? AND folder < ? AND valid LIMIT 1",
            (name, folder_rank, self.global_rank),
        ).fetchone()
        return found is not None

    def _fetch(self, qualified: str) -> Hit | None:
        """The hit of the memory so named (one that supersedes a memory the query found):
        what holds now about what the query found, whether or not it has the query's
        words (a paraphrase finds the old wording and not the new)."""
        if qualified.startswith(GLOBAL_PREFIX):
            found = self.db.execute(
                "SELECT id FROM files WHERE name = ? AND folder = ?",
                (qualified[len(GLOBAL_PREFIX) :], self.global_rank),
            ).fetchone()
        else:
            found = self.db.execute(
                "SELECT id FROM files WHERE name = ? AND folder < ? ORDER BY folder LIMIT 1",
                (qualified, self.global_rank),
            ).fetchone()
        if found is None:
            return None
        matched = self.db.execute(
            "SELECT bm25(fts, ?, ?, 1.0) FROM fts WHERE fts MATCH ? AND rowid = ?",
            (NAME_WEIGHT, NAME_WEIGHT, self.tiers[-1][1], found[0]),
        ).fetchone()
        return self._hit(found[0], 0.0 if matched is None else score_of(0, -matched[0]))

    def _count(self) -> int:
        """How many memories match in all (scope and tags applied; a project memory that
        another of the same name hides still counts: rare, and costly to rule out)."""
        # Counted by SQLite: at 100,000 memories a common word matches tens of thousands,
        # and reading each row into Python cost most of a search's time.
        arguments: list[object] = [self.tiers[-1][1]]
        if len(self.allowed) == len(self.folders) and not self.wanted_tags:
            # Each `fts` row is a `files` row (added and dropped together): no join.
            counted = self.db.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", arguments)
            return int(counted.fetchone()[0])
        sql = "SELECT count(*) FROM files WHERE id IN (SELECT rowid FROM fts WHERE fts MATCH ?)"
        if len(self.allowed) < len(self.folders):
            sql += f" AND folder IN ({', '.join('?' * len(self.allowed))})"
            arguments += sorted(self.allowed)
        for tag in self.wanted_tags:
            sql += " AND instr(tags, ?) > 0"  # as `in`: the tag between newlines
            arguments.append(tag)
        return int(self.db.execute(sql, arguments).fetchone()[0])


def _stored_keys(folder: Folder, name: str, body: str) -> list[int]:
    """A file's near-duplicate keys as `dupkeys` holds them (none for an invalid name)."""
    if not is_valid_name(name):
        return []
    found = duplicate_keys(folder.qualified(name), folder.scope == "global", words(body))
    # Cut to 31 bits: 4 bytes a key in SQLite; a collision only proposes a pair to compare.
    return sorted({k & DUPKEY_MASK for k in found})


def _pack_body(body: str) -> bytes:
    """An indexed body as stored: raw deflate (no zlib header and checksum: 6 bytes a
    memory, most of them a few hundred bytes long)."""
    data = body.encode("utf-8", "surrogatepass")
    # A window no larger than the body loses nothing, and sets up ten times faster than
    # the default one (95 us a memory here, most of a first indexing's deflate time);
    # `_unpack_body`'s largest window reads every smaller one.
    bits = max(9, min(15, len(data).bit_length()))
    packer = zlib.compressobj(1, zlib.DEFLATED, -bits, max(1, bits - 7))
    return packer.compress(data) + packer.flush()


def _unpack_body(data: bytes) -> str:
    """The body `_pack_body` stored."""
    return zlib.decompress(data, -15).decode("utf-8", "surrogatepass")


def _read_small(path: str, limit: int, buffer: bytearray | None = None) -> bytes | None:
    """A memory file's bytes: b"" when larger than `limit` (found by its name only), None
    when unreadable. Memories are small: one read of FIRST_READ bytes, no fstat (at
    100,000 files a quarter of the syscalls) and no file object (more than the read).

    Read into `buffer` (FIRST_READ bytes, reused; POSIX), the bytes object made is the
    file's size: `os.read` makes one of FIRST_READ bytes and shrinks it, which leaves
    each small memory in the C heap instead of Python's own small-object pools, and at
    100,000 memories kept for searches the server's memory 16 MiB higher.
    """
    try:
        descriptor = os.open(path, os.O_RDONLY)
        try:
            if buffer is not None:
                count = os.readv(descriptor, [buffer])
                with memoryview(buffer) as view:
                    data = view[:count].tobytes()
            else:
                data = os.read(descriptor, FIRST_READ)
            if len(data) == FIRST_READ:
                if os.fstat(descriptor).st_size > limit:
                    return b""
                data += _read_rest(descriptor)
        finally:
            os.close(descriptor)
    except OSError:
        return None
    return b"" if len(data) > limit else data


def _read_rest(descriptor: int) -> bytes:
    chunks = []
    while chunk := os.read(descriptor, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def _tag_text(tags: Iterable[str]) -> str:
    return "\n" + "".join(tag.replace("\n", " ") + "\n" for tag in tags)


T = TypeVar("T")
U = TypeVar("U")


class FileHelper:
    """A process forked once, while this one ran no other thread, that states or reads
    the second half of each long list of paths meanwhile: a server running threads may
    not fork per walk (the MCP server compares every memory file with the index before
    it trusts it), and a search while the first indexing runs reads every file."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        requests_in, requests_out = os.pipe()
        answers_in, answers_out = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            for end in (requests_in, requests_out, answers_in, answers_out):
                os.close(end)
            raise
        if pid == 0:  # the helper: lists in, stamps or contents out, until this process is gone
            status = 0
            try:
                os.close(requests_out)
                os.close(answers_in)
                # Off the client's pipes (a server on stdio): its end of them is this
                # process's alone.
                null = os.open(os.devnull, os.O_RDWR)
                for standard in (0, 1):
                    os.dup2(null, standard)
                os.close(null)
                _serve_files(requests_in, answers_out)
            except BaseException:
                status = 1
            finally:
                os._exit(status)
        os.close(requests_in)
        os.close(answers_out)
        self.pid = pid
        self._requests = os.fdopen(requests_out, "wb")
        self._answers = os.fdopen(answers_in, "rb")
        self.working = True

    def close(self) -> None:
        """Let the helper go (it leaves when its requests' pipe closes)."""
        self.working = False
        for pipe in (self._requests, self._answers):
            with contextlib.suppress(OSError):
                pipe.close()
        with contextlib.suppress(OSError):
            os.waitpid(self.pid, 0)  # it leaves at once on the closed pipe: no zombie kept

    def stat_files(self, paths: Sequence[str]) -> tuple[array.array[int], array.array[int]]:
        """`stat_files` with the second half stated by the helper meanwhile."""
        half = len(paths) // 2
        shared = self._share(
            ("stat", list(paths[half:]), 0),
            lambda: _stat_each(paths[:half]),
            lambda answer: _stamp_arrays(answer, len(paths) - half),
        )
        if shared is None:
            return _stat_each(paths)
        first, second = shared
        return first[0] + second[0], first[1] + second[1]

    def read_files(self, paths: Sequence[str], limit: int) -> list[bytes | None]:
        """`_read_small` of each path, the second half read by the helper meanwhile."""
        half = len(paths) // 2
        buffer = bytearray(FIRST_READ) if hasattr(os, "readv") else None
        shared = self._share(
            ("read", list(paths[half:]), limit),
            lambda: [_read_small(path, limit, buffer) for path in paths[:half]],
            lambda answer: _contents(answer, len(paths) - half),
        )
        if shared is None:
            return [_read_small(path, limit, buffer) for path in paths]
        return shared[0] + shared[1]

    def _share(
        self,
        request: tuple[str, list[str], int],
        own: Callable[[], T],
        check: Callable[[Any], U | None],
    ) -> tuple[T, U] | None:
        """Ask the helper for `request`, do `own` meanwhile: both results, or None when the
        helper is gone or answered what it was not asked (it then helps no more)."""
        with self._lock:
            if not self.working:
                return None
            answer: U | None = None
            try:
                _send(self._requests, marshal.dumps(request))
                mine = own()
                answer = check(marshal.loads(_receive(self._answers)))
            except (OSError, EOFError, ValueError, TypeError):
                pass
            finally:
                if answer is None:
                    # Gone, confused or interrupted: an answer left in the pipe would
                    # answer the next request, so this process works alone from now on.
                    self.close()
            return None if answer is None else (mine, answer)


def _send(pipe: Any, data: bytes) -> None:
    pipe.write(struct.pack("<Q", len(data)) + data)
    pipe.flush()


def _receive(pipe: Any) -> bytes:
    head = pipe.read(8)
    if len(head) < 8:
        raise EOFError("the file helper is gone")
    (size,) = struct.unpack("<Q", head)
    data: bytes = pipe.read(size)
    if len(data) < size:
        raise EOFError("the file helper is gone")
    return data


def _serve_files(requests: int, answers: int) -> None:
    """The helper's loop (in the child): until the requests' pipe closes."""
    with os.fdopen(requests, "rb") as incoming, os.fdopen(answers, "wb") as outgoing:
        while True:
            try:
                kind, paths, limit = marshal.loads(_receive(incoming))
            except EOFError:
                return
            if kind == "read":
                buffer = bytearray(FIRST_READ) if hasattr(os, "readv") else None
                answer = marshal.dumps([_read_small(path, limit, buffer) for path in paths])
            else:
                mtimes, sizes = _stat_each(paths)
                answer = marshal.dumps((mtimes.tobytes(), sizes.tobytes()))
            _send(outgoing, answer)


def _contents(value: object, count: int) -> list[bytes | None] | None:
    """The contents a helper sent, if they are what it was asked for."""
    if not isinstance(value, list) or len(value) != count:
        return None
    if not all(item is None or isinstance(item, bytes) for item in value):
        return None
    return value


# The file helper of this process, when it started one (`start_file_helper`).
_HELPER: FileHelper | None = None
# Paths from which a walk shares its stats, and a search its reads, with the helper
# (below, the pipe costs more).
HELPER_FILES = 2_000


def start_file_helper() -> bool:
    """Fork the file helper now, if this process may (call it before any thread starts)."""
    global _HELPER
    if _HELPER is None and _may_fork():
        try:
            _HELPER = FileHelper()
        except OSError:
            return False
    return _HELPER is not None


def read_files(paths: Sequence[str], limit: int) -> list[bytes | None]:
    """`_read_small` of each path; many in two processes at once, where a helper runs."""
    helper = _HELPER
    if helper is not None and helper.working and len(paths) >= HELPER_FILES:
        return helper.read_files(paths, limit)
    buffer = bytearray(FIRST_READ) if hasattr(os, "readv") else None
    return [_read_small(path, limit, buffer) for path in paths]


def stat_files(paths: Sequence[str]) -> tuple[array.array[int], array.array[int]]:
    """The mtime and size of each path that is a regular file (links followed, as a read
    follows them), else 0 and a negative size (FOLDER_SIZE for a folder); many paths in
    two processes at once.

    One stat costs a few microseconds of system time, and threads do not help (each holds
    the GIL around a call that short); a forked child stats the second half meanwhile.
    Only where forking is safe: Linux, this process running no other thread.
    """
    helper = _HELPER
    if helper is not None and helper.working and len(paths) >= HELPER_FILES:
        return helper.stat_files(paths)
    if len(paths) < PARALLEL_STAT_FILES or not _may_fork():
        return _stat_each(paths)
    half = len(paths) // 2
    try:
        reader, writer = os.pipe()
    except OSError:
        return _stat_each(paths)
    try:
        child = os.fork()
    except OSError:
        os.close(reader)
        os.close(writer)
        return _stat_each(paths)
    if child == 0:  # the child: its half to the pipe, then gone without any cleanup
        status = 1
        try:
            os.close(reader)
            mtimes, sizes = _stat_each(paths[half:])
            unsent = memoryview(marshal.dumps((mtimes.tobytes(), sizes.tobytes())))
            while unsent:
                unsent = unsent[os.write(writer, unsent) :]
            status = 0
        finally:
            os._exit(status)
    os.close(writer)
    try:
        first = _stat_each(paths[:half])
        with os.fdopen(reader, "rb") as pipe:
            received = pipe.read()
    finally:
        _, status = os.waitpid(child, 0)
    second = None
    if status == 0:
        with contextlib.suppress(EOFError, ValueError, TypeError):
            second = _stamp_arrays(marshal.loads(received), len(paths) - half)
    if second is None:
        second = _stat_each(paths[half:])  # the child failed: nothing lost but time
    return first[0] + second[0], first[1] + second[1]


def _stamp_arrays(value: object, count: int) -> tuple[array.array[int], array.array[int]] | None:
    """The two arrays a child sent, if they are what it was asked for."""
    if not (isinstance(value, tuple) and len(value) == 2):
        return None
    mtimes, sizes = array.array("q"), array.array("q")
    mtimes.frombytes(value[0])
    sizes.frombytes(value[1])
    return (mtimes, sizes) if len(mtimes) == len(sizes) == count else None


def _may_fork() -> bool:
    """Whether a child process may be forked here, and would run beside this one."""
    return sys.platform == "linux" and (os.cpu_count() or 1) > 1 and threading.active_count() == 1


def _stat_each(paths: Sequence[str]) -> tuple[array.array[int], array.array[int]]:
    mtimes: list[int] = []
    sizes: list[int] = []
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:
            mtimes.append(0)
            sizes.append(-1)
            continue
        kind = info.st_mode & 0o170000
        if kind == stat.S_IFREG:
            mtimes.append(info.st_mtime_ns)
            sizes.append(info.st_size)
        else:
            mtimes.append(0)
            sizes.append(FOLDER_SIZE if kind == stat.S_IFDIR else -1)
    return array.array("q", mtimes), array.array("q", sizes)


# A directory to list: (folder rank, path, real path, name prefix, the real paths above
# it, itself included: a link back up would loop for ever).
_Directory = tuple[int, str, str, str, frozenset[str]]


def _subfolders(
    place: _Directory, names: Sequence[str], roots: set[str], links: bool = True
) -> list[_Directory]:
    """The folders among `names` in a directory that a walk lists, as `scan_folder` does:
    real ones that are no other configured folder, and, with `links`, linked ones that do
    not lead back up."""
    rank, directory, real, prefix, above = place
    found: list[_Directory] = []
    for name in names:
        path = os.path.join(directory, name)
        try:
            mode = os.lstat(path).st_mode
            if stat.S_ISDIR(mode):
                if path not in roots:
                    inner = os.path.join(real, name)
                    found.append((rank, path, inner, f"{prefix}{name}/", above | {inner}))
            elif links and stat.S_ISLNK(mode) and path not in roots and os.path.isdir(path):
                inner = os.path.realpath(path)
                if inner not in above:
                    found.append((rank, path, inner, f"{prefix}{name}/", above | {inner}))
        except OSError:
            continue
    return found


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size
