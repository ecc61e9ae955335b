"""The store's state and what every part needs: finding memories, access, write targets."""

from __future__ import annotations

import logging
import os
import sqlite3
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from memory_ls.core.rules.document import Document, parse_document
from memory_ls.core.rules.errors import (
    Ignored,
    InvalidArguments,
    InvalidName,
    NotFound,
    OutsideStore,
    ReadOnly,
    TooLarge,
)
from memory_ls.core.rules.names import (
    ParsedName,
    did_you_mean,
    lookup_names,
    normalize_input,
    qualify,
)
from memory_ls.core.services.journal import Journal
from memory_ls.core.services.search import SearchIndex
from memory_ls.core.storage.folders import Folder, StoreConfig
from memory_ls.core.storage.fsio import is_within, read_bytes, read_text, remove_file
from memory_ls.core.storage.gate import version_of
from memory_ls.core.storage.listing import ScanCache
from memory_ls.core.storage.memory import LISTING_READ_LIMIT, Change, MemoryFile, scan_folder
from memory_ls.core.store_parts.arguments import check_scope

# Changes a store remembers (a tool call makes one or two).
CHANGES_KEPT = 16
_LOG = logging.getLogger("memory_ls.core.store")
# How many close names a not-found error suggests.
SUGGESTIONS = 3


def _shown_name(name: str) -> str:
    """A name in a sentence: as it is, or quoted where spaces or invisible characters
    around or in it would be lost."""
    return name if name == name.strip() and name.isprintable() else repr(name)


def _bytes_or_none(path: str) -> bytes | None:
    """A file's bytes, or None when it cannot be read (a dangling link)."""
    try:
        return read_bytes(path)
    except OSError:
        return None


def _versions(before: bytes | None, after: bytes) -> dict[str, Any]:
    """What a write's answer says of the versions and sizes before and after it."""
    return {
        "version": version_of(after),
        "previousVersion": version_of(before) if before is not None else None,
        "bytesBefore": len(before) if before is not None else None,
        "bytesAfter": len(after),
    }


class StoreBase:
    """The store's folders, indexes and journal, and finding memories in them."""

    def __init__(
        self,
        config: StoreConfig,
        search_index: SearchIndex | None = None,
        reference_sources: Callable[[Sequence[str]], list[str] | None] | None = None,
        scan_cache: ScanCache | None = None,
        wrote: Callable[[str], None] | None = None,
        journal: Journal | None = None,
        source: str = "core",
        name_words: Callable[[str | None], frozenset[str] | None] | None = None,
    ) -> None:
        self.config = config
        # The words of the memories' names in a scope, from a name index (the language
        # server's), or None when it cannot tell yet: else the folders are listed.
        self.name_words = name_words
        # Where each change's previous content is kept for history and revert, and who
        # this store writes for ("cli", "mcp:<client>", "editor").
        self.journal = journal if journal is not None else Journal.for_store(config)
        self.source = source
        # How long a search while the first indexing runs may read the files not indexed
        # yet before it answers from those it read (None: all of them). Only where the
        # answer says it is partial (MCP's `notes`): an editor's search lists no such note,
        # so it reads them all and misses nothing.
        self.unindexed_read_seconds: float | None = None
        # Told each path this store writes or removes, as it does (a live index catches up
        # at once instead of waiting for the file event).
        self.wrote = wrote
        # Folder scans kept between calls of a long-lived process (None: scan every time).
        self.scan_cache = scan_cache
        # The full-text index for `search` (None: every search reads the memories).
        self.search_index = search_index
        # The files that may hold any of some link keys (core/services/backlinks.py), from a link
        # index (the language server's), or None when it cannot tell: a move then reads
        # only those. Without one, the full-text index names them (it compares the disk
        # with itself first); without either, a move reads every memory.
        if reference_sources is None and search_index is not None:
            reference_sources = search_index.reference_sources
        self.reference_sources = reference_sources
        # What this store's writes changed, latest last (for the answer to the writer);
        # bounded, as a long-lived store (the language server's) keeps writing.
        self.changes: deque[Change] = deque(maxlen=CHANGES_KEPT)

    def _journal(
        self,
        action: str,
        memory: MemoryFile,
        before: bytes | None,
        after: bytes | None,
        moved: MemoryFile | None = None,
    ) -> None:
        """Keep a written change's previous content; a failing journal does not fail the write."""
        try:
            self.journal.record(
                action=action,
                name=memory.qualified,
                path=memory.path,
                before=before,
                after=after,
                source=self.source,
                new_path=None if moved is None else moved.path,
                new_name=None if moved is None else moved.qualified,
            )
        except (sqlite3.Error, OSError) as exc:
            _LOG.warning("The change journal %s could not record: %s", self.journal.path, exc)

    def _record(self, change: Change) -> None:
        """Remember a change for the answer, and tell `wrote` its paths."""
        self.changes.append(change)
        if self.wrote is not None:
            self.wrote(change.memory.path)
            if change.moved_from is not None:
                self.wrote(change.moved_from.path)

    # ----- finding -------------------------------------------------------------------

    def _scope_for(self, is_global: bool, scope: str | None) -> str:
        """The one scope a name means: `global/` names are global, bare names project ones."""
        if is_global:
            if scope == "project":
                raise InvalidArguments("A `global/` name cannot be used with scope project.")
            return "global"
        return scope or "project"

    def _check_access(self, name: str, scope: str, *, write: bool) -> None:
        """Refuse what Serena's patterns forbid (ignored: everything; read-only: writes)."""
        qualified = qualify(name, scope == "global")
        patterns = self.config.patterns
        if patterns.is_ignored(qualified):
            raise Ignored(
                f"Memory {qualified!r} matches an ignored_memory_patterns pattern "
                f"({patterns.where}); it cannot be read or written through memory-ls or Serena."
            )
        if write and patterns.is_read_only(qualified):
            raise ReadOnly(
                f"Memory {qualified!r} matches a read_only_memory_patterns pattern "
                f"({patterns.where}); nothing was written."
            )

    def _check_patterns(
        self, raw_name: object, scope: object, *, write: bool, existing: bool = True
    ) -> None:
        """Serena's pattern checks, made (as Serena makes them) before the name is validated.

        `existing`: the name is looked up (the name it means, see `_meant`, is checked);
        else it is a new name, checked as normalised.
        """
        if not isinstance(raw_name, str):
            return  # parse_name says what is wrong
        name, is_global = normalize_input(raw_name)
        if existing and raw_name != raw_name.strip():
            try:
                meant = self._meant(raw_name, scope)
            except (InvalidName, InvalidArguments):
                pass  # said when the name is parsed
            else:
                name, is_global = meant.name, meant.is_global
        where = self._scope_for(is_global, check_scope(scope))
        self._check_access(name, where, write=write)

    def _meant(self, raw_name: object, scope: object) -> ParsedName:
        """The existing memory's name a lookup means: the normalised name, or, when only
        the file exactly as given exists (surrounding whitespace kept), that one."""
        candidates = lookup_names(raw_name)
        if len(candidates) > 1:
            asked = check_scope(scope)
            for parsed in candidates:
                if self.locate_all(parsed.name, self._scope_for(parsed.is_global, asked)):
                    return parsed
        return candidates[0]

    def _hit(self, folder: Folder, name: str) -> MemoryFile | None:
        path = folder.file_for(name)
        # Names are checked before they get here; this keeps any name from leading out.
        if not os.path.normpath(path).startswith(folder.path.rstrip(os.sep) + os.sep):
            return None
        if not os.path.isfile(path):
            return None
        # A topic folder that is itself another configured folder belongs to that folder.
        if self.config.owner_of(path) is not folder:
            return None
        return MemoryFile(name, path, folder)

    def locate_all(self, name: str, scope: str | None) -> list[MemoryFile]:
        """Every file with this name in the scope's folders, in lookup order."""
        hits = []
        for folder in self.config.folders_in(scope):
            hit = self._hit(folder, name)
            if hit is not None:
                hits.append(hit)
        return hits

    def _lookup(
        self, raw_name: object, scope: object, *, write: bool
    ) -> tuple[ParsedName, str, MemoryFile | None]:
        """(the name meant, its scope, the memory that has it or None)."""
        self._check_patterns(raw_name, scope, write=write)
        parsed = self._meant(raw_name, scope)
        where = self._scope_for(parsed.is_global, check_scope(scope))
        hits = self.locate_all(parsed.name, where)
        return parsed, where, hits[0] if hits else None

    def find(self, raw_name: object, scope: object = None, *, write: bool = False) -> MemoryFile:
        """The memory a name means (a bare name: a project memory); NotFound otherwise.

        Any file Serena could have written is found under its own name, also one whose
        name memory-ls would not create (`what?`, `CON`); see `names.lookup_names`.
        """
        parsed, where, memory = self._lookup(raw_name, scope, write=write)
        if memory is None:
            raise self.not_found(parsed.name, (where,))
        return memory

    def find_for_read(self, raw_name: object, scope: object = None) -> MemoryFile:
        """A read's memory: a bare name no project memory has falls back to `global/NAME`."""
        parsed, where, memory = self._lookup(raw_name, scope, write=False)
        if memory is not None:
            return memory
        if parsed.is_global or scope is not None or self.config.global_folder is None:
            raise self.not_found(parsed.name, (where,))
        try:
            fallback = self._lookup(raw_name, "global", write=False)[2]
        except Ignored:
            fallback = None
        if fallback is None:
            raise self.not_found(parsed.name, ("project", "global"))
        return fallback

    def not_found(self, name: str, scopes: Sequence[str]) -> NotFound:
        """The error for a name (within its scope) no memory has in `scopes`: which folders
        were searched, and the closest existing names (as `suggestions` too)."""
        searched = []
        for scope in scopes:
            folders = ", ".join(self._shown_folder(f) for f in self.config.folders_in(scope))
            searched.append(
                f"{qualify(name, scope == 'global')!r} in the {scope} scope "
                f"(searched {folders or 'no folder'})"
            )
        suggestions = self._closest(name, scopes)
        message = f"No memory named {', nor '.join(searched)}."
        if suggestions:
            names = [_shown_name(n) for n in suggestions]
            shown = ", ".join(names[:-1]) + " or " if len(names) > 1 else ""
            message += f" Did you mean {shown}{names[-1]}?"
        return NotFound(message, suggestions)

    def _closest(self, name: str, scopes: Sequence[str]) -> list[str]:
        """Existing memories closest to a missing name, as Serena writes them: the same name
        in a scope that was not searched, then the same name under a topic folder, then the
        searched scopes' names by spelling, then names under topic folders whose last segment
        is spelled like it."""
        # Sets of bare names per scope, not MemoryFile properties per file: 10,000 names
        # take a directory scan and a few milliseconds of distances.
        in_scope: dict[str, set[str]] = {"project": set(), "global": set()}
        for folder in self.config.folders:
            in_scope[folder.scope].update(memory.name for memory in self.scan((folder,)))
        elsewhere = [
            qualify(name, scope == "global")
            for scope, names in in_scope.items()
            if scope not in scopes and name in names
        ]
        searched = set().union(*(in_scope[scope] for scope in scopes))
        # A name without its topic folder (`retry_policy` for `payments/retry_policy`), or
        # in another one: the names under topic folders whose last segment is the name's.
        leaf = name.rsplit("/", 1)[-1]
        leaves: dict[str, list[str]] = {}
        for bare in sorted(searched):
            if "/" in bare and bare != name:
                leaves.setdefault(bare.rsplit("/", 1)[-1].casefold(), []).append(bare)
        under_topics = leaves.get(leaf.casefold(), [])
        spelled = did_you_mean(name, sorted(searched))
        # Then a mistyped last segment (`retry_polcy`) under a topic folder.
        if leaves and len(under_topics) + len(spelled) < SUGGESTIONS:
            spelled += [
                bare
                for close in did_you_mean(leaf.casefold(), sorted(leaves))
                for bare in leaves[close]
            ]
        # The same last segment: the first scope searched first (a read: project, then global).
        picks = [
            qualify(bare, scope == "global")
            for scope in scopes
            for bare in under_topics
            if bare in in_scope[scope]
        ] + [
            qualify(bare, scope == "global")
            for bare in spelled
            for scope in scopes
            if bare in in_scope[scope]
        ]
        return list(dict.fromkeys(elsewhere + picks))[:SUGGESTIONS]

    def _shown_folder(self, folder: Folder) -> str:
        """A folder as a person would name it: relative to the workspace, or from `~`."""
        root = self.config.root.rstrip(os.sep) + os.sep
        if folder.path.startswith(root):
            return folder.path[len(root) :]
        home = os.path.expanduser("~").rstrip(os.sep)
        if home and folder.path.startswith(home + os.sep):  # not for a home of `/`
            return "~" + folder.path[len(home) :]
        return folder.path

    def _writable(self, memory: MemoryFile) -> None:
        if memory.folder.read_only:
            raise ReadOnly(
                f"Memory {memory.qualified!r} is in the read-only folder {memory.folder.path}."
            )
        if memory.folder.patterns.is_read_only(memory.qualified):
            raise ReadOnly(
                f"Memory {memory.qualified!r} matches a read_only_memory_patterns pattern "
                f"({memory.folder.patterns.where}); nothing was written."
            )

    def _remove(self, memory: MemoryFile) -> None:
        """Delete a memory's file; a link is removed itself, never its target (as Serena does)."""
        if os.path.islink(memory.path):
            remove_file(memory.path, memory.folder.real)
        else:
            remove_file(memory.path, self._write_target(memory.path)[1].real)

    def _real_owner(self, real: str) -> Folder | None:
        """The configured folder whose real location holds a real path (the deepest)."""
        best: Folder | None = None
        for folder in self.config.folders:
            if is_within(real, folder.real) and (best is None or len(folder.real) > len(best.real)):
                best = folder
        return best

    def _write_target(self, path: str) -> tuple[str, Folder]:
        """Where a write to `path` lands, links followed as Serena follows them, and its folder.

        A link may lead into another configured folder (the write goes there), never out
        of all of them.
        """
        real = os.path.realpath(path)
        owner = self._real_owner(real)
        if owner is None:
            raise OutsideStore(
                f"Refused to write {path}: a symbolic link leads it to {real}, outside every "
                f"configured memory folder. Add {os.path.dirname(real)} as an additional folder "
                "to write there; nothing was written."
            )
        if owner.read_only:
            raise ReadOnly(
                f"{path} leads to {real}, in the read-only folder {owner.path}; "
                "nothing was written."
            )
        return real, owner

    def _check_size(self, data: bytes | int, name: str) -> None:
        limit = self.config.max_memory_bytes
        size = data if isinstance(data, int) else len(data)
        if size > limit:
            raise TooLarge(
                f"Memory {name!r} would be {size} bytes; the limit (maxMemoryBytes) "
                f"is {limit}. Split it into smaller memories."
            )

    def load(self, memory: MemoryFile) -> Document:
        """Parse a memory file (symbolic links followed for reading, as Serena does)."""
        return parse_document(read_text(memory.path))

    # ----- listing -------------------------------------------------------------------

    def scan(self, folders: Sequence[Folder] | None = None) -> list[MemoryFile]:
        """Every Markdown file in the folders (lookup order), without reading them."""
        found: list[MemoryFile] = []
        for scan in self._folder_scans(folders):
            found.extend(scan)
        return found

    def _folder_scans(self, folders: Sequence[Folder] | None) -> list[Sequence[MemoryFile]]:
        others = {f.path for f in self.config.folders}
        chosen = folders if folders is not None else self.config.folders
        cache = self.scan_cache
        if cache is None:
            return [scan_folder(f, others - {f.path}) for f in chosen]
        return [cache.scan(f, others - {f.path}, scan_folder).files for f in chosen]

    def _safe_load(self, memory: MemoryFile) -> Document | None:
        """A memory's document for listings; None when unreadable or far too large to read."""
        try:
            if os.path.getsize(memory.path) > LISTING_READ_LIMIT * self.config.max_memory_bytes:
                return None
            return self.load(memory)
        except (OSError, OutsideStore):
            return None
