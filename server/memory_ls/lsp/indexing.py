"""Indexing the store in the background, with `$/progress` where the client shows it.

Names come first (a directory scan), so completion and links work early; then the facts
of every file (tags, update time) are learnt, from the cache an earlier start left where
a file has not changed, else by parsing it. Last, under a progress of its own, the
full-text index is brought in line with the files (core/fulltext.py); searches read the
files until then. Requests are answered meanwhile.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import sys
import threading
import uuid

from lsprotocol import types

from memory_ls.core.fulltext import SearchIndex
from memory_ls.core.index import MemoryIndex, facts_cache_path
from memory_ls.lsp.server import MemoryServer

logger = logging.getLogger(__name__)
INDEXING_TITLE = "Indexing memories"
SEARCH_TITLE = "Indexing memories for search"
# At most this long the first listing waits for the watch over the folders.
WATCH_WAIT_SECONDS = 2.0
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
            index.warm(
                report=reporter.report if reporter is not None else None,
                # A newer configuration replaced this index: stop wasting time on it.
                cancelled=lambda: ls.index is not index,
                cache_path=facts_cache_path(index.config),
            )
            gc.freeze()
            if index.declarations():
                # Open memories were checked against the relations learnt so far: again.
                ls.on_loop(lambda: _scanned(ls, index))
        except Exception:
            logger.exception("indexing failed")
            return
        finally:
            if reporter is not None:
                reporter.end()
        if ls.index is index:
            _index_for_search(ls, index, search_index)

    threading.Thread(target=work, name="memory-ls-index", daemon=True).start()


def _index_for_search(ls: MemoryServer, index: MemoryIndex, search_index: SearchIndex) -> None:
    """Bring the full-text index in line with the files, as a progress of its own: names
    and facts are ready before it, and searches read the files until it ends."""
    reporter = _Progress(ls, SEARCH_TITLE) if _client_shows_progress(ls) else None
    try:
        files = index.files()
        if reporter is not None:
            reporter.begin(len(files))
        # The stamps the facts were learnt with: no file is looked at twice.
        stamps = {path: (s.mtime_ns, s.size) for path, s in index.stamps().items()}
        # Indexing holds the GIL most of the time, and a request that waits for it waits a
        # switch interval each time: shorter ones keep completion quick meanwhile.
        interval = sys.getswitchinterval()
        sys.setswitchinterval(min(interval, BUILD_SWITCH_INTERVAL))
        try:
            synced = search_index.sync(files, stamps)
        finally:
            sys.setswitchinterval(interval)
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
