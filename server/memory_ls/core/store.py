"""The memory store: finding, saving, editing, deleting, moving and searching memories.

Operations look at the disk, not at a cache, so a long-lived server and a CLI process
always agree on what exists; listings come from a directory scan (kept between calls by a
ScanCache only while no directory changed, core/storage/listing.py).
"""

from __future__ import annotations

import bisect
import contextlib
import copy
import logging
import os
import sqlite3
from collections import Counter, deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from memory_ls.core.rules.conflicts import conflict_warning
from memory_ls.core.rules.document import (
    Document,
    carry_keys,
    iso,
    jsonable,
    parse_document,
    parse_timestamp,
    render,
    update_document,
    with_keys,
)
from memory_ls.core.rules.errors import (
    Exists,
    Ignored,
    InvalidArguments,
    InvalidName,
    MemoryStoreError,
    NotFound,
    OutsideStore,
    PossibleSecret,
    ReadOnly,
    TooLarge,
)
from memory_ls.core.rules.names import (
    GLOBAL_PREFIX,
    ParsedName,
    closest_query,
    did_you_mean,
    lookup_names,
    name_problem,
    normalize_input,
    parse_name,
    qualify,
    words_of,
)
from memory_ls.core.rules.references import rename_references
from memory_ls.core.rules.replace import replace_text
from memory_ls.core.rules.supersede import Successor, relations
from memory_ls.core.rules.titles import title_of
from memory_ls.core.services.backlinks import serena_key
from memory_ls.core.services.fulltext import SearchIndex, Unindexed
from memory_ls.core.services.journal import MAX_KEPT_FILE_BYTES, Entry, Journal
from memory_ls.core.services.related import related_memories, successors
from memory_ls.core.services.relevance import (
    RELEVANCE,
    Found,
    Query,
    RoughRanker,
    Searchable,
    enough,
    merge_found,
    parse_query,
    rows_of,
    scan_search,
)
from memory_ls.core.storage.folders import Folder, StoreConfig
from memory_ls.core.storage.fsio import (
    atomic_write,
    ensure_folder,
    folder_lock,
    is_within,
    read_bytes,
    read_text,
    remove_file,
    remove_leftovers,
    utf8_or_none,
)
from memory_ls.core.storage.gate import check_content, check_version, decode_for_read, version_of
from memory_ls.core.storage.listing import (
    ScanCache,
    check_limit,
    continued_filters,
    decode_cursor,
    encode_cursor,
    group_names,
    sort_key,
)
from memory_ls.core.storage.memory import (
    LISTING_READ_LIMIT,
    Change,
    MemoryFile,
    MovePlan,
    Resolved,
    resolve_files,
    scan_folder,
)
from memory_ls.core.storage.routing import route_new, unknown_prefix

SCOPES = ("project", "global", "all")
DEFAULT_SEARCH_LIMIT = 50
# A search while the first indexing runs parses the files that may match this many (or
# four times its limit) first, the likeliest first, then twice as many each time until
# they fill its answer (`Store._scan_unindexed`).
SCAN_STEP = 200
# Files not indexed yet a search reads before it looks at them (RoughRanker.add_many).
ROUGH_FILES = 5_000
# Changes a store remembers (a tool call makes one or two).
CHANGES_KEPT = 16
_LOG = logging.getLogger(__name__)
# How many close names a not-found error suggests.
SUGGESTIONS = 3


def check_scope(scope: object, *, allow_all: bool = False) -> str | None:
    """Validate a scope argument."""
    allowed = SCOPES if allow_all else SCOPES[:2]
    if scope is None or (allow_all and scope == "all"):
        return None
    if not isinstance(scope, str) or scope not in allowed:
        raise InvalidArguments(f"scope must be one of {', '.join(allowed)}, not {scope!r}.")
    return scope


def _check_str(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise InvalidArguments(f"{what} must be a string, not {type(value).__name__}.")
    _check_unicode(value, what)
    return value


def _check_unicode(value: str, what: str) -> None:
    """Refuse text that cannot be written as UTF-8 (a lone surrogate, which JSON allows)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidArguments(
            f"{what} is not valid Unicode text (a lone surrogate at position {exc.start})."
        ) from exc


def _check_version_arg(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InvalidArguments("expectedVersion must be a version string from a read.")
    return value


def _check_flag(value: object, what: str) -> bool:
    if not isinstance(value, bool):
        raise InvalidArguments(f"{what} must be true or false.")
    return value


def _check_tags(tags: object) -> list[str] | None:
    if tags is None:
        return None
    if not isinstance(tags, (list, tuple)) or not all(isinstance(t, str) for t in tags):
        raise InvalidArguments("tags must be a list of strings.")
    for tag in tags:
        _check_unicode(tag, "a tag")
    cleaned = [t.strip() for t in tags]
    if any(not t or "\n" in t for t in cleaned):
        raise InvalidArguments("a tag must be a non-empty single line of text.")
    return list(dict.fromkeys(cleaned))


class Store:
    """One store: the configured folders and the rules over them."""

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

    def fork(self) -> Store:
        """A store on the same folders and indexes with its own record of changes."""
        return Store(
            self.config,
            self.search_index,
            self.reference_sources,
            self.scan_cache,
            self.wrote,
            self.journal,
            self.source,
            self.name_words,
        )

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
        in a scope that was not searched, then the searched scopes' names by spelling."""
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
        picks = [
            qualify(bare, scope == "global")
            for bare in did_you_mean(name, sorted(searched))
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

    # ----- routing and saving --------------------------------------------------------

    def _route(self, name: str, is_global: bool, scope: str | None) -> tuple[str, Folder, str]:
        """(path, folder, routedBy) for a save of `name`, existing memories first."""
        where = self._scope_for(is_global, scope)
        self._check_access(name, where, write=False)
        hits = self.locate_all(name, where)
        if hits:
            # A dry run refuses what the write would: a link that leads out.
            if not hits[0].folder.read_only:
                self._write_target(hits[0].path)
            return hits[0].path, hits[0].folder, "existing"
        problem = name_problem(name)
        if problem:
            # Found only as an existing file (`_name_for_save`); a new file needs a valid name.
            raise InvalidName(f"Invalid memory name {name!r} for a new memory: {problem}.")
        folder, routed_by = route_new(
            name, where == "global", self.config.primary, self.config.additional
        )
        if folder is None:
            if self.config.global_folder is None:
                raise OutsideStore("The global scope is disabled, so a global memory has no home.")
            folder = self.config.global_folder
        path = folder.file_for(name)
        owner = self.config.owner_of(path)
        if owner is not folder:
            raise InvalidName(
                f"The name {name!r} would land inside the folder {owner.path if owner else path}, "
                "which is configured separately; choose another topic name."
            )
        _check_path_free(folder, name)
        # A dry run (route) must refuse what the write would: a link on the way out.
        if not folder.read_only:
            self._write_target(path)
        return path, folder, routed_by

    def _name_for_save(self, raw_name: object, scope: object) -> ParsedName:
        """A save's name: an existing file is written in place under its own name (one
        Serena wrote, `what?` or ` padded `, too); a new memory's name must follow SPEC 2.1."""
        try:
            meant = self._meant(raw_name, scope)
            where = self._scope_for(meant.is_global, check_scope(scope))
        except (InvalidName, InvalidArguments):
            return parse_name(raw_name)  # the save says what is wrong, in its order
        normalised = isinstance(raw_name, str) and meant.name == normalize_input(raw_name)[0]
        if (normalised and name_problem(meant.name) is None) or self.locate_all(meant.name, where):
            return meant  # a valid new name, or a file that exists (written in place)
        return parse_name(raw_name)

    def route(self, raw_name: object, scope: object = None) -> dict[str, Any]:
        """Where a save of this name would go, without writing (`memory.route`)."""
        parsed = self._name_for_save(raw_name, scope)
        path, folder, routed_by = self._route(parsed.name, parsed.is_global, check_scope(scope))
        qualified = qualify(parsed.name, folder.kind == "global")
        return {
            "name": qualified,
            "path": path,
            "folder": folder.path,
            "routedBy": routed_by,
            "exists": routed_by == "existing",
            # What a save would be told, said before anyone types the content.
            "readOnly": folder.read_only or self.config.patterns.is_read_only(qualified),
            "unknownPrefix": (
                unknown_prefix(parsed.name, self.config.additional)
                if folder.scope == "project"
                else None
            ),
        }

    def save(
        self,
        raw_name: object,
        content: object,
        tags: object = None,
        scope: object = None,
        *,
        created_at: object = None,
        updated_at: object = None,
        metadata: Mapping[str, Any] | None = None,
        restore: bool = False,
        expected_version: object = None,
        create_only: object = False,
    ) -> dict[str, Any]:
        """Create or overwrite a memory, routed by SPEC 2.4 (`memory.save`).

        `expected_version` makes an overwrite conditional on the version read; `create_only`
        refuses to replace an existing memory. Content `check` would call an error, and new
        possible secrets (unless the store only warns), are refused.
        """
        parsed = self._name_for_save(raw_name, scope)
        text = _check_str(content, "content")
        tag_list = _check_tags(tags)
        expected = _check_version_arg(expected_version)
        only_new = _check_flag(create_only, "createOnly")
        where = self._scope_for(parsed.is_global, check_scope(scope))
        self._check_access(parsed.name, where, write=True)
        self._check_size(text.encode("utf-8"), parsed.name)
        for _attempt in range(3):
            path, folder, routed_by = self._route(parsed.name, parsed.is_global, where)
            if only_new and routed_by == "existing":
                raise self._exists_error(parsed.qualified, path)
            if folder.read_only:
                raise ReadOnly(
                    f"Memory {parsed.name!r} routes to the read-only folder {folder.path}; "
                    "nothing was written."
                )
            real, owner = self._write_target(path)
            with folder_lock(folder.real, owner.real):
                # Someone may have created the memory elsewhere since we routed: route again.
                if self._route(parsed.name, parsed.is_global, where)[0] != path:
                    continue
                existed = os.path.exists(path)
                before = read_bytes(path) if existed else None
                qualified = qualify(parsed.name, folder.kind == "global")
                check_version(expected, before, qualified)
                if only_new and before is not None:
                    raise self._exists_error(qualified, path)
                old = parse_document(before.decode("utf-8", "replace")) if before else None
                doc = _document_for_save(old, text, tag_list, metadata, created_at, updated_at)
                if restore:
                    doc = _with_timestamps(doc, created_at, updated_at)
                data = render(doc).encode("utf-8")
                self._check_size(data, parsed.name)
                check_content(
                    before,
                    data,
                    qualified=qualified,
                    project=folder.scope == "project",
                    secrets=self.config.secrets,
                )
                if not existed and folder.kind != "additional":
                    ensure_folder(folder.path)
                atomic_write(real, data, owner.real)
                memory = MemoryFile(parsed.name, path, folder)
                self._journal("save", memory, before, data)
            self._record(Change("save", memory, before, data))
            return {
                "name": qualified,
                "path": path,
                "scope": folder.scope,
                "folder": folder.path,
                "created": not existed,
                "routedBy": routed_by,
                **_versions(before, data),
            }
        raise OutsideStore(f"Memory {parsed.name!r} kept moving while it was saved; try again.")

    def _exists_error(self, qualified: str, path: str) -> Exists:
        """`exists` for a create-only save, with what to do instead."""
        try:
            version = f" (version {version_of(read_bytes(path))})"
        except OSError:
            version = ""
        return Exists(
            f"Memory {qualified!r} already exists at {path}{version}; create_only refuses to "
            "replace it. Read it and edit it, write it with its version as expected_version "
            "to replace it, or choose another name. Nothing was written."
        )

    def _check_size(self, data: bytes | int, name: str) -> None:
        limit = self.config.max_memory_bytes
        size = data if isinstance(data, int) else len(data)
        if size > limit:
            raise TooLarge(
                f"Memory {name!r} would be {size} bytes; the limit (maxMemoryBytes) "
                f"is {limit}. Split it into smaller memories."
            )

    # ----- reading -------------------------------------------------------------------

    def _load_for_write(self, memory: MemoryFile, data: bytes) -> tuple[str, Document]:
        """Parse a memory about to be rewritten; refuse files that are not UTF-8."""
        text = utf8_or_none(data)
        if text is None:
            raise ReadOnly(
                f"Memory {memory.name!r} is not UTF-8 text; it is left untouched so no byte is "
                "lost. Fix or re-save it as a whole."
            )
        return text, parse_document(text)

    def load(self, memory: MemoryFile) -> Document:
        """Parse a memory file (symbolic links followed for reading, as Serena does)."""
        return parse_document(read_text(memory.path))

    def read_file(self, raw_name: object, scope: object = None) -> tuple[MemoryFile, bytes]:
        """The memory a read means and its file's bytes, read once."""
        memory = self.find_for_read(raw_name, scope)
        return memory, read_bytes(memory.path)

    def read(
        self, raw_name: object, scope: object = None, *, related: bool = False
    ) -> dict[str, Any]:
        """A memory's body and metadata (`memory.read`); a bare name may fall back to global.

        The result says which memories supersede it (`supersededBy`) and, with `related`,
        lists the memories one link away (`related`)."""
        return self.read_answer(*self.read_file(raw_name, scope), related=related)[0]

    def read_answer(
        self, memory: MemoryFile, data: bytes, *, related: bool = False
    ) -> tuple[dict[str, Any], list[Successor]]:
        """`read_result` of a memory's bytes with what the other memories say of it, and
        the memories that supersede it (for the note a reader sees first)."""
        result = read_result(memory, data)
        text, _warning = decode_for_read(data, memory.qualified)
        found = successors(self, memory, text)
        result["supersededBy"] = [successor.name for successor in found]
        if related:
            result["related"] = related_memories(self, memory, text)
        return result, found

    # ----- editing, deleting, moving -------------------------------------------------

    def edit(
        self,
        raw_name: object,
        scope: object = None,
        *,
        content: object = None,
        needle: object = None,
        replacement: object = None,
        mode: object = "literal",
        allow_multiple: object = False,
        expected_version: object = None,
    ) -> dict[str, Any]:
        """Change a memory in place: replace its body, or a needle (`memory.edit`)."""
        expected = _check_version_arg(expected_version)
        if content is None and needle is None:
            raise InvalidArguments("edit needs either content, or needle and replacement.")
        if content is not None and needle is not None:
            raise InvalidArguments("edit takes content or needle, not both.")
        if content is not None:
            _check_str(content, "content")
        else:
            _check_str(needle, "needle")
            _check_str(replacement, "replacement")
            if needle == "":
                raise InvalidArguments("needle must not be empty.")
        if mode not in ("literal", "regex"):
            raise InvalidArguments(f"mode must be literal or regex, not {mode!r}.")
        if not isinstance(allow_multiple, bool):
            raise InvalidArguments("allowMultiple must be true or false.")
        # As Serena: a missing memory is not-found before the needle is looked at.
        memory = self.find(raw_name, scope, write=True)
        self._writable(memory)
        real, owner = self._write_target(memory.path)
        with folder_lock(memory.folder.real, owner.real):
            memory = self.find(raw_name, scope, write=True)
            before = read_bytes(memory.path)
            check_version(expected, before, memory.qualified)
            source, doc = self._load_for_write(memory, before)
            if isinstance(content, str):
                doc, count = update_document(doc, content), 1
            else:
                assert isinstance(needle, str) and isinstance(replacement, str)
                # The needle searches the whole file, frontmatter included, as Serena's does.
                text, count = replace_text(
                    source, needle, replacement, str(mode), allow_multiple, memory.qualified
                )
                edited = parse_document(text)
                # Frontmatter that still parses keeps updated_at current (SPEC 2.5).
                doc = edited if edited.problem else update_document(edited, edited.body)
            data = render(doc).encode("utf-8")
            self._check_size(data, memory.name)
            check_content(
                before,
                data,
                qualified=memory.qualified,
                project=memory.scope == "project",
                secrets=self.config.secrets,
            )
            atomic_write(real, data, owner.real)
            self._journal("edit", memory, before, data)
        self._record(Change("edit", memory, before, data))
        return {
            "name": memory.qualified,
            "path": memory.path,
            "replacements": count,
            **_versions(before, data),
        }

    def delete(
        self, raw_name: object, scope: object = None, *, expected_version: object = None
    ) -> dict[str, Any]:
        """Remove a memory from wherever it is found (`memory.delete`)."""
        expected = _check_version_arg(expected_version)
        memory = self.find(raw_name, scope, write=True)
        self._writable(memory)
        with folder_lock(memory.folder.real):
            memory = self.find(raw_name, scope, write=True)
            before = read_bytes(memory.path) if expected is not None else None
            check_version(expected, before, memory.qualified)
            kept = before if before is not None else _bytes_or_none(memory.path)
            self._remove(memory)
            if kept is not None:
                self._journal("delete", memory, kept, None)
        self._record(Change("delete", memory, before, None))
        return {"name": memory.qualified, "path": memory.path}

    def plan_move(self, raw_name: object, raw_new_name: object, scope: object = None) -> MovePlan:
        """Check a rename and work out where it goes; nothing is written (move and rename)."""
        # Serena's order: both names against the patterns, both names validated, then files.
        for write in (False, True):
            self._check_patterns(raw_name, scope, write=write)
            self._check_patterns(raw_new_name, None, write=write, existing=False)
        lookup_names(raw_name)  # any file Serena could have written can be renamed
        new = parse_name(raw_new_name)  # but a new name must follow SPEC 2.1
        new_scope = "global" if new.is_global else "project"
        source = self.find(raw_name, scope, write=True)
        self._writable(source)
        taken = [m for m in self.locate_all(new.name, new_scope) if m.path != source.path]
        if taken:
            raise Exists(f"A memory named {new.qualified!r} already exists at {taken[0].path}.")
        folder, _routed_by = route_new(
            new.name, new.is_global, self.config.primary, self.config.additional
        )
        if folder is None:
            if self.config.global_folder is None:
                raise OutsideStore("The global scope is disabled, so a global memory has no home.")
            folder = self.config.global_folder
        target = folder.file_for(new.name)
        if self.config.owner_of(target) is not folder:
            raise InvalidName(f"The name {new.name!r} would land in another configured folder.")
        if folder.read_only:
            raise ReadOnly(f"{new.name!r} routes to the read-only folder {folder.path}.")
        if target == source.path:
            raise Exists(f"Memory {source.name!r} is already at {target}.")
        _check_path_free(folder, new.name)
        self._write_target(target)
        # Which references point at the source is decided before it moves.
        first = self.locate_all(source.name, source.scope)
        return MovePlan(
            source=source,
            new_name=new.name,
            new_is_global=new.is_global,
            folder=folder,
            target=target,
            source_wins=bool(first) and first[0].path == source.path,
        )

    def move(
        self,
        raw_name: object,
        raw_new_name: object,
        scope: object = None,
        *,
        expected_version: object = None,
    ) -> dict[str, Any]:
        """Rename a memory, route it like a new save, rewrite references (`memory.move`)."""
        expected = _check_version_arg(expected_version)
        plan = self.plan_move(raw_name, raw_new_name, scope)
        # Who refers to the memory is asked before it moves (a link index keys by name).
        holders = self._reference_holders(plan)
        self.move_file(plan, expected)
        updated = self._rewrite_all(plan, holders)
        moved = self.changes[-1]
        if updated and moved.action == "move":
            # Its own links to its old name were rewritten too: the findings are of that.
            with contextlib.suppress(OSError):
                self.changes[-1] = replace(moved, after=read_bytes(plan.target))
        return {
            "name": plan.source.qualified,
            "newName": plan.new_qualified,
            "path": plan.target,
            "updatedReferences": updated,
        }

    def move_file(self, plan: MovePlan, expected_version: str | None = None) -> None:
        """Move the memory's file as planned, bytes unchanged (references are not touched)."""
        source, folder = plan.source, plan.folder
        target, owner = self._write_target(plan.target)
        with folder_lock(source.folder.real, folder.real, owner.real):
            if os.path.lexists(target):
                raise Exists(f"A file already exists at {target}.")
            if not os.path.isfile(source.path):
                raise NotFound(f"Memory {source.name!r} is gone from {source.path}.")
            self._check_size(os.path.getsize(source.path), plan.new_name)
            if not os.path.islink(source.path):
                # Refused before anything is written: the source could not be removed.
                self._write_target(source.path)
            if folder.kind != "additional":
                ensure_folder(folder.path)
            with open(source.path, "rb") as handle:
                data = handle.read()
            check_version(expected_version, data, source.qualified)
            atomic_write(target, data, owner.real)
            self._remove(source)
            moved = MemoryFile(plan.new_name, plan.target, folder)
            self._journal("move", source, data, data, moved)
        self._record(Change("move", moved, data, data, moved_from=source))

    # ----- history and undo ----------------------------------------------------------

    def history(self, raw_name: object) -> list[Entry]:
        """The journal's entries of a memory (a deleted one too), newest first."""
        return self.journal.history(_check_str(raw_name, "name").strip())

    def revert(self, raw_name: object, entry_id: object = None) -> dict[str, Any]:
        """Give a memory back the content it had before a journal entry (the latest by
        default), as a write of its own (journaled, so it can be reverted in turn)."""
        if entry_id is not None and (isinstance(entry_id, bool) or not isinstance(entry_id, int)):
            raise InvalidArguments("The entry to revert to must be a whole number.")
        name = _check_str(raw_name, "name").strip()
        entries = self.journal.history(name)
        if not entries:
            raise NotFound(f"The change journal holds no change of memory {name!r}.")
        entry = next((e for e in entries if entry_id in (None, e.id)), None)
        if entry is None:
            raise NotFound(
                f"Change {entry_id} of memory {name!r} is not in the journal (it holds "
                f"{', '.join(str(e.id) for e in entries)})."
            )
        if entry.action == "move" and entry.new_name is not None:
            answer = self.move(entry.new_name, entry.name)
            return {**answer, "revertedTo": entry.id}
        if entry.withheld and (entry.before_size or 0) > MAX_KEPT_FILE_BYTES:
            raise TooLarge(
                f"The content of {entry.name!r} before change {entry.id} was larger than "
                f"{MAX_KEPT_FILE_BYTES} bytes, so the journal did not keep it; nothing was changed."
            )
        if entry.withheld:
            raise PossibleSecret(
                f"The content of {entry.name!r} before change {entry.id} held what looks like "
                "a credential, so the journal did not keep it; nothing was changed."
            )
        return {**self._restore(entry.name, entry.path, entry.before), "revertedTo": entry.id}

    def _restore(self, qualified: str, path: str, data: bytes | None) -> dict[str, Any]:
        """Write `data` at the memory's path (None: remove it) with a save's checks."""
        owned = self.config.name_of(path)
        if owned is None or owned[0].qualified(owned[1]) != qualified:
            raise OutsideStore(
                f"{path} is no longer the file of memory {qualified!r} in the configured "
                "folders; nothing was changed."
            )
        folder, name = owned
        memory = MemoryFile(name, path, folder)
        self._check_access(name, "global" if folder.kind == "global" else "project", write=True)
        self._writable(memory)
        real, owner = self._write_target(path)
        with folder_lock(folder.real, owner.real):
            before = _bytes_or_none(path) if os.path.lexists(path) else None
            if data is None:
                if before is not None:
                    self._remove(memory)
                    self._journal("revert", memory, before, None)
                    self._record(Change("delete", memory, before, None))
                return {"name": qualified, "path": path, "deleted": before is not None}
            self._check_size(data, name)
            check_content(
                before,
                data,
                qualified=qualified,
                project=folder.scope == "project",
                secrets=self.config.secrets,
            )
            if before is None and folder.kind != "additional":
                ensure_folder(folder.path)
            if before != data:
                atomic_write(real, data, owner.real)
                self._journal("revert", memory, before, data)
        self._record(Change("save", memory, before, data))
        return {
            "name": qualified,
            "path": path,
            "created": before is None,
            **_versions(before, data),
        }

    def _reference_holders(self, plan: MovePlan) -> list[MemoryFile] | None:
        """The memories that may refer to the one `plan` moves, at their paths after the
        move; None when only reading every memory can tell."""
        if self.reference_sources is None:
            return None
        qualified = plan.source.qualified
        paths = self.reference_sources([qualified, serena_key(qualified)])
        if paths is None:
            return None
        holders: list[MemoryFile] = []
        for path in dict.fromkeys(plan.target if p == plan.source.path else p for p in paths):
            owned = self.config.name_of(path)
            if owned is not None:
                holders.append(MemoryFile(owned[1], path, owned[0]))
        return holders

    def _rewrite_all(self, plan: MovePlan, holders: Sequence[MemoryFile] | None = None) -> int:
        """Rewrite references to the moved memory in every writable memory (in `holders`
        where a link index named them); return how many.

        `mem:OLD` is rewritten wherever Serena's rename rewrites it (anywhere in the file,
        fenced code included); `[[OLD]]` links where they are links (outside code). The
        files' bytes change only there: a rewritten reference is not an update.
        """
        total = 0
        for memory in self.scan() if holders is None else holders:
            if memory.read_only:
                continue
            # Read first without the folder's lock (writes replace files whole): taking it
            # for each of 10,000 files that do not name the memory cost most of a move.
            try:
                text = utf8_or_none(read_bytes(memory.path))
            except OSError:
                continue
            if text is None or plan.source.name not in text:
                continue
            with folder_lock(memory.folder.real):
                try:
                    text = utf8_or_none(read_bytes(memory.path))
                except OSError:
                    continue
                if text is None or ("[[" not in text and "mem:" not in text):
                    continue
                new_text, count = _rewrite_references(text, plan)
                if count:
                    real, owner = self._write_target(memory.path)
                    atomic_write(real, new_text, owner.real)
                    self._journal("edit", memory, text.encode("utf-8"), new_text.encode("utf-8"))
                    if self.wrote is not None:
                        self.wrote(memory.path)
                    total += count
        return total

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

    def resolve(self, scope: str | None = None) -> list[Resolved]:
        """Memories as lookup sees them: one per name, with what each shadows (sorted)."""
        return list(self._resolved(scope))

    def _resolved(self, scope: str | None) -> Sequence[Resolved]:
        return self._resolved_keyed(scope)[1]

    def _resolved_keyed(
        self, scope: str | None
    ) -> tuple[tuple[object, ...] | None, Sequence[Resolved]]:
        """The resolved memories of a scope, and what identifies this version of them in
        the scan cache (None without one)."""
        folders = self.config.folders_in(scope)
        cache = self.scan_cache
        if cache is None:
            return None, resolve_files(self.scan(folders))
        others = {f.path for f in self.config.folders}
        scans = [cache.scan(f, others - {f.path}, scan_folder) for f in folders]
        key = (scope, tuple(scan.generation for scan in scans))
        built = cache.resolved(
            key, lambda: resolve_files([m for scan in scans for m in scan.files])
        )
        return key, built

    def _named(self, where: str | None, prefix: str | None, topic: str) -> Sequence[Resolved]:
        """Resolved memories in a scope whose names have the prefix and lie under the topic
        (sorted by name: only the run of names that start alike is looked at)."""
        resolved = self._resolved(where)
        if prefix is None and not topic:
            return resolved
        if prefix is not None:
            start = prefix
        else:
            wanted = topic.rstrip("/")
            start = GLOBAL_PREFIX if wanted == "global" else wanted + "/"
        named: list[Resolved] = []
        first = bisect.bisect_left(resolved, start, key=_qualified_of)
        for position in range(first, len(resolved)):
            item = resolved[position]
            qualified = item.memory.qualified
            if not qualified.startswith(start):
                break
            if prefix is not None and not qualified.startswith(prefix):
                continue
            if topic and not in_topic(qualified, item.memory.scope == "global", topic):
                continue
            named.append(item)
        return named

    def list_memories(
        self,
        scope: object = None,
        tags: object = None,
        prefix: object = None,
        *,
        topic: object = None,
        limit: object = None,
        cursor: object = None,
    ) -> dict[str, Any]:
        """Memories in a scope, filtered by tags (all must match), name prefix and topic,
        sorted by name: `limit` of them after `cursor` (all without a limit).

        The result has `total` (how many match, left out when a tag filter stopped reading
        early) and, when more follow, `nextCursor`: the sort key of the page's last memory,
        so it stays valid when memories are added or removed between pages. Only the page's
        files are read, except with tags: then files are read until the page is full and
        one more match is found.
        """
        filters = _list_filters(scope, tags, prefix, topic)
        page_size = check_limit(limit)
        after = None
        if cursor is not None:
            after, cursor_filters = decode_cursor(cursor)
            filters = continued_filters(filters, cursor_filters)
        where, wanted, given_prefix, under = _checked_filters(filters)
        named = self._named(where, given_prefix, under)
        start = 0 if after is None else bisect.bisect_right(named, after, key=sort_key)
        memories: list[dict[str, Any]] = []
        more = False
        for position in range(start, len(named)):
            item = named[position]
            doc = self._safe_load(item.memory)
            doc_tags = doc.tags if doc else []
            if any(t not in doc_tags for t in wanted):
                continue
            if page_size is not None and len(memories) == page_size:
                more = True
                break
            memories.append(_listed(item, doc))
            if page_size is not None and not wanted and len(memories) == page_size:
                more = position + 1 < len(named)
                break
        result: dict[str, Any] = {"memories": memories}
        if not wanted:
            result["total"] = len(named)
            result["remaining"] = len(named) - start - len(memories)
        elif not more and after is None:
            result["total"] = len(memories)
        if more and memories:
            last = (memories[-1]["name"], memories[-1]["path"])
            following = bisect.bisect_right(named, last, key=sort_key)
            tie = following < len(named) and named[following].memory.qualified == last[0]
            kept = {k: v for k, v in filters.items() if v}
            result["nextCursor"] = encode_cursor(last, kept, tie=tie)
        return result

    def list_groups(
        self,
        scope: object = None,
        tags: object = None,
        prefix: object = None,
        *,
        topic: object = None,
    ) -> dict[str, Any]:
        """How many memories match, by folder and by group of names (what follows the prefix
        or topic up to the next `/` or `_`), largest first; reads files only with tags."""
        where, wanted, given_prefix, under = _checked_filters(
            _list_filters(scope, tags, prefix, topic)
        )
        if not wanted and self.scan_cache is not None:
            # Counted once per version of the listing: a long-lived process answers the
            # first page of every listing with these (100,000 names take 0.1 s to group).
            key, _ = self._resolved_keyed(where)
            if key is not None:
                counted = self.scan_cache.kept(
                    ("groups", key, given_prefix, under),
                    lambda: self._groups(where, given_prefix, under, ()),
                )
                return copy.deepcopy(counted)
        return self._groups(where, given_prefix, under, wanted)

    def _groups(
        self, where: str | None, given_prefix: str | None, under: str, wanted: Sequence[str]
    ) -> dict[str, Any]:
        named = self._named(where, given_prefix, under)
        if wanted:
            named = [item for item in named if self._has_tags(item.memory, wanted)]
        base = given_prefix or ""
        if under:
            topic_base = under.rstrip("/") + "/"
            if len(topic_base) > len(base) and all(
                item.memory.qualified.startswith(topic_base) for item in named
            ):
                base = topic_base
        grouped = group_names([item.memory.qualified for item in named], base)
        by_folder = Counter(item.memory.folder.path for item in named)
        return {
            "total": len(named),
            "base": grouped.base,
            "groups": [{"prefix": start, "count": count} for start, count in grouped.groups],
            "ungrouped": grouped.ungrouped,
            "folders": [
                {"folder": folder.path, "count": by_folder[folder.path]}
                for folder in self.config.folders_in(where)
                if by_folder[folder.path]
            ],
        }

    def _has_tags(self, memory: MemoryFile, wanted: Sequence[str]) -> bool:
        doc = self._safe_load(memory)
        return doc is not None and all(t in doc.tags for t in wanted)

    def clean_leftovers(self) -> int:
        """Remove temp files of writes that were killed midway, in every writable folder."""
        removed = 0
        for folder in self.config.folders:
            if not folder.read_only and os.path.isdir(folder.path):
                with folder_lock(folder.real):
                    removed += remove_leftovers(folder.path)
        return removed

    def _safe_load(self, memory: MemoryFile) -> Document | None:
        """A memory's document for listings; None when unreadable or far too large to read."""
        try:
            if os.path.getsize(memory.path) > LISTING_READ_LIMIT * self.config.max_memory_bytes:
                return None
            return self.load(memory)
        except (OSError, OutsideStore):
            return None

    def tags(self, scope: object = None) -> dict[str, Any]:
        """Tags in use with their counts, most used first (`memory.tags`)."""
        where = check_scope(scope, allow_all=True)
        counts: dict[str, int] = {}
        for item in self.resolve(where):
            doc = self._safe_load(item.memory)
            for tag in doc.tags if doc else []:
                counts[tag] = counts.get(tag, 0) + 1
        ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        return {"tags": [{"tag": tag, "count": count} for tag, count in ordered]}

    def search(
        self,
        query: object,
        tags: object = None,
        scope: object = None,
        limit: object = None,
        mode: str = RELEVANCE,
    ) -> dict[str, Any]:
        """Full text over names and bodies, best first (`memory.search`, SPEC 2.6): one row
        per matching line, at most `limit` lines.

        `mode` "relevance" (default) ranks every memory holding some of the words, those
        holding all first; "all_words" wants every word and phrase as written (see
        core/services/relevance.py). The full-text index answers where it can; else every memory
        is read.
        """
        found = self.search_memories(query, tags, scope, limit, mode)
        return {"results": rows_of(found.hits, self._limit(limit))}

    def closest_query(self, query: str, scope: object = None) -> str | None:
        """The query with each word no memory name or tag of `scope` holds replaced by its
        closest such word (`paymnt` -> `payments`), for a search that matched nothing; None
        when no word has a close one."""
        where = check_scope(scope, allow_all=True)
        # Tags from the full-text index where it answers: no file read (100,000 of them
        # on a large store, for one mistyped word).
        tags = self.search_index.tags_in(where) if self.search_index is not None else None
        if tags is None:
            listed = self.list_memories(where)["memories"]
            names = [m["name"] for m in listed]
            tags = [tag for m in listed for tag in m["tags"]]
            vocabulary = {word for text in [*names, *tags] for word in words_of(text)}
            return closest_query(query, vocabulary)
        known = self.name_words(where) if self.name_words is not None else None
        if known is not None:
            return closest_query(query, known.union(w for tag in tags for w in words_of(tag)))
        key, resolved = self._resolved_keyed(where)

        def name_words() -> frozenset[str]:
            return frozenset(word for item in resolved for word in words_of(item.memory.qualified))

        # Kept while the names are (a search that matches nothing, as an agent's often
        # does, took 0.25 s at 100,000 memories for this alone).
        cache = self.scan_cache
        words = (
            name_words() if key is None or cache is None else cache.kept(("words", key), name_words)
        )
        return closest_query(query, words.union(word for tag in tags for word in words_of(tag)))

    def search_memories(
        self,
        query: object,
        tags: object = None,
        scope: object = None,
        limit: object = None,
        mode: str = RELEVANCE,
        *,
        per_memory: bool = False,
        offset: int = 0,
        count: bool = False,
    ) -> Found:
        """The memories that answer a query, best first (`search`'s; `per_memory`: `limit`
        memories after `offset`, and with `count` how many match in all)."""
        text = _check_str(query, "query")
        if not text.strip():
            raise InvalidArguments("query must not be empty.")
        parsed = parse_query(text, _check_str(mode, "mode"))
        wanted = _check_tags(tags) or []
        where = check_scope(scope, allow_all=True)
        size = self._limit(limit)
        index = self.search_index
        if index is None:
            return scan_search(
                parsed, self._searchable(where, wanted), size, per_memory=per_memory, offset=offset
            )
        with index.turns.searching():
            found = index.search(
                parsed, wanted, where, size, per_memory=per_memory, offset=offset, count=count
            )
            if found is not None:
                return found
            # The first indexing runs: what it indexed answers, the rest is read now.
            partial = index.search_partial(
                parsed, wanted, where, size + offset, per_memory=per_memory, count=count
            )
            if partial is None:
                # A live index's first indexing may have ended since it was asked: it
                # answers now (else every file would be read, 6 s at 100,000 memories).
                # Not asked twice otherwise: a CLI's index would walk the store again.
                found = (
                    index.search(
                        parsed,
                        wanted,
                        where,
                        size,
                        per_memory=per_memory,
                        offset=offset,
                        count=count,
                    )
                    if index.live
                    else None
                )
                if found is not None:
                    return found
                return scan_search(
                    parsed,
                    self._searchable(where, wanted),
                    size,
                    per_memory=per_memory,
                    offset=offset,
                )
            indexed, rest = partial
            scanned = self._scan_unindexed(parsed, wanted, rest, index, size + offset, per_memory)
            return merge_found([indexed, scanned], size, per_memory, offset)

    def _scan_unindexed(
        self,
        query: Query,
        wanted: Sequence[str],
        rest: Sequence[Unindexed],
        index: SearchIndex,
        size: int,
        per_memory: bool,
    ) -> Found:
        """The best memories among the files `rest` (not indexed yet, read through the
        index that keeps them for the next search), those another memory hides left out.

        Bounded work however many may match: the files are ordered by their bytes alone
        (`RoughRanker`), then parsed and ranked as a scan does, the likeliest first, a
        step at a time until they fill the answer. Every memory that holds the query's
        terms is among those that may match, so a term few memories hold finds them all.
        """
        rough = RoughRanker(query)
        # Read and looked at a slice at a time: bounded memory however large the store.
        for start in range(0, len(rest), ROUGH_FILES):
            part = rest[start : start + ROUGH_FILES]
            read = index.read_unindexed_many([path for _q, path, _r, _n in part])
            rough.add_many(
                [
                    (qualified, data, (qualified, path, rank, name, data))
                    for (qualified, path, rank, name), data in zip(part, read, strict=True)
                    if data is not None
                ]
            )
        ordered = rough.ordered()
        chosen: list[Searchable] = []
        start, step = 0, max(SCAN_STEP, 4 * size)
        while True:
            # Each step twice the last: all of them read at most twice over.
            taken, start, step = ordered[start : start + step], start + step, 2 * step
            for qualified, path, rank, name, data in taken:
                if index.hidden(rank, name):
                    continue
                doc = parse_document(data.decode("utf-8", errors="replace"))
                if all(t in doc.tags for t in wanted):
                    replaced = relations(doc.metadata)
                    chosen.append(
                        Searchable(
                            qualified,
                            path,
                            doc.body,
                            doc.body_line,
                            replaced.supersedes,
                            replaced.superseded_by,
                        )
                    )
            # The others count in the ranking's statistics (their words, roughly).
            spaces = rough.total_spaces * (rough.documents - len(chosen)) // max(rough.documents, 1)
            passed = [rough.documents - len(chosen), spaces]
            found = scan_search(query, chosen, size, per_memory=per_memory, passed=passed)
            if start >= len(ordered) or enough(found.hits, size, per_memory):
                return Found(found.hits, len(ordered))

    @staticmethod
    def _limit(limit: object) -> int:
        if limit is None:
            return DEFAULT_SEARCH_LIMIT
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise InvalidArguments("limit must be a positive integer.")
        return limit

    def _searchable(self, where: str | None, wanted: Sequence[str]) -> Iterator[Searchable]:
        """Each resolved memory with the tags, read now."""
        for item in self.resolve(where):
            memory = item.memory
            try:
                if os.path.getsize(memory.path) > LISTING_READ_LIMIT * self.config.max_memory_bytes:
                    # Far too large to read: found by its name only (bounded work).
                    if not wanted:
                        yield Searchable(memory.qualified, memory.path, "", 0)
                    continue
                doc = self.load(memory)
            except (OSError, MemoryStoreError):
                continue
            if all(t in doc.tags for t in wanted):
                replaced = relations(doc.metadata)
                yield Searchable(
                    memory.qualified,
                    memory.path,
                    doc.body,
                    doc.body_line,
                    replaced.supersedes,
                    replaced.superseded_by,
                )

    # ----- export and import ---------------------------------------------------------

    def export(self, scope: object = None) -> list[dict[str, Any]]:
        """Every resolved memory as a record (name, content, tags, timestamps, scope)."""
        where = check_scope(scope, allow_all=True)
        # Scope by scope: a global memory hidden by a project one of the same name is still
        # a memory of its own (reachable as `global/NAME`) and must not be lost.
        resolved = [item for s in ((where,) if where else SCOPES[:2]) for item in self.resolve(s)]
        records = []
        for item in resolved:
            memory = item.memory
            doc = self._safe_load(memory)
            if doc is None or not memory.valid:
                continue
            record: dict[str, Any] = {
                "name": memory.qualified,
                "content": doc.body,
                "tags": doc.tags,
                "created_at": iso(doc.metadata.get("created_at")),
                "updated_at": iso(doc.metadata.get("updated_at")),
                "scope": memory.scope,
            }
            extra = {
                k: v
                for k, v in doc.metadata.items()
                if k not in ("tags", "created_at", "updated_at")
            }
            if extra:
                # Not in the SPEC record shape, but dropping the author's keys would lose data.
                record["metadata"] = jsonable(extra)
            records.append(record)
        return records

    def import_records(self, records: object, *, overwrite: bool = False) -> dict[str, Any]:
        """Save exported records, routed like `save`; existing names skipped unless overwrite."""
        to_write: list[tuple[dict[str, Any], str]] = []
        skipped: list[str] = []
        # Every record is checked (name, route, size) before the first one is written.
        for index, record in enumerate(_check_records(records)):
            parsed = parse_name(record["name"])
            where = "global" if parsed.is_global else (record.get("scope") or "project")
            if not overwrite and self.locate_all(parsed.name, where):
                skipped.append(record["name"])
                continue
            path, folder, _by = self._route(parsed.name, parsed.is_global, where)
            if folder.read_only:
                raise ReadOnly(
                    f"record {index + 1}: {parsed.name!r} routes to the read-only folder "
                    f"{folder.path}; nothing was imported."
                )
            if os.path.exists(path):  # to be overwritten: its frontmatter must take the keys
                try:
                    _document_for_save(
                        parse_document(read_text(path)),
                        record["content"],
                        record.get("tags") or None,
                        record.get("metadata"),
                        None,
                        None,
                    )
                except InvalidArguments as exc:
                    raise InvalidArguments(
                        f"record {index + 1} ({parsed.name!r}): {exc.message} Nothing was imported."
                    ) from exc
            try:
                self._check_size(record["content"].encode("utf-8"), parsed.name)
            except TooLarge as exc:
                raise TooLarge(f"record {index + 1}: {exc.message} Nothing was imported.") from exc
            to_write.append((record, where))
        imported = [
            self.save(
                record["name"],
                record["content"],
                record.get("tags") or None,
                where,
                created_at=record.get("created_at"),
                updated_at=record.get("updated_at"),
                metadata=record.get("metadata"),
                restore=True,
            )
            for record, where in to_write
        ]
        return {"imported": imported, "skipped": skipped}


def read_result(memory: MemoryFile, data: bytes) -> dict[str, Any]:
    """The `memory.read` result of a memory's bytes: body, metadata, version, any warning."""
    text, warning = decode_for_read(data, memory.qualified)
    doc = parse_document(text)
    result = {
        "name": memory.qualified,
        "path": memory.path,
        "scope": memory.scope,
        "folder": memory.folder.path,
        "content": _as_serena_reads(doc),
        "tags": doc.tags,
        "createdAt": iso(doc.metadata.get("created_at")),
        "updatedAt": iso(doc.metadata.get("updated_at")),
        "readOnly": memory.read_only,
        "version": version_of(data),
    }
    # An unresolved merge conflict is said first: its two sides are not knowledge.
    conflict = conflict_warning(memory.qualified, text)
    warnings = [w for w in (conflict, warning) if w is not None]
    if warnings:
        result["warning"] = "\n".join(warnings)
    return result


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


def _as_serena_reads(doc: Document) -> str:
    """A memory's body as Serena's read_memory gives it: every line break `\n` (universal
    newlines), and a file's byte order mark where the body is the whole file."""
    body = doc.body if doc.has_frontmatter else doc.bom + doc.body
    return body.replace("\r\n", "\n").replace("\r", "\n") if "\r" in body else body


def _shown_name(name: str) -> str:
    """A name in a sentence: as it is, or quoted where spaces or invisible characters
    around or in it would be lost."""
    return name if name == name.strip() and name.isprintable() else repr(name)


def in_topic(name: str, is_global: bool, topic: str) -> bool:
    """Whether a memory, named `global/...` when global, is under a topic of Serena's list."""
    # Serena lists a topic's folder recursively: `auth` is every project memory `auth/...`,
    # `global` every global memory, `global/x` the global memories `global/x/...`.
    topic = topic.rstrip("/")
    wants_global = topic == "global" or topic.startswith(GLOBAL_PREFIX)
    if wants_global != is_global:
        return False
    return topic == "global" or name.startswith(topic + "/")


def _list_filters(scope: object, tags: object, prefix: object, topic: object) -> dict[str, object]:
    """A listing's filters, checked; empty ones are None (`topic=""` is Serena's "none")."""
    wanted = _check_tags(tags)
    return {
        "scope": check_scope(scope, allow_all=True),
        "tags": sorted(wanted) if wanted else None,
        "prefix": (None if prefix is None else _check_str(prefix, "prefix")) or None,
        "topic": (None if topic is None else _check_str(topic, "topic")) or None,
    }


def _checked_filters(
    filters: Mapping[str, object],
) -> tuple[str | None, list[str], str | None, str]:
    """(scope, tags, prefix, topic) of a listing's filters, checked again: a cursor's are text
    from the caller too."""
    prefix, topic = filters.get("prefix"), filters.get("topic")
    return (
        check_scope(filters.get("scope"), allow_all=True),
        _check_tags(filters.get("tags")) or [],
        None if prefix is None else _check_str(prefix, "prefix"),
        "" if topic is None else _check_str(topic, "topic"),
    )


def _qualified_of(item: Resolved) -> str:
    return item.memory.qualified


def _listed(item: Resolved, doc: Document | None) -> dict[str, Any]:
    """One memory of a listing (`memory.list`)."""
    memory = item.memory
    return {
        "name": memory.qualified,
        "path": memory.path,
        "scope": memory.scope,
        "folder": memory.folder.path,
        "tags": doc.tags if doc else [],
        "updatedAt": iso(doc.metadata.get("updated_at")) if doc else None,
        "readOnly": memory.read_only,
        # A name memory-ls would not create (Serena may have): the editor offers a rename.
        "validName": memory.valid,
        "shadows": [m.path for m in item.shadows],
        "title": title_of(doc.body) if doc else None,
    }


def _check_path_free(folder: Folder, name: str) -> None:
    """Refuse a new memory whose file is a folder on disk, or whose topic folder is a file."""
    current = folder.path
    for segment in name.split("/")[:-1]:
        current = os.path.join(current, segment)
        if os.path.lexists(current) and not os.path.isdir(current):
            raise Exists(
                f"{current} is a file, so the topic folder of {name!r} cannot be made there; "
                "choose another name."
            )
    path = folder.file_for(name)
    if os.path.isdir(path):
        raise Exists(f"{path} is a folder, so memory {name!r} cannot be written there.")


def _document_for_save(
    old: Document | None,
    text: str,
    tags: list[str] | None,
    metadata: Mapping[str, Any] | None,
    created_at: object,
    updated_at: object,
) -> Document:
    """The document a save writes: the content as given, the managed keys kept right.

    Content with its own frontmatter keeps that block as written (comments, order,
    quoting, byte order mark), with the memory's other keys added (SPEC 2.5). Plain
    content goes under the memory's existing block, or is the whole file.
    """
    given = parse_document(text)
    extra: dict[str, Any] = dict(metadata or {})
    if given.has_frontmatter and given.problem is None:
        content_tags = given.metadata.get("tags")
        if tags is None and isinstance(content_tags, list):
            tags = [str(t) for t in content_tags]
        order: list[str] = []
        if old is not None and old.problem is None:
            order = list(old.metadata)
            left_out = [k for k in order if k not in given.metadata and k != "updated_at"]
            # Keys the content left out come back as they were written and where they
            # were: a reordered or reformatted block is a change git must merge.
            given = _with_old_lines(given, old, [k for k in left_out if k not in extra], order)
            for key in left_out:
                if key not in given.metadata:
                    extra.setdefault(key, old.metadata[key])
        stamp = updated_at if updated_at is not None else given.metadata.get("updated_at")
        return update_document(
            given,
            given.body,
            tags=tags,
            extra=extra or None,
            now=parse_timestamp(stamp),
            order=order,
        )
    if old is not None and old.problem is not None and (tags is not None or extra):
        # Keys cannot be merged into a block that does not parse, and replacing the block
        # would lose what the author wrote there: refuse rather than drop them silently.
        keys = ", ".join(sorted({*extra, *(["tags"] if tags is not None else [])}))
        raise InvalidArguments(
            f"{keys} cannot be set: the memory's frontmatter does not parse, and it is kept "
            f"as written (line {old.problem.line + 1}: {old.problem.message}) Save without "
            f"{keys}, or fix the frontmatter first; nothing was written."
        )
    stamp = updated_at if updated_at is not None else extra.get("updated_at")
    extra.pop("created_at", None)
    extra.pop("updated_at", None)
    # A plain memory is replaced whole (its byte order mark too); a block stays.
    base = old if old is not None and old.has_frontmatter else None
    return update_document(base, text, tags=tags, extra=extra or None, now=parse_timestamp(stamp))


def _with_old_lines(given: Document, old: Document, keys: list[str], order: list[str]) -> Document:
    """The written document with the old block's lines of `keys` put back as they were
    (unchanged when they cannot be carried over exactly)."""
    if not keys:
        return given
    raw = carry_keys(given.raw_frontmatter or "", old.raw_frontmatter or "", keys, order)
    if raw is None:
        return given
    carried = parse_document(render(replace(given, raw_frontmatter=raw)))
    same = all(
        key in carried.metadata and carried.metadata[key] == old.metadata[key] for key in keys
    )
    return carried if carried.problem is None and same else given


def _with_timestamps(doc: Document, created_at: object, updated_at: object) -> Document:
    """An imported memory gets exactly the timestamps it was exported with (or none)."""
    changes: dict[str, Any] = {}
    remove: list[str] = []
    for key, value in (("created_at", created_at), ("updated_at", updated_at)):
        stamp = parse_timestamp(value)
        if stamp is None:
            remove.append(key)
        else:
            changes[key] = stamp
    if doc.raw_frontmatter is None and not changes:
        return doc
    base = doc if doc.raw_frontmatter is not None else Document(body=doc.body, raw_frontmatter="")
    return with_keys(base, changes, remove)


def _rewrite_references(text: str, plan: MovePlan) -> tuple[str, int]:
    """Rewrite the references a move rewrites (SPEC 2.6), nothing else of the text."""
    refs = rename_references(text, plan.source.qualified, plan.points_here)
    if not refs:
        return text, 0
    lines = text.split("\n")
    for ref in reversed(refs):
        line = lines[ref.line]
        lines[ref.line] = line[: ref.start] + plan.new_text(ref) + line[ref.end :]
    return "\n".join(lines), len(refs)


def _check_records(records: object) -> list[dict[str, Any]]:
    """Validate every import record before anything is written."""
    if not isinstance(records, list):
        raise InvalidArguments("An import must be a list of records.")
    checked = []
    for index, record in enumerate(records):
        where = f"record {index + 1}"
        if not isinstance(record, dict):
            raise InvalidArguments(f"{where} is not an object.")
        if not isinstance(record.get("name"), str) or not isinstance(record.get("content"), str):
            raise InvalidArguments(f"{where} needs a string name and a string content.")
        _check_unicode(record["content"], f"{where}: content")
        try:
            parse_name(record["name"])
        except InvalidName as exc:
            raise InvalidName(f"{where}: {exc.message}") from exc
        _check_tags(record.get("tags"))
        if record.get("scope") not in (None, "project", "global"):
            raise InvalidArguments(f"{where}: scope must be project or global.")
        for key in ("created_at", "updated_at"):
            value = record.get(key)
            if value is not None and parse_timestamp(value) is None:
                raise InvalidArguments(f"{where}: {key} is not an ISO 8601 timestamp.")
        if record.get("metadata") is not None and not isinstance(record["metadata"], dict):
            raise InvalidArguments(f"{where}: metadata must be an object.")
        checked.append(record)
    return checked
