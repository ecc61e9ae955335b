"""An in-memory index of a store's memories, for completion and diagnostics in a server.

Names come from a directory scan (cheap); metadata (tags, dates, a preview) is parsed
lazily or in the background and cached by path, modification time and size. Each file
event updates one path (or one directory subtree), never the whole store. Thread-safe:
a watcher thread, a background indexer and the event loop share one index.
"""

from __future__ import annotations

import bisect
import os
import stat
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from memory_ls.core.diagnostics import NameIndex
from memory_ls.core.document import iso, parse_document
from memory_ls.core.folders import Folder, StoreConfig
from memory_ls.core.fsio import is_temp_file, is_within, read_text
from memory_ls.core.store import LISTING_READ_LIMIT, MemoryFile, Store

PREVIEW_MAX_LINES = 20
PREVIEW_MAX_CHARS = 1500


@dataclass(frozen=True)
class Stamp:
    """What tells one version of a file from another without reading it."""

    mtime_ns: int
    size: int


@dataclass(frozen=True)
class Metadata:
    """What completion and hover show about a memory."""

    tags: tuple[str, ...] = ()
    updated_at: str | None = None
    preview: str = ""
    size: int = 0


@dataclass(frozen=True)
class Update:
    """What one index update changed (names are as on disk)."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()

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
            self.added + other.added, self.removed + other.removed, self.modified + other.modified
        )


@dataclass(frozen=True)
class Entry:
    """A memory as lookup sees it: the winning file and those it shadows."""

    memory: MemoryFile
    shadows: tuple[MemoryFile, ...] = ()

    @property
    def name(self) -> str:
        """The memory's name."""
        return self.memory.name


@dataclass
class _Derived:
    """Views rebuilt at most once per index generation."""

    generation: int
    names: NameIndex
    shadowed_by: dict[str, MemoryFile] = field(default_factory=dict)
    # Per scope (None = all): valid names sorted case-insensitively, and casefolded.
    sorted_names: dict[str | None, list[str]] = field(default_factory=dict)
    folded_names: dict[str | None, list[str]] = field(default_factory=dict)


def _stamp(path: str) -> Stamp | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return Stamp(info.st_mtime_ns, info.st_size)


def make_preview(body: str) -> str:
    """The first lines of a memory's body, cut to a size a popup can show."""
    lines = body.strip("\n").split("\n")
    text = "\n".join(lines[:PREVIEW_MAX_LINES]).strip()
    cut = len(lines) > PREVIEW_MAX_LINES
    if len(text) > PREVIEW_MAX_CHARS:
        text, cut = text[:PREVIEW_MAX_CHARS].rstrip(), True
    return text + ("\n\n…" if cut else "")


def read_metadata(path: str) -> Metadata:
    """Parse one memory file for its tags, update time and preview."""
    try:
        text = read_text(path)
    except OSError:
        return Metadata()
    doc = parse_document(text)
    return Metadata(
        tags=tuple(doc.tags),
        updated_at=iso(doc.metadata.get("updated_at")),
        preview=make_preview(doc.body),
        size=len(text.encode("utf-8")),
    )


class MemoryIndex:
    """The memories of one store configuration, kept current by per-path updates."""

    def __init__(self, config: StoreConfig) -> None:
        self.config = config
        self._lock = threading.RLock()
        self._order = {folder.path: rank for rank, folder in enumerate(config.folders)}
        self._files: dict[str, tuple[MemoryFile, Stamp]] = {}
        self._by_name: dict[str, list[MemoryFile]] = {}
        # Valid names sorted by (casefolded, exact), for case-insensitive prefix lookup.
        self._sorted: list[tuple[str, str]] = []
        self._metadata: dict[str, tuple[Stamp, Metadata]] = {}
        self._generation = 0
        self._derived: _Derived | None = None
        self._scanned = threading.Event()

    # ----- building and updating -------------------------------------------------------

    @property
    def generation(self) -> int:
        """A number that changes whenever a memory appears, disappears or changes."""
        return self._generation

    @property
    def scanned(self) -> bool:
        """Whether the initial directory scan has finished."""
        return self._scanned.is_set()

    def scan(self) -> int:
        """Read every folder's directory tree (no file contents); return the file count."""
        found = Store(self.config).scan()
        stamped = [(memory, _stamp(memory.path)) for memory in found]
        with self._lock:
            self._files = {m.path: (m, s) for m, s in stamped if s is not None}
            self._by_name = {}
            for memory, _ in self._files.values():
                if memory.valid:
                    self._by_name.setdefault(memory.name, []).append(memory)
            for files in self._by_name.values():
                files.sort(key=self._rank)
            self._sorted = sorted((name.casefold(), name) for name in self._by_name)
            self._generation += 1
        self._scanned.set()
        return len(stamped)

    def update_path(self, path: str) -> Update:
        """Bring one changed path (file or directory, created, changed or gone) up to date."""
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
                return self._remove([p for p in self._files if p.startswith(inside)])
        memory = self._memory_at(path)
        stamp = _stamp(path) if memory is not None else None
        with self._lock:
            if memory is None or stamp is None:
                return self._remove([path]) if path in self._files else Update()
            return self._put(memory, stamp)

    def update_paths(self, paths: Iterable[str]) -> Update:
        """Update several paths; each distinct path once."""
        total = Update()
        for path in dict.fromkeys(paths):
            total = total.merged(self.update_path(path))
        return total

    def _update_tree(self, directory: str) -> Update:
        """Re-read one directory subtree: what appeared, changed or went away in it."""
        found: dict[str, tuple[MemoryFile, Stamp]] = {}
        if self.config.owner_of(directory + os.sep + "x.md") is not None:
            for path in _walk_markdown(directory):
                memory = self._memory_at(path)
                stamp = _stamp(path) if memory is not None else None
                if memory is not None and stamp is not None:
                    found[path] = (memory, stamp)
        with self._lock:
            inside = directory + os.sep
            gone = [p for p in self._files if p.startswith(inside) and p not in found]
            total = self._remove(gone)
            for memory, stamp in found.values():
                total = total.merged(self._put(memory, stamp))
            return total

    def _memory_at(self, path: str) -> MemoryFile | None:
        """The memory file at a path, by the same rules as the directory scan; None if none."""
        if not path.endswith(".md") or is_temp_file(os.path.basename(path)):
            return None
        owned = self.config.name_of(path)
        if owned is None:
            return None
        folder, name = owned
        # The scan skips hidden directories and does not follow directory links.
        directory = os.path.dirname(path)
        while directory != folder.path and len(directory) > len(folder.path):
            if os.path.basename(directory).startswith(".") or os.path.islink(directory):
                return None
            directory = os.path.dirname(directory)
        if os.path.islink(path):
            if not (os.path.isfile(path) and is_within(path, folder.real)):
                return None
        elif not os.path.isfile(path):
            return None
        return MemoryFile(name, path, folder)

    def _rank(self, memory: MemoryFile) -> int:
        return self._order.get(memory.folder.path, len(self._order))

    def _put(self, memory: MemoryFile, stamp: Stamp) -> Update:
        """Add or refresh one file (lock held)."""
        known = self._files.get(memory.path)
        if known is not None and known[1] == stamp and known[0] == memory:
            return Update()
        self._files[memory.path] = (memory, stamp)
        self._generation += 1
        if known is not None:
            return Update(modified=(memory.name,))
        if memory.valid:
            files = self._by_name.setdefault(memory.name, [])
            if not files:
                bisect.insort(self._sorted, (memory.name.casefold(), memory.name))
            files.append(memory)
            files.sort(key=self._rank)
        return Update(added=(memory.name,))

    def _remove(self, paths: Iterable[str]) -> Update:
        """Forget files (lock held)."""
        removed: list[str] = []
        for path in paths:
            known = self._files.pop(path, None)
            if known is None:
                continue
            memory = known[0]
            self._metadata.pop(path, None)
            removed.append(memory.name)
            files = self._by_name.get(memory.name)
            if files is not None:
                files[:] = [f for f in files if f.path != path]
                if not files:
                    del self._by_name[memory.name]
                    key = (memory.name.casefold(), memory.name)
                    at = bisect.bisect_left(self._sorted, key)
                    if at < len(self._sorted) and self._sorted[at] == key:
                        del self._sorted[at]
        if removed:
            self._generation += 1
        return Update(removed=tuple(removed))

    # ----- lookup ----------------------------------------------------------------------

    def lookup(self, name: str, scope: str | None = None) -> Entry | None:
        """The memory a name resolves to (lookup order, SPEC 2.3), with what it shadows."""
        with self._lock:
            files = [f for f in self._by_name.get(name, ()) if scope is None or f.scope == scope]
        return Entry(files[0], tuple(files[1:])) if files else None

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
        return self._derive().sorted_names[scope]

    def folded_names(self, scope: str | None = None) -> Sequence[str]:
        """`names(scope)` casefolded, position by position (for fuzzy matching)."""
        return self._derive().folded_names[scope]

    def names_with_prefix(self, prefix: str, scope: str | None = None) -> list[str]:
        """Names that start with `prefix`, ignoring case; exact-case matches first."""
        folded = prefix.casefold()
        with self._lock:
            start = bisect.bisect_left(self._sorted, (folded, ""))
            found = []
            for key, name in self._sorted[start:]:
                if not key.startswith(folded):
                    break
                found.append(name)
        if scope is not None:
            in_scope = self._derive().names
            wanted = in_scope.global_ if scope == "global" else in_scope.project
            found = [name for name in found if name in wanted]
        found.sort(key=lambda name: not name.startswith(prefix))
        return found

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

    def files(self) -> list[MemoryFile]:
        """Every indexed file, valid or not, in no particular order."""
        with self._lock:
            return [memory for memory, _ in self._files.values()]

    def name_index(self) -> NameIndex:
        """Which names exist per scope, for broken-link checks."""
        return self._derive().names

    def shadowed_by(self) -> Mapping[str, MemoryFile]:
        """Path of each shadowed memory -> the memory that hides it."""
        return self._derive().shadowed_by

    def _derive(self) -> _Derived:
        with self._lock:
            derived = self._derived
            if derived is not None and derived.generation == self._generation:
                return derived
            names = NameIndex()
            shadowed: dict[str, MemoryFile] = {}
            for name, files in self._by_name.items():
                for memory in files:
                    (names.global_ if memory.scope == "global" else names.project).add(name)
                for hidden in files[1:]:
                    shadowed[hidden.path] = files[0]
            derived = _Derived(self._generation, names, shadowed)
            for scope, wanted in (
                (None, None),
                ("project", names.project),
                ("global", names.global_),
            ):
                pairs = [pair for pair in self._sorted if wanted is None or pair[1] in wanted]
                derived.sorted_names[scope] = [name for _, name in pairs]
                derived.folded_names[scope] = [key for key, _ in pairs]
            self._derived = derived
            return derived

    # ----- metadata --------------------------------------------------------------------

    def metadata(self, memory: MemoryFile) -> Metadata:
        """Tags, update time and preview of a memory, parsed once per file version."""
        with self._lock:
            known = self._files.get(memory.path)
            cached = self._metadata.get(memory.path)
        stamp = known[1] if known is not None else _stamp(memory.path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        if stamp is not None and stamp.size > LISTING_READ_LIMIT * self.config.max_memory_bytes:
            # Far over the limit (a pasted log, a binary): listed, never read (bounded memory).
            parsed = Metadata(size=stamp.size)
        else:
            parsed = read_metadata(memory.path)
        if stamp is not None:
            with self._lock:
                if memory.path in self._files:
                    self._metadata[memory.path] = (stamp, parsed)
        return parsed

    def cached_metadata(self, memory: MemoryFile) -> Metadata | None:
        """Metadata already parsed for the current version of a file, without reading it."""
        with self._lock:
            known = self._files.get(memory.path)
            cached = self._metadata.get(memory.path)
        if known is None or cached is None or cached[0] != known[1]:
            return None
        return cached[1]

    def warm(
        self,
        report: Callable[[int, int], None] | None = None,
        cancelled: Callable[[], bool] | None = None,
        every: int = 200,
    ) -> int:
        """Parse the metadata of every file not parsed yet; return how many were parsed."""
        pending = [m for m in self.files() if self.cached_metadata(m) is None]
        for done, memory in enumerate(pending, start=1):
            if cancelled is not None and cancelled():
                return done - 1
            self.metadata(memory)
            if report is not None and (done % every == 0 or done == len(pending)):
                report(done, len(pending))
        return len(pending)

    def tag_counts(self) -> dict[str, int]:
        """Tags in use by resolved memories, with how many use each."""
        counts: dict[str, int] = {}
        for entry in self.entries():
            for tag in self.metadata(entry.memory).tags:
                counts[tag] = counts.get(tag, 0) + 1
        return counts

    def folder_of(self, path: str) -> Folder | None:
        """The configured folder a path belongs to."""
        return self.config.owner_of(path)


def _walk_markdown(directory: str) -> list[str]:
    """Markdown files under a directory, skipping hidden and linked directories."""
    found: list[str] = []
    pending = [directory]
    while pending:
        current = pending.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not entry.name.startswith("."):
                        pending.append(entry.path)
                elif entry.name.endswith(".md"):
                    found.append(entry.path)
            except OSError:
                continue
    return found
