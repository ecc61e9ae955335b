"""Edge cases where a valid name meets an awkward file system: typed errors, nothing written."""

from __future__ import annotations

import pytest
from store_helpers import Workspace

from memory_ls.core import MemoryStoreError


def test_a_name_whose_path_is_taken_by_a_topic_folder(ws: Workspace) -> None:
    store = ws.store()
    store.save("a.md/b", "topic a.md")  # creates the folder a.md/
    assert (ws.primary / "a.md").is_dir()
    with ws.refuses("exists"):
        store.save("a", "would be a.md, which is a folder")
    with ws.refuses("exists"):
        store.move("a.md/b", "a")
    with ws.refuses("exists"):
        store.import_records([{"name": "a", "content": "x"}])
    assert store.read("a.md/b")["content"] == "topic a.md"


def test_a_topic_whose_folder_is_taken_by_a_file(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "taken", "a file with no .md, where the topic folder would go")
    store.save("b", "b")
    with ws.refuses("exists"):
        store.save("taken/x", "x")
    with ws.refuses("exists"):
        store.move("b", "taken/x")


def test_a_valid_name_too_long_for_the_file_system_is_refused(ws: Workspace) -> None:
    # 16 segments of 84 three-byte characters: each segment fits the rules (and 255
    # bytes), but together they are far beyond what a path may hold.
    name = "/".join(["日" * 84] * 16)
    store = ws.store()
    with ws.refuses("invalid-name"):
        store.save(name, "x")
    with ws.refuses("invalid-name"):
        store.save(name, "x", scope="global")
    ws.write(ws.primary / "short.md", "short")
    with ws.refuses("invalid-name"):
        store.move("short", name)


def test_reads_of_odd_names_are_typed(ws: Workspace) -> None:
    store = ws.store()
    (ws.primary / "folder.md").mkdir(parents=True)
    for call in (
        lambda: store.read("folder"),
        lambda: store.edit("folder", content="x"),
        lambda: store.delete("folder"),
    ):
        with pytest.raises(MemoryStoreError) as info:
            call()
        assert info.value.code == "not-found"


@pytest.mark.parametrize("chars", [76, 80, 84])
def test_the_longest_valid_segments_can_be_saved(ws: Workspace, chars: int) -> None:
    # Up to 252 UTF-8 bytes per segment are allowed; the temporary file of the atomic
    # write must fit the 255-byte file name limit as well.
    store = ws.store()
    name = "日" * chars
    result = store.save(name, "long name")
    assert result["path"] == str(ws.primary / f"{name}.md")
    store.edit(name, needle="long", replacement="longest")
    store.save(f"global/{name}", "global")
    assert store.read(name)["content"] == "longest name"
    assert store.read(f"global/{name}")["content"] == "global"
