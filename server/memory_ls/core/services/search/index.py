"""The search index's lifecycle: `SearchIndex`, opened, kept in line with the disk (`sync`,
`apply`), and the facade over its parts (the database, the writer, the queries)."""

from __future__ import annotations

import logging
import threading
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from memory_ls.core.services.relevance import Found, Query
from memory_ls.core.services.search.database import Database
from memory_ls.core.services.search.files import READ_LIMIT_FACTOR, _stamp, read_files
from memory_ls.core.services.search.query import Queries, Unindexed
from memory_ls.core.services.search.schema import IndexUnusable, Listing, sqlite3
from memory_ls.core.services.search.walk import walk_folders
from memory_ls.core.services.search.worker import WORKER_FILES, Turns, index_in_workers
from memory_ls.core.services.search.writing import Writer
from memory_ls.core.storage.folders import StoreConfig
from memory_ls.core.storage.memory import MemoryFile

logger = logging.getLogger(__name__)

# Files are (re)indexed this many to a transaction: other processes wait at most that long.
BATCH_FILES = 500
# What searches keep of the files a first indexing has not reached (`read_unindexed`):
# most of 100,000 memories of a few hundred bytes (a bound on the server's memory).
UNREAD_CACHE_BYTES = 32 * 2**20


class SearchIndex:
    """The full-text index of one store configuration (thread-safe; one per process)."""

    def __init__(self, config: StoreConfig, path: str | None = None, *, live: bool) -> None:
        self.config = config
        # The database, its lock (held around every use of it) and what writes its rows.
        self.database = Database(config, path)
        self.path = self.database.path
        self._lock = self.database.lock
        self._ranks = self.database.ranks
        self.writer = Writer(self.database)
        # Live: the caller reports every change (`apply`); else each search checks the disk.
        self.live = live
        # Live mode: complete once `sync` has run; paths whose update failed, to retry.
        self._complete = False
        self._failed: set[str] = set()
        # Live mode, while the first sync runs: the files it has not indexed yet (by key),
        # which a search reads itself (`search_partial`).
        self._unsynced: dict[tuple[int, str], str] | None = None
        # Searches under way, which the first indexing lets run (`Turns`).
        self.turns = Turns()
        # The bytes of files not indexed yet, as searches read them (`read_unindexed`).
        self._unread: dict[str, bytes] = {}
        self._unread_bytes = 0
        self._unread_lock = threading.Lock()
        # Set once a first sync the owner announced (`expect_sync`) has begun or ended.
        self._sync_begun: threading.Event | None = None
        # Set when a sync ended (done or not): work that should not share the first
        # indexing's time waits for it (`wait_synced`).
        self._sync_ended = threading.Event()
        # The questions it answers (searches, referrers, near-duplicates, tags).
        self.queries = Queries(self)

    def close(self) -> None:
        """Close the database."""
        self.database.close()

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
        indexed by a worker process (`index_in_workers`) while searches read what it has
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
                version = self.database.data_version()
                manifest = self.database.manifest()
                if listing is not None and manifest == listing.packed():
                    self._complete = True  # nothing changed since the manifest was written
                    return True
                if manifest is not None:
                    indexed = Listing.unpacked(manifest).rows()
                else:
                    indexed = set(
                        self.database.connect().execute(
                            "SELECT folder, name, mtime_ns, size FROM files"
                        )
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
                    remaining = index_in_workers(
                        self.database,
                        self.turns,
                        differing,
                        unsynced,
                        report,
                        learnt,
                        self._indexed_now,
                        BATCH_FILES,
                    )
            pause = self.turns.pauser()
            # Batch by batch, the lock let go in between: file events and searches (which
            # read what is not indexed yet meanwhile) do not wait for a whole first indexing.
            for start in range(0, len(remaining), BATCH_FILES):
                batch = remaining[start : start + BATCH_FILES]
                if unsynced is not None:
                    pause()
                with self._lock:
                    before = self.database.connect().total_changes
                    self.writer.apply_now(
                        [(key, folders[key[0]].file_for(key[1])) for key in batch]
                    )
                    own_changes += self.database.connect().total_changes - before
                    if unsynced is not None:
                        self._indexed_now(unsynced, batch)
                if report is not None:
                    report(len(differing) - len(remaining) + start + len(batch), len(differing))
            # For new processes (the CLI, MCP), from their walk. Not from a live index: the
            # editor's next change removes it again.
            if listing is not None:
                with self._lock:
                    changed = None if expected is None else (differing, expected)
                    self.database.write_manifest(
                        listing, (version[0], version[1] + own_changes), changed
                    )
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

    def backlog(self, timeout: float) -> int | None:
        """How many files the first sync has yet to index, once it knows (waiting at most
        `timeout` seconds for that); 0 when the index is in line, None when not known yet."""
        with self._lock:
            begun = self._sync_begun
            if self._complete or begun is None:
                return 0
        if not begun.wait(timeout):
            return None
        with self._lock:
            return len(self._unsynced) if self._unsynced is not None else 0

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

    def holds_files(self) -> bool:
        """Whether the index holds any file (False too when it cannot be used)."""
        with self._lock:
            return self.database.built()

    def walk(self) -> Listing:
        """Every memory file with its stamp, by `store.scan_folder`'s rules (`walk_folders`)."""
        return walk_folders(self.config)

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
                self.database.connect()
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
                self.writer.apply_now(keyed[start : start + BATCH_FILES], reread=reread)

    # ----- questions (core/services/search/query.py) ---------------------------------------

    def tags_in(self, scope: str | None) -> list[str] | None:
        """Every tag of the memories of `scope` (None: all), each once (`Queries.tags_in`)."""
        return self.queries.tags_in(scope)

    def reference_sources(
        self, keys: Sequence[str], *, fresh: bool = True, current: bool = False
    ) -> list[str] | None:
        """The memory files that may hold any of these link keys, for a rename to read only
        those (`Queries.reference_sources`)."""
        return self.queries.reference_sources(keys, fresh=fresh, current=current)

    def files_with_phrases(self, phrases: Sequence[Sequence[str]]) -> list[str] | None:
        """The memory files whose indexed body holds any of these phrases
        (`Queries.files_with_phrases`)."""
        return self.queries.files_with_phrases(phrases)

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
        nearest: Sequence[tuple[int, float]] | None = None,
    ) -> Found | None:
        """The memories that answer a query, best first (`Queries.search`)."""
        return self.queries.search(
            query,
            tags,
            scope,
            limit,
            per_memory=per_memory,
            offset=offset,
            count=count,
            nearest=nearest,
        )

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
        """While the first indexing runs: the best memories among those indexed, and the
        files not indexed yet (`Queries.search_partial`)."""
        return self.queries.search_partial(
            query, tags, scope, limit, per_memory=per_memory, count=count
        )

    def hidden(self, rank: int, name: str) -> bool:
        """Whether a memory is hidden by one of the same name earlier in lookup order
        (`Queries.hidden`)."""
        return self.queries.hidden(rank, name)

    def duplicate_candidates(
        self, keys: Sequence[int], written: Iterable[str] = ()
    ) -> list[tuple[str, str, bool]] | None:
        """The memories sharing one of these near-duplicate keys
        (`Queries.duplicate_candidates`)."""
        return self.queries.duplicate_candidates(keys, written)

    def duplicate_groups(self) -> list[tuple[int, list[tuple[str, str, bool]]]] | None:
        """Each near-duplicate key that more than one memory and not too many share
        (`Queries.duplicate_groups`)."""
        return self.queries.duplicate_groups()
