"""What the index knows of file contents (tags, dates, links, previews) and their cache file."""

from __future__ import annotations

import collections
import contextlib
import hashlib
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace

from memory_ls.core.rules.document import Document, iso, parse_document
from memory_ls.core.rules.supersede import (
    KEY_WORD,
    Declaration,
    has_relation_keys,
    relation_keys,
    relations,
    relations_from_keys,
)
from memory_ls.core.services.backlinks import LinkIndex, link_keys
from memory_ls.core.storage.folders import StoreConfig
from memory_ls.core.storage.fsio import read_text, user_cache_dir
from memory_ls.core.storage.memory import LISTING_READ_LIMIT, MemoryFile

PREVIEW_MAX_LINES = 20
PREVIEW_MAX_CHARS = 1500
# Previews are read when a popup asks; the most recent are kept (a preview per memory of
# a large store would cost more memory than the rest of the index).
PREVIEW_CACHE_ENTRIES = 512
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
# While the first indexing runs, tag counts are recounted at most this often.


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
class Facts:
    """What listings and the link index need of one version of a file (the preview is
    read on demand)."""

    stamp: Stamp
    tags: tuple[str, ...]
    updated_at: str | None
    size: int
    # Its link keys (core/services/backlinks.py), with the supersede relations its frontmatter
    # declares (core/rules/supersede.py); None when the file was not read (far too large).
    links: tuple[str, ...] | None = None


def stamp_of(path: str) -> Stamp | None:
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
    of core/services/search/worker.py): its tags, update time, size and link keys."""
    # No preview: `learn_facts` keeps none (a first indexing asks this of every file).
    return (
        tuple(doc.tags),
        iso(doc.metadata.get("updated_at")),
        len(text.encode("utf-8")),
        _keys_of(text, doc),
    )


def _metadata_of(text: str, doc: Document) -> tuple[Metadata, tuple[str, ...]]:
    metadata = Metadata(
        # A store uses a few tags many times: one string each, not one per mention.
        tags=tuple(sys.intern(tag) for tag in doc.tags),
        updated_at=iso(doc.metadata.get("updated_at")),
        preview=make_preview(doc.body),
        size=len(text.encode("utf-8")),
    )
    return metadata, _keys_of(text, doc)


def _keys_of(text: str, doc: Document) -> tuple[str, ...]:
    """A file's link keys: its references' and its supersede relations'."""
    keys = link_keys(text)
    if doc.raw_frontmatter is not None and KEY_WORD in doc.raw_frontmatter:
        keys += relation_keys(relations(doc.metadata))
    return keys


def facts_cache_path(config: StoreConfig) -> str:
    """Where the facts of this store's files are cached between starts."""
    key = "\n".join(folder.path for folder in config.folders).encode("utf-8", "surrogateescape")
    return str(user_cache_dir() / "index" / f"{hashlib.sha256(key).hexdigest()[:32]}.jsonl")


# Path -> (file, stamp) as the index keeps them; the stamp is None until first looked at.
Files = dict[str, tuple[MemoryFile, Stamp | None]]


class FactsCache:
    """The facts learnt of an index's files, the link index built of them and the recent
    previews; the index's lock guards them, and its table of files says which are current."""

    def __init__(self, config: StoreConfig, lock: threading.RLock, files: Files) -> None:
        self.config = config
        self._lock = lock
        self._files = files
        self._facts: dict[str, Facts] = {}
        # Who links to whom, from the facts' link keys; files whose keys are not known yet
        # (not read since they changed) are "unlinked": searches read them whole.
        self._links = LinkIndex()
        self._unlinked: set[str] = set()
        # Files whose link keys record supersede relations (few: a set of their paths).
        self._declaring: set[str] = set()
        self._previews: collections.OrderedDict[str, tuple[Stamp, str]] = collections.OrderedDict()
        # A number that changes whenever a file's tags or links are learnt or forgotten.
        self.generation = 0
        # Whether `warm` runs (the first indexing).
        self.warming = False
        # Facts learnt from another process (`learn_facts`) since the cache was written.
        self._learnt_unsaved = False
        self._tag_counts: tuple[tuple[int, int], float, dict[str, int]] | None = None

    # ----- following the index's files -------------------------------------------------

    def reset(self, files: Files) -> None:
        """Follow a new table of files (a scan's): keep what is known of those in it (lock
        held)."""
        self._files = files
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

    def refresh(self, path: str, stamp: Stamp) -> None:
        """A file is at a new version: forget facts of an older one (lock held)."""
        facts = self._facts.get(path)
        if facts is not None and facts.stamp != stamp:
            self._drop_facts(path)
        if path not in self._facts:
            self._unlinked.add(path)

    def reread(self, path: str) -> None:
        """A file is to be read again, though its stamp is as known (lock held)."""
        self._drop_facts(path)
        self._previews.pop(path, None)
        self._unlinked.add(path)

    def forget(self, path: str) -> None:
        """A file is gone (lock held)."""
        self._drop_facts(path)
        self._unlinked.discard(path)
        self._previews.pop(path, None)

    # ----- links -----------------------------------------------------------------------

    def link_candidates(self, keys: Iterable[str]) -> list[str]:
        """The files that may hold any of the link keys (core/services/backlinks.py): those the link
        index names, and every file whose links are not known yet. Read them to know."""
        with self._lock:
            found = dict.fromkeys(path for key in keys for path in self._links.sources(key))
            found.update(dict.fromkeys(self._unlinked))
        return list(found)

    def learn_links(self, limit: int = LEARN_LINKS_LIMIT) -> bool:
        """Read the files whose links are not known yet, when they are few and the first
        indexing is not reading them already; return whether every file's are known."""
        with self._lock:
            if self.warming or len(self._unlinked) > limit:
                return not self._unlinked
            pending = [self._files[path][0] for path in self._unlinked]
        for memory in pending:
            self.facts_of(memory)
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

    def declarations(self, shadowed: Mapping[str, MemoryFile]) -> list[Declaration]:
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
                if memory.valid and path not in shadowed:
                    found.append(Declaration(memory.qualified, relations_from_keys(facts.links)))
            return found

    # ----- metadata --------------------------------------------------------------------

    def current_stamp(self, memory: MemoryFile, reuse: Stamp | None = None) -> Stamp | None:
        """The stamp the index knows for a file, taking one now if it has none yet (`reuse`
        when equal: cached facts and the file then share one stamp)."""
        with self._lock:
            known = self._files.get(memory.path)
        if known is not None and known[1] is not None:
            return known[1]
        stamp = stamp_of(memory.path)
        if reuse is not None and stamp == reuse:
            stamp = reuse
        if stamp is not None and known is not None:
            with self._lock:
                if self._files.get(memory.path) == known:
                    self._files[memory.path] = (known[0], stamp)
        return stamp

    def _read(self, memory: MemoryFile, stamp: Stamp | None) -> tuple[Metadata, Facts | None]:
        """A file's metadata read from disk (huge files are not read), and its facts."""
        if stamp is not None and stamp.size > LISTING_READ_LIMIT * self.config.max_memory_bytes:
            # Far over the limit (a pasted log, a binary): listed, never read (bounded memory).
            parsed, links = Metadata(size=stamp.size), None
        else:
            parsed, links = _read_file(memory.path)
        if stamp is None:
            return parsed, None
        return parsed, Facts(stamp, parsed.tags, parsed.updated_at, parsed.size, links)

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
            facts = Facts(
                stamp,
                tuple(sys.intern(tag) for tag in tags),
                updated_at,
                length,
                tuple(map(sys.intern, links)),
            )
            self._store_facts(path, facts)

    def _store_facts(self, path: str, facts: Facts) -> None:
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
                self.generation += 1

    def _drop_facts(self, path: str) -> None:
        """Forget what was learnt of a file, its links included (lock held)."""
        old = self._facts.pop(path, None)
        if old is None:
            return
        self.generation += 1
        self._declaring.discard(path)
        if old.links is not None:
            self._links.remove(path, old.links)
            self._unlinked.add(path)

    def _linked_facts(self, path: str) -> Facts | None:
        """The facts of a file whose links are known (lock held)."""
        facts = self._facts.get(path)
        return facts if facts is not None and facts.links is not None else None

    def metadata(self, memory: MemoryFile) -> Metadata:
        """Tags, update time and preview of a memory, parsed once per file version."""
        stamp = self.current_stamp(memory)
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

    def facts_of(self, memory: MemoryFile) -> Facts | None:
        """The facts of the current version of a file, read now when not known yet."""
        stamp = self.current_stamp(memory)
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
        self.warming = True
        try:
            for done, memory in enumerate(pending, start=1):
                if cancelled is not None and cancelled():
                    return done - 1
                hit = cached.get(memory.path)
                stamp = self.current_stamp(memory, hit.stamp if hit is not None else None)
                if hit is not None and hit.stamp == stamp:
                    self._store_facts(memory.path, hit)
                else:
                    self.facts_of(memory)
                if done % every == 0:
                    if pause is not None:
                        pause()
                    if report is not None:
                        report(done, len(pending))
                elif report is not None and done == len(pending):
                    report(done, len(pending))
        finally:
            self.warming = False
            with self._lock:
                # A set keeps the table it grew to: 100,000 entries while indexing ran.
                self._unlinked = set(self._unlinked)
        if cache_path and (pending or self._learnt_unsaved):
            with self._lock:
                facts = list(self._facts.items())
                self._learnt_unsaved = False
            _save_facts(cache_path, facts)
        return len(pending)

    def tag_counts(self, key: tuple[int, int], winners: Iterable[MemoryFile]) -> dict[str, int]:
        """Tags in use by the `winners` (resolved memories), with how many use each; `key`
        tells the index's versions of names and facts apart."""
        known = self._tag_counts
        if known is not None and (
            known[0] == key
            # While the first indexing runs facts change all the time: recount now and then.
            or (self.warming and time.monotonic() - known[1] < TAG_RECOUNT_SECONDS)
        ):
            return dict(known[2])
        counts: dict[str, int] = {}
        for memory in winners:
            facts = self.facts_of(memory)
            for tag in facts.tags if facts is not None else ():
                counts[tag] = counts.get(tag, 0) + 1
        self._tag_counts = (key, time.monotonic(), counts)
        return dict(counts)


def _load_facts(path: str) -> dict[str, Facts]:
    """Facts cached by an earlier start (nothing when the cache is missing or unreadable)."""
    found: dict[str, Facts] = {}
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
                    found[file] = Facts(Stamp(mtime_ns, size), shared, updated_at, length, known)
    except (OSError, ValueError, TypeError):
        return {}
    return found


def _save_facts(path: str, facts: Iterable[tuple[str, Facts]]) -> None:
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
