"""A memory as the store finds it on disk, and the scan that finds them.

The value types every part of the core shares (`MemoryFile`, `Resolved`, `MovePlan`,
`Change`), the folder scan and the read limit of listings: below the store, the search
index, the journal and the listing, which all take memories without knowing the `Store`.
"""

from __future__ import annotations

import operator
import os
from collections.abc import Iterable
from dataclasses import dataclass, field

from memory_ls.core.rules.names import is_valid_name, qualify
from memory_ls.core.rules.references import Reference
from memory_ls.core.storage.folders import Folder, StoreConfig
from memory_ls.core.storage.fsio import is_temp_file

# Listings and search skip files this many times over maxMemoryBytes (bounded work).
LISTING_READ_LIMIT = 4
# The stamp of a directory that does not exist (so its appearing is a change).
MISSING = -1


@dataclass(frozen=True, slots=True)
class MemoryFile:
    """A Markdown file found in a memory folder."""

    name: str  # as on disk, relative to its folder, without `.md`
    path: str
    folder: Folder
    # Slots, not a dict per instance: the index keeps one per memory (15 MB at 100,000).
    _valid: bool | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def valid(self) -> bool:
        """Whether the file's name follows the naming rules (worked out once per file)."""
        # Kept by hand: functools.cached_property takes a lock per first access (Python
        # 3.11), which a scan of 100,000 files notices, and needs an instance dict.
        known = self._valid
        if known is None:
            known = is_valid_name(self.name)
            object.__setattr__(self, "_valid", known)
        return known

    @property
    def qualified(self) -> str:
        """The memory's name as Serena writes it: `global/NAME` for a global memory."""
        return self.folder.qualified(self.name)

    @property
    def read_only(self) -> bool:
        """Read-only folders and Serena's read-only patterns are never written.

        A file whose name memory-ls would not create (`what?`) is written in place, as
        Serena writes it; only creating such a name is refused.
        """
        return self.folder.read_only or self.folder.patterns.is_read_only(self.qualified)

    @property
    def scope(self) -> str:
        """The memory's scope."""
        return self.folder.scope


@dataclass(frozen=True)
class MovePlan:
    """A checked rename: where the memory goes and which references follow it."""

    source: MemoryFile
    new_name: str
    new_is_global: bool
    folder: Folder
    target: str
    source_wins: bool  # references to the name resolve to the source (it is not shadowed)

    @property
    def new_qualified(self) -> str:
        """The new name as Serena writes it (`global/NAME` for a global memory)."""
        return qualify(self.new_name, self.new_is_global)

    def points_here(self, ref: Reference) -> bool:
        """Whether a reference resolves to the memory being moved (no scope fallback)."""
        return ref.target == self.source.qualified and self.source_wins

    def new_text(self, ref: Reference) -> str:
        """The name a reference gets after the move, spelled as the new name is."""
        return self.new_qualified


@dataclass(frozen=True)
class Change:
    """One memory a write changed: its bytes before and after (None: no file)."""

    action: str  # "save", "edit", "delete" or "move"
    memory: MemoryFile  # where it is now (a deleted memory: where it was)
    before: bytes | None
    after: bytes | None
    # A moved memory: where it was before.
    moved_from: MemoryFile | None = None


@dataclass(frozen=True)
class Resolved:
    """A name as lookup sees it: the winning file and the files it shadows."""

    memory: MemoryFile
    shadows: tuple[MemoryFile, ...] = ()


def directory_stamp(directory: str) -> int:
    """A directory's modification time in ns; MISSING when it cannot be stat'ed."""
    try:
        return os.stat(directory).st_mtime_ns
    except OSError:
        return MISSING


def scan_folder(
    folder: Folder, skip: Iterable[str] = (), stamps: list[tuple[str, int]] | None = None
) -> list[MemoryFile]:
    """Markdown files under a folder as Serena lists them: hidden and linked folders
    included, other configured folders and Serena's ignored memories left out. `stamps`
    receives (directory, modification time) of each directory, taken before it is listed."""
    skip_set = set(skip)
    patterns = folder.patterns
    found: list[MemoryFile] = []
    # Each directory carries the real locations above it: a link back up would loop for
    # ever, while two links to one folder list it twice, as Serena does.
    root_real = os.path.realpath(folder.path)
    pending: list[tuple[str, str, str, frozenset[str]]] = [
        (folder.path, root_real, "", frozenset((root_real,)))
    ]
    while pending:
        directory, real, prefix, above = pending.pop()
        try:
            if stamps is not None:
                stamps.append((directory, directory_stamp(directory)))
            with os.scandir(directory) as listing:
                entries = sorted(listing, key=operator.attrgetter("name"))
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            try:
                # d_type answers these without a system call, except on a few file systems.
                if entry.is_dir(follow_symlinks=False):
                    if entry.path not in skip_set:
                        inner = os.path.join(real, name)
                        pending.append((entry.path, inner, f"{prefix}{name}/", above | {inner}))
                    continue
                if not name.endswith(".md"):
                    if entry.is_symlink() and entry.path not in skip_set and entry.is_dir():
                        # A linked folder: Serena's documented way to share memories.
                        inner = os.path.realpath(entry.path)
                        if inner not in above:
                            pending.append((entry.path, inner, f"{prefix}{name}/", above | {inner}))
                    continue
                if name[0] == "." and is_temp_file(name):
                    continue
                if entry.is_file(follow_symlinks=False) or (entry.is_symlink() and entry.is_file()):
                    memory = MemoryFile(f"{prefix}{name[:-3]}", entry.path, folder)
                else:
                    continue
                if patterns.ignored and patterns.is_ignored(memory.qualified):
                    continue
                found.append(memory)
            except OSError:
                continue
    return found


def scan_config(config: StoreConfig) -> list[MemoryFile]:
    """Every Markdown file in a configuration's folders (lookup order), without reading
    them: `Store.scan` without a scan cache."""
    others = {f.path for f in config.folders}
    found: list[MemoryFile] = []
    for folder in config.folders:
        found.extend(scan_folder(folder, others - {folder.path}))
    return found


def resolve_files(found: Iterable[MemoryFile]) -> list[Resolved]:
    """Scanned files (lookup order) as lookup sees them, sorted by name then path."""
    by_name: dict[str, list[MemoryFile]] = {}
    invalid: list[MemoryFile] = []
    for memory in found:
        if memory.valid:
            # Keyed by Serena's name: `x` and `global/x` are two memories, not one.
            by_name.setdefault(memory.qualified, []).append(memory)
        else:
            invalid.append(memory)
    resolved = [Resolved(files[0], tuple(files[1:])) for files in by_name.values()]
    resolved.extend(Resolved(m) for m in invalid)
    resolved.sort(key=lambda r: (r.memory.qualified, r.memory.path))
    return resolved
