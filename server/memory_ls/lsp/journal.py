"""What changed, and undo: the journal (core/services/journal/) over custom LSP requests.

The server journals the changes it sees on disk that no Store of ours made (an agent or
a tool writing files, `git pull`, the editor saving a file itself), against each
memory's bytes as last seen, and answers the client's "Recent changes" view:

- `memoryLs/journal/recent` {limit?, before?}: the latest entries of the whole store;
- `memoryLs/journal/entry` {id}: one entry's content before and after (for a diff);
- `memoryLs/journal/revert` {id}: give the memory its content before that change;
- `memoryLs/journal/markReviewed` {ids? | all?, reviewed?}: mark entries reviewed;
- `memoryLs/journal/didChange` (server to client) {latest, unreviewed}: the journal
  changed (a change seen or made, a mark), so the view refreshes without polling.

A file or folder the editor renames or moves itself (F2, a quick fix, the Explorer) is
one `move` of the editor's, not a deletion and a creation: willRenameFiles says which
moves to expect before the disk changes (the watcher's sight of them is journaled as the
move), and didRenameFiles after, which makes a pair already journaled one move.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Iterable
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from memory_ls.core.rules.errors import InvalidArguments, MemoryStoreError, NotFound
from memory_ls.core.services.index import MemoryIndex, Update
from memory_ls.core.services.journal import (
    Entry,
    Journal,
    observe_move,
    observe_paths,
    seen_file,
    seen_source,
    sync_baseline_elsewhere,
)
from memory_ls.lsp.commands import refusal
from memory_ls.lsp.server import EDITOR_SOURCE, MemoryServer

RECENT = "memoryLs/journal/recent"
ENTRY = "memoryLs/journal/entry"
REVERT = "memoryLs/journal/revert"
MARK_REVIEWED = "memoryLs/journal/markReviewed"
DID_CHANGE = "memoryLs/journal/didChange"
DEFAULT_LIMIT = 50
MAX_LIMIT = 500
# A file event this long after the editor said it saved the file is the editor's save.
EDITOR_SAVE_SECONDS = 5.0
# A move the editor announced (willRenameFiles) is looked for this long on disk.
EXPECTED_MOVE_SECONDS = 10.0
# The catch-up with the disk waits at most this long for the first indexing for search:
# both read every memory, and the index is what searches wait for.
INDEXING_WAIT_SECONDS = 300.0

logger = logging.getLogger(__name__)


def register(server: MemoryServer) -> None:
    """Journal what the server sees change, and answer the journal's requests."""
    watch = JournalWatch(server)
    server.index_listeners.append(watch.index_updated)
    server.store_listeners.append(watch.store_changed)
    server.rename_listeners.append(watch.editor_moves)

    # Registered with willRenameFiles, for the same files (lsp/rename.py: RenameFilters).
    @server.feature(types.WORKSPACE_DID_RENAME_FILES)
    def did_rename_files(ls: MemoryServer, params: types.RenameFilesParams) -> None:
        pairs = [(to_fs_path(f.old_uri), to_fs_path(f.new_uri)) for f in params.files]
        watch.editor_moves(
            [(os.path.normpath(old), os.path.normpath(new)) for old, new in pairs if old and new],
            True,
        )

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: MemoryServer, params: types.DidSaveTextDocumentParams) -> None:
        path = to_fs_path(params.text_document.uri)
        if path:
            watch.saved_by_editor(os.path.normpath(path))

    @server.feature(RECENT)
    async def recent(ls: MemoryServer, params: Any) -> dict[str, Any]:
        args = _arguments(params)
        limit = _whole(args.get("limit", DEFAULT_LIMIT), "limit")
        before = args.get("before")
        journal = ls.store.journal

        def read() -> dict[str, Any]:
            entries = journal.recent(
                max(1, min(limit, MAX_LIMIT)), None if before is None else _whole(before, "before")
            )
            return {
                "entries": [_shown(entry) for entry in entries],
                "next": entries[-1].id if len(entries) == max(1, min(limit, MAX_LIMIT)) else None,
                "latest": journal.latest_id(),
                "unreviewed": journal.unreviewed(),
                "ready": watch.ready,
            }

        return await _answer(ls, read)

    @server.feature(ENTRY)
    async def entry(ls: MemoryServer, params: Any) -> dict[str, Any]:
        entry_id = _whole(_arguments(params).get("id"), "id")
        journal = ls.store.journal

        def read() -> dict[str, Any]:
            found = _found(journal, entry_id)
            after, after_from = journal.after(found)
            return {
                **_shown(found),
                "before": _text(found.before),
                "after": _text(after),
                "afterFrom": after_from,
            }

        return await _answer(ls, read)

    @server.feature(REVERT)
    async def revert(ls: MemoryServer, params: Any) -> dict[str, Any]:
        entry_id = _whole(_arguments(params).get("id"), "id")
        store = ls.store

        def undo() -> dict[str, Any]:
            found = _found(store.journal, entry_id)
            return store.revert(found.new_name or found.name, entry_id)

        result = await _answer(ls, undo)
        ls.paths_written([p for p in (result.get("path"), result.get("oldPath")) if p])
        watch.announce()
        return result

    @server.feature(MARK_REVIEWED)
    async def mark_reviewed(ls: MemoryServer, params: Any) -> dict[str, Any]:
        args = _arguments(params)
        reviewed = args.get("reviewed", True)
        if not isinstance(reviewed, bool):
            raise refusal(InvalidArguments("`reviewed` must be true or false."))
        ids: list[int] | None = None
        if not args.get("all"):
            raw = args.get("ids")
            if not isinstance(raw, list) or not raw:
                raise refusal(InvalidArguments("Give `ids` (a list of entry ids) or `all: true`."))
            ids = [_whole(i, "ids") for i in raw]
        journal = ls.store.journal

        def mark() -> dict[str, Any]:
            changed = journal.mark_reviewed(ids, reviewed)
            return {"changed": changed, "unreviewed": journal.unreviewed()}

        result = await _answer(ls, mark)
        watch.announce()
        return result


class JournalWatch:
    """Journals the memory files the server sees change, and tells the client."""

    def __init__(self, ls: MemoryServer) -> None:
        self.ls = ls
        self._synced: MemoryIndex | None = None
        # Whether the journal caught up with the disk (from then on every change is seen).
        self.ready = False
        self._lock = threading.Lock()
        self._editor_saves: dict[str, float] = {}
        self._announced: tuple[int, int, int] | None = None
        # Moves the editor announced, (old path, new path) -> when (time.monotonic()).
        self._expected: dict[tuple[str, str], float] = {}

    def index_updated(self, index: MemoryIndex, paths: set[str], update: Update) -> None:
        """Files changed on disk (on the event loop): journal them against the baseline."""
        if update.paths and index is self.ls.index:
            self.ls.store_pool.submit(self._observe, list(update.paths))

    def store_changed(self) -> None:
        """Once the folders are listed, catch up with what changed while no server ran."""
        index = self.ls.index
        if index.scanned and self._synced is not index:
            self._synced = index
            self.ready = False
            # A thread of its own: it waits for the indexing, which the store's threads
            # (writes, searches) must not.
            threading.Thread(
                target=self._sync, args=(index,), name="memory-ls-journal-sync", daemon=True
            ).start()

    def saved_by_editor(self, path: str) -> None:
        """The editor wrote this file itself: its change is the editor's."""
        if self.ls.config.name_of(path) is None:
            return
        with self._lock:
            self._editor_saves[path] = time.monotonic()
        self.ls.store_pool.submit(self._observe, [path])

    def editor_moves(self, pairs: list[tuple[str, str]], done: bool) -> None:
        """The editor is about to rename or move these files and folders (`done` False:
        the watcher's sight of each is journaled as the editor's move), or did (`done`:
        journal them now; a pair a watcher journaled already becomes one move)."""
        config = self.ls.config
        moves = [
            pair
            for pair in memory_moves(pairs, done)
            if config.qualified_name_of(pair[0]) and config.qualified_name_of(pair[1])
        ]
        if not moves:
            return
        with self._lock:
            now = time.monotonic()
            for pair in moves:
                self._expected[pair] = now
        if done:
            self.ls.store_pool.submit(self._observe, [])

    def _moved(self) -> list[int]:
        """Journal the expected moves found done on disk (a store thread)."""
        now = time.monotonic()
        with self._lock:
            for pair in [p for p, at in self._expected.items() if now - at > EXPECTED_MOVE_SECONDS]:
                del self._expected[pair]
            expected = list(self._expected)
        journal, config = self.ls.store.journal, self.ls.config
        made: list[int] = []
        for old, new in expected:
            name = config.qualified_name_of(new)
            if name is None or os.path.lexists(old) or not os.path.isfile(new):
                continue  # not moved yet (or no memory)
            seen = seen_file(new, name)
            with self._lock:
                self._expected.pop((old, new), None)
            if seen is not None:
                entry_id = observe_move(journal, old, seen, EDITOR_SOURCE)
                if entry_id is not None:
                    made.append(entry_id)
        return made

    def _source(self, path: str, mtime_ns: int) -> str:
        with self._lock:
            said = self._editor_saves.get(path)
            now = time.monotonic()
            for old in [
                p for p, at in self._editor_saves.items() if now - at > EDITOR_SAVE_SECONDS
            ]:
                del self._editor_saves[old]
        if said is not None and now - said <= EDITOR_SAVE_SECONDS:
            return EDITOR_SOURCE
        return seen_source(path, mtime_ns)

    def _observe(self, paths: Iterable[str]) -> None:
        try:
            if self._expected:
                self._moved()
            observe_paths(self.ls.store.journal, self.ls.config, paths, self._source)
        except Exception:
            logger.exception("journaling the changes of %s failed", sorted(paths))
        self.announce()

    def _sync(self, index: MemoryIndex) -> None:
        self.ls.search_index.wait_synced(INDEXING_WAIT_SECONDS)
        if self._synced is not index:
            return  # a newer configuration's catch-up runs instead
        try:
            made = sync_baseline_elsewhere(index.config)
        except Exception:
            # Logged once; the view stops waiting for it (its requests say what fails).
            logger.exception("catching up the change journal failed")
            made = 0
        if made:
            logger.info("journaled %d change(s) made while no server watched", made)
        self.ready = self._synced is index
        self.announce(force=True)

    def announce(self, *, force: bool = False) -> None:
        """Tell the client when the journal changed (`force`: whether or not it did)."""
        journal = self.ls.store.journal
        try:
            state = (journal.latest_id(), journal.unreviewed(), journal.writes)
        except Exception:
            logger.exception("reading the change journal failed")
            return
        with self._lock:
            if state == self._announced and not force:
                return
            self._announced = state
        latest, unreviewed, _writes = state
        self.ls.on_loop(
            lambda: self.ls.protocol.notify(
                DID_CHANGE, {"latest": latest, "unreviewed": unreviewed, "ready": self.ready}
            )
        )


def memory_moves(pairs: Iterable[tuple[str, str]], done: bool) -> list[tuple[str, str]]:
    """The Markdown files that renaming these files and folders moves, (old, new) each:
    a folder's are listed where it is (`done`: the new path, else the old one)."""
    moves: list[tuple[str, str]] = []
    for old, new in pairs:
        there = new if done else old
        if not os.path.isdir(there):
            moves.append((old, new))
            continue
        for directory, _folders, files in os.walk(there):
            for file in files:
                if file.endswith(".md"):
                    relative = os.path.relpath(os.path.join(directory, file), there)
                    moves.append((os.path.join(old, relative), os.path.join(new, relative)))
    return moves


async def _answer(ls: MemoryServer, work: Any) -> dict[str, Any]:
    try:
        result: dict[str, Any] = await ls.in_store_thread(work)
    except MemoryStoreError as error:
        raise refusal(error) from error
    return result


def _arguments(params: Any) -> dict[str, Any]:
    """A custom request's params as a dict (pygls hands them over as named tuples)."""
    if params is None:
        return {}
    if isinstance(params, dict):
        return params
    as_dict = getattr(params, "_asdict", None)
    if as_dict is None:
        raise refusal(InvalidArguments("The request's params must be an object."))
    return dict(as_dict())


def _whole(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise refusal(InvalidArguments(f"`{what}` must be a whole number."))
    return value


def _found(journal: Journal, entry_id: int) -> Entry:
    found = journal.entry(entry_id)
    if found is None:
        raise NotFound(f"Change {entry_id} is not in the journal (dropped, or never made).")
    return found


def _kind(entry: Entry) -> str:
    if entry.action == "move":
        return "moved"
    if entry.version_before is None:
        return "created"
    if entry.version_after is None:
        return "deleted"
    return "modified"


def _shown(entry: Entry) -> dict[str, Any]:
    """An entry as the requests show it."""
    shown = entry.as_json()
    shown["kind"] = _kind(entry)
    shown["uri"] = from_fs_path(entry.path) or entry.path
    if entry.new_path is not None:
        shown["newUri"] = from_fs_path(entry.new_path) or entry.new_path
    return shown


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", "replace")
