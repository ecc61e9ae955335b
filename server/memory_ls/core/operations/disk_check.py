"""Every memory file's diagnostics as the file is on disk, kept current path by path.

What `memory-ls check` reports, for a server: computed once for the whole store, then
only for what a change can affect. A file's own problems depend on its text alone;
`broken-link` and `ignored-link` on which names exist (a memory that appears or goes
away rechecks the files that refer to it, found through each file's referenced names);
`shadowed` on the other files of its name; `superseded` on the frontmatter of the
memories it is related to (every file's declared relations are kept: when they change,
or a name they involve appears or goes away, every related file is checked again);
`stale-path` on the repository's files (a file created or removed rechecks the project
memories that mention it, found through each file's mentioned paths).
`missing-merge-driver` is the repository's `.gitattributes`' report, read again when
the files that decide it changed (`setup_changed`, a few stats).
Only files with problems keep a report, and
each report has a result id that changes exactly when the report does, so a client is
sent the reports it does not have and nothing else.
"""

from __future__ import annotations

import os
import sys
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Generic, TypeVar

from memory_ls.core.operations.duplicates import Found, IndexedDuplicates
from memory_ls.core.rules.references import find_references
from memory_ls.core.rules.similarity import Memo, Verdict
from memory_ls.core.rules.stale_paths import find_path_mentions, resolutions
from memory_ls.core.rules.supersede import Declaration, SupersedeGraph, declaration_of_text
from memory_ls.core.services.diagnostics import (
    Diagnostic,
    apply_severities,
    near_duplicate_diagnostic,
    read_for_check,
    supersede_counts,
    text_diagnostics,
)
from memory_ls.core.services.index import MemoryIndex, Update
from memory_ls.core.services.merge_driver_check import CODE as MERGE_DRIVER_CODE
from memory_ls.core.services.merge_driver_check import DriverWatch
from memory_ls.core.storage.memory import MemoryFile

Report = TypeVar("Report")
# Converts one file's diagnostics (and its text, None when unread) to what is stored;
# the server turns them into protocol diagnostics here, while the text is at hand.
Convert = Callable[[str, list[Diagnostic], "str | None"], Report]


class DiskDiagnostics(Generic[Report]):
    """The diagnostics of every file of one index, as on disk (thread-safe)."""

    def __init__(
        self,
        index: MemoryIndex,
        convert: Convert[Report],
        duplicates: IndexedDuplicates | None = None,
    ) -> None:
        self.index = index
        self._convert = convert
        # Near-duplicates come from the full-text index, once it can answer: only the
        # memories that have some are kept (path -> the others).
        self._duplicates = duplicates
        self._near: Found = {}
        self._lock = threading.Lock()
        # Result ids start with a token of this instance: ids from an earlier server (or
        # configuration) never match by accident.
        self._token = uuid.uuid4().hex[:8]
        self._serial = 0
        self.clean_id = f"{self._token}:0"
        self._reports: dict[str, tuple[str, Report]] = {}  # only files with problems
        # The repository's git setup (`.gitattributes`), kept apart from the memories'.
        wanted = index.config.severities.get(MERGE_DRIVER_CODE) != "off"
        self._driver = DriverWatch(index.config.root) if wanted else None
        self._setup_reports: dict[str, tuple[str, Report]] = {}
        # Path -> the names its references look up (only files with references), each
        # once: a tuple of interned strings, as the link index keeps them (a frozenset of
        # three names costs 216 bytes, 20 MB at 100,000 memories).
        self._refers: dict[str, tuple[str, ...]] = {}
        # Path -> the names its `[[note#Heading]]` links look into (only files with some):
        # an edit of such a note may add or remove the heading.
        self._into: dict[str, tuple[str, ...]] = {}
        # Path -> the supersede relations its frontmatter declares (only files that do).
        self._declared: dict[str, Declaration] = {}
        # Path -> the workspace paths its text mentions, absolute (only project memories
        # that mention some, while stale-path is on).
        self._mentions: dict[str, tuple[str, ...]] = {}
        self.complete = False  # every file has been checked once

    # ----- queries -------------------------------------------------------------------

    def report(self, path: str) -> tuple[str, Report | None]:
        """(result id, report) of one file; the report is None when it has no problems."""
        path = os.path.normpath(path)
        with self._lock:
            known = self._reports.get(path) or self._setup_reports.get(path)
        return known if known is not None else (self.clean_id, None)

    def reports(self) -> dict[str, tuple[str, Report]]:
        """Path -> (result id, report) of every file with problems."""
        with self._lock:
            return {**self._setup_reports, **self._reports}

    def setup_reported(self) -> bool:
        """Whether the repository's git setup has a problem (missing-merge-driver)."""
        with self._lock:
            return bool(self._setup_reports)

    # ----- computing -----------------------------------------------------------------

    def check_all(self, cancelled: Callable[[], bool] = lambda: False) -> set[str] | None:
        """Check every indexed file; the paths whose report changed (None: cancelled)."""
        files = self.index.files()
        wanted = self.index.config.severities.get("near-duplicate") != "off"
        known = self._duplicates.all() if self._duplicates is not None and wanted else None
        with self._lock:
            self._near = known or {}
        changed = self._check(files, cancelled)
        if changed is None:
            return None
        indexed = {memory.path for memory in files}
        with self._lock:
            gone = [path for path in self._reports if path not in indexed]
            for path in gone:
                del self._reports[path]
                self._refers.pop(path, None)
                self._into.pop(path, None)
            for path in [p for p in self._mentions if p not in indexed]:
                del self._mentions[path]
            for path in [p for p in self._declared if p not in indexed]:
                del self._declared[path]
        # Files were checked against the relations read so far: the related ones again.
        changed |= self._check(self._related_files(self._graph()), lambda: False) or set()
        changed |= self.setup_changed()
        self.complete = True
        return changed | set(gone)

    def update(self, paths: Iterable[str], update: Update) -> set[str]:
        """Recheck what changed paths (files or folders) can affect; the paths whose
        report changed."""
        index = self.index
        files: dict[str, MemoryFile | None] = {}
        folders: list[str] = []
        for path in paths:
            path = os.path.normpath(path)
            if path.endswith(".md"):
                files[path] = index.file(path)
            else:
                folders.append(path.rstrip(os.sep) + os.sep)
        if folders:
            # A folder event (created, removed, renamed): everything known under it.
            for inside in index.files():
                if inside.path.startswith(tuple(folders)):
                    files[inside.path] = inside
            with self._lock:
                known = [p for p in self._reports if p.startswith(tuple(folders))]
            for path in known:
                files.setdefault(path, index.file(path))
        # Notes edited: the links to their headings.
        edited = {memory.qualified for memory in files.values() if memory is not None}
        if edited:
            with self._lock:
                into = [p for p, refs in self._into.items() if not edited.isdisjoint(refs)]
            for path in into:
                files.setdefault(path, index.file(path))
        # Names that appeared or went away: links to them, and the files sharing them.
        names = set(update.added) | set(update.removed)
        if names:
            with self._lock:
                referring = [p for p, refs in self._refers.items() if not names.isdisjoint(refs)]
            for path in referring:
                files.setdefault(path, index.file(path))
            for name in names:
                entry = index.lookup(name)
                if entry is not None:
                    for sharing in (entry.memory, *entry.shadows):
                        files.setdefault(sharing.path, sharing)
        present = [memory for memory in files.values() if memory is not None]
        before = self._graph()
        changed = self._check(present, lambda: False) or set()
        with self._lock:
            for path, indexed in files.items():
                if indexed is None:
                    self._refers.pop(path, None)
                    self._into.pop(path, None)
                    self._declared.pop(path, None)
                    self._mentions.pop(path, None)
                    if self._reports.pop(path, None) is not None:
                        changed.add(path)
        after = self._graph()
        related = before.involved() | after.involved()
        if self._signature(before) != self._signature(after) or not related.isdisjoint(names):
            # Whether a memory is superseded (or in a cycle) depends on the others' keys.
            again = {memory.path: memory for memory in self._related_files(before)}
            again.update((memory.path, memory) for memory in self._related_files(after))
            changed |= self._check(again.values(), lambda: False) or set()
        return changed | self.setup_changed()

    def repository_changed(self, paths: Iterable[str]) -> set[str]:
        """Workspace files (or folders) were created or removed: recheck the memories
        that mention them, or a path under them; the paths whose report changed."""
        changed = {os.path.normpath(path) for path in paths}
        folders = tuple(path + os.sep for path in changed)
        with self._lock:
            mentioning = [
                path
                for path, mentioned in self._mentions.items()
                if any(m in changed or m.startswith(folders) for m in mentioned)
            ]
        present = [m for m in (self.index.file(path) for path in mentioning) if m is not None]
        return (self._check(present, lambda: False) or set()) | self.setup_changed()

    def setup_changed(self) -> set[str]:
        """Read the repository's git setup again if a file that decides it changed (else
        a few stats); the paths whose report changed. One caller at a time."""
        watch = self._driver
        found = watch.changed() if watch is not None else None
        if found is None:
            return set()
        by_path: dict[str, list[Diagnostic]] = {}
        for diagnostic in apply_severities(found, self.index.config.severities):
            by_path.setdefault(os.path.normpath(diagnostic.path), []).append(diagnostic)
        text = watch.state.text if watch is not None and watch.state is not None else None
        reports = {path: self._convert(path, found, text) for path, found in by_path.items()}
        changed: set[str] = set()
        with self._lock:
            for path in [p for p in self._setup_reports if p not in reports]:
                del self._setup_reports[path]
                changed.add(path)
            for path, report in reports.items():
                old = self._setup_reports.get(path)
                if old is None or old[1] != report:
                    self._serial += 1
                    self._setup_reports[path] = (f"{self._token}:{self._serial}", report)
                    changed.add(path)
        return changed

    def duplicates_changed(self, paths: Iterable[str] | None) -> set[str]:
        """The full-text index took in changed files (None: all of them): recheck the
        near-duplicates of those files and of their old and new partners; the paths whose
        report changed."""
        finder = self._duplicates
        if finder is None or self.index.config.severities.get("near-duplicate") == "off":
            return set()
        with self._lock:
            before = {path: list(found) for path, found in self._near.items()}
        if paths is None:
            after = finder.all()
            if after is None:
                return set()
        else:
            after = {path: list(found) for path, found in before.items()}
            for path in {os.path.normpath(p) for p in paths}:
                memory = self.index.file(path)
                found = self._near_of(finder, memory) if memory is not None else []
                if found is None:
                    return set()
                # The other side of each pair, old and new, follows.
                for other, _verdict in after.pop(path, []):
                    kept = [f for f in after.get(other.path, []) if f[0].path != path]
                    after[other.path] = kept
                if found and memory is not None:
                    after[path] = found
                    me = Memo(memory.path, memory.qualified, memory.scope == "global", "")
                    for other, verdict in found:
                        after.setdefault(other.path, []).append((me, verdict))
            after = {path: found for path, found in after.items() if found}
        touched = {
            path
            for path in before.keys() | after.keys()
            if sorted(o.path for o, _v in before.get(path, []))
            != sorted(o.path for o, _v in after.get(path, []))
        }
        with self._lock:
            self._near = after
        files = [memory for path in touched if (memory := self.index.file(path)) is not None]
        return self._check(files, lambda: False) or set()

    def _near_of(
        self, finder: IndexedDuplicates, memory: MemoryFile
    ) -> list[tuple[Memo, Verdict]] | None:
        try:
            text, _size, problem = read_for_check(memory.path, self.index.config.max_memory_bytes)
        except OSError:
            return []
        if text is None or problem is not None or not memory.valid:
            return []
        return finder.of(memory.path, memory.qualified, text)

    # ----- supersede relations -------------------------------------------------------

    def _graph(self) -> SupersedeGraph:
        """Who supersedes whom, from the relations read (shadowed files' do not count)."""
        shadowed = self.index.shadowed_by()
        with self._lock:
            declared = [d for path, d in self._declared.items() if path not in shadowed]
        return SupersedeGraph(declared, self.index.name_index().has_qualified)

    @staticmethod
    def _signature(graph: SupersedeGraph) -> frozenset[tuple[str, object]]:
        return frozenset(
            (name, found.relations)
            for name in graph.involved()
            if (found := graph.declaration(name)) is not None
        )

    def _related_files(self, graph: SupersedeGraph) -> list[MemoryFile]:
        """The memories a supersede relation names or is declared by."""
        found = []
        for name in graph.involved():
            entry = self.index.lookup(name)
            if entry is not None:
                found.append(entry.memory)
        return found

    def _check(self, files: Iterable[MemoryFile], cancelled: Callable[[], bool]) -> set[str] | None:
        index = self.index
        config = index.config
        names = index.name_index()
        shadowed: Mapping[str, MemoryFile] = index.shadowed_by()
        graph = self._graph()
        follow_paths = config.severities.get("stale-path") != "off"
        changed: set[str] = set()
        for count, memory in enumerate(files):
            # Often enough for a caller that also lets searches run meanwhile (`cancelled`).
            if count % 50 == 0 and cancelled():
                return None
            path = memory.path
            try:
                text, size, encoding = read_for_check(path, config.max_memory_bytes)
            except OSError:
                continue  # gone meanwhile: its removal is an event of its own
            readable = text is not None and encoding is None
            refs = find_references(text) if readable and text is not None else []
            declared = (
                declaration_of_text(memory.qualified, text)
                if readable and text is not None and memory.valid
                else None
            )
            checked = text_diagnostics(
                config,
                names,
                path,
                text,
                memory,
                shadowed,
                size,
                encoding,
                refs=refs,
                supersedes=graph if supersede_counts(memory, shadowed) else None,
            )
            with self._lock:
                near = self._near.get(path)
            if near:
                checked.append(near_duplicate_diagnostic(path, near))
            found = apply_severities(checked, config.severities)
            looked_up = tuple(dict.fromkeys(sys.intern(ref.target) for ref in refs))
            into = tuple(dict.fromkeys(sys.intern(ref.target) for ref in refs if ref.fragment))
            mentioned = (
                tuple(
                    dict.fromkeys(
                        candidate
                        for mention in find_path_mentions(text)
                        for _, candidate in resolutions(mention, path, config.root)
                    )
                )
                if follow_paths and readable and text is not None and memory.scope == "project"
                else ()
            )
            report = self._convert(path, found, text) if found else None
            with self._lock:
                if looked_up:
                    self._refers[path] = looked_up
                else:
                    self._refers.pop(path, None)
                if into:
                    self._into[path] = into
                else:
                    self._into.pop(path, None)
                if declared is not None:
                    self._declared[path] = declared
                else:
                    self._declared.pop(path, None)
                if mentioned:
                    self._mentions[path] = mentioned
                else:
                    self._mentions.pop(path, None)
                old = self._reports.get(path)
                if report is None:
                    if old is not None:
                        del self._reports[path]
                        changed.add(path)
                elif old is None or old[1] != report:
                    self._serial += 1
                    self._reports[path] = (f"{self._token}:{self._serial}", report)
                    changed.add(path)
        return changed
