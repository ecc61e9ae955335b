"""The store behind each MCP tool call: settings fixed at start, folders resolved per call.

The folders are watched (core/operations/live.py): each call answers from indexes the watch keeps
current, and the store's own writes are applied before the call answers. Where the
folders cannot be watched, each call compares the memory files with the full-text index
and lists the folders from disk instead (slower on large stores), and the log says so.
"""

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from memory_ls.config import Layer, Settings, merge_layers
from memory_ls.core.operations.agent_search import AgentFilesCache
from memory_ls.core.operations.live import LiveStore, WatchUnavailable
from memory_ls.core.rules.errors import MemoryStoreError
from memory_ls.core.services.journal import Journal, adopt_legacy_journal, journal_path
from memory_ls.core.services.search import SearchIndex, fingerprint, search_index_path
from memory_ls.core.storage.folders import StoreConfig, resolve_store_config
from memory_ls.core.storage.listing import ScanCache
from memory_ls.core.store import Store
from memory_ls.core.store_parts.searching import UNINDEXED_READ_SECONDS
from memory_ls.mcp.answers import failure, refusal
from memory_ls.project_file import ProjectWatch, store_root

if TYPE_CHECKING:
    from mcp.types import CallToolResult

log = logging.getLogger("memory_ls.mcp")


class StoreFactory:
    """Builds the Store for each tool call from settings fixed at start."""

    def __init__(self, flags: Layer, start: str, *, watch: bool = True) -> None:
        # The command-line flags, over the project file found from `start` (read again
        # whenever it changes; an invalid one keeps the last good settings).
        self.flags = flags
        self.project = ProjectWatch(start)
        self.start_dir = start
        self.settings: Settings = merge_layers(flags)
        self.root = start
        self._refresh_project()
        self.reported_missing: tuple[str, ...] | None = None
        # The watched store of the configuration last used; None until started, or when
        # the folders cannot be watched (`unwatched` says why).
        self.live: LiveStore | None = None
        self.unwatched: str | None = None if watch else "not asked to watch"
        self._live_lock = threading.Lock()
        # Without a watch: the full-text index of the configuration last used, kept open
        # between calls and compared with the disk before each search, and folder scans
        # kept while no directory changes.
        self.search_index: SearchIndex | None = None
        self.scan_cache = ScanCache()
        # The journal of the configuration last used, one connection kept between calls.
        self.journal: Journal | None = None
        # Whom the writes are journaled for: `mcp:<clientInfo.name>` once the client said.
        self.source = "mcp"
        # The agents' files searches show, kept per store (root and folders): listing them
        # runs git, so it is done in the background and when a cheap stamp changes
        # (core/operations/agent_search.py), never on every search.
        self._agent_files: dict[tuple[str, tuple[str, ...]], AgentFilesCache] = {}
        self._agent_lock = threading.Lock()

    def config(self) -> StoreConfig:
        """Resolve the folders now; report configured folders that do not exist when that changes.

        Resolving is a handful of stat calls, so it is done on every call: an additional
        folder that appears while the agent works (a clone, a mount) is used at once.
        """
        self._refresh_project()
        project = self.project.project
        config = resolve_store_config(
            self.settings,
            self.root,
            project_file=project.path if project is not None else None,
        )
        if config.missing_additional != self.reported_missing:
            self.reported_missing = config.missing_additional
            for missing in config.missing_additional:
                log.warning("memory-ls: additional folder %s does not exist; skipped", missing)
        return config

    def _refresh_project(self) -> None:
        """Take in the project file's changes; a new problem with it is logged once."""
        changed, problem = self.project.refresh()
        if problem is not None:
            log.warning("memory-ls: %s; the last good configuration stays in effect.", problem)
        if changed:
            project = self.project.project
            layers = (project.layer, self.flags) if project is not None else (self.flags,)
            self.settings = merge_layers(*layers)
            self.root = store_root(self.start_dir, project)

    def configuration_problem(self) -> str | None:
        """What is wrong with the project file on disk now, for every answer (else None)."""
        error = self.project.error
        if error is None:
            return None
        return (
            f"[invalid-configuration] {error}. memory-ls keeps the last good configuration "
            "until the file is fixed."
        )

    def start(self) -> None:
        """Watch the store's folders and load its indexes in the background (at start),
        and list the agents' files."""
        config = self.config()
        self.agent_files(config).start()
        self._live_for(config)
        if config.meaning is not None:
            # Search by meaning: the memories embedded from the start, not the first search.
            try:
                from memory_ls.core.services.meaning.engine import meaning_for
            except ImportError as exc:  # numpy missing: each search says so
                log.warning("memory-ls: search by meaning needs numpy (%s)", exc)
            else:
                meaning_for(config, search_index_path(config))

    def agent_files(self, config: StoreConfig) -> AgentFilesCache:
        """The agents' files of this store's repository, kept between calls."""
        folders = tuple(folder.path for folder in config.folders)
        key = (config.root, folders)
        with self._agent_lock:
            cache = self._agent_files.get(key)
            if cache is None:
                # A new root or new folders (the project file changed): the old list is
                # of no more use.
                cache = AgentFilesCache(config.root, skip=folders)
                self._agent_files = {key: cache}
            return cache

    def _live_for(self, config: StoreConfig) -> LiveStore | None:
        """The watched store for this configuration, started when the folders changed;
        None when they cannot be watched."""
        with self._live_lock:
            if self.unwatched is not None:
                return None
            live = self.live
            if live is not None and _same_store(live.config, config):
                return live
            if live is not None:
                live.stop()
            live = LiveStore(config)
            try:
                live.start()
            except WatchUnavailable as exc:
                self.live, self.unwatched = None, str(exc)
                log.warning(
                    "memory-ls mcp: the memory folders are not watched (%s): each call "
                    "compares every memory file with the index instead (slower on large "
                    "stores).",
                    exc,
                )
                return None
            self.live = live
            return live

    def _store(self, config: StoreConfig) -> Store:
        """The Store for one call, its writes journaled as the MCP server's."""
        store = self._indexed_store(config)
        path = journal_path(config)
        if self.journal is None or self.journal.path != path:
            if self.journal is not None:
                self.journal.close()
            adopt_legacy_journal(config)
            self.journal = Journal(path)
        self.journal.withhold_secrets = config.secrets == "refuse"  # the settings' now
        store.journal = self.journal
        store.source = self.source
        # An agent's first search on a store never indexed answers within about 2 s,
        # saying it is partial (its `notes`), rather than read every file first.
        store.unindexed_read_seconds = UNINDEXED_READ_SECONDS
        return store

    def _indexed_store(self, config: StoreConfig) -> Store:
        """The Store for one call: on the live indexes, else compared with the disk."""
        live = self._live_for(config)
        if live is not None:
            live.wait_ready()
            live.settle()  # every change the watch reported so far
            return live.store(config)
        if self.search_index is None or fingerprint(self.search_index.config) != fingerprint(
            config
        ):
            if self.search_index is not None:
                self.search_index.close()
            self.search_index = SearchIndex(config, live=False)
        return Store(config, self.search_index, scan_cache=self.scan_cache)

    def run(self, act: Callable[[Store], "CallToolResult"]) -> "CallToolResult":
        """Run one tool's action on a fresh Store; a refusal becomes a tool error; a
        project file gone bad is said in the answer."""
        result = self._run(act)
        problem = self.configuration_problem()
        if problem is not None:
            from mcp.types import TextContent

            result.content = [*result.content, TextContent(type="text", text=problem)]
        return result

    def _run(self, act: Callable[[Store], "CallToolResult"]) -> "CallToolResult":
        try:
            config = self.config()
            live = self._live_for(config)
            if live is None:
                return act(self._store(config))
            with live.answering():
                return act(self._store(config))
        except MemoryStoreError as exc:
            return refusal(exc)
        except OSError as exc:
            # Not a refusal with a SPEC code (a full disk, a permission), but the agent should
            # still learn what failed rather than see a bare "Error executing tool".
            where = f" ({exc.filename})" if exc.filename else ""
            return failure(f"The file system refused the operation: {exc.strerror or exc}{where}.")


def _same_store(indexed: StoreConfig, wanted: StoreConfig) -> bool:
    """Whether indexes made for one configuration hold for another (same folders and
    patterns, and the same full-text index)."""
    return (indexed.root, indexed.folders, indexed.patterns) == (
        wanted.root,
        wanted.folders,
        wanted.patterns,
    ) and fingerprint(indexed) == fingerprint(wanted)
