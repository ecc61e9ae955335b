"""What git knows about the workspace: whether it is a repository, its files, its renames.

Every call runs git once and is bounded in time; callers cache what it returns
(`stale-path` never runs git while someone types).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

GIT_TIMEOUT_SECONDS = 20.0
# Rename detection reads this many commits back at most: enough for the moves a note
# could still mean, bounded on repositories with long histories.
RENAME_HISTORY_COMMITS = 5000
# The rename history is read again at most this often, and only when git's HEAD or
# index changed (a commit, a checkout, a `git mv`).
RENAME_RECHECK_SECONDS = 5.0


def git_dir(root: str) -> str | None:
    """The git directory of the repository that holds `root`, or None (no git run)."""
    current = os.path.abspath(root)
    while True:
        marker = os.path.join(current, ".git")
        if os.path.isdir(marker):
            return marker
        if os.path.isfile(marker):  # a worktree or submodule: "gitdir: PATH"
            try:
                with open(marker, encoding="utf-8") as handle:
                    line = handle.readline().strip()
            except OSError:
                return None
            if line.startswith("gitdir:"):
                return os.path.normpath(os.path.join(current, line[len("gitdir:") :].strip()))
            return None
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def work_tree_top(root: str) -> str | None:
    """The top of the git work tree that holds `root` (where its `.git` folder, or a
    worktree's `.git` file, is), or None outside git (no git run)."""
    current = os.path.abspath(root)
    while True:
        if os.path.lexists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def in_git_work_tree(root: str) -> bool:
    """Whether `root` lies in a git repository's work tree."""
    return git_dir(root) is not None


def _git(root: str, args: Sequence[str], feed: bytes | None = None) -> bytes | None:
    """git's standard output, or None when git is missing, fails or takes too long."""
    import subprocess  # only where git runs: kept off every command's start

    try:
        done = subprocess.run(
            ["git", "-C", root, *args],
            capture_output=True,
            timeout=GIT_TIMEOUT_SECONDS,
            check=False,
            input=feed,
            stdin=subprocess.DEVNULL if feed is None else None,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def git_output(root: str, args: Sequence[str], feed: bytes | None = None) -> bytes | None:
    """What `git -C root ARGS` prints (with `feed` on its standard input), or None when
    git is missing, fails or takes too long."""
    return _git(root, args, feed)


def list_files(root: str) -> list[str] | None:
    """Files under `root` that git tracks or would track (ignored ones left out), relative
    to `root` with `/`; None when git cannot say."""
    out = _git(root, ["ls-files", "-z", "--cached", "--others", "--exclude-standard"])
    # Tracked files deleted from the work tree are still in the index: they are gone.
    deleted = _git(root, ["ls-files", "-z", "--deleted"])
    if out is None or deleted is None:
        return None
    gone = set(_paths(deleted))
    return sorted({p for p in _paths(out) if p not in gone})


def _paths(output: bytes) -> list[str]:
    return [p for p in output.decode("utf-8", "surrogateescape").split("\0") if p]


def parse_renames(output: bytes) -> list[tuple[str, str]]:
    """(old, new) pairs from `--name-status -z` output, in the order git gave them."""
    tokens = output.decode("utf-8", "surrogateescape").split("\0")
    pairs = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token[:1] == "R" and token[1:].isdigit() and index + 2 < len(tokens):
            pairs.append((tokens[index + 1], tokens[index + 2]))
            index += 3
        else:
            index += 1
    return pairs


def chain_renames(newest_first: Sequence[tuple[str, str]]) -> dict[str, str]:
    """Where each old path ended up after every later rename (a -> b, then b -> c: a -> c)."""
    final: dict[str, str] = {}
    for old, new in newest_first:
        # Later renames are already in `final`: follow `new` through them.
        final.setdefault(old, final.get(new, new))
    return final


def read_renames(root: str) -> dict[str, str]:
    """Old path -> current path for files git saw renamed under `root` (relative, `/`):
    staged and unstaged `git mv`s first, then the history, newest first."""
    pending = _git(root, ["diff", "HEAD", "-M", "--name-status", "-z", "--relative"]) or b""
    history = (
        _git(
            root,
            [
                "log",
                "-M",
                "--diff-filter=R",
                "--name-status",
                "-z",
                "--format=",
                "--relative",
                f"--max-count={RENAME_HISTORY_COMMITS}",
            ],
        )
        or b""
    )
    return chain_renames([*parse_renames(pending), *parse_renames(history)])


@dataclass
class _Cached:
    key: tuple[int, ...]
    checked: float
    renames: dict[str, str]


class RenameHistory:
    """Renames per workspace, read with git once and again only after git's state changed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cache: dict[str, _Cached] = {}

    def renames(self, root: str) -> dict[str, str]:
        """Old path -> current path under `root` (see read_renames); {} outside git."""
        directory = git_dir(root)
        if directory is None:
            return {}
        with self._lock:
            cached = self._cache.get(root)
            now = time.monotonic()
            if cached is not None and now - cached.checked < RENAME_RECHECK_SECONDS:
                return cached.renames
            key = _state_key(directory)
            if cached is not None and cached.key == key:
                cached.checked = now
                return cached.renames
            renames = read_renames(root)
            self._cache[root] = _Cached(key, now, renames)
            return renames


def _state_key(directory: str) -> tuple[int, ...]:
    """Changes with every commit, checkout, reset and staged `git mv` (stat only)."""
    key: list[int] = []
    for name in ("HEAD", "index", "packed-refs"):
        try:
            info = os.stat(os.path.join(directory, name))
            key.extend((info.st_mtime_ns, info.st_size))
        except OSError:
            key.extend((0, 0))
    return tuple(key)


RENAMES = RenameHistory()
