"""The change journal: previous contents of Store writes, bounded, shared, revertible."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from store_helpers import Workspace

from memory_ls.core import Store
from memory_ls.core.services.journal import Journal, journal_path
from memory_ls.core.storage.gate import version_of

SECRET = "token: ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def _bytes(ws: Workspace, name: str) -> bytes:
    return (ws.primary / f"{name}.md").read_bytes()


def test_each_write_keeps_the_previous_bytes_and_versions(ws: Workspace) -> None:
    store = ws.store(global_enabled=False)
    store.save("notes", "first\n")
    first = _bytes(ws, "notes")
    store.edit("notes", content="second\n")
    second = _bytes(ws, "notes")
    entries = store.history("notes")
    assert [e.action for e in entries] == ["edit", "save"]
    assert entries[0].id > entries[1].id
    assert entries[0].before == first
    assert (entries[0].version_before, entries[0].version_after) == (
        version_of(first),
        version_of(second),
    )
    assert entries[1].before is None and entries[1].version_before is None
    assert entries[0].source == "core"
    assert entries[0].path == str(ws.primary / "notes.md")
    assert journal_path(store.config).startswith(str(ws.cache))
    assert not any("journal" in p.name for p in ws.root.rglob("*"))


def test_no_entry_for_a_write_that_changed_nothing(ws: Workspace) -> None:
    store = ws.store(global_enabled=False)
    store.save("notes", "same\n")
    store.save("notes", "same\n")
    store.edit("notes", needle="same", replacement="same")
    assert [e.action for e in store.history("notes")] == ["save"]
    current = _bytes(ws, "notes")
    assert (
        store.journal.record(
            action="save", name="notes", path="/n.md", before=current, after=current, source="t"
        )
        is None
    )
    assert len(store.history("notes")) == 1


def test_revert_restores_the_previous_bytes_exactly_and_is_undoable(ws: Workspace) -> None:
    store = ws.store(global_enabled=False)
    store.save("notes", "one\r\nwith CRLF and ü\r\n", tags=["t"])
    original = _bytes(ws, "notes")
    store.edit("notes", content="two\n")
    edited = _bytes(ws, "notes")
    answer = store.revert("notes")
    assert _bytes(ws, "notes") == original
    assert answer["version"] == version_of(original)
    latest = store.history("notes")[0]
    assert latest.action == "revert" and latest.before == edited
    store.revert("notes")  # the revert itself is undone
    assert _bytes(ws, "notes") == edited


def test_revert_to_an_older_entry(ws: Workspace) -> None:
    store = ws.store(global_enabled=False)
    store.save("notes", "v1\n")
    v1 = _bytes(ws, "notes")
    store.edit("notes", content="v2\n")
    store.edit("notes", content="v3\n")
    v3 = _bytes(ws, "notes")
    second_edit, first_edit, _created = store.history("notes")
    # The later edit rewrote the same line: undoing the first alone would discard it.
    with ws.refuses("version-conflict"):
        store.revert("notes", first_edit.id)
    assert _bytes(ws, "notes") == v3
    store.revert("notes", second_edit.id)
    store.revert("notes", first_edit.id)
    assert _bytes(ws, "notes") == v1
    assert second_edit.id > first_edit.id
    with ws.refuses("not-found"):
        store.revert("notes", 10_000)


def test_revert_of_a_deleted_memory_recreates_it_where_it_was(ws: Workspace) -> None:
    store = ws.store(["shared"], global_enabled=False)
    # In the shared folder, where a new save of the name would not go (the primary one).
    path = ws.write(ws.root / "shared" / "topic" / "deep.md", "kept\r\n")
    original = path.read_bytes()
    store.delete("topic/deep")
    path.parent.rmdir()
    assert not path.exists()
    assert store.history("topic/deep")[0].action == "delete"
    answer = store.revert("topic/deep")
    assert answer["created"] is True and answer["path"] == str(path)
    assert path.read_bytes() == original


def test_revert_of_a_creation_deletes_and_of_a_move_moves_back(ws: Workspace) -> None:
    store = ws.store(global_enabled=False)
    store.save("fresh", "new\n")
    store.revert("fresh")
    assert not (ws.primary / "fresh.md").exists()
    store.save("old", "content\n")
    content = _bytes(ws, "old")
    store.move("old", "renamed")
    move = store.history("renamed")[0]
    assert move.action == "move" and move.new_path == str(ws.primary / "renamed.md")
    assert store.history("old")[0].id == move.id
    store.revert("renamed")
    assert _bytes(ws, "old") == content and not (ws.primary / "renamed.md").exists()


def test_history_survives_a_restart(ws: Workspace) -> None:
    store = ws.store(global_enabled=False)
    store.save("notes", "a\n")
    store.edit("notes", content="b\n")
    ids = [e.id for e in store.history("notes")]
    store.journal.close()
    again = ws.store(global_enabled=False)
    assert [e.id for e in again.history("notes")] == ids
    again.edit("notes", content="c\n")
    assert again.history("notes")[0].id > max(ids)


def test_entries_are_bounded_per_memory_and_in_bytes(tmp_path: Path) -> None:
    journal = Journal(str(tmp_path / "j.sqlite3"), max_per_memory=3, max_bytes=4000)
    for i in range(10):
        journal.record(
            action="edit", name="a", path="/a.md", before=f"a{i}".encode(), after=b"x", source="t"
        )
    assert [e.before for e in journal.history("a")] == [b"a9", b"a8", b"a7"]
    # Incompressible contents: each entry costs its size; the oldest go to stay under the bound.
    blobs = [os.urandom(1500) for _ in range(4)]
    for i, blob in enumerate(blobs):
        journal.record(
            action="edit", name=f"b{i}", path=f"/b{i}.md", before=blob, after=b"", source="t"
        )
    kept = [e.before for i in range(4) for e in journal.history(f"b{i}")]
    assert kept == blobs[2:]
    assert journal.history("a") == []  # older than the kept blobs, so dropped first
    journal.close()


def test_entries_are_bounded_in_number_across_memories(tmp_path: Path) -> None:
    journal = Journal(str(tmp_path / "j.sqlite3"), max_entries=5)
    for i in range(12):
        journal.record(
            action="save", name=f"m{i}", path="/m.md", before=None, after=b"x", source="t"
        )
    kept = [i for i in range(12) if journal.history(f"m{i}")]
    assert kept == [7, 8, 9, 10, 11]
    journal.close()


def test_possible_secrets_are_withheld_where_the_store_refuses_them(ws: Workspace) -> None:
    store = ws.store(global_enabled=False)
    # A secret already in a file (written from outside) is not copied into the journal.
    ws.write(ws.primary / "creds.md", f"# Creds\n{SECRET}\n")
    store.edit("creds", needle="# Creds", replacement="# Credentials")
    entry = store.history("creds")[0]
    assert entry.withheld and entry.before is None and entry.before_size is not None
    raw = Path(journal_path(store.config)).read_bytes()
    assert b"ghp_" not in raw
    with ws.refuses("possible-secret"):
        store.revert("creds")

    warning = ws.store(global_enabled=False, secrets="warn")
    warning.edit("creds", needle="# Credentials", replacement="# Keys")
    assert warning.history("creds")[0].before is not None


WORKER = r"""
import sys
from memory_ls.core.services.journal import Journal

path, tag, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
journal = Journal(path)
for i in range(count):
    journal.record(action="edit", name=tag, path="/" + tag, before=b"%d" % i, after=b"", source=tag)
print("done")
"""


def test_processes_appending_at_once_are_all_recorded(tmp_path: Path) -> None:
    path = str(tmp_path / "cache" / "journal.sqlite3")
    count = 40
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, path, tag, str(count)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("cli", "mcp", "editor")
    ]
    for worker in workers:
        out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0 and out.strip() == "done", err
    journal = Journal(path)
    ids = []
    for tag in ("cli", "mcp", "editor"):
        entries = journal.history(tag)
        assert [e.before for e in entries] == [b"%d" % i for i in reversed(range(count))]
        assert {e.source for e in entries} == {tag}
        ids += [e.id for e in entries]
    assert len(set(ids)) == 3 * count
    journal.close()


def test_the_source_is_what_the_front_end_set(ws: Workspace) -> None:
    store = ws.store(global_enabled=False)
    tagged = Store(store.config, source="mcp:claude-code")
    tagged.save("notes", "x\n")
    assert tagged.fork().source == "mcp:claude-code"
    assert store.history("notes")[0].source == "mcp:claude-code"


@pytest.mark.parametrize("bad", [True, "3", 1.5])
def test_revert_refuses_an_entry_id_that_is_not_a_number(ws: Workspace, bad: object) -> None:
    store = ws.store(global_enabled=False)
    store.save("notes", "x\n")
    with ws.refuses("invalid-arguments"):
        store.revert("notes", bad)


def _cli(ws: Workspace, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(ws.home), "XDG_CACHE_HOME": str(ws.cache)}
    return subprocess.run(
        [sys.executable, "-m", "memory_ls.cli", *args, "--no-global"],
        cwd=ws.root,
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_cli_history_and_revert(ws: Workspace) -> None:
    assert _cli(ws, "save", "notes", stdin="first\n").returncode == 0
    first = _bytes(ws, "notes")
    assert _cli(ws, "edit", "notes", stdin="second\n").returncode == 0
    second = _bytes(ws, "notes")
    shown = _cli(ws, "history", "notes", "--json")
    assert shown.returncode == 0, shown.stderr
    entries = json.loads(shown.stdout)["entries"]
    assert [(e["action"], e["source"]) for e in entries] == [("edit", "cli"), ("save", "cli")]
    assert entries[0]["versionBefore"] == version_of(first)
    assert entries[0]["versionAfter"] == version_of(second)
    assert entries[0]["sizeBefore"] == len(first) and entries[1]["sizeBefore"] is None

    assert _cli(ws, "delete", "notes").returncode == 0
    undone = _cli(ws, "revert", "notes", "--json")
    assert undone.returncode == 0, undone.stderr
    assert json.loads(undone.stdout)["created"] is True
    assert _bytes(ws, "notes") == second
    back = _cli(ws, "revert", "notes", "--to", str(entries[0]["id"]))
    assert back.returncode == 0, back.stderr
    assert "undid" in back.stdout and _bytes(ws, "notes") == first
    text = _cli(ws, "history", "notes").stdout.splitlines()
    assert [line.split()[2] for line in text] == ["revert", "revert", "delete", "edit", "save"]

    missing = _cli(ws, "revert", "notes", "--to", "9999")
    assert missing.returncode == 3 and "[not-found]" in missing.stderr
    assert _bytes(ws, "notes") == first


STORE_WORKER = r"""
import sys
from memory_ls.config import Settings
from memory_ls.core import Store, resolve_store_config

root, tag, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
config = resolve_store_config(Settings(global_enabled=False), root, environ={})
store = Store(config, source=tag)
for i in range(count):
    store.save("shared_notes", f"{tag} {i}\n")
print("done")
"""


def test_stores_of_several_processes_writing_one_memory_are_all_journaled(ws: Workspace) -> None:
    ws.store(global_enabled=False).save("shared_notes", "start\n")
    env = {**os.environ, "HOME": str(ws.home), "XDG_CACHE_HOME": str(ws.cache)}
    count = 15
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", STORE_WORKER, str(ws.root), tag, str(count)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("cli", "mcp:agent")
    ]
    for worker in workers:
        out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0 and out.strip() == "done", err
    entries = ws.store(global_enabled=False).history("shared_notes")
    assert len(entries) == 2 * count + 1
    for tag in ("cli", "mcp:agent"):
        assert sum(e.source == tag for e in entries) == count
    # Each entry's before is the after of the one before it: no write went unrecorded.
    chain = list(reversed(entries))
    for older, newer in itertools.pairwise(chain):
        assert newer.version_before == older.version_after
    assert chain[-1].version_after == version_of(_bytes(ws, "shared_notes"))


def test_one_journal_per_store_root_whatever_the_folders(ws: Workspace) -> None:
    with_global = ws.store()
    without = ws.store(global_enabled=False)
    assert with_global.config.folders != without.config.folders
    assert journal_path(with_global.config) == journal_path(without.config)
    without.save("notes", "by an agent started with --no-global\n")
    assert [e.action for e in with_global.history("notes")] == ["save"]


def test_history_kept_per_set_of_folders_is_carried_over_once(ws: Workspace) -> None:
    from memory_ls.core.services.journal import legacy_journal_path

    config = ws.store(global_enabled=False).config
    old = Journal(legacy_journal_path(config))
    old.record(
        action="save", name="notes", path="/n.md", before=b"old\n", after=b"new\n", source="t"
    )
    old.close()
    assert not os.path.exists(journal_path(config))
    store = Store(config)
    assert [e.before for e in store.history("notes")] == [b"old\n"]
    # Once: later writes to the old file are not carried over again.
    again = Journal(legacy_journal_path(config))
    again.record(action="edit", name="notes", path="/n.md", before=b"x\n", after=b"y\n", source="t")
    again.close()
    assert len(Store(config).history("notes")) == 1
