"""Changes seen on disk: a memory file as it is now, and who changed it (git or another program)."""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass

# A change to a file this close in time to a move of the repository's HEAD (its reflog,
# ORIG_HEAD) is taken for git's (checkout, pull, merge, reset, rebase).
GIT_WINDOW_NS = 2_000_000_000
# Who made a change seen on disk (no Store of ours made it).
EXTERNAL_SOURCE = "external"
GIT_SOURCE = "git"
EDITOR_SAVE_SOURCE = "editor"
# Observed sources a later, better-informed record may rename.
SEEN_SOURCES = (EXTERNAL_SOURCE, GIT_SOURCE)


@dataclass(frozen=True)
class Seen:
    """A memory file as seen on disk now (data None: it is gone)."""

    path: str
    name: str  # qualified
    data: bytes | None
    mtime_ns: int
    source: str | None = None  # who changed it, when known (else the observer's default)


def seen_file(path: str, name: str, source: str | None = None) -> Seen | None:
    """A memory file as it is now (gone: data None); None when it cannot be read."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            return Seen(path, name, None, 0, source)
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return Seen(path, name, None, 0, source)
    except OSError:
        return None
    return Seen(path, name, data, info.st_mtime_ns, source)


def seen_source(path: str, mtime_ns: int | None = None) -> str:
    """`git` when a file changed with a move of its repository's HEAD (checkout, pull,
    merge, reset, rebase: HEAD's reflog or ORIG_HEAD written within GIT_WINDOW_NS of the
    file), else `external`. `git status` and fetches touch neither."""
    git_dir = _git_dir(os.path.dirname(path))
    if git_dir is None:
        return EXTERNAL_SOURCE
    when = mtime_ns if mtime_ns else time.time_ns()
    for marker in ("logs/HEAD", "ORIG_HEAD", "HEAD"):
        try:
            moved = os.stat(os.path.join(git_dir, marker)).st_mtime_ns
        except OSError:
            continue
        if abs(moved - when) <= GIT_WINDOW_NS:
            return GIT_SOURCE
    return EXTERNAL_SOURCE


def _git_dir(directory: str) -> str | None:
    """The git directory of the repository holding `directory` (None: no repository)."""
    current = os.path.abspath(directory)
    while True:
        candidate = os.path.join(current, ".git")
        if os.path.isdir(candidate):
            return candidate
        if os.path.isfile(candidate):  # a linked worktree or submodule: `gitdir: PATH`
            try:
                with open(candidate, encoding="utf-8") as handle:
                    line = handle.readline().strip()
            except OSError:
                return None
            if line.startswith("gitdir:"):
                return os.path.join(current, line[len("gitdir:") :].strip())
            return None
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent
