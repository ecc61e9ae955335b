"""Which paths are memory files, by the rules of the directory scan."""

from __future__ import annotations

import os
from collections.abc import Iterable

from memory_ls.core.storage.folders import StoreConfig
from memory_ls.core.storage.fsio import is_temp_file
from memory_ls.core.storage.memory import MemoryFile


def memory_paths_at(config: StoreConfig, paths: Iterable[str]) -> list[str]:
    """The memory files among `paths`, a folder standing for every file under it (one
    that appeared or moved in), by the scan's rules (no ignored memory, no temporary
    file)."""
    found: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            inside = [os.path.join(d, name) for d, _, names in os.walk(path) for name in names]
        else:
            inside = [path]
        found += [p for p in inside if memory_at(config, p) is not None]
    return found


def memory_at(config: StoreConfig, path: str) -> MemoryFile | None:
    """The memory file at a path, by the same rules as the directory scan; None if none."""
    if not path.endswith(".md") or is_temp_file(os.path.basename(path)):
        return None
    owned = config.name_of(path)
    if owned is None:
        return None
    folder, name = owned
    # By the scan's rules: Serena's ignored memories are not memories at all.
    if folder.patterns.ignored and folder.patterns.is_ignored(folder.qualified(name)):
        return None
    # Links are followed, as Serena follows them (isfile does).
    return MemoryFile(name, path, folder) if os.path.isfile(path) else None


def walk_markdown(directory: str) -> list[str]:
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
