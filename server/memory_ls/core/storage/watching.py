"""Watching memory folders for changes (watchfiles), for any long-lived process.

The language server (lsp/watching.py) and the MCP server (core/operations/live.py) both watch every
configured folder with these pieces: a plan that covers the folders without watching
anything twice, a watch per plan in a thread of its own, and the test of which events
may matter. What each does with the changed paths is its own.
"""

from __future__ import annotations

import functools
import logging
import os
import queue
import threading
from collections.abc import Callable, Iterable
from typing import Any

from memory_ls.core.storage import inotify
from memory_ls.core.storage.fsio import is_temp_file

# Setting this to 1 turns off the servers' own watchers (for machines short of inotify
# watches): the language server relies on the client's file events, the MCP server
# compares the disk with its indexes before each call.
NO_SERVER_WATCH_ENV = "MEMORY_LS_NO_SERVER_WATCH"
# How a watch groups events: a group is handed over once nothing new came for STEP_MS,
# or DEBOUNCE_MS after its first event at the latest.
STEP_MS = 50
DEBOUNCE_MS = 200
# A replaced watch runs on this long: past a whole group's wait, and a step to hand it over.
RETIRE_SECONDS = (DEBOUNCE_MS + 2 * STEP_MS) / 1000
CHANGE_MODIFIED = 2  # watchfiles.Change.modified
# How long a watch that failed waits before it tries again.
RETRY_SECONDS = 1.0

logger = logging.getLogger(__name__)


def server_watch_disabled() -> bool:
    """Whether the environment turns the servers' own watchers off."""
    return os.environ.get(NO_SERVER_WATCH_ENV) == "1"


def watch_plan(folders: list[str]) -> list[tuple[str, bool]]:
    """(path, recursive) pairs covering the folders without watching anything twice.

    A folder that holds no folder is watched flat: a recursive watch lists every entry
    below it first, with the GIL held (0.25 to 0.38 s for 100,000 memories, before the
    names can be listed), a flat one nothing. A folder that appears in it later turns its
    watch recursive (`appeared_folders`).
    """
    # A missing folder gets a flat watch on its nearest existing ancestor, so that its
    # creation is seen.
    recursive = sorted({f for f in folders if os.path.isdir(f)}, key=len)
    kept: list[str] = []
    for folder in recursive:
        if not any(is_ancestor_or_same(outer, folder) for outer in kept):
            kept.append(folder)
    plan = [(folder, has_subfolder(folder)) for folder in kept]
    flat: set[str] = set()
    for folder in folders:
        if os.path.isdir(folder):
            continue
        ancestor = os.path.dirname(folder)
        while ancestor and not os.path.isdir(ancestor):
            parent = os.path.dirname(ancestor)
            if parent == ancestor:
                break
            ancestor = parent
        if ancestor and not any(is_ancestor_or_same(outer, ancestor) for outer in kept):
            flat.add(ancestor)
    plan.extend((path, False) for path in sorted(flat))
    return plan


def arm(
    watches: dict[bool, FolderWatch | None],
    folders: list[str],
    enqueue: Callable[[Iterable[str]], None],
) -> tuple[tuple[str, ...], list[str], list[str]]:
    """Bring `watches` (by recursive) in line with the plan for `folders`, each new watch
    active before the one it replaces stops, so no event falls between. Returns the
    configured folders watched flat, those of them that held a folder once watched (made
    before the watch was active: no event came, so they are watched whole now and the
    caller reads them), and the paths no watch could be set up for.

    Planned twice at most: a folder made in a flat-watched one in between needs the
    recursive watch after all.
    """
    flat: tuple[str, ...] = ()
    made: list[str] = []
    unwatched: list[str] = []
    for _attempt in range(2):
        plan = watch_plan(folders)
        for recursive in (True, False):
            paths = tuple(path for path, deep in plan if deep == recursive)
            current = watches.get(recursive)
            if current is not None and current.paths == paths:
                continue
            watch = FolderWatch.start(paths, recursive, enqueue)
            if watch is None:
                unwatched += paths
            watches[recursive] = watch
            if current is not None:
                current.retire()
        flat = flat_folders(plan, folders)
        holding = [path for path in flat if has_subfolder(path)]
        made += holding
        if not holding:
            break
    return flat, made, unwatched


def has_subfolder(path: str) -> bool:
    """Whether a folder holds a folder or a link to one (what a flat watch would miss);
    True when it cannot be told (watched whole)."""
    try:
        with os.scandir(path) as entries:
            return any(entry.is_dir() for entry in entries)
    except OSError:
        return True


def flat_folders(plan: list[tuple[str, bool]], folders: Iterable[str]) -> tuple[str, ...]:
    """The configured folders a plan watches flat."""
    configured = set(folders)
    return tuple(path for path, deep in plan if not deep and path in configured)


def appeared_folders(paths: Iterable[str], flat: Iterable[str]) -> list[str]:
    """The changed paths that are folders right inside a folder watched flat: its watch
    must become recursive, and what they hold be read (written before it was)."""
    watched = set(flat)
    return [path for path in paths if os.path.dirname(path) in watched and os.path.isdir(path)]


def is_ancestor_or_same(ancestor: str, path: str) -> bool:
    """Whether `path` is `ancestor` or lies under it (paths as given, not resolved)."""
    return path == ancestor or path.startswith(ancestor.rstrip(os.sep) + os.sep)


class FolderWatch:
    """A watch over some folders, in a thread of its own.

    watchfiles (the Rust notify crate) does the watching: inotify, FSEvents or
    ReadDirectoryChangesW, new subfolders followed, events grouped in Rust without the
    GIL; on Linux a flat watch is our own inotify watch, which asks for no reads
    (core/storage/inotify.py). watchdog, used before, paired renames in Python with a linear
    search per event: in an event storm its threads held the GIL most of the time while
    completion waited.
    """

    def __init__(self, paths: tuple[str, ...], recursive: bool, notify: Any) -> None:
        self.paths = paths
        self.recursive = recursive
        self._notify = notify
        self._stop = threading.Event()

    @classmethod
    def start(
        cls, paths: tuple[str, ...], recursive: bool, enqueue: Callable[[Iterable[str]], None]
    ) -> FolderWatch | None:
        """Watch `paths` (active on return); None when there is nothing to watch or the
        watch cannot be set up (logged)."""
        if not paths:
            return None
        try:
            notify = notifier(paths, recursive)
        except (OSError, RuntimeError) as exc:  # a folder went away meanwhile: watched again then
            logger.warning("cannot watch %s: %s", ", ".join(paths), exc)
            return None
        watch = cls(paths, recursive, notify)
        name = "memory-ls-watch" + ("" if recursive else "-flat")
        threading.Thread(target=watch._run, args=(enqueue,), name=name, daemon=True).start()
        return watch

    def stop(self) -> None:
        """End the watch (its thread sees this within a step)."""
        self._stop.set()

    def retire(self) -> None:
        """End the watch once what it saw so far is handed over: a stop drops the group the
        watcher is still collecting, so a watch replaced by a new one (active already) keeps
        running for one grouping period, and the two overlap instead of leaving a gap."""
        timer = threading.Timer(RETIRE_SECONDS, self._stop.set)
        timer.daemon = True
        timer.start()

    def _run(self, enqueue: Callable[[Iterable[str]], None]) -> None:
        notify = self._notify
        while True:
            try:
                changes = notify.watch(DEBOUNCE_MS, STEP_MS, 0, self._stop)
            except Exception as exc:
                # watchfiles keeps an error of the watcher under it for good (a folder
                # removed while a watch was being added to it, say): watch anew, and read
                # the folders again for what went by meanwhile.
                logger.warning("watching %s failed (%s); watching again", self.paths, exc)
                notify.close()
                notify = self._watch_again()
                if notify is None:
                    return
                if self.recursive:  # a flat watch is on a folder's parent: nothing to read
                    enqueue(self.paths)
                continue
            if isinstance(changes, set):
                wanted = [path for change, path in changes if may_matter(change, path)]
                if wanted:
                    enqueue(wanted)
            if changes == "stop" or self._stop.is_set():
                notify.close()
                return

    def _watch_again(self) -> Any:
        """A new watcher for the same folders, retried until stopped; None when stopped."""
        while not self._stop.is_set():
            try:
                return notifier(self.paths, self.recursive)
            except (OSError, RuntimeError) as exc:
                # A watched folder is gone: the owner re-plans its watches and stops this.
                logger.info("watching %s again: %s", self.paths, exc)
                self._stop.wait(RETRY_SECONDS)
        return None


def notifier(paths: tuple[str, ...], recursive: bool) -> Any:
    """A watcher over `paths`, active on return: on Linux a flat one asks inotify for no
    reads (core/storage/inotify.py), else watchfiles'."""
    if not recursive and inotify.available():
        return inotify.FlatInotify(list(paths))
    # The class that watchfiles.watch() loops over, used directly so that the watch is
    # active when it is made, not later in the thread, as the callers expect.
    from watchfiles._rust_notify import RustNotify

    return RustNotify(list(paths), False, False, 300, recursive, True)


def may_matter(change: int, path: str) -> bool:
    """Whether a change may change which memories exist or what they say."""
    if path.endswith(".md"):
        return True
    # Any other path that appeared or went away may be a folder with memories in it;
    # other files' contents do not matter, nor our own temporary files.
    return change != CHANGE_MODIFIED and not is_temp_file(os.path.basename(path))


class SerialWorker:
    """Runs calls one after another in a daemon thread (started with the first call)."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._calls: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def submit(self, function: Callable[..., None], *args: Any) -> None:
        """Queue a call; a failure is logged."""
        self._calls.put(functools.partial(function, *args))
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            call = self._calls.get()
            try:
                call()
            except Exception:
                logger.exception("%s failed", self._name)
