"""Symlinks inside memory folders (SPEC 2.2, 2.6): followed for listing and reading as
Serena follows them, never written through to a place outside every configured folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from store_helpers import Workspace

from memory_ls.core import MemoryStoreError, Store, check_store

TARGET = "outside secret\n"

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")


@pytest.fixture
def linked(ws: Workspace) -> tuple[Store, Path]:
    """Links in the primary and an additional folder to a file and a folder outside."""
    store = ws.store(["team/feature"])
    outside = ws.tmp / "outside"
    ws.write(outside / "target.md", TARGET)
    ws.write(outside / "dir" / "inner.md", TARGET)
    ws.primary.mkdir(parents=True)
    os.symlink(outside / "target.md", ws.primary / "linkfile.md")
    os.symlink(outside / "dir", ws.primary / "linkdir")
    os.symlink(outside / "target.md", ws.root / "team" / "feature" / "FEATURE_link.md")
    os.symlink("../../../outside/dir", ws.root / "team" / "feature" / "reldir")
    ws.write(ws.primary / "real.md", "real\n")
    return store, outside


def _outside_unchanged(ws: Workspace, outside: Path) -> None:
    assert (outside / "target.md").read_text() == TARGET
    assert (outside / "dir" / "inner.md").read_text() == TARGET
    assert sorted(p.name for p in outside.rglob("*")) == ["dir", "inner.md", "target.md"]


# Writes through a link out: refused, with a message that says what to do.
REFUSED = {
    "save-file-link": lambda s: s.save("linkfile", "pwned"),
    "save-file-link-tags": lambda s: s.save("linkfile", "pwned", tags=["x"]),
    "save-prefix-link": lambda s: s.save("FEATURE_link", "pwned"),
    "save-through-dir-link": lambda s: s.save("linkdir/inner", "pwned"),
    "save-through-relative-dir-link": lambda s: s.save("reldir/inner", "pwned"),
    "save-new-through-dir-link": lambda s: s.save("linkdir/new", "pwned"),
    "save-deep-through-dir-link": lambda s: s.save("linkdir/a/b", "pwned"),
    "edit-file-link": lambda s: s.edit("linkfile", content="pwned"),
    "edit-needle-file-link": lambda s: s.edit("linkfile", needle="secret", replacement="pwned"),
    "edit-through-dir-link": lambda s: s.edit("linkdir/inner", content="pwned"),
    "delete-through-dir-link": lambda s: s.delete("linkdir/inner"),
    "move-through-dir-link": lambda s: s.move("linkdir/inner", "inner"),
    "move-into-dir-link": lambda s: s.move("real", "linkdir/real"),
    "route-file-link": lambda s: s.route("linkfile"),
    "route-new-through-dir-link": lambda s: s.route("linkdir/new"),
    "import-through-dir-link": lambda s: s.import_records(
        [{"name": "linkdir/imported", "content": "pwned"}]
    ),
}


@pytest.mark.parametrize("operation", sorted(REFUSED))
def test_writes_through_links_out_are_refused(
    ws: Workspace, linked: tuple[Store, Path], operation: str
) -> None:
    store, outside = linked
    with ws.refuses("outside-store") as info:
        REFUSED[operation](store)
    assert "additional folder" in str(info.value), "the message says how to allow it"
    _outside_unchanged(ws, outside)
    assert (ws.primary / "linkdir").is_symlink(), "a folder link is never replaced"


def test_a_move_onto_a_link_is_refused_as_taken(ws: Workspace, linked: tuple[Store, Path]) -> None:
    store, outside = linked
    with ws.refuses("exists"):
        store.move("real", "linkfile")
    _outside_unchanged(ws, outside)


def test_deleting_a_linked_memory_removes_the_link_only(
    ws: Workspace, linked: tuple[Store, Path]
) -> None:
    store, outside = linked
    assert store.delete("linkfile")["path"] == str(ws.primary / "linkfile.md")
    assert store.delete("FEATURE_link")["name"] == "FEATURE_link"
    assert not os.path.lexists(ws.primary / "linkfile.md")
    assert not os.path.lexists(ws.root / "team" / "feature" / "FEATURE_link.md")
    _outside_unchanged(ws, outside)


def test_moving_a_linked_memory_leaves_its_target_alone(
    ws: Workspace, linked: tuple[Store, Path]
) -> None:
    store, outside = linked
    moved = store.move("linkfile", "elsewhere")
    assert moved["path"] == str(ws.primary / "elsewhere.md")
    assert not os.path.lexists(ws.primary / "linkfile.md")
    assert store.read("elsewhere")["content"] == TARGET
    _outside_unchanged(ws, outside)


def test_links_out_are_listed_and_read(ws: Workspace, linked: tuple[Store, Path]) -> None:
    store, outside = linked
    names = ["FEATURE_link", "linkdir/inner", "linkfile", "real", "reldir/inner"]
    assert [m["name"] for m in store.list_memories()["memories"]] == names
    for name in ("linkfile", "linkdir/inner", "FEATURE_link", "reldir/inner"):
        read = store.read(name)
        assert read["content"] == TARGET
        assert read["name"] == name
    assert store.read("linkfile")["path"] == str(ws.primary / "linkfile.md")
    assert sorted(r["name"] for r in store.search("secret")["results"]) == [
        "FEATURE_link",
        "linkdir/inner",
        "linkfile",
        "reldir/inner",
    ]
    assert [r["name"] for r in store.export()] == names
    # Diagnostics name the link inside the folder, never the file it leads to.
    assert all(not d.path.startswith(str(outside)) for d in check_store(store))
    _outside_unchanged(ws, outside)


def test_link_to_a_file_inside_the_folder_is_a_memory(ws: Workspace) -> None:
    store = ws.store()
    real = ws.write(ws.primary / "real.md", "real\n")
    os.symlink(real, ws.primary / "alias.md")
    assert [m["name"] for m in store.list_memories()["memories"]] == ["alias", "real"]
    assert store.read("alias")["content"] == "real\n"
    store.save("alias", "through the alias\n")
    assert real.read_text() == "through the alias\n"
    assert (ws.primary / "alias.md").is_symlink()


def test_hidden_folders_are_listed(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / ".archive" / "old.md", "old\n")
    ws.write(ws.primary / ".dotfile.md", "dot\n")
    assert [m["name"] for m in store.list_memories()["memories"]] == [
        ".archive/old",
        ".dotfile",
    ]
    assert store.read(".archive/old")["content"] == "old\n"


def test_a_folder_link_back_up_is_listed_once(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "topic" / "note.md", "note\n")
    os.symlink(ws.primary, ws.primary / "topic" / "loop")
    os.symlink(ws.primary / "topic", ws.primary / "again")
    names = [m["name"] for m in store.list_memories()["memories"]]
    assert "topic/note" in names
    assert len(names) <= 2, names  # each real folder is read once: no endless walk


def test_a_write_through_a_link_into_another_configured_folder_lands_there(
    ws: Workspace,
) -> None:
    store = ws.store(["team/feature", ("vendor/ro", True)])
    target = ws.write(ws.root / "team" / "feature" / "FEATURE_t.md", "feature\n")
    ws.primary.mkdir(parents=True)
    os.symlink(target, ws.primary / "alias.md")
    os.symlink(ws.root / "team" / "feature", ws.primary / "shared")
    assert store.read("alias")["content"] == "feature\n"
    store.save("alias", "saved\n")
    assert target.read_text() == "saved\n"
    assert (ws.primary / "alias.md").is_symlink(), "the link stays a link"
    store.edit("alias", needle="saved", replacement="edited")
    assert target.read_text() == "edited\n"
    store.save("shared/new", "through the folder link\n")
    assert (ws.root / "team" / "feature" / "new.md").read_text() == "through the folder link\n"
    assert (ws.primary / "shared").is_symlink()
    # Into a read-only configured folder: refused as read-only, not outside-store.
    frozen = ws.write(ws.root / "vendor" / "ro" / "api.md", "api\n")
    os.symlink(frozen, ws.primary / "api.md")
    with ws.refuses("read-only"):
        store.save("api", "pwned")
    with ws.refuses("read-only"):
        store.edit("api", content="pwned")


def test_a_move_rewrites_references_through_a_link_into_a_configured_folder(
    ws: Workspace,
) -> None:
    store = ws.store(["team/feature"])
    target = ws.write(ws.root / "team" / "feature" / "FEATURE_refs.md", "[[old]]\n")
    ws.write(ws.primary / "old.md", "old\n")
    os.symlink(target, ws.primary / "refs_alias.md")
    store.move("old", "new")
    assert target.read_text() == "[[new]]\n"
    assert (ws.primary / "refs_alias.md").is_symlink()


def test_a_move_does_not_rewrite_references_through_a_link_out(
    ws: Workspace, linked: tuple[Store, Path]
) -> None:
    store, outside = linked
    (outside / "target.md").write_text("[[real]]\n")
    try:
        store.move("real", "renamed")
    except MemoryStoreError as exc:
        assert exc.code == "outside-store"
    assert (outside / "target.md").read_text() == "[[real]]\n"


def test_global_folder_link_out_is_refused(ws: Workspace) -> None:
    outside = ws.tmp / "outside"
    ws.write(outside / "target.md", TARGET)
    ws.global_dir.mkdir(parents=True)
    os.symlink(outside / "target.md", ws.global_dir / "g.md")
    store = ws.store()
    assert store.read("global/g")["content"] == TARGET
    with ws.refuses("outside-store"):
        store.save("global/g", "pwned")
    assert (outside / "target.md").read_text() == TARGET


def test_a_scanned_file_replaced_by_a_link_out_is_read_but_not_written(
    ws: Workspace, linked: tuple[Store, Path]
) -> None:
    store, outside = linked
    (real,) = [m for m in store.scan() if m.name == "real"]
    assert store.load(real).body == "real\n"
    os.unlink(real.path)
    os.symlink(outside / "target.md", real.path)
    assert store.load(real).body == TARGET  # reads follow links, as Serena's do
    with ws.refuses("outside-store"):
        store.save("real", "pwned")
    with ws.refuses("outside-store"):
        store.edit("real", content="pwned")
    _outside_unchanged(ws, outside)
