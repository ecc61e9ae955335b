"""Which files are memories: the walk of the folders a new process compares with the index."""

from __future__ import annotations

import array
import os
import stat
from collections.abc import Sequence

from memory_ls.core.services.search.files import FOLDER_SIZE, stat_files
from memory_ls.core.services.search.schema import Listing
from memory_ls.core.storage.folders import Folder, StoreConfig
from memory_ls.core.storage.fsio import is_temp_file


def _memory_stamp(folder: Folder, name: str, path: str) -> tuple[int, int] | None:
    """The stamp of the file of `folder` named `name` if it is a memory now (by the
    directory scan's rules: no temporary file, no ignored name, a file), else None."""
    if is_temp_file(os.path.basename(path)):
        return None
    if folder.patterns.ignored and folder.patterns.is_ignored(folder.qualified(name)):
        return None
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size) if stat.S_ISREG(info.st_mode) else None


def walk_folders(config: StoreConfig) -> Listing:
    """Every memory file with its stamp, by `store.scan_folder`'s rules.

    A leaner walk than the store's scan: what a search from a new process spends
    most of its time on. Directories are listed by name (no object per entry), and
    the `.md` names are stated all at once (`stat_files`, in two processes); that
    also finds the rare folder named `x.md`, whose files a second round lists.
    """
    ranks: list[int] = []
    names: list[str] = []
    paths: list[str] = []
    mtimes: array.array[int] = array.array("q")
    sizes: array.array[int] = array.array("q")
    folders = config.folders
    roots = {folder.path for folder in folders}
    pending: list[_Directory] = []
    for rank, folder in enumerate(folders):
        real = os.path.realpath(folder.path)
        pending.append((rank, folder.path, real, "", frozenset((real,))))
    while pending:
        start = len(paths)
        where: list[int] = []  # the directory in `pending` of each path listed now
        named_md: list[_Directory] = []  # folders named `x.md`: the next round's
        at = 0
        while at < len(pending):  # grows with the subfolders found on the way
            place = pending[at]
            rank, directory, _real, prefix, _above = place
            try:
                entries = os.listdir(directory)
            except OSError:
                entries = []
            folder = folders[rank]
            ignored = folder.patterns.is_ignored if folder.patterns.ignored else None
            qualify = folder.qualified
            markdown = [name for name in entries if name.endswith(".md")]
            if len(markdown) < len(entries):
                others = [name for name in entries if not name.endswith(".md")]
                pending += _subfolders(place, others, roots)
            base = directory if directory.endswith(os.sep) else directory + os.sep
            if ignored is None and not any(name[0] == "." for name in markdown):
                # Most directories: every name a memory, made in C-speed loops.
                names += [prefix + name[:-3] for name in markdown]
                paths += [base + name for name in markdown]
                ranks += [rank] * len(markdown)
                where += [at] * len(markdown)
                markdown = []
            for name in markdown:
                memory = f"{prefix}{name[:-3]}"
                if (name[0] == "." and is_temp_file(name)) or (
                    ignored is not None and ignored(qualify(memory))
                ):
                    # No memory; but a folder so named is listed all the same.
                    named_md += _subfolders(place, [name], roots, links=False)
                    continue
                ranks.append(rank)
                names.append(memory)
                paths.append(base + name)
                where.append(at)
            at += 1
        found_mtimes, found_sizes = stat_files(paths[start:])
        mtimes += found_mtimes
        sizes += found_sizes
        for offset, size in enumerate(found_sizes):
            if size == FOLDER_SIZE:  # a link to a folder is no memory, and not followed
                name = os.path.basename(paths[start + offset])
                named_md += _subfolders(pending[where[offset]], [name], roots, links=False)
        pending = named_md
    return Listing(array.array("i", ranks), names, mtimes, sizes)


# A directory to list: (folder rank, path, real path, name prefix, the real paths above
# it, itself included: a link back up would loop for ever).
_Directory = tuple[int, str, str, str, frozenset[str]]


def _subfolders(
    place: _Directory, names: Sequence[str], roots: set[str], links: bool = True
) -> list[_Directory]:
    """The folders among `names` in a directory that a walk lists, as `scan_folder` does:
    real ones that are no other configured folder, and, with `links`, linked ones that do
    not lead back up."""
    rank, directory, real, prefix, above = place
    found: list[_Directory] = []
    for name in names:
        path = os.path.join(directory, name)
        try:
            mode = os.lstat(path).st_mode
            if stat.S_ISDIR(mode):
                if path not in roots:
                    inner = os.path.join(real, name)
                    found.append((rank, path, inner, f"{prefix}{name}/", above | {inner}))
            elif links and stat.S_ISLNK(mode) and path not in roots and os.path.isdir(path):
                inner = os.path.realpath(path)
                if inner not in above:
                    found.append((rank, path, inner, f"{prefix}{name}/", above | {inner}))
        except OSError:
            continue
    return found
