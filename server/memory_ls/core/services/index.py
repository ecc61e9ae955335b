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

import bisect
import collections
import contextlib
import gc
import hashlib
import itertools
import json
import operator
import os
import re
import stat
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

from memory_ls.core.rules.document import Document, iso, parse_document
from memory_ls.core.rules.names import GLOBAL_PREFIX, words_of
from memory_ls.core.rules.supersede import (
    KEY_WORD,
    Declaration,
    SupersedeGraph,
    has_relation_keys,
    relation_keys,
    relations,
    relations_from_keys,
)
from memory_ls.core.services.backlinks import LinkIndex, hold, link_keys, serena_key
from memory_ls.core.services.diagnostics import NameIndex
from memory_ls.core.storage.folders import Folder, StoreConfig
from memory_ls.core.storage.fsio import is_temp_file, read_text, user_cache_dir
from memory_ls.core.storage.memory import LISTING_READ_LIMIT, MemoryFile, scan_config

PREVIEW_MAX_LINES = 20
PREVIEW_MAX_CHARS = 1500
# Previews are read when a popup asks; the most recent are kept (a preview per memory of
# a large store would cost more memory than the rest of the index).
PREVIEW_CACHE_ENTRIES = 512
# Beyond the prefix matches, typed text is also looked for inside names and as letters
# in order; typos are tried as one-letter edits of the prefix, for texts this long.
TYPO_MIN_CHARS = 3
TYPO_MAX_CHARS = 32
_TYPO_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789_-./ "
# Letters typed in order are looked for in at most this many names per request.
FUZZY_WINDOW_NAMES = 2000
# The joined text the fuzzy scans search is rebuilt after this many names came or went
# (meanwhile the changed names are checked one by one).
FUZZY_REBUILD_CHANGES = 1000
# A cached fact younger than this is not trusted on the next start: a write within the
# same modification-time tick could have kept the size (as git treats "racy" entries).
RACY_SECONDS = 2.0
# 3: link keys hold the supersede relations a file's frontmatter declares.
FACTS_CACHE_VERSION = 3
# A request that needs every file's links reads those not known yet when there are at
# most this many (files changed since they were read); more are read by the indexing.
LEARN_LINKS_LIMIT = 1000
# While the first indexing runs, tag counts are recounted at most this often.
TAG_RECOUNT_SECONDS = 1.0
_HIGHEST = "\U0010ffff"
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
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


# A file, its tags and its link keys (None: not known), as `link_table` gives them.
LinkRow = tuple[MemoryFile, tuple[str, ...], tuple[str, ...] | None]
# (tags, updated_at, size, link keys) of a file, as `facts_of_text` gives them.
FactsRow = tuple[tuple[str, ...], str | None, int, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class _Facts:
    """What listings and the link index need of one version of a file (the preview is
    read on demand)."""

    stamp: Stamp
    tags: tuple[str, ...]
    updated_at: str | None
    size: int
    # Its link keys (core/services/backlinks.py), with the supersede relations its frontmatter
    # declares (core/rules/supersede.py); None when the file was not read (far too large).
    links: tuple[str, ...] | None = None


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
    return _read_file(path)[0]


def _read_file(path: str) -> tuple[Metadata, tuple[str, ...]]:
    """A memory file's metadata and link keys, from one read (nothing when unreadable)."""
    try:
        text = read_text(path)
    except OSError:
        return Metadata(), ()
    return _metadata_of(text, parse_document(text))


def facts_of_text(text: str, doc: Document) -> FactsRow:
    """What `learn_facts` takes of a file read and parsed elsewhere (the indexing worker
    of core/services/fulltext.py): its tags, update time, size and link keys."""
    metadata, keys = _metadata_of(text, doc)
    return metadata.tags, metadata.updated_at, metadata.size, keys


def _metadata_of(text: str, doc: Document) -> tuple[Metadata, tuple[str, ...]]:
    metadata = Metadata(
        # A store uses a few tags many times: one string each, not one per mention.
        tags=tuple(sys.intern(tag) for tag in doc.tags),
        updated_at=iso(doc.metadata.get("updated_at")),
        preview=make_preview(doc.body),
        size=len(text.encode("utf-8")),
    )
    keys = link_keys(text)
    if doc.raw_frontmatter is not None and KEY_WORD in doc.raw_frontmatter:
        keys += relation_keys(relations(doc.metadata))
    return metadata, keys


class _FuzzyText:
    """One scope's casefolded names joined by newlines, for C-speed substring scans."""

    def __init__(self, folded: Sequence[str], names: Sequence[str]) -> None:
        self.text = "\n" + "\n".join(folded) + "\n"
        self.names = tuple(names)
        # starts[i] is where name i begins in the text; starts[-1] is the text's end.
        self.starts = list(itertools.accumulate((len(f) + 1 for f in folded), initial=1))

    def hits(self, find: Callable[[str, int, int], int], lines: range) -> Iterator[str]:
        """Names of `lines` (in order) in whose line `find(text, start, end)` finds something."""
        if not lines:
            return
        end = self.starts[lines.stop] - 1
        at = find(self.text, self.starts[lines.start], end)
        while at >= 0:
            line = bisect.bisect_right(self.starts, at) - 1
            yield self.names[line]
            at = find(self.text, self.starts[line + 1], end)


class _SortedNames:
    """The valid names of one scope, sorted by (casefolded, exact) for prefix lookups."""

    def __init__(
        self, pairs: Sequence[tuple[str, str]] = (), exact: list[str] | None = None
    ) -> None:
        # `pairs` are (casefolded, name), sorted; `exact` the same names sorted, if known.
        self.folded = [folded for folded, _ in pairs]
        self.names = [name for _, name in pairs]
        # The same names in code-point order: how many match a prefix with its exact case.
        self.exact = sorted(self.names) if exact is None else exact
        self._fuzzy: _FuzzyText | None = None
        self._added: list[str] = []  # since the fuzzy text was built
        self._removed: set[str] = set()

    def __len__(self) -> int:
        return len(self.names)

    def _position(self, name: str) -> tuple[int, bool]:
        folded = name.casefold()
        low = bisect.bisect_left(self.folded, folded)
        high = bisect.bisect_right(self.folded, folded, low)
        at = bisect.bisect_left(self.names, name, low, high)
        return at, at < high and self.names[at] == name

    def add(self, name: str) -> None:
        """Add a name (no-op when present)."""
        at, present = self._position(name)
        if present:
            return
        self.folded.insert(at, _folded(name))
        self.names.insert(at, name)
        bisect.insort(self.exact, name)
        if self._fuzzy is not None:
            if name in self._removed:
                self._removed.discard(name)
            else:
                self._added.append(name)

    def discard(self, name: str) -> None:
        """Remove a name (no-op when absent)."""
        at, present = self._position(name)
        if not present:
            return
        del self.folded[at]
        del self.names[at]
        del self.exact[bisect.bisect_left(self.exact, name)]
        if self._fuzzy is not None:
            if name in self._added:
                self._added.remove(name)
            else:
                self._removed.add(name)

    def with_prefix(self, prefix: str, limit: int) -> tuple[list[str], int]:
        """Up to `limit` names starting with `prefix` ignoring case, exact-case ones first,
        and how many there are in all."""
        folded = prefix.casefold()
        low = bisect.bisect_left(self.folded, folded)
        high = bisect.bisect_left(self.folded, folded + _HIGHEST, low)
        total = high - low
        exact = bisect.bisect_left(self.exact, prefix + _HIGHEST) - bisect.bisect_left(
            self.exact, prefix
        )
        if exact in (0, total):  # one kind only: sorted order is the ranked order
            return self.names[low : min(high, low + limit)], total
        # Mixed cases: exact-case matches first, each kind in sorted order (C-level filters
        # that stop as soon as they have enough).
        window = self.names[low:high]
        exact_case = operator.methodcaller("startswith", prefix)
        first = list(itertools.islice(filter(exact_case, window), min(limit, exact)))
        other = itertools.islice(itertools.filterfalse(exact_case, window), limit - len(first))
        return first + list(other), total

    def fuzzy(self, typed: str, limit: int, skip: set[str]) -> list[str]:
        """Up to `limit` names (none of `skip`) holding `typed` ignoring case: as a
        substring, then as letters in order, then as a prefix with one typo."""
        folded = typed.casefold()
        if "\n" in folded:
            return []
        found: list[str] = []
        seen = set(skip)

        def take(names: Iterable[str]) -> bool:
            for name in names:
                if name not in seen and name not in self._removed:
                    seen.add(name)
                    found.append(name)
                    if len(found) >= limit:
                        return True
            return False

        text = self._fuzzy_text()
        added = list(self._added)
        everything = range(len(text.names))
        if take(text.hits(lambda t, at, end: t.find(folded, at, end), everything)):
            return found
        if take(n for n in added if folded in n.casefold()):
            return found
        # Letters in order: a regex, much slower per name than a substring search, so it
        # runs over a window of names from where the typed text sorts (then wrapping).
        in_order = re.compile(
            re.escape(folded[0])
            + "".join(f"[^\\n{re.escape(c)}]*{re.escape(c)}" for c in folded[1:])
        )
        # (The text may predate names added since: positions are clamped to it.)
        first = min(bisect.bisect_left(self.folded, folded), len(everything))
        last = first + FUZZY_WINDOW_NAMES
        for window in (
            range(first, min(last, len(everything))),
            range(min(first, max(0, last - len(everything)))),  # wrapped round
        ):
            if take(
                text.hits(lambda t, at, end: _match_start(in_order.search(t, at, end)), window)
            ):
                return found
        if take(n for n in added if in_order.search(n.casefold())):
            return found
        # Typos are looked for when no name starts with the typed text. One at position i
        # keeps the letters before it: no name starts with those, no variant changing
        # position i or later can match.
        keep = len(folded)
        while keep and not self._folded_count(folded[:keep]):
            keep -= 1
        if TYPO_MIN_CHARS <= len(folded) <= TYPO_MAX_CHARS and keep < len(folded):
            for variant in _one_typo(folded, keep):
                if take(self._with_folded_prefix(variant, limit - len(found))):
                    break
        return found

    def _folded_count(self, folded: str) -> int:
        low = bisect.bisect_left(self.folded, folded)
        return bisect.bisect_left(self.folded, folded + _HIGHEST, low) - low

    def _with_folded_prefix(self, folded: str, limit: int) -> list[str]:
        """Up to `limit` names whose casefolded form starts with `folded`, in sorted order."""
        low = bisect.bisect_left(self.folded, folded)
        high = bisect.bisect_left(self.folded, folded + _HIGHEST, low, min(low + limit, len(self)))
        return self.names[low:high]

    def _fuzzy_text(self) -> _FuzzyText:
        if self._fuzzy is None or len(self._added) + len(self._removed) > FUZZY_REBUILD_CHANGES:
            self._fuzzy = _FuzzyText(self.folded, self.names)
            self._added, self._removed = [], set()
        return self._fuzzy


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


def _folded(name: str) -> str:
    """A name casefolded, as the name itself where that changes nothing (most names are
    lowercase already: one string, not two, per memory)."""
    folded = name.casefold()
    return name if folded == name else folded


def _match_start(match: re.Match[str] | None) -> int:
    return -1 if match is None else match.start()


def _one_typo(word: str, keep: int) -> Iterator[str]:
    """`word` with one letter dropped, two neighbours swapped, or one letter changed, at
    position `keep` or before."""
    seen = {word}
    positions = range(min(keep + 1, len(word)))
    candidates = itertools.chain(
        (word[:i] + word[i + 1 :] for i in positions),
        (word[:i] + word[i + 1] + word[i] + word[i + 2 :] for i in positions if i + 1 < len(word)),
        (word[:i] + c + word[i + 1 :] for i in positions for c in _TYPO_ALPHABET),
    )
    for candidate in candidates:
        if candidate and candidate not in seen:
            seen.add(candidate)
            yield candidate


def facts_cache_path(config: StoreConfig) -> str:
    """Where the facts of this store's files are cached between starts."""
    key = "\n".join(folder.path for folder in config.folders).encode("utf-8", "surrogateescape")
    return str(user_cache_dir() / "index" / f"{hashlib.sha256(key).hexdigest()[:32]}.jsonl")


class MemoryIndex:
    """The memories of one store configuration, kept current by per-path updates."""

    def __init__(self, config: StoreConfig) -> None:
        self.config = config
        self._lock = threading.RLock()
        self._order = {folder.path: rank for rank, folder in enumerate(config.folders)}
        # Path -> (file, stamp); the stamp is None until the file is first looked at.
        self._files: dict[str, tuple[MemoryFile, Stamp | None]] = {}
        # The directories that hold (or held) indexed files: a deleted path that is none
        # of them, nor above one, had nothing indexed under it (no walk over every file).
        self._directories: set[str] = set()
        # Valid names -> their files in lookup order: the file itself when it is the only
        # one, as nearly every name has (a list each costs 10 MB at 100,000 memories).
        self._by_name: dict[str, MemoryFile | list[MemoryFile]] = {}
        # Names per scope: every name sorted; per scope, the set of names and (built on
        # first use, then kept current) the scope's own sorted names.
        self._views: dict[str | None, _SortedNames | None] = {
            None: _SortedNames(),
            "project": None,
            "global": None,
        }
        self._in_scope: dict[str, set[str]] = {"project": set(), "global": set()}
        self._shadowed: dict[str, MemoryFile] = {}
        self._facts: dict[str, _Facts] = {}
        # Who links to whom, from the facts' link keys; files whose keys are not known yet
        # (not read since they changed) are "unlinked": searches read them whole.
        self._links = LinkIndex()
        self._unlinked: set[str] = set()
        # Files whose link keys record supersede relations (few: a set of their paths).
        self._declaring: set[str] = set()
        self._graph: tuple[tuple[int, int], SupersedeGraph] | None = None
        self._previews: collections.OrderedDict[str, tuple[Stamp, str]] = collections.OrderedDict()
        self._generation = 0
        self._facts_generation = 0
        self._snapshots: dict[tuple[str, str | None], tuple[int, object]] = {}
        self._tag_counts: tuple[tuple[int, int], float, dict[str, int]] | None = None
        self._warming = False
        # Facts learnt from another process (`learn_facts`) since the cache was written.
        self._learnt_unsaved = False
        self._scanned = threading.Event()

    # ----- building and updating -------------------------------------------------------

    @property
    def generation(self) -> int:
        """A number that changes whenever a memory appears, disappears or changes."""
        return self._generation

    @property
    def facts_generation(self) -> int:
        """A number that changes whenever a file's tags or links are learnt or forgotten."""
        return self._facts_generation

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
        by_name: dict[str, MemoryFile | list[MemoryFile]] = {}
        in_scope: dict[str, set[str]] = {"project": set(), "global": set()}
        for memory in found:  # folder by folder in lookup order, so each list is ranked
            if memory.valid:
                # Keyed by Serena's name: `x` and `global/x` are two memories.
                qualified = memory.qualified
                hold(by_name, qualified, memory)
                in_scope[memory.folder.scope].add(qualified)
        every = _SortedNames(sorted((_folded(name), name) for name in by_name))
        with self._lock:
            self._files = {memory.path: (memory, stamps.get(memory.path)) for memory in found}
            # A name without `/` lies right in its folder: no path cut up for most.
            self._directories = {
                memory.folder.path if "/" not in memory.name else os.path.dirname(memory.path)
                for memory in found
            }
            self._by_name = by_name
            self._in_scope = in_scope
            self._views = {None: every, "project": None, "global": None}
            self._shadowed = {
                hidden.path: held[0]
                for held in by_name.values()
                if isinstance(held, list)
                for hidden in held[1:]
            }
            self._facts = {p: f for p, f in self._facts.items() if p in self._files}
            self._links.clear()
            self._declaring = set()
            for path, facts in self._facts.items():
                if facts.links is not None:
                    self._links.add(path, facts.links)
                    if has_relation_keys(facts.links):
                        self._declaring.add(path)
            self._unlinked = (
                {p for p in self._files if self._linked_facts(p) is None}
                if self._facts
                else set(self._files)  # a first start: nothing learnt yet
            )
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
        stamp = _stamp(path) if memory is not None else None
        with self._lock:
            if memory is None or stamp is None:
                return self._remove([path]) if path in self._files else Update()
            known = self._files.get(path)
            if reread and known is not None and known == (memory, stamp):
                self._drop_facts(path)
                self._previews.pop(path, None)
                self._unlinked.add(path)
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
        for path in _walk_markdown(directory):
            memory = self.memory_at(path)
            stamp = _stamp(path) if memory is not None else None
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
        found: list[str] = []
        for path in paths:
            if os.path.isdir(path):
                inside = [os.path.join(d, name) for d, _, names in os.walk(path) for name in names]
            else:
                inside = [path]
            found += [p for p in inside if self.memory_at(p) is not None]
        return found

    def memory_at(self, path: str) -> MemoryFile | None:
        """The memory file at a path, by the same rules as the directory scan; None if none."""
        if not path.endswith(".md") or is_temp_file(os.path.basename(path)):
            return None
        owned = self.config.name_of(path)
        if owned is None:
            return None
        folder, name = owned
        # By the scan's rules: Serena's ignored memories are not memories at all.
        if folder.patterns.ignored and folder.patterns.is_ignored(folder.qualified(name)):
            return None
        # Links are followed, as Serena follows them (isfile does).
        return MemoryFile(name, path, folder) if os.path.isfile(path) else None

    def _rank(self, memory: MemoryFile) -> int:
        return self._order.get(memory.folder.path, len(self._order))

    def _put(self, memory: MemoryFile, stamp: Stamp) -> Update:
        """Add or refresh one file (lock held)."""
        known = self._files.get(memory.path)
        if known is not None and known[1] == stamp and known[0] == memory:
            return Update()
        self._files[memory.path] = (memory, stamp)
        self._directories.add(os.path.dirname(memory.path))
        self._generation += 1
        facts = self._facts.get(memory.path)
        if facts is not None and facts.stamp != stamp:
            self._drop_facts(memory.path)
        if memory.path not in self._facts:
            self._unlinked.add(memory.path)
        name = memory.qualified
        if known is not None:
            return Update(modified=(name,), paths=(memory.path,))
        if memory.valid:
            before = self._named(name)
            self._set_named(name, sorted((*before, memory), key=self._rank))
            self._name_changed(name, before)
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
            self._drop_facts(path)
            self._unlinked.discard(path)
            self._previews.pop(path, None)
            name = memory.qualified
            removed.append(name)
            before = self._named(name)
            if before:
                self._set_named(name, [f for f in before if f.path != path])
                self._name_changed(name, before)
        if removed:
            self._generation += 1
        return Update(removed=tuple(removed), paths=tuple(gone))

    def _named(self, name: str) -> Sequence[MemoryFile]:
        """The files of a valid name, in lookup order (lock held)."""
        held = self._by_name.get(name)
        if held is None:
            return ()
        return (held,) if isinstance(held, MemoryFile) else tuple(held)

    def _set_named(self, name: str, files: Sequence[MemoryFile]) -> None:
        """Record the files of a valid name, in lookup order (lock held)."""
        if not files:
            self._by_name.pop(name, None)
        else:
            self._by_name[name] = files[0] if len(files) == 1 else list(files)

    def _name_changed(self, name: str, before: Sequence[MemoryFile]) -> None:
        """Bring the views, scopes and shadows of one name up to date (lock held)."""
        after = self._named(name)
        for hidden in before[1:]:
            self._shadowed.pop(hidden.path, None)
        for hidden in after[1:]:
            self._shadowed[hidden.path] = after[0]
        for scope in (None, "project", "global"):
            was = any(scope is None or f.scope == scope for f in before)
            now = any(scope is None or f.scope == scope for f in after)
            if was == now:
                continue
            if scope is not None:
                (self._in_scope[scope].add if now else self._in_scope[scope].discard)(name)
            view = self._views[scope]
            if view is not None:
                (view.add if now else view.discard)(name)

    def _view(self, scope: str | None) -> _SortedNames:
        """The sorted names of a scope (lock held); a scope's own is made on first use."""
        view = self._views[scope]
        if view is None:
            every = self._views[None]
            assert every is not None and scope is not None
            wanted = self._in_scope[scope]
            view = _SortedNames(
                [pair for pair in zip(every.folded, every.names, strict=True) if pair[1] in wanted],
                [name for name in every.exact if name in wanted],
            )
            self._views[scope] = view
        return view

    # ----- lookup ----------------------------------------------------------------------

    def wait_scanned(self, timeout: float) -> bool:
        """Wait until the first scan has finished (at most `timeout` seconds)."""
        return self._scanned.wait(timeout)

    def lookup(self, name: str, scope: str | None = None) -> Entry | None:
        """The memory a name (Serena's: `global/NAME` for a global one) resolves to, with
        what it shadows (lookup order, SPEC 2.3)."""
        with self._lock:
            files = [f for f in self._named(name) if scope is None or f.scope == scope]
        return Entry(files[0], tuple(files[1:])) if files else None

    def winners(
        self, names: Iterable[str], scope: str | None = None
    ) -> list[tuple[MemoryFile, int] | None]:
        """For each name, the memory it resolves to and how many files it shadows (None:
        no such memory), under one hold of the lock: `lookup` without an Entry per name."""
        found: list[tuple[MemoryFile, int] | None] = []
        with self._lock:
            for name in names:
                files = self._named(name)
                if scope is not None:
                    files = [f for f in files if f.scope == scope]
                found.append((files[0], len(files) - 1) if files else None)
        return found

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
        return self._snapshot("names", scope, lambda: tuple(self._view(scope).names))

    def name_words(self, scope: str | None = None) -> frozenset[str]:
        """The words of `names(scope)` (`words_of`), for closest-word suggestions."""
        return self._snapshot(
            "words",
            scope,
            lambda: frozenset(w for n in self._view(scope).names for w in words_of(n)),
        )

    def folded_names(self, scope: str | None = None) -> Sequence[str]:
        """`names(scope)` casefolded, position by position (for fuzzy matching)."""
        return self._snapshot("folded", scope, lambda: tuple(self._view(scope).folded))

    def names_with_prefix(
        self, prefix: str, scope: str | None = None, limit: int | None = None
    ) -> list[str]:
        """Names that start with `prefix`, ignoring case; exact-case matches first."""
        with self._lock:
            view = self._view(scope)
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
            view = self._view(scope)
            if not typed:
                return view.names[:limit], len(view) > limit
            found, total = view.with_prefix(typed, limit)
            if total > limit:
                return found, True
            if len(typed) > 1:
                found += view.fuzzy(typed, limit + 1 - len(found), set(found))
        return found[:limit], len(found) > limit

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
                set(self._in_scope["project"]), {name[skip:] for name in self._in_scope["global"]}
            )

        return self._snapshot("name_index", None, build)

    def shadowed_by(self) -> Mapping[str, MemoryFile]:
        """Path of each shadowed memory -> the memory that hides it."""
        with self._lock:
            return dict(self._shadowed)

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
        with self._lock:
            found = dict.fromkeys(path for key in keys for path in self._links.sources(key))
            found.update(dict.fromkeys(self._unlinked))
        return list(found)

    def link_candidates_for(self, target: str, serena: bool = False) -> list[str]:
        """`link_candidates` for the references to `target` (`global/x` or `x`), with
        Serena's `mem:` mentions of it when `serena` (what a rename rewrites)."""
        keys = [target, serena_key(target)] if serena else [target]
        return self.link_candidates(keys)

    def learn_links(self, limit: int = LEARN_LINKS_LIMIT) -> bool:
        """Read the files whose links are not known yet, when they are few and the first
        indexing is not reading them already; return whether every file's are known."""
        with self._lock:
            if self._warming or len(self._unlinked) > limit:
                return not self._unlinked
            pending = [self._files[path][0] for path in self._unlinked]
        for memory in pending:
            self._facts_of(memory)
        with self._lock:
            return not self._unlinked

    def link_table(self) -> list[LinkRow]:
        """Every indexed file with its tags and link keys as learnt (None: not read since it
        changed, or too large to read), under one hold of the lock and reading nothing."""
        with self._lock:
            table: list[LinkRow] = []
            for path, (memory, _stamp) in self._files.items():
                facts = self._facts.get(path)
                if facts is None:
                    table.append((memory, (), None))
                else:
                    table.append((memory, facts.tags, facts.links))
            return table

    def backlink_count(self, target: str) -> int | None:
        """How many files link to `target` (`global/x` or `x`); None while some files'
        links are not known (files too large to read are not counted)."""
        with self._lock:
            if any(path not in self._facts for path in self._unlinked):
                return None
            return self._links.count(target)

    def declarations(self) -> list[Declaration]:
        """The supersede relations the memories' frontmatter declares, as far as their facts
        are known (a shadowed file's do not count); lines are not recorded."""
        with self._lock:
            found = []
            for path in self._declaring:
                known = self._files.get(path)
                facts = self._facts.get(path)
                if known is None or facts is None or facts.links is None:
                    continue
                memory = known[0]
                if memory.valid and path not in self._shadowed:
                    found.append(Declaration(memory.qualified, relations_from_keys(facts.links)))
            return found

    def supersede_graph(self) -> SupersedeGraph:
        """Who supersedes whom, from `declarations`, built once per change."""

        with self._lock:
            key = (self._generation, self._facts_generation)
            known = self._graph
            if known is not None and known[0] == key:
                return known[1]
            graph = SupersedeGraph(self.declarations(), self.name_index().has_qualified)
            self._graph = (key, graph)
            return graph

    # ----- metadata --------------------------------------------------------------------

    def _current_stamp(self, memory: MemoryFile, reuse: Stamp | None = None) -> Stamp | None:
        """The stamp the index knows for a file, taking one now if it has none yet (`reuse`
        when equal: cached facts and the file then share one stamp)."""
        with self._lock:
            known = self._files.get(memory.path)
        if known is not None and known[1] is not None:
            return known[1]
        stamp = _stamp(memory.path)
        if reuse is not None and stamp == reuse:
            stamp = reuse
        if stamp is not None and known is not None:
            with self._lock:
                if self._files.get(memory.path) == known:
                    self._files[memory.path] = (known[0], stamp)
        return stamp

    def _read(self, memory: MemoryFile, stamp: Stamp | None) -> tuple[Metadata, _Facts | None]:
        """A file's metadata read from disk (huge files are not read), and its facts."""
        if stamp is not None and stamp.size > LISTING_READ_LIMIT * self.config.max_memory_bytes:
            # Far over the limit (a pasted log, a binary): listed, never read (bounded memory).
            parsed, links = Metadata(size=stamp.size), None
        else:
            parsed, links = _read_file(memory.path)
        if stamp is None:
            return parsed, None
        return parsed, _Facts(stamp, parsed.tags, parsed.updated_at, parsed.size, links)

    def learn_facts(self, learnt: Iterable[tuple[str, int, int, FactsRow]]) -> None:
        """Facts of files as another process read them, (path, mtime_ns, size, the
        `facts_of_text` row) each: kept where the file is still known with that stamp."""
        self._learnt_unsaved = True  # for the cache `warm` writes next
        for path, mtime_ns, size, (tags, updated_at, length, links) in learnt:
            stamp = Stamp(mtime_ns, size)
            with self._lock:
                known = self._files.get(path)
                if known is None or known[1] not in (None, stamp):
                    continue
                if known[1] is None:
                    self._files[path] = (known[0], stamp)
            facts = _Facts(
                stamp,
                tuple(sys.intern(tag) for tag in tags),
                updated_at,
                length,
                tuple(map(sys.intern, links)),
            )
            self._store_facts(path, facts)

    def _store_facts(self, path: str, facts: _Facts) -> None:
        with self._lock:
            known = self._files.get(path)
            if known is not None and known[1] == facts.stamp:
                self._drop_facts(path)
                if facts.links is not None:
                    shared = self._links.add(path, facts.links)
                    if shared is not facts.links:
                        facts = replace(facts, links=shared)
                    self._unlinked.discard(path)
                    if has_relation_keys(shared):
                        self._declaring.add(path)
                self._facts[path] = facts
                self._facts_generation += 1

    def _drop_facts(self, path: str) -> None:
        """Forget what was learnt of a file, its links included (lock held)."""
        old = self._facts.pop(path, None)
        if old is None:
            return
        self._facts_generation += 1
        self._declaring.discard(path)
        if old.links is not None:
            self._links.remove(path, old.links)
            self._unlinked.add(path)

    def _linked_facts(self, path: str) -> _Facts | None:
        """The facts of a file whose links are known (lock held)."""
        facts = self._facts.get(path)
        return facts if facts is not None and facts.links is not None else None

    def metadata(self, memory: MemoryFile) -> Metadata:
        """Tags, update time and preview of a memory, parsed once per file version."""
        stamp = self._current_stamp(memory)
        with self._lock:
            facts = self._facts.get(memory.path)
            preview = self._previews.get(memory.path)
        if facts is not None and preview is not None and facts.stamp == stamp == preview[0]:
            with self._lock, contextlib.suppress(KeyError):
                self._previews.move_to_end(memory.path)
            return Metadata(facts.tags, facts.updated_at, preview[1], facts.size)
        parsed, read = self._read(memory, stamp)
        if read is None:
            return parsed
        self._store_facts(memory.path, read)
        with self._lock:
            if memory.path in self._files:
                self._previews[memory.path] = (read.stamp, parsed.preview)
                self._previews.move_to_end(memory.path)
                while len(self._previews) > PREVIEW_CACHE_ENTRIES:
                    self._previews.popitem(last=False)
        return parsed

    def cached_metadata(self, memory: MemoryFile) -> Metadata | None:
        """Metadata already parsed for the current version of a file, without reading it."""
        with self._lock:
            known = self._files.get(memory.path)
            facts = self._facts.get(memory.path)
            preview = self._previews.get(memory.path)
        if known is None or facts is None or preview is None or known[1] is None:
            return None
        if facts.stamp != known[1] or preview[0] != known[1]:
            return None
        return Metadata(facts.tags, facts.updated_at, preview[1], facts.size)

    def _facts_of(self, memory: MemoryFile) -> _Facts | None:
        """The facts of the current version of a file, read now when not known yet."""
        stamp = self._current_stamp(memory)
        with self._lock:
            facts = self._facts.get(memory.path)
        if facts is not None and facts.stamp == stamp:
            return facts
        _parsed, read = self._read(memory, stamp)
        if read is not None:
            self._store_facts(memory.path, read)
        return read

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
        with self._lock:
            pending = [
                memory
                for memory, stamp in self._files.values()
                if stamp is None
                or (memory.path not in self._facts or self._facts[memory.path].stamp != stamp)
            ]
        cached = _load_facts(cache_path) if cache_path and pending else {}
        self._warming = True
        try:
            for done, memory in enumerate(pending, start=1):
                if cancelled is not None and cancelled():
                    return done - 1
                hit = cached.get(memory.path)
                stamp = self._current_stamp(memory, hit.stamp if hit is not None else None)
                if hit is not None and hit.stamp == stamp:
                    self._store_facts(memory.path, hit)
                else:
                    self._facts_of(memory)
                if done % every == 0:
                    if pause is not None:
                        pause()
                    if report is not None:
                        report(done, len(pending))
                elif report is not None and done == len(pending):
                    report(done, len(pending))
        finally:
            self._warming = False
            with self._lock:
                # A set keeps the table it grew to: 100,000 entries while indexing ran.
                self._unlinked = set(self._unlinked)
        if cache_path and (pending or self._learnt_unsaved):
            with self._lock:
                facts = list(self._facts.items())
                self._learnt_unsaved = False
            _save_facts(cache_path, facts)
        return len(pending)

    def tag_counts(self) -> dict[str, int]:
        """Tags in use by resolved memories, with how many use each."""
        with self._lock:
            key = (self._generation, self._facts_generation)
            known = self._tag_counts
            winners = [
                held if isinstance(held, MemoryFile) else held[0] for held in self._by_name.values()
            ]
        if known is not None and (
            known[0] == key
            # While the first indexing runs facts change all the time: recount now and then.
            or (self._warming and time.monotonic() - known[1] < TAG_RECOUNT_SECONDS)
        ):
            return dict(known[2])
        counts: dict[str, int] = {}
        for memory in winners:
            facts = self._facts_of(memory)
            for tag in facts.tags if facts is not None else ():
                counts[tag] = counts.get(tag, 0) + 1
        self._tag_counts = (key, time.monotonic(), counts)
        return dict(counts)

    def folder_of(self, path: str) -> Folder | None:
        """The configured folder a path belongs to."""
        return self.config.owner_of(path)


def _load_facts(path: str) -> dict[str, _Facts]:
    """Facts cached by an earlier start (nothing when the cache is missing or unreadable)."""
    found: dict[str, _Facts] = {}
    try:
        with open(path, encoding="utf-8") as handle:
            if json.loads(handle.readline()) != {"version": FACTS_CACHE_VERSION}:
                return {}
            # One line per file, parsed one by one so the event loop keeps its turns.
            for line in handle:
                file, mtime_ns, size, tags, updated_at, length, links = json.loads(line)
                if isinstance(file, str) and isinstance(tags, list):
                    # Interned as the link index keeps them, so the facts keep this tuple.
                    known = tuple(map(sys.intern, links)) if isinstance(links, list) else None
                    shared = tuple(sys.intern(tag) for tag in tags)
                    found[file] = _Facts(Stamp(mtime_ns, size), shared, updated_at, length, known)
    except (OSError, ValueError, TypeError):
        return {}
    return found


def _save_facts(path: str, facts: Iterable[tuple[str, _Facts]]) -> None:
    """Write the facts cache atomically (best effort: a cache is never worth an error)."""
    racy = time.time_ns() - int(RACY_SECONDS * 1e9)
    directory = os.path.dirname(path)
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=directory, prefix=".facts-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(json.dumps({"version": FACTS_CACHE_VERSION}) + "\n")
                for file, fact in facts:
                    if fact.stamp.mtime_ns < racy:
                        row: list[object] = [file, fact.stamp.mtime_ns, fact.stamp.size]
                        row += [list(fact.tags), fact.updated_at, fact.size]
                        row.append(None if fact.links is None else list(fact.links))
                        handle.write(json.dumps(row) + "\n")
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
    except (OSError, ValueError):
        return


def _walk_markdown(directory: str) -> list[str]:
    """Markdown files under a directory (linked directories are read as a whole scan does)."""
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
                    pending.append(entry.path)
                elif entry.name.endswith(".md"):
                    found.append(entry.path)
            except OSError:
                continue
    return found
