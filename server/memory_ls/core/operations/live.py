"""A store kept live by watching its folders, for a long-lived process without an editor.

The MCP server answers each call from indexes that a watch over the configured folders
keeps current (core/storage/watching.py), as the language server does with its file
events: the name index and link data (core/services/index/), the full-text index
(core/services/search/, live),
and the listing of the folders (`LiveScanCache`, which Store asks instead of reading
directories). No call walks the store: the folders are listed once, at start, by the
full-text index's walk, and compared with the index's manifest that an editor or an
earlier process left (the facts cache too). Each change is then one update per path:

- a change made by another process arrives as a file event (within watchfiles' debounce,
  STEP_MS to DEBOUNCE_MS) and is applied in the background at once; a call that comes
  while events wait applies them first, so it answers for every event received;
- a change made through the store (its `wrote` callback) is applied before the call
  answers.

When no watch can be set up (inotify limits, or MEMORY_LS_NO_SERVER_WATCH=1), `start`
says so and the caller compares the disk with its indexes on each call instead.
"""

from __future__ import annotations

import bisect
import contextlib
import gc
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence

from memory_ls.core.services.index import MemoryIndex, Stamp, facts_cache_path
from memory_ls.core.services.journal import Journal, observe_paths, sync_baseline_elsewhere
from memory_ls.core.services.search import Listing, SearchIndex
from memory_ls.core.storage.folders import Folder, StoreConfig
from memory_ls.core.storage.listing import FolderScan, ScanCache, ScanFolder
from memory_ls.core.storage.memory import MemoryFile, Resolved
from memory_ls.core.storage.watching import (
    FolderWatch,
    appeared_folders,
    arm,
    is_ancestor_or_same,
    server_watch_disabled,
)
from memory_ls.core.store import Store

logger = logging.getLogger(__name__)

# Events within this window are applied as one batch (a save is several events).
BATCH_DELAY_SECONDS = 0.02
# A batch this large is a burst (an agent writing many memories at once). The kernel's
# event queue can overflow in one (inotify keeps 16,384 events) and lost events would leave
# the indexes wrong: once the burst has been quiet this long, the directories it touched
# are read again.
BURST_PATHS = 200
BURST_QUIET_SECONDS = 1.0
# How long a call waits for the full-text index to be brought in line at start before it
# searches by reading the files (an index an editor left is in line within a second).
SEARCH_WAIT_SECONDS = 2.0
# A first sync with this many files to index is not waited for (see `wait_ready`).
LONG_SYNC_FILES = 2_000
# How long a call waits for the names at start (a listing of the folders).
NAMES_WAIT_SECONDS = 120.0
# Background learning of the facts pauses for calls between steps of this many files.
WARM_STEP_FILES = 10
# A pause for calls looks again this often (a call never keeps it waiting for good).
IDLE_WAIT_SECONDS = 1.0
_HIGHEST = "\U0010ffff"


class WatchUnavailable(Exception):
    """The folders cannot be watched (no watcher, inotify limits, turned off)."""


class LiveStore:
    """One store configuration's indexes, kept current by a watch over its folders."""

    def __init__(self, config: StoreConfig) -> None:
        self.config = config
        self.index = MemoryIndex(config)
        self.search_index = SearchIndex(config, live=True)
        self.scan_cache = LiveScanCache(config, self.index)
        # Changes seen on disk that no Store of ours made are journaled (history, revert).
        self.journal = Journal.for_store(config)
        self._ranks = {folder.path: rank for rank, folder in enumerate(config.folders)}
        self._pending: set[str] = set()
        self._pending_lock = threading.Lock()
        self._wake = threading.Condition(self._pending_lock)
        # One update at a time (the background applier, a call settling, a call's writes).
        self._apply_lock = threading.RLock()
        self._watches: dict[bool, FolderWatch | None] = {}
        self._missing: tuple[str, ...] = ()
        # The configured folders watched flat (they held no folder when watched).
        self._flat: tuple[str, ...] = ()
        self._burst_directories: set[str] = set()
        self._burst_timer: threading.Timer | None = None
        self._names_ready = threading.Event()
        self._search_ready = threading.Event()
        self._stopped = False
        # Calls being answered now, and the condition background work waits on for none.
        self._calls = 0
        self._idle = threading.Condition()

    # ----- starting and stopping ----------------------------------------------------------

    def start(self) -> None:
        """Watch the folders, then list them and load the indexes in the background.

        Raises WatchUnavailable when the folders cannot be watched (nothing is left
        running then).
        """
        if server_watch_disabled():
            raise WatchUnavailable("turned off by MEMORY_LS_NO_SERVER_WATCH=1")
        # Watching before listing: a file written between the two is seen by the watch.
        self._arm()
        # A search before the index is in line answers from what it holds and reads only
        # the rest (a store never indexed: the files the first sync has not reached).
        self.search_index.expect_sync()
        threading.Thread(target=self._load, name="memory-ls-live", daemon=True).start()
        threading.Thread(target=self._apply_loop, name="memory-ls-live-apply", daemon=True).start()

    def stop(self) -> None:
        """Stop watching (the indexes stay as they are)."""
        self._stopped = True
        for watch in self._watches.values():
            if watch is not None:
                watch.stop()
        self._watches = {}
        with self._wake:
            self._wake.notify_all()
        if self._burst_timer is not None:
            self._burst_timer.cancel()

    def _arm(self) -> None:
        """Watch the folders as they are now (the new watch active before the old stops)."""
        folders = [f.path for f in self.config.folders]
        self._missing = tuple(path for path in folders if not os.path.isdir(path))
        self._flat, made, unwatched = arm(self._watches, folders, self.enqueue)
        if unwatched:
            self.stop()
            raise WatchUnavailable(f"cannot watch {', '.join(unwatched)}")
        if made:
            self.enqueue(made)

    def _load(self) -> None:
        """List the folders once; from that listing the names (what a first listing and
        every change wait for), then bring the full-text index in line (what a first search
        waits for), then learn the facts."""
        collecting = gc.isenabled()
        gc.disable()  # 100,000 objects that hold no cycles: collected once, at the end
        try:
            listing = self.search_index.walk()
            # The names before the full-text index: on a store never indexed, bringing it
            # in line reads every file (26 s at 100,000 memories on a loaded machine), and
            # a listing or a write must not wait for that; the names take under a second.
            try:
                memories, stamps = self._listed(listing)
                self.scan_cache.load(memories)
                self.index.scan(memories, stamps)
            except Exception:
                logger.exception("listing the memory folders failed")
                self.scan_cache.load(())
            finally:
                self._names_ready.set()
            try:
                # Against the manifest an editor or an earlier process left: a comparison.
                self.search_index.sync(walked=listing)
            except Exception:
                logger.exception("bringing the search index in line failed")
            finally:
                self._search_ready.set()
            self.scan_cache.prepare()  # sorted in the background, before a call asks
        except Exception:
            logger.exception("listing the memory folders failed")
            self.scan_cache.load(())
        finally:
            self._search_ready.set()
            self._names_ready.set()
            # What is alive now lives as long as the server: out of cycle collection, a
            # full collection no longer walks it (a tenth of a second at 100,000
            # memories, in the middle of a call's answer).
            gc.freeze()
            if collecting:
                gc.enable()
        try:
            # Link data for renames and supersede hints, from the facts cache where it holds;
            # paused while a call runs (it holds the interpreter most of the time: a call's
            # every file read would wait for it).
            self.index.warm(
                report=lambda _done, _total: self._wait_idle(),
                every=WARM_STEP_FILES,
                cache_path=facts_cache_path(self.config),
            )
            gc.freeze()  # the facts, as the listing above
        except Exception:
            logger.exception("learning the memories' facts failed")
        try:
            # What changed while no server watched (the first time: every memory's bytes).
            sync_baseline_elsewhere(self.config)
        except Exception:
            logger.exception("catching up the change journal failed")

    def _listed(self, listing: Listing) -> tuple[list[MemoryFile], dict[str, Stamp]]:
        """Every memory file of a walk in lookup order, with its stamp."""
        folders = self.config.folders
        # Paths as `Folder.file_for` makes them, without a join per file.
        bases = [folder.path.rstrip(os.sep) + os.sep for folder in folders]
        plain = os.sep == "/"
        found: list[tuple[int, MemoryFile]] = []
        stamps: dict[str, Stamp] = {}
        for rank, name, mtime, size in zip(
            listing.ranks, listing.names, listing.mtimes, listing.sizes, strict=True
        ):
            if size < 0:
                continue  # gone while walked, or a folder: no memory
            folder = folders[rank]
            path = bases[rank] + name + ".md" if plain else folder.file_for(name)
            memory = MemoryFile(name, path, folder)
            found.append((rank, memory))
            stamps[path] = Stamp(mtime, size)
        found.sort(key=lambda pair: pair[0])  # stable: folder by folder in lookup order
        return [memory for _rank, memory in found], stamps

    @contextlib.contextmanager
    def answering(self) -> Iterator[None]:
        """Around a call: background work waits until it is answered."""
        with self._idle:
            self._calls += 1
        try:
            yield
        finally:
            with self._idle:
                self._calls -= 1
                if not self._calls:
                    self._idle.notify_all()

    def _wait_idle(self) -> None:
        """Wait while calls are being answered (background work, between steps)."""
        with self._idle:
            while self._calls and not self._stopped:
                self._idle.wait(IDLE_WAIT_SECONDS)

    def wait_ready(self) -> None:
        """Wait (briefly) until the full-text index can answer after start: in line, or its
        first sync under way and knowing which files it has not reached (a search reads
        those itself); listings wait for the names themselves, and changes are applied
        once the name index is there."""
        if self._search_ready.is_set():
            return
        deadline = time.monotonic() + SEARCH_WAIT_SECONDS
        backlog = self.search_index.backlog(SEARCH_WAIT_SECONDS)
        # Not for a sync that reads thousands of files (a store never indexed: every
        # file, 26 s at 100,000 memories): the call would wait SEARCH_WAIT_SECONDS for
        # nothing, then read them itself. A few files are indexed within the wait.
        if backlog is not None and backlog < LONG_SYNC_FILES:
            self._search_ready.wait(max(0.0, deadline - time.monotonic()))

    # ----- changes --------------------------------------------------------------------

    def enqueue(self, paths: Iterable[str]) -> None:
        """Changed paths reported by the watch (any thread): applied in the background."""
        with self._wake:
            self._pending.update(os.path.normpath(path) for path in paths)
            self._wake.notify()

    def settle(self) -> None:
        """Apply every change reported so far (before a call answers)."""
        with self._pending_lock:
            paths, self._pending = self._pending, set()
        if paths:
            self.apply(paths)

    def wrote(self, path: str) -> None:
        """The store wrote or removed this path: applied before the call answers."""
        self.apply([os.path.normpath(path)])

    def unsettled(self) -> set[str]:
        """Paths reported changed that the indexes have not caught up with yet."""
        with self._pending_lock:
            return set(self._pending)

    def _apply_loop(self) -> None:
        while not self._stopped:
            with self._wake:
                while not self._pending and not self._stopped:
                    self._wake.wait()
            # An editor's save is several events: they come together in one batch.
            time.sleep(BATCH_DELAY_SECONDS)
            try:
                self.settle()
            except Exception:
                logger.exception("applying file changes failed")

    def apply(self, paths: Iterable[str]) -> None:
        """Bring the indexes in line with these paths (files or folders) as they are now."""
        wanted = set(paths)
        if not wanted:
            return
        self._names_ready.wait(NAMES_WAIT_SECONDS)
        with self._apply_lock:
            # Read again whatever an event names, even when its stamp is as known: the
            # stamp cannot tell a copy that kept its time, or two writes within a tick.
            update = self.index.update_paths(wanted, reread=True)
            if update.paths:
                self.scan_cache.absorb(update.paths)
                self.search_index.apply(update.paths, reread=True)
                self._journal_seen(update.paths)
        if len(wanted) >= BURST_PATHS or self._burst_directories:
            self._burst(wanted)
        # Something appeared on the way to a folder that did not exist: watch it now, and
        # read what it already holds (written before the watch was there).
        related = [
            folder
            for folder in self._missing
            if any(is_ancestor_or_same(p, folder) or is_ancestor_or_same(folder, p) for p in wanted)
        ]
        # A folder made in a folder watched flat: watched whole from now on, and read.
        related += appeared_folders(wanted, self._flat)
        vanished = any(
            not os.path.isdir(f.path) for f in self.config.folders if f.path not in self._missing
        )
        if (related or vanished) and not self._stopped:
            try:
                self._arm()
            except WatchUnavailable as exc:
                logger.warning("memory-ls mcp: %s; changes are no longer seen", exc)
            self.enqueue(folder for folder in related if os.path.isdir(folder))

    def _journal_seen(self, paths: Iterable[str]) -> None:
        """Journal the changes of these files that no Store of ours made."""
        try:
            observe_paths(self.journal, self.config, paths)
        except Exception:
            logger.exception("journaling the changes of %s failed", sorted(paths))

    def _burst(self, paths: set[str]) -> None:
        """Remember where a burst happened; read those directories again once it is over."""
        self._burst_directories.update(os.path.dirname(path) for path in paths)
        if self._burst_timer is not None:
            self._burst_timer.cancel()
        self._burst_timer = threading.Timer(BURST_QUIET_SECONDS, self._after_burst)
        self._burst_timer.daemon = True
        self._burst_timer.start()

    def _after_burst(self) -> None:
        directories, self._burst_directories = self._burst_directories, set()
        self.enqueue(d for d in directories if os.path.isdir(d))

    # ----- answers ----------------------------------------------------------------------

    def store(self, config: StoreConfig) -> Store:
        """A Store for one call on these indexes (its writes applied as they happen)."""
        return Store(
            config,
            self.search_index,
            self.reference_sources,
            scan_cache=self.scan_cache,
            wrote=self.wrote,
        )

    def reference_sources(self, keys: Sequence[str]) -> list[str] | None:
        """The memory files that may hold any of these link keys: those the link index
        names and those changed that it has not caught up with. Until every file's links
        are known (the first minute after a start without a facts cache), the full-text
        index names them (its words), else None: every memory is read."""
        index = self.index
        if index.learn_links():
            found = dict.fromkeys(index.link_candidates(keys))
        else:
            named = self.search_index.reference_sources(keys, current=True)
            if named is None:
                return None
            found = dict.fromkeys(named)
        found.update(dict.fromkeys(index.memory_paths_at(sorted(self.unsettled()))))
        return list(found)


def _first(pair: tuple[tuple[str, str], Resolved]) -> tuple[str, str]:
    return pair[0]


class LiveScanCache(ScanCache):
    """Folder scans and resolved listings from a live index: no directory is read.

    The resolved listing of each scope is kept sorted and patched name by name as files
    come and go, so a change costs a few list operations, not a sort of the store.
    """

    def __init__(self, config: StoreConfig, index: MemoryIndex) -> None:
        super().__init__()
        self.config = config
        self.index = index
        self._ranks = {folder.path: rank for rank, folder in enumerate(config.folders)}
        self._live_lock = threading.RLock()
        self._loaded = threading.Event()
        # Per folder, its files by path; per name as Serena writes it, its files in lookup
        # order (a valid name's first file wins and shadows the others).
        self._by_folder: dict[str, dict[str, MemoryFile]] = {f.path: {} for f in config.folders}
        self._by_name: dict[str, list[MemoryFile]] = {}
        self._live_generation = 0
        # Per scope (None: all), the resolved listing sorted by (name, path), and its keys.
        self._sorted: dict[str | None, tuple[list[Resolved], list[tuple[str, str]]]] = {}
        self._folder_scans: dict[str, FolderScan] = {}
        self._frozen: dict[str | None, tuple[int, tuple[Resolved, ...]]] = {}

    def load(self, memories: Iterable[MemoryFile]) -> None:
        """Take the files of the first listing (folder by folder in lookup order)."""
        with self._live_lock:
            for memory in memories:
                self._by_folder.setdefault(memory.folder.path, {})[memory.path] = memory
                self._by_name.setdefault(memory.qualified, []).append(memory)
            self._live_generation += 1
        self._loaded.set()

    def absorb(self, paths: Iterable[str]) -> None:
        """Take in what the index now knows of these paths (added, changed or gone)."""
        with self._live_lock:
            names: set[str] = set()
            for path in paths:
                now = self.index.file(path)
                owner = self.config.owner_of(path)
                files = self._by_folder.get(owner.path, {}) if owner is not None else {}
                before = files.get(path)
                if before == now:
                    continue  # its contents changed, not its name
                if before is not None:
                    del files[path]
                    held = self._by_name.get(before.qualified, [])
                    held[:] = [m for m in held if m.path != path]
                    if not held:
                        self._by_name.pop(before.qualified, None)
                    names.add(before.qualified)
                if now is not None:
                    self._by_folder.setdefault(now.folder.path, {})[path] = now
                    held = self._by_name.setdefault(now.qualified, [])
                    held.append(now)
                    held.sort(key=lambda m: self._ranks.get(m.folder.path, len(self._ranks)))
                    names.add(now.qualified)
            if not names:
                return
            self._live_generation += 1
            for scope, (items, keys) in self._sorted.items():
                for name in names:
                    self._patch(scope, items, keys, name)

    def prepare(self) -> None:
        """Sort the whole listing now (in the background), before a call asks for it."""
        self._listing(None)

    def _resolved_of(self, name: str, scope: str | None) -> list[Resolved]:
        """A name's entries in a scope's listing, as `store._resolve` makes them."""
        held = self._by_name.get(name, ())
        if len(held) == 1 and (scope is None or held[0].scope == scope):
            return [Resolved(held[0])]  # nearly every name
        files = [m for m in held if scope is None or m.scope == scope]
        if not files:
            return []
        if files[0].valid:
            return [Resolved(files[0], tuple(files[1:]))]
        return sorted((Resolved(m) for m in files), key=lambda r: r.memory.path)

    def _patch(
        self, scope: str | None, items: list[Resolved], keys: list[tuple[str, str]], name: str
    ) -> None:
        """Replace one name's entries in a sorted listing (lock held)."""
        low = bisect.bisect_left(keys, (name, ""))
        high = bisect.bisect_left(keys, (name, _HIGHEST + _HIGHEST), lo=low)
        entries = self._resolved_of(name, scope)
        items[low:high] = entries
        keys[low:high] = [(r.memory.qualified, r.memory.path) for r in entries]

    def _listing(self, scope: str | None) -> tuple[Resolved, ...]:
        """The resolved listing of a scope, sorted by name then path."""
        self._loaded.wait(NAMES_WAIT_SECONDS)
        with self._live_lock:
            frozen = self._frozen.get(scope)
            if frozen is not None and frozen[0] == self._live_generation:
                return frozen[1]
            kept = self._sorted.get(scope)
            if kept is None:
                everything = self._sorted.get(None)
                if scope is not None and everything is not None:
                    # A scope's names are never another's (`global/` names are global).
                    pairs = [
                        (key, item)
                        for key, item in zip(everything[1], everything[0], strict=True)
                        if item.memory.scope == scope
                    ]
                else:
                    entries = [
                        entry for name in self._by_name for entry in self._resolved_of(name, scope)
                    ]
                    pairs = [((r.memory.qualified, r.memory.path), r) for r in entries]
                    pairs.sort(key=_first)
                kept = ([item for _key, item in pairs], [key for key, _item in pairs])
                self._sorted[scope] = kept
            made = tuple(kept[0])
            self._frozen[scope] = (self._live_generation, made)
            return made

    # ----- what Store asks ------------------------------------------------------------

    def scan(self, folder: Folder, skip: Iterable[str], scan_folder: ScanFolder) -> FolderScan:
        """The folder's files as the live index has them (no directory is read)."""
        self._loaded.wait(NAMES_WAIT_SECONDS)
        with self._live_lock:
            generation = self._live_generation
            kept = self._folder_scans.get(folder.path)
            if kept is not None and kept.generation == generation:
                return kept
            files = tuple(self._by_folder.get(folder.path, {}).values())
            scan = FolderScan(generation, files, (), True)
            self._folder_scans[folder.path] = scan
            return scan

    def resolved(
        self, key: tuple[object, ...], build: Callable[[], list[Resolved]]
    ) -> tuple[Resolved, ...]:
        """The resolved listing of a scope (key: scope and scan generations), kept live."""
        scope = key[0]
        if scope is None or scope in ("project", "global"):
            return self._listing(scope)
        return super().resolved(key, build)
