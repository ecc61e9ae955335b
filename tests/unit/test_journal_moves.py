"""A move the editor says it made is one `move` entry (core/services/journal/moves.py),
whether the watcher saw the files before or after (issue 34 point 6)."""

from __future__ import annotations

from pathlib import Path

from store_helpers import Workspace

from memory_ls.core import Store
from memory_ls.core.services.journal import observe_move, observe_paths, seen_file


def _store(ws: Workspace) -> tuple[Store, Path, Path]:
    ws.primary.mkdir(parents=True, exist_ok=True)
    store = ws.store(global_enabled=False)
    old = ws.primary / "notes.md"
    old.write_bytes(b"# Notes\r\nkept as they are\n")
    files = {str(old): ("notes", old.stat().st_mtime_ns, old.stat().st_size)}
    store.journal.sync_baseline(files)
    return store, old, ws.primary / "topic" / "renamed.md"


def _move(old: Path, new: Path) -> None:
    new.parent.mkdir(parents=True, exist_ok=True)
    old.rename(new)


def _moved(store: Store, old: Path, new: Path) -> int | None:
    seen = seen_file(str(new), "topic/renamed")
    assert seen is not None
    return observe_move(store.journal, str(old), seen, "editor")


def _entries(store: Store) -> list[tuple[str, str, str | None, str]]:
    return [(e.action, e.name, e.new_name, e.source) for e in store.journal.recent()]


def test_a_move_said_before_the_watcher_saw_it_is_one_move(ws: Workspace) -> None:
    store, old, new = _store(ws)
    _move(old, new)
    made = _moved(store, old, new)
    assert made is not None
    # The watcher's sight of both paths afterwards finds nothing new; nor a second word.
    assert observe_paths(store.journal, store.config, [str(old), str(new)]) == []
    assert _moved(store, old, new) is None
    assert _entries(store) == [("move", "notes", "topic/renamed", "editor")]
    entry = store.journal.entry(made)
    assert entry is not None and entry.before == b"# Notes\r\nkept as they are\n"
    assert entry.version_before == entry.version_after


def test_a_delete_and_create_the_watcher_saw_first_become_one_move(ws: Workspace) -> None:
    store, old, new = _store(ws)
    _move(old, new)
    assert len(observe_paths(store.journal, store.config, [str(old), str(new)])) == 2
    assert sorted(a for a, *_ in _entries(store)) == ["delete", "save"]
    made = _moved(store, old, new)
    assert _entries(store) == [("move", "notes", "topic/renamed", "editor")]
    entry = store.journal.entry(made or 0)
    assert entry is not None and entry.path == str(old) and entry.new_path == str(new)
    assert entry.before == b"# Notes\r\nkept as they are\n"
    # Undo moves it back.
    store.revert("topic/renamed", entry.id)
    assert old.is_file() and not new.exists()


def test_half_seen_and_no_move_at_all(ws: Workspace) -> None:
    store, old, new = _store(ws)
    # Not moved yet: the old file is still there.
    new.parent.mkdir()
    new.write_bytes(old.read_bytes())
    assert _moved(store, old, new) is None
    new.unlink()
    # The watcher saw only the creation so far: the move replaces it.
    _move(old, new)
    assert len(observe_paths(store.journal, store.config, [str(new)])) == 1
    assert _moved(store, old, new) is not None
    assert observe_paths(store.journal, store.config, [str(old)]) == []
    assert _entries(store) == [("move", "notes", "topic/renamed", "editor")]
