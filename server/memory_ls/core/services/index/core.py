"""An in-memory index of a store's memories, for completion and diagnostics in a server.

Names come from a directory scan (no file is opened). Per scope they are kept sorted
case-insensitively, so a prefix lookup is two bisections and a slice, O(log n + k), and
each file event updates one path (or one directory subtree), never the whole store.
Facts for listings (tags, update time) are parsed in the background and kept in a cache
in the user's cache directory, keyed by path, size and modification time, for the next
start; previews are read when asked for. Thread-safe: a watcher thread, a background
indexer and the event loop share one index.
"""

from __future__ import annotations

import gc
import os
import stat
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from memory_ls.core.rules.names import GLOBAL_PREFIX, words_of
from memory_ls.core.rules.supersede import Declaration, SupersedeGraph
from memory_ls.core.services.backlinks import serena_key
from memory_ls.core.services.diagnostics import NameIndex
from memory_ls.core.services.index.facts import (
    LEARN_LINKS_LIMIT,
    FactsCache,
    FactsRow,
    LinkRow,
    Metadata,
    Stamp,
    stamp_of,
)
from memory_ls.core.services.index.names import NameTable
from memory_ls.core.services.index.paths import memory_at, memory_paths_at, walk_markdown
from memory_ls.core.storage.folders import Folder, StoreConfig
from memory_ls.core.storage.fsio import is_temp_file
from memory_ls.core.storage.memory import MemoryFile, scan_config

T = TypeVar("T")


@dataclass(frozen=True)
class Update:
    """What one index update changed (names are as on disk)."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    # The files added, changed or removed (for the full-text index).
    paths: tuple[str, ...] = ()

    @property
    def names_changed(self) -> bool:
        """Whether a memory appeared or disappeared (links may now resolve differently)."""
        return bool(self.added or self.removed)

    @property
    def changed(self) -> bool:
        """Whether anything changed at all."""
        return bool(self.added or self.removed or self.modified)

    def merged(self, other: Update) -> Update:
        """Both updates as one."""
        return Update(
            self.added + other.added,
            self.removed + other.removed,
            self.modified + other.modified,
            self.paths + other.paths,
        )


@dataclass(frozen=True)
class Entry:
    """A memory as lookup sees it: the winning file and those it shadows."""

    memory: MemoryFile
    shadows: tuple[MemoryFile, ...] = ()

    @property
    def name(self) -> str:
        """The memory's name as Serena writes it (`global/NAME` for a global memory)."""
        return self.memory.qualified


def _combined(updates: Iterable[Update]) -> Update:
    """Many updates as one (merging them pairwise would copy the tuples again and again)."""
    added: list[str] = []
    removed: list[str] = []
    modified: list[str] = []
    paths: list[str] = []
    for update in updates:
        added += update.added
        removed += update.removed
        modified += update.modified
        paths += update.paths
    return Update(tuple(added), tuple(removed), tuple(modified), tuple(paths))


class MemoryIndex:
    """The memories of one store configuration, kept current by per-path updates."""

    def __init__(self, config: StoreConfig) -> None:
        self._lock = threading.RLock()
        self._order = {folder.path: rank for rank, folder in enumerate(config.folders)}
        # Path -> (file, stamp); the stamp is None until the file is first looked at.
        self._files: dict[str, tuple[MemoryFile, Stamp | None]] = {}
        # The directories that hold (or held) indexed files: a deleted path that is none
        # of them, nor above one, had nothing indexed under it (no walk over every file).
        self._directories: set[str] = set()
        # Valid names, their files in lookup order and the names per scope, sorted.
        self._names = NameTable(self._order)
        # What is known of the files' contents: tags, links, previews (the same lock).
        self.facts = FactsCache(config, self._lock, self._files)
        self.config = config
        self._graph: tuple[tuple[int, int], SupersedeGraph] | None = None
        self._generation = 0
        self._snapshots: dict[tuple[str, str | None], tuple[int, object]] = {}
        self._scanned = threading.Event()

    @property
    def config(self) -> StoreConfig:
        """The store configuration (its limits may change while the index stays)."""
        return self._config

    @config.setter
    def config(self, config: StoreConfig) -> None:
        self._config = self.facts.config = config

    # ----- building and updating -------------------------------------------------------

    @property
    def generation(self) -> int:
        """A number that changes whenever a memory appears, disappears or changes."""
        return self._generation

    @property
    def facts_generation(self) -> int:
        """A number that changes whenever a file's tags or links are learnt or forgotten."""
        return self.facts.generation

    @property
    def scanned(self) -> bool:
        """Whether the initial directory scan has finished."""
        return self._scanned.is_set()

    def scan(
        self,
        found: Sequence[MemoryFile] | None = None,
        stamps: Mapping[str, Stamp] | None = None,
    ) -> int:
        """Read every folder's directory tree (no file contents); return the file count.

        `found`: the files a walk by the scan's rules already listed (folder by folder in
        lookup order), with the stamps it took by path in `stamps`: nothing is read again.
        """
        # Cycle collection would walk the heap again and again while 100,000 objects are
        # made that hold no cycles; it runs once when the scan is done.
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self._scan(found, stamps or {})
        finally:
            if collecting:
                gc.enable()

    def _scan(self, listed: Sequence[MemoryFile] | None, stamps: Mapping[str, Stamp]) -> int:
        found = scan_config(self.config) if listed is None else listed
        names = NameTable.of(self._order, found)
        with self._lock:
            self._files = {memory.path: (memory, stamps.get(memory.path)) for memory in found}
            # A name without `/` lies right in its folder: no path cut up for most.
            self._directories = {
                memory.folder.path if "/" not in memory.name else os.path.dirname(memory.path)
                for memory in found
            }
            self._names = names
            self.facts.reset(self._files)
            self._generation += 1
        self._scanned.set()
        return len(found)

    def update_path(self, path: str, *, reread: bool = False) -> Update:
        """Bring one changed path (file or directory, created, changed or gone) up to date.

        `reread`: a file event said it changed: its facts are read again even when its size
        and modification time are as known (a copy that kept its time, two writes within
        one tick of the file system's clock).
        """
        path = os.path.normpath(os.path.abspath(path))
        try:
            info = os.lstat(path)
        except OSError:
            info = None
        if info is not None and stat.S_ISDIR(info.st_mode):
            return self._update_tree(path)
        if info is None:
            with self._lock:
                if path in self._files:
                    return self._remove([path])
                # A directory that went away: drop everything that was under it.
                inside = path + os.sep
                if not any(d == path or d.startswith(inside) for d in self._directories):
                    return Update()
                return self._remove([p for p in self._files if p.startswith(inside)])
        memory = self.memory_at(path)
        stamp = stamp_of(path) if memory is not None else None
        with self._lock:
            if memory is None or stamp is None:
                return self._remove([path]) if path in self._files else Update()
            known = self._files.get(path)
            if reread and known is not None and known == (memory, stamp):
                self.facts.reread(path)
                self._generation += 1
                return Update(modified=(memory.qualified,), paths=(path,))
            return self._put(memory, stamp)

    def update_paths(self, paths: Iterable[str], *, reread: bool = False) -> Update:
        """Update several paths; each distinct path once (`reread`: see `update_path`)."""
        return _combined(self.update_path(path, reread=reread) for path in dict.fromkeys(paths))

    def _update_tree(self, directory: str) -> Update:
        """Re-read one directory subtree: what appeared, changed or went away in it."""
        if self.config.owner_of(directory + os.sep + "x.md") is None:
            # Above the folders (a parent watched for a folder to appear): what it holds
            # that matters is the folders inside it, each read as a whole.
            inside = directory + os.sep
            folders = [f.path for f in self.config.folders if f.path.startswith(inside)]
            return _combined(self.update_path(folder) for folder in folders)
        found: dict[str, tuple[MemoryFile, Stamp]] = {}
        for path in walk_markdown(directory):
            memory = self.memory_at(path)
            stamp = stamp_of(path) if memory is not None else None
            if memory is not None and stamp is not None:
                found[path] = (memory, stamp)
        # Files already known as they are need no update (and no hold of the lock).
        changed = [pair for path, pair in found.items() if self._files.get(path) != pair]
        with self._lock:
            inside = directory + os.sep
            gone = [p for p in self._files if p.startswith(inside) and p not in found]
            removed = self._remove(gone)
            return _combined([removed, *(self._put(memory, stamp) for memory, stamp in changed)])

    def memory_paths_at(self, paths: Iterable[str]) -> list[str]:
        """The memory files among `paths`, a folder standing for every file under it (one
        that appeared or moved in), by the scan's rules (no ignored memory, no temporary
        file)."""
        return memory_paths_at(self.config, paths)

    def memory_at(self, path: str) -> MemoryFile | None:
        """The memory file at a path, by the same rules as the directory scan; None if none."""
        return memory_at(self.config, path)

    def _put(self, memory: MemoryFile, stamp: Stamp) -> Update:
        """Add or refresh one file (lock held)."""
        known = self._files.get(memory.path)
        if known is not None and known[1] == stamp and known[0] == memory:
            return Update()
        self._files[memory.path] = (memory, stamp)
        self._directories.add(os.path.dirname(memory.path))
        self._generation += 1
        self.facts.refresh(memory.path, stamp)
        name = memory.qualified
        if known is not None:
            return Update(modified=(name,), paths=(memory.path,))
        if memory.valid:
            self._names.add(name, memory)
        return Update(added=(name,), paths=(memory.path,))

    def _remove(self, paths: Iterable[str]) -> Update:
        """Forget files (lock held)."""
        removed: list[str] = []
        gone: list[str] = []
        for path in paths:
            known = self._files.pop(path, None)
            if known is None:
                continue
            gone.append(path)
            memory = known[0]
            self.facts.forget(path)
            name = memory.qualified
            removed.append(name)
            self._names.remove(name, path)
        if removed:
            self._generation += 1
        return Update(removed=tuple(removed), paths=tuple(gone))

    # ----- lookup ----------------------------------------------------------------------

    def wait_scanned(self, timeout: float) -> bool:
        """Wait until the first scan has finished (at most `timeout` seconds)."""
        return self._scanned.wait(timeout)

    def lookup(self, name: str, scope: str | None = None) -> Entry | None:
        """The memory a name (Serena's: `global/NAME` for a global one) resolves to, with
        what it shadows (lookup order, SPEC 2.3)."""
        with self._lock:
            files = [f for f in self._names.named(name) if scope is None or f.scope == scope]
        return Entry(files[0], tuple(files[1:])) if files else None

    def winners(
        self, names: Iterable[str], scope: str | None = None
    ) -> list[tuple[MemoryFile, int] | None]:
        """For each name, the memory it resolves to and how many files it shadows (None:
        no such memory), under one hold of the lock: `lookup` without an Entry per name."""
        with self._lock:
            return self._names.winners(names, scope)

    def entries(self, scope: str | None = None) -> list[Entry]:
        """Every resolved memory (one per name), sorted by name."""
        found = []
        for name in self.names(scope):
            entry = self.lookup(name, scope)
            if entry is not None:
                found.append(entry)
        return found

    def names(self, scope: str | None = None) -> Sequence[str]:
        """Valid names with a file in the scope (None: any), sorted case-insensitively."""
        return self._snapshot("names", scope, lambda: tuple(self._names.view(scope).names))

    def name_words(self, scope: str | None = None) -> frozenset[str]:
        """The words of `names(scope)` (`words_of`), for closest-word suggestions."""
        return self._snapshot(
            "words",
            scope,
            lambda: frozenset(w for n in self._names.view(scope).names for w in words_of(n)),
        )

    def folded_names(self, scope: str | None = None) -> Sequence[str]:
        """`names(scope)` casefolded, position by position (for fuzzy matching)."""
        return self._snapshot("folded", scope, lambda: tuple(self._names.view(scope).folded))

    def names_with_prefix(
        self, prefix: str, scope: str | None = None, limit: int | None = None
    ) -> list[str]:
        """Names that start with `prefix`, ignoring case; exact-case matches first."""
        with self._lock:
            view = self._names.view(scope)
            return view.with_prefix(prefix, len(view) if limit is None else limit)[0]

    def complete_names(
        self, typed: str, scope: str | None = None, limit: int = 100
    ) -> tuple[list[str], bool]:
        """Up to `limit` names for typed text, best first, and whether more would match.

        Prefix matches (exact case first), then for two characters or more names holding
        the text, or its letters in order, or the prefix with one typo. The work is
        bounded by the lookups and `limit`, never by the size of the store.
        """
        with self._lock:
            return self._names.complete(typed, scope, limit)

    def memory_for(self, path: str) -> MemoryFile | None:
        """The memory a document path is, known or not yet on disk; None outside the folders."""
        path = os.path.normpath(os.path.abspath(path))
        with self._lock:
            known = self._files.get(path)
        if known is not None:
            return known[0]
        owned = self.config.name_of(path)
        if owned is None or is_temp_file(os.path.basename(path)):
            return None
        folder, name = owned
        return MemoryFile(name, path, folder)

    def file(self, path: str) -> MemoryFile | None:
        """The indexed file at a (normalised, absolute) path, if any."""
        with self._lock:
            known = self._files.get(path)
        return known[0] if known is not None else None

    def files(self) -> list[MemoryFile]:
        """Every indexed file, valid or not, in no particular order."""
        with self._lock:
            return [memory for memory, _ in self._files.values()]

    def stamps(self) -> dict[str, Stamp]:
        """The stamp of every file that has been looked at, by path."""
        with self._lock:
            return {path: stamp for path, (_m, stamp) in self._files.items() if stamp is not None}

    def name_index(self) -> NameIndex:
        """Which names exist per scope, for broken-link checks."""

        def build() -> NameIndex:
            skip = len(GLOBAL_PREFIX)
            return NameIndex(
                set(self._names.in_scope["project"]),
                {name[skip:] for name in self._names.in_scope["global"]},
            )

        return self._snapshot("name_index", None, build)

    def shadowed_by(self) -> Mapping[str, MemoryFile]:
        """Path of each shadowed memory -> the memory that hides it."""
        with self._lock:
            return dict(self._names.shadowed)

    def _snapshot(self, kind: str, scope: str | None, build: Callable[[], T]) -> T:
        """A view built at most once per generation (the lock held while building)."""
        with self._lock:
            known = self._snapshots.get((kind, scope))
            if known is not None and known[0] == self._generation:
                return known[1]  # type: ignore[return-value]
            value = build()
            self._snapshots[kind, scope] = (self._generation, value)
            return value

    # ----- links -----------------------------------------------------------------------

    def link_candidates(self, keys: Iterable[str]) -> list[str]:
        """The files that may hold any of the link keys (core/services/backlinks.py): those the link
        index names, and every file whose links are not known yet. Read them to know."""
        return self.facts.link_candidates(keys)

    def link_candidates_for(self, target: str, serena: bool = False) -> list[str]:
        """`link_candidates` for the references to `target` (`global/x` or `x`), with
        Serena's `mem:` mentions of it when `serena` (what a rename rewrites)."""
        keys = [target, serena_key(target)] if serena else [target]
        return self.link_candidates(keys)

    def learn_links(self, limit: int = LEARN_LINKS_LIMIT) -> bool:
        """Read the files whose links are not known yet, when they are few and the first
        indexing is not reading them already; return whether every file's are known."""
        return self.facts.learn_links(limit)

    def link_table(self) -> list[LinkRow]:
        """Every indexed file with its tags and link keys as learnt (None: not read since it
        changed, or too large to read), under one hold of the lock and reading nothing."""
        return self.facts.link_table()

    def backlink_count(self, target: str) -> int | None:
        """How many files link to `target` (`global/x` or `x`); None while some files'
        links are not known (files too large to read are not counted)."""
        return self.facts.backlink_count(target)

    def declarations(self) -> list[Declaration]:
        """The supersede relations the memories' frontmatter declares, as far as their facts
        are known (a shadowed file's do not count); lines are not recorded."""
        with self._lock:
            return self.facts.declarations(self._names.shadowed)

    def supersede_graph(self) -> SupersedeGraph:
        """Who supersedes whom, from `declarations`, built once per change."""

        with self._lock:
            key = (self._generation, self.facts.generation)
            known = self._graph
            if known is not None and known[0] == key:
                return known[1]
            graph = SupersedeGraph(self.declarations(), self.name_index().has_qualified)
            self._graph = (key, graph)
            return graph

    # ----- metadata --------------------------------------------------------------------

    def learn_facts(self, learnt: Iterable[tuple[str, int, int, FactsRow]]) -> None:
        """Facts of files as another process read them, (path, mtime_ns, size, the
        `facts_of_text` row) each: kept where the file is still known with that stamp."""
        self.facts.learn_facts(learnt)

    def metadata(self, memory: MemoryFile) -> Metadata:
        """Tags, update time and preview of a memory, parsed once per file version."""
        return self.facts.metadata(memory)

    def cached_metadata(self, memory: MemoryFile) -> Metadata | None:
        """Metadata already parsed for the current version of a file, without reading it."""
        return self.facts.cached_metadata(memory)

    def warm(
        self,
        report: Callable[[int, int], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
        every: int = 200,
        cache_path: str | None = None,
        pause: Callable[[], None] | None = None,
    ) -> int:
        """Learn the facts of every file not known yet (from `cache_path` where it still
        holds for a file, else by parsing it); return how many files were looked at.
        `pause` is called every `every` files (to let searches run)."""
        return self.facts.warm(report, cancelled, every, cache_path, pause)

    def tag_counts(self) -> dict[str, int]:
        """Tags in use by resolved memories, with how many use each."""
        with self._lock:
            key = (self._generation, self.facts.generation)
            winners = [
                held if isinstance(held, MemoryFile) else held[0]
                for held in self._names.by_name.values()
            ]
        return self.facts.tag_counts(key, winners)

    def folder_of(self, path: str) -> Folder | None:
        """The configured folder a path belongs to."""
        return self.config.owner_of(path)
