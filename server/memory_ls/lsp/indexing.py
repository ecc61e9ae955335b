"""Indexing the store in the background, with `$/progress` where the client shows it.

Names come first (a directory scan), so completion and links work early; then the facts
of every file (tags, update time) are learnt, from the cache an earlier start left where
a file has not changed, else by parsing it. Meanwhile, under a progress of its own, the
full-text index is brought in line with the files (core/services/search/; a first indexing of
many files in a worker process); until then a search reads only the files it has not
reached. Requests are answered meanwhile, and both indexings wait for searches (up to
half the time: `Turns`).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import queue
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any

from lsprotocol import types

from memory_ls.core.services.index import MemoryIndex, facts_cache_path
from memory_ls.core.services.search import BACKGROUND_SEARCH_SHARE, WORKER_FILES, SearchIndex
from memory_ls.lsp import startup
from memory_ls.lsp.server import MemoryServer

logger = logging.getLogger(__name__)
INDEXING_TITLE = "Indexing memories"
SEARCH_TITLE = "Indexing memories for search"
# At most this long the first listing waits for the watch over the folders.
WATCH_WAIT_SECONDS = 2.0
# Facts learnt from the indexing workers between two looks at searches waiting.
LEARN_STEP = 100
# Seconds a thread may keep the GIL while another waits, during indexing for search.
BUILD_SWITCH_INTERVAL = 0.0005


def register(server: MemoryServer) -> None:
    """Index the store whenever its folders are (re)configured."""
    server.folder_listeners.append(lambda: start(server))


def start(ls: MemoryServer) -> None:
    """Index the current store in a background thread."""
    index = ls.index
    search_index = ls.search_index
    reporter = _Progress(ls) if _client_shows_progress(ls) else None
    armed = ls.watch_armed
    # Searches meanwhile wait for its first sync to begin rather than read every file.
    search_index.expect_sync()

    def work() -> None:
        try:
            # Listed once the watch is active, so nothing written meanwhile goes unseen
            # (bounded: a watch that cannot be set up does not hold back the names).
            armed.wait(WATCH_WAIT_SECONDS)
            count = index.scan()
            # What is alive now (modules, the index) lives as long as the server: taken out
            # of cycle collection, a full collection no longer walks it (tens of ms, in the
            # middle of a keystroke's answer, at 100,000 memories).
            gc.freeze()
            ls.on_loop(lambda: _scanned(ls, index))
            if reporter is not None:
                reporter.begin(count)
            # The facts of the files the indexing workers read (no second read here),
            # learnt on this thread as searches let it (core/services/search/worker.py: `Turns`).
            learnt: queue.SimpleQueue[list[Any] | None] = queue.SimpleQueue()

            def index_for_search() -> None:
                try:
                    _index_for_search(ls, index, search_index, learnt.put if first else None)
                finally:
                    learnt.put(None)

            searching = threading.Thread(
                target=index_for_search, name="memory-ls-index-search", daemon=True
            )
            # Whether the full-text index is empty (never built): a first sync of many files
            # runs in workers; else it only checks stamps, beside the facts.
            first = count >= WORKER_FILES and not search_index.holds_files()
            # No cyclic collection while the facts are learnt (startup.py).
            with startup.collection_paused():
                if ls.index is index:
                    searching.start()
                    if first:
                        # The workers read every file for both indexes; the rest (files
                        # they did not read) after them.
                        _learn(index, learnt, search_index, reporter, count)
                        searching.join()
                with _quick_switching():
                    index.warm(
                        report=reporter.report if reporter is not None else None,
                        # A newer configuration replaced this index: stop wasting time on it.
                        cancelled=lambda: ls.index is not index,
                        cache_path=facts_cache_path(index.config),
                        pause=search_index.turns.pauser(BACKGROUND_SEARCH_SHARE),
                    )
            if index.declarations():
                # Open memories were checked against the relations learnt so far: again.
                ls.on_loop(lambda: _scanned(ls, index))
        except Exception:
            logger.exception("indexing failed")
            return
        finally:
            if reporter is not None:
                reporter.end()

    threading.Thread(target=work, name="memory-ls-index", daemon=True).start()


def _learn(
    index: MemoryIndex,
    learnt: queue.SimpleQueue[list[Any] | None],
    search_index: SearchIndex,
    reporter: _Progress | None,
    count: int,
) -> None:
    """Take in the facts the indexing workers send until they are done."""
    pause = search_index.turns.pauser(BACKGROUND_SEARCH_SHARE)
    done = 0
    while (rows := learnt.get()) is not None:
        for start in range(0, len(rows), LEARN_STEP):
            pause()
            index.learn_facts(rows[start : start + LEARN_STEP])
        done += len(rows)
        if reporter is not None:
            reporter.report(done, count)


_switching_lock = threading.Lock()
_switching_users = 0
_switching_saved = 0.0


@contextlib.contextmanager
def _quick_switching() -> Iterator[None]:
    """While indexing holds the GIL most of the time: a request that waits for it waits a
    switch interval each time, and shorter ones keep completion quick meanwhile (the two
    indexings may overlap: the interval is given back when the last one ends)."""
    global _switching_users, _switching_saved
    with _switching_lock:
        if _switching_users == 0:
            _switching_saved = sys.getswitchinterval()
            sys.setswitchinterval(min(_switching_saved, BUILD_SWITCH_INTERVAL))
        _switching_users += 1
    try:
        yield
    finally:
        with _switching_lock:
            _switching_users -= 1
            if _switching_users == 0:
                sys.setswitchinterval(_switching_saved)


def _index_for_search(
    ls: MemoryServer,
    index: MemoryIndex,
    search_index: SearchIndex,
    learnt: Callable[[list[Any]], None] | None = None,
) -> None:
    """Bring the full-text index in line with the files, as a progress of its own (beside
    the facts'): searches read the files it has not reached until it ends."""
    reporter = _Progress(ls, SEARCH_TITLE) if _client_shows_progress(ls) else None
    try:
        files = index.files()
        if reporter is not None:
            reporter.begin(len(files))
        # The stamps the facts were learnt with, where they were: a file not stated twice
        # (an empty index compares none).
        stamps = (
            {path: (s.mtime_ns, s.size) for path, s in index.stamps().items()}
            if search_index.holds_files()
            else {}
        )
        with _quick_switching():
            synced = search_index.sync(
                files,
                stamps,
                report=reporter.report if reporter is not None else None,
                learnt=learnt,
            )
        if synced and ls.index is index:
            ls.on_loop(lambda: ls.search_changed(None))
    except Exception:
        logger.exception("indexing for search failed")
    finally:
        if reporter is not None:
            reporter.end()


def _scanned(ls: MemoryServer, index: MemoryIndex) -> None:
    if ls.index is index:
        ls.store_changed()


def _client_shows_progress(ls: MemoryServer) -> bool:
    window = ls.client_capabilities.window
    return bool(window and window.work_done_progress)


class _Progress:
    """A work-done progress shown by the client, driven from the indexing thread."""

    def __init__(self, ls: MemoryServer, title: str = INDEXING_TITLE) -> None:
        self.ls = ls
        self.title = title
        self.token = f"memory-ls-index-{uuid.uuid4()}"
        self.created = threading.Event()
        self._creating: asyncio.Future[None] | None = None
        ls.on_loop(self._create)

    def _create(self) -> None:
        self._creating = asyncio.ensure_future(self._create_async())

    async def _create_async(self) -> None:
        try:
            await self.ls.work_done_progress.create_async(self.token)
        except asyncio.CancelledError:  # the session ended first
            return
        except Exception as exc:  # the client refused: report nothing
            logger.info("no progress shown: %s", exc)
            return
        self.created.set()

    def _send(self, value: types.WorkDoneProgressBegin | types.WorkDoneProgressReport) -> None:
        progress = self.ls.work_done_progress
        self.ls.on_loop(
            lambda: (
                progress.begin(self.token, value)
                if isinstance(value, types.WorkDoneProgressBegin)
                else progress.report(self.token, value)
            )
        )

    def begin(self, total: int) -> None:
        """Announce the work: parsing `total` files."""
        # Progress notifications for a token the client has not created are an error.
        if not self.created.wait(timeout=5.0):
            return
        self._send(
            types.WorkDoneProgressBegin(
                title=self.title,
                message=f"{total} files",
                percentage=0,
                cancellable=False,
            )
        )

    def report(self, done: int, total: int) -> None:
        """Say how far the work is."""
        if not self.created.is_set():
            return
        self._send(
            types.WorkDoneProgressReport(
                message=f"{done}/{total} files", percentage=done * 100 // max(total, 1)
            )
        )

    def end(self) -> None:
        """Close the progress."""
        if not self.created.is_set():
            return
        progress = self.ls.work_done_progress
        done = "Memories indexed" if self.title == INDEXING_TITLE else "Memories indexed for search"
        self.ls.on_loop(lambda: progress.end(self.token, types.WorkDoneProgressEnd(message=done)))
