"""Symlinks inside memory folders that lead outside are never written through (SPEC 2.6)."""

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


WRITES = {
    "save-file-link": lambda s: s.save("linkfile", "pwned"),
    "save-file-link-tags": lambda s: s.save("linkfile", "pwned", tags=["x"]),
    "save-prefix-link": lambda s: s.save("FEATURE_link", "pwned"),
    "save-through-dir-link": lambda s: s.save("linkdir/inner", "pwned"),
    "save-new-through-dir-link": lambda s: s.save("linkdir/new", "pwned"),
    "save-deep-through-dir-link": lambda s: s.save("linkdir/a/b", "pwned"),
    "edit-file-link": lambda s: s.edit("linkfile", content="pwned"),
    "edit-needle-file-link": lambda s: s.edit("linkfile", needle="secret", replacement="pwned"),
    "edit-through-dir-link": lambda s: s.edit("linkdir/inner", content="pwned"),
    "delete-file-link": lambda s: s.delete("linkfile"),
    "delete-through-dir-link": lambda s: s.delete("linkdir/inner"),
    "move-file-link": lambda s: s.move("linkfile", "elsewhere"),
    "move-into-dir-link": lambda s: s.move("real", "linkdir/real"),
    "move-onto-file-link": lambda s: s.move("real", "linkfile"),
    "import-through-dir-link": lambda s: s.import_records(
        [{"name": "linkdir/imported", "content": "pwned"}]
    ),
}


@pytest.mark.parametrize("operation", sorted(WRITES))
def test_links_out_are_never_written_through(
    ws: Workspace, linked: tuple[Store, Path], operation: str
) -> None:
    store, outside = linked
    try:
        WRITES[operation](store)
    except MemoryStoreError as exc:
        assert exc.code in {"outside-store", "not-found", "exists"}, exc
    else:
        # Allowed only if the link itself was replaced by a regular file inside the store.
        for link in (ws.primary / "linkfile.md", ws.root / "team/feature/FEATURE_link.md"):
            assert link.is_symlink() or link.is_file()
    _outside_unchanged(ws, outside)
    assert (ws.primary / "linkdir").is_symlink(), "a folder link is never replaced"


def test_reads_and_listing_skip_links_out(ws: Workspace, linked: tuple[Store, Path]) -> None:
    store, _outside = linked
    assert [m["name"] for m in store.list_memories()["memories"]] == ["real"]
    for name in ("linkfile", "linkdir/inner", "FEATURE_link", "reldir/inner"):
        with ws.refuses("not-found"):
            store.read(name)
    assert [r["name"] for r in store.search("secret")["results"]] == []
    assert [r["name"] for r in store.export()] == ["real"]
    assert all("outside" not in d.path for d in check_store(store))


def test_link_to_a_file_inside_the_folder_is_a_memory(ws: Workspace) -> None:
    store = ws.store()
    real = ws.write(ws.primary / "real.md", "real\n")
    os.symlink(real, ws.primary / "alias.md")
    assert [m["name"] for m in store.list_memories()["memories"]] == ["alias", "real"]
    assert store.read("alias")["content"] == "real\n"


def test_global_folder_link_out_is_refused(ws: Workspace) -> None:
    outside = ws.tmp / "outside"
    ws.write(outside / "target.md", TARGET)
    ws.global_dir.mkdir(parents=True)
    os.symlink(outside / "target.md", ws.global_dir / "g.md")
    store = ws.store()
    with ws.refuses("outside-store"):
        store.save("global/g", "pwned")
    assert (outside / "target.md").read_text() == TARGET


def test_a_scanned_file_replaced_by_a_link_out_is_not_read(
    ws: Workspace, linked: tuple[Store, Path]
) -> None:
    store, outside = linked
    (real,) = [m for m in store.scan() if m.name == "real"]
    assert store.load(real).body == "real\n"  # a scanned file: read without realpath
    os.unlink(real.path)
    os.symlink(outside / "target.md", real.path)
    with pytest.raises(MemoryStoreError):
        store.load(real)  # the same entry, now a link: the containment check refuses it
