"""The first listing of the folders waits for the server's own watch over them.

A file written between a listing and an active watch sends no event the watch could
see, and would be missing for good; indexing therefore lists the folders only once the
watch is armed (lsp/watching.py sets `watch_armed`), and at most WATCH_WAIT_SECONDS later.
"""

from __future__ import annotations

import threading
from types import SimpleNamespace

from lsprotocol import types
from store_helpers import Workspace

from memory_ls.core.services.index import MemoryIndex
from memory_ls.core.services.search import SearchIndex
from memory_ls.lsp import indexing


def _server_parts(ws: Workspace) -> SimpleNamespace:
    """What indexing.start uses of the server: its index, search index, capabilities,
    watch flag and event loop (none here)."""
    config = ws.store().config
    return SimpleNamespace(
        index=MemoryIndex(config),
        search_index=SearchIndex(config, live=True),
        client_capabilities=types.ClientCapabilities(),
        watch_armed=threading.Event(),
        on_loop=lambda callback: None,
    )


def test_the_folders_are_listed_only_once_the_watch_is_armed(ws: Workspace) -> None:
    ws.write(ws.primary / "early.md", "there before the server")
    ls = _server_parts(ws)
    indexing.start(ls)  # type: ignore[arg-type]
    assert not ls.index.wait_scanned(0.3), "listed before the watch was armed"
    ws.write(ws.primary / "meanwhile.md", "written while the watch was being set up")
    ls.watch_armed.set()
    assert ls.index.wait_scanned(5)
    assert ls.index.lookup("early") is not None and ls.index.lookup("meanwhile") is not None


def test_a_watch_that_never_arms_holds_the_names_back_only_so_long(ws: Workspace) -> None:
    ws.write(ws.primary / "early.md", "there before the server")
    ls = _server_parts(ws)
    indexing.start(ls)  # type: ignore[arg-type]
    assert ls.index.wait_scanned(indexing.WATCH_WAIT_SECONDS + 5)
    assert ls.index.lookup("early") is not None
