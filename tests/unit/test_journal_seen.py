"""Changes seen on disk (core/services/journal/: `observe`, `sync_baseline`): journaled against
each memory's bytes as last seen, once whoever sees them, the Store's own never twice."""

from __future__ import annotations

import base64
import os
import subprocess
from pathlib import Path

import pytest
from store_helpers import Workspace

from memory_ls.core import Store
from memory_ls.core.rules.errors import TooLarge
from memory_ls.core.services.journal import (
    MAX_KEPT_FILE_BYTES,
    Journal,
    observe_paths,
    seen_source,
    sync_baseline_elsewhere,
)

SECRET = "token: ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def _files(store: Store) -> dict[str, tuple[str, int, int]]:
    """Every memory file of the store as `sync_baseline` takes them."""
    files = {}
    for folder in store.config.folders:
        for path in Path(folder.path).rglob("*.md"):
            name = store.config.qualified_name_of(str(path))
            assert name is not None
            info = path.stat()
            files[str(path)] = (name, info.st_mtime_ns, info.st_size)
    return files


def _store(ws: Workspace) -> Store:
    """The workspace's store, its primary folder made."""
    ws.primary.mkdir(parents=True, exist_ok=True)
    return ws.store(global_enabled=False)


def _seen(store: Store, journal: Journal, *paths: Path) -> list[int]:
    return observe_paths(journal, store.config, [str(p) for p in paths])


def test_the_first_sync_only_fills_the_baseline_then_changes_are_journaled(
    ws: Workspace,
) -> None:
    store = _store(ws)
    notes = ws.primary / "notes.md"
    notes.write_bytes(b"first\r\n")
    assert store.journal.sync_baseline(_files(store)) == []
    notes.write_bytes(b"second\n")
    (made,) = _seen(store, store.journal, notes)
    entry = store.journal.entry(made)
    assert entry is not None
    assert (entry.action, entry.source, entry.before, entry.after_size) == (
        "save",
        "external",
        b"first\r\n",
        len(b"second\n"),
    )
    # Seen again (the other server's watcher, a second event): nothing new.
    assert _seen(store, store.journal, notes) == []
    assert _seen(store, Journal(store.journal.path), notes) == []
    # A rewrite of the same bytes changes nothing either.
    notes.write_bytes(b"second\n")
    assert _seen(store, store.journal, notes) == []
    assert len(store.history("notes")) == 1


def test_a_store_s_write_is_not_journaled_again_when_its_file_event_comes(
    ws: Workspace,
) -> None:
    store = _store(ws)
    store.journal.sync_baseline(_files(store))
    store.save("notes", "by the store\n")
    store.edit("notes", content="edited by the store\n")
    assert _seen(store, store.journal, ws.primary / "notes.md") == []
    assert [(e.action, e.source) for e in store.history("notes")] == [
        ("edit", "core"),
        ("save", "core"),
    ]


def test_a_watcher_that_saw_the_write_first_gives_the_entry_to_the_writer(
    ws: Workspace,
) -> None:
    store = _store(ws)
    notes = ws.primary / "notes.md"
    notes.write_bytes(b"one\n")
    store.journal.sync_baseline(_files(store))
    # Another process's watcher sees the new bytes before the writer records its change.
    notes.write_bytes(b"two\n")
    _seen(store, Journal(store.journal.path), notes)
    store.journal.record(
        action="edit", name="notes", path=str(notes), before=b"one\n", after=b"two\n", source="cli"
    )
    assert [(e.action, e.source, e.before) for e in store.history("notes")] == [
        ("edit", "cli", b"one\n")
    ]


def test_creation_and_deletion_seen_on_disk_and_a_revert_recreates_the_file(
    ws: Workspace,
) -> None:
    store = _store(ws)
    store.journal.sync_baseline(_files(store))
    created = ws.primary / "topic" / "made.md"
    created.parent.mkdir()
    created.write_bytes(b"# Made by a tool\n")
    (made,) = _seen(store, store.journal, created)
    created.unlink()
    (gone,) = _seen(store, store.journal, created)
    entries = {e.id: e for e in store.history("topic/made")}
    assert (entries[made].version_before, entries[gone].version_after) == (None, None)
    assert entries[gone].before == b"# Made by a tool\n"
    store.revert("topic/made", gone)
    assert created.read_bytes() == b"# Made by a tool\n"


def test_changes_while_no_server_ran_are_found_by_the_next_sync(ws: Workspace) -> None:
    store = _store(ws)
    kept = ws.primary / "kept.md"
    gone = ws.primary / "gone.md"
    kept.write_bytes(b"kept, before\n")
    gone.write_bytes(b"gone, before\n")
    store.journal.sync_baseline(_files(store))
    store.journal.close()
    kept.write_bytes(b"kept, after\n")
    gone.unlink()
    (ws.primary / "new.md").write_bytes(b"new\n")
    later = Journal(store.journal.path)
    made = later.sync_baseline(_files(store))
    shown = {(e.name, e.before) for e in map(later.entry, made) if e is not None}
    assert shown == {("kept", b"kept, before\n"), ("gone", b"gone, before\n"), ("new", None)}
    # A file that is no memory any more (ignored now, say) but still there: no entry.
    files = _files(store)
    del files[str(kept)]
    assert later.sync_baseline(files) == []
    assert str(kept) not in later.baseline_stamps()


def test_a_previous_content_with_a_secret_is_withheld_not_kept(ws: Workspace) -> None:
    store = _store(ws)
    notes = ws.primary / "notes.md"
    notes.write_text(f"{SECRET}\n")
    store.journal.sync_baseline(_files(store))
    notes.write_text("cleaned\n")
    (made,) = _seen(store, store.journal, notes)
    entry = store.journal.entry(made)
    assert entry is not None and entry.withheld and entry.before is None
    with open(store.journal.path, "rb") as handle:
        assert b"ghp_" not in handle.read()


def test_recent_pages_newest_first_and_reviewed_marks_are_kept(ws: Workspace) -> None:
    store = _store(ws)
    for number in range(5):
        store.save(f"n{number}", f"{number}\n")
    first = store.journal.recent(limit=2)
    second = store.journal.recent(limit=2, before_id=first[-1].id)
    assert [e.name for e in first + second] == ["n4", "n3", "n2", "n1"]
    assert store.journal.mark_reviewed([first[0].id]) == 1
    assert store.journal.unreviewed() == 4
    assert store.journal.mark_reviewed(None) == 4
    assert all(e.reviewed for e in Journal(store.journal.path).recent())


def test_after_is_the_next_change_s_before_or_the_file_now(ws: Workspace) -> None:
    store = _store(ws)
    store.save("notes", "one\n")
    store.edit("notes", content="two\n")
    store.edit("notes", content="three\n")
    latest, middle, _created = store.history("notes")
    assert store.journal.after(middle) == (b"two\n", "journal")
    assert store.journal.after(latest) == (b"three\n", "current")


def test_a_change_that_moves_the_repository_s_head_is_git_s(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    memory = repo / ".serena" / "memories" / "notes.md"
    memory.parent.mkdir(parents=True)
    memory.write_text("one\n")
    assert seen_source(str(memory)) == "external"  # no repository
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(repo)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "one"], check=True)
    # Long after the commit (the reflog's time set back): a plain write is external.
    old = memory.stat().st_mtime_ns - 60 * 10**9
    for marker in (repo / ".git" / "logs" / "HEAD", repo / ".git" / "HEAD"):
        os.utime(marker, ns=(old, old))
    memory.write_text("two\n")
    assert seen_source(str(memory), memory.stat().st_mtime_ns) == "external"
    subprocess.run([*git, "commit", "-q", "-am", "two"], check=True)
    subprocess.run([*git, "checkout", "-q", "HEAD~1"], check=True)
    assert seen_source(str(memory), memory.stat().st_mtime_ns) == "git"


def test_a_file_too_large_to_keep_is_journaled_without_its_content(ws: Workspace) -> None:
    store = _store(ws)
    huge = ws.primary / "huge.md"
    # Text that deflates little: kept, it would make the journal megabytes larger.
    huge.write_bytes(b"# Huge\n" + base64.b64encode(os.urandom(MAX_KEPT_FILE_BYTES * 3 // 4)))
    store.journal.sync_baseline(_files(store))
    huge.write_bytes(b"# Small again\n")
    (made,) = _seen(store, store.journal, huge)
    entry = store.journal.entry(made)
    assert entry is not None and entry.withheld and entry.before is None
    assert entry.before_size == MAX_KEPT_FILE_BYTES + 7
    kept = sum(p.stat().st_size for p in Path(store.journal.path).parent.glob("*.sqlite3*"))
    assert kept < MAX_KEPT_FILE_BYTES / 8
    with pytest.raises(TooLarge):
        store.revert("huge", made)
    assert huge.read_bytes() == b"# Small again\n"


def test_the_catch_up_in_a_process_of_its_own_journals_into_the_store_s_journal(
    ws: Workspace,
) -> None:
    """`sync_baseline_elsewhere` (what the servers run: a first catch-up reads every
    memory) fills the baseline of the store's own journal, then journals what changed
    while no server ran there, with the exact previous bytes, and says how many."""
    store = _store(ws)
    kept = ws.primary / "kept.md"
    kept.write_bytes(b"kept, before\r\n")
    assert sync_baseline_elsewhere(store.config) == 0
    assert set(store.journal.baseline_stamps()) == {str(kept)}
    kept.write_bytes(b"kept, after\n")
    (ws.primary / "new.md").write_bytes(b"new\n")
    assert sync_baseline_elsewhere(store.config) == 2
    shown = {(e.name, e.before, e.source) for e in store.journal.recent()}
    assert shown == {("kept", b"kept, before\r\n", "external"), ("new", None, "external")}
