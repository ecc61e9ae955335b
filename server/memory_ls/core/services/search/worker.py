"""The first indexing's worker processes, and the turns it gives searches in this process."""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from memory_ls.core.rules.document import Document
from memory_ls.core.services.index import facts_of_text
from memory_ls.core.services.search.database import Database
from memory_ls.core.services.search.files import _receive, _send
from memory_ls.core.services.search.walk import _memory_stamp
from memory_ls.core.services.search.writing import Writer

logger = logging.getLogger(__name__)

# While the first indexing runs in this process, searches get the interpreter for up to
# this share of the time (the indexing waits for them between batches; see `Turns`).
SEARCH_SHARE = 0.5
# The share of work that does not make the index (the facts of files a worker did not
# read, the workspace check): a search reading files waits a switch interval for the GIL
# after each read while such work runs, so it is let run only when searches had this.
BACKGROUND_SEARCH_SHARE = 0.9
# An indexing waits for searches this many seconds in all even before they are owed
# that by their share: the first search, sent as the server starts (an agent's first
# question), has the interpreter to itself rather than a share of an indexing just begun.
SEARCH_HEAD_START = 2.0
# While the first indexing runs in worker processes, searches in this process get at most
# this share of the time: back to back, a search's reads (half of them in the file helper,
# which has this process's niceness) left the niced workers little of two cores, and each
# second the index is not complete every search reads the files it has not reached.
WORKER_SEARCH_SHARE = 0.5
# Search time not counted against that share (a first search after the workers start,
# or a few short ones, never waits).
WORKER_SEARCH_ALLOWANCE = 0.5
# The longest a search waits for its turn while workers index.
MAX_SEARCH_WAIT = 1.0
# The indexing workers' niceness (POSIX): the server's searches and answers, and whatever
# else the user runs, get the cores first (a first search at 100,000 memories: half the time).
WORKER_NICENESS = 10
# A first indexing of this many files or more runs in a worker process (`index_in_workers`).
WORKER_FILES = 2_000
# At most this many worker processes (one a core): they share the database's write lock
# only for their inserts.
MAX_WORKERS = 2
# How long a worker waits for the database's write lock (the other's inserts, a busy
# machine) before it gives up (the server indexes what it left).
WORKER_BUSY_SECONDS = 60.0
# What the worker runs: this process's import path first (an editor's bundled libraries).
WORKER_CODE = (
    "import pickle, sys; sys.path[:0] = pickle.load(sys.stdin.buffer); "
    "from memory_ls.core.services.search.worker import worker_main; worker_main()"
)


class Turns:
    """Searches under way, which a first indexing in this process lets run: each of a
    search's file reads would wait a switch interval for the GIL while the indexing holds
    it. Searches get up to SEARCH_SHARE of the time: back to back, they do not stop it."""

    def __init__(self) -> None:
        self._changed = threading.Condition(threading.Lock())
        self._searches = 0
        # While workers index (`workers_indexing`): since when, and the seconds searches
        # took since then (each counted whole, overlapping or not).
        self._workers_since: float | None = None
        self._searched = 0.0

    @contextlib.contextmanager
    def searching(self) -> Iterator[None]:
        """Around a search: while workers index, once searches had their share of the time
        (WORKER_SEARCH_SHARE), it waits its turn (MAX_SEARCH_WAIT at most)."""
        with self._changed:
            self._wait_turn()
            self._searches += 1
        began = time.monotonic()
        try:
            yield
        finally:
            with self._changed:
                self._searches -= 1
                if self._workers_since is not None:
                    self._searched += time.monotonic() - began
                self._changed.notify_all()

    def _wait_turn(self) -> None:
        """Wait while searches took more than their share since workers began (lock held)."""
        deadline = time.monotonic() + MAX_SEARCH_WAIT
        while self._workers_since is not None:
            now = time.monotonic()
            allowed = WORKER_SEARCH_SHARE * (now - self._workers_since) + WORKER_SEARCH_ALLOWANCE
            # The share comes back at WORKER_SEARCH_SHARE seconds a second.
            wait = min((self._searched - allowed) / WORKER_SEARCH_SHARE, deadline - now)
            if wait <= 0:
                return
            self._changed.wait(wait)

    @contextlib.contextmanager
    def workers_indexing(self) -> Iterator[None]:
        """Around a first indexing in worker processes: searches meanwhile share the time."""
        with self._changed:
            self._workers_since, self._searched = time.monotonic(), 0.0
        try:
            yield
        finally:
            with self._changed:
                self._workers_since = None
                self._changed.notify_all()  # searches waiting their turn go now

    def pauser(self, share: float = SEARCH_SHARE) -> Callable[[], None]:
        """For one indexing (or other work over every file): a call between its steps
        that waits while searches run, as long as they had less than `share` of the time
        since this call (or SEARCH_HEAD_START seconds in all)."""
        began = time.monotonic()
        waited = 0.0

        def pause() -> None:
            nonlocal waited
            with self._changed:
                while self._searches:
                    owed = max(share * (time.monotonic() - began), SEARCH_HEAD_START)
                    allowed = owed - waited
                    if allowed <= 0:
                        return
                    at = time.monotonic()
                    self._changed.wait(allowed)
                    waited += time.monotonic() - at

        return pause


def worker_main() -> None:
    """The indexing worker (`index_in_workers`): the keys it is given on
    stdin indexed batch by batch, after each the count done so far on stdout."""
    job = pickle.load(sys.stdin.buffer)
    if hasattr(os, "nice"):  # background work: a search or a keystroke goes first
        os.nice(WORKER_NICENESS)
    database = Database(job["config"], job["db"])
    writer = Writer(database)
    folders = database.config.folders
    keys: list[tuple[int, str]] = job["keys"]
    out = sys.stdout.buffer
    seen: list[tuple[str, tuple[int, int], str, Document]] | None = None
    if job["facts"]:
        seen = writer.seen = []
    with database.lock:
        # Another worker may hold the write lock for a batch's inserts: wait for it.
        database.connect().execute(f"PRAGMA busy_timeout = {int(WORKER_BUSY_SECONDS * 1000)}")
        step = job["batch"]
        # Of several workers, each takes every `workers`-th batch; each reads and parses
        # its batch before it takes the database's write lock, so they share that lock
        # only for the inserts. First batch first: indexing the last first (the files
        # searches do not keep) was faster on a loaded machine only, and kept the files
        # searches keep to the end, the server's peak RSS 10 to 25 MiB higher.
        for start in range(job["first"] * step, len(keys), job["workers"] * step):
            batch = keys[start : start + step]
            keyed = [(key, folders[key[0]].file_for(key[1])) for key in batch]
            prepared = {}
            for key, path in keyed:
                stamp = _memory_stamp(folders[key[0]], key[1], path)
                row = (
                    None if stamp is None else writer.prepare(folders[key[0]], key[1], path, stamp)
                )
                if row is not None:
                    prepared[key] = row
            # What was read for facts is what was written, unless it changed meanwhile.
            read_first = [] if seen is None else list(seen)
            if seen is not None:
                seen.clear()
            writer.apply_now(keyed, prepared)
            if seen is not None:
                written = {path for path, *_rest in seen}
                seen[:0] = [entry for entry in read_first if entry[0] not in written]
            facts = []
            if seen is not None:
                facts = [
                    (path, *stamp, facts_of_text(text, doc)) for path, stamp, text, doc in seen
                ]
                seen.clear()
            _send(out, pickle.dumps((start, start + len(batch), facts)))


def index_in_workers(
    database: Database,
    turns: Turns,
    differing: Sequence[tuple[int, str]],
    unsynced: dict[tuple[int, str], str],
    report: Callable[[int, int], None] | None,
    learnt: Callable[[list[Any]], None] | None,
    indexed_now: Callable[[dict[tuple[int, str], str], Iterable[tuple[int, str]]], None],
    batch_files: int,
) -> list[tuple[int, str]]:
    """Index `differing` in worker processes (other cores, no share of this one's
    GIL; each file read and parsed once, for `learnt` too); return the keys they did
    not index (the caller does them: a worker could not start, or stopped)."""
    count = max(1, min(MAX_WORKERS, (os.cpu_count() or 1)))
    # A search under way (the first, sent as the server starts) reads every file now:
    # beside workers reading the same files it took half as long again, and they begin
    # with 100,000 facts for this process to take in. They start once it is answered.
    turns.pauser()()
    progress = threading.Lock()
    indexed = 0

    def follow(worker: subprocess.Popen[bytes], message: bytes) -> None:
        nonlocal indexed
        assert worker.stdin is not None and worker.stdout is not None
        try:
            with contextlib.suppress(OSError):
                worker.stdin.write(message)
                worker.stdin.close()
            # A message each time a batch is committed: which keys it held, and the
            # facts of the files it read.
            while True:
                try:
                    start, end, facts = pickle.loads(_receive(worker.stdout))
                except (EOFError, ValueError, TypeError, pickle.UnpicklingError):
                    return
                batch = differing[int(start) : int(end)]
                with database.lock:
                    indexed_now(unsynced, batch)
                with progress:
                    indexed += len(batch)
                    if learnt is not None and facts:
                        learnt(facts)
                    if report is not None:
                        report(indexed, len(differing))
        finally:
            if worker.poll() is None:
                worker.kill()
            worker.wait()
            worker.stdout.close()

    followers = []
    for first in range(count):
        job = {
            "config": database.config,
            "db": database.path,
            "keys": list(differing),
            "batch": batch_files,
            "facts": learnt is not None,
            "first": first,
            "workers": count,
        }
        try:
            worker = subprocess.Popen(
                [sys.executable, "-c", WORKER_CODE],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                close_fds=True,
            )
        except OSError as exc:
            logger.info("no indexing worker (%s): indexing here", exc)
            break
        message = pickle.dumps(sys.path) + pickle.dumps(job)
        follower = threading.Thread(target=follow, args=(worker, message), daemon=True)
        follower.start()
        followers.append(follower)
    with turns.workers_indexing():
        for follower in followers:
            follower.join()
    with database.lock:
        remaining = [key for key in differing if key in unsynced]
    if remaining:
        logger.info("indexing workers left %d of %d files", len(remaining), len(differing))
    return remaining
