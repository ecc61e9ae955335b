"""A rename or move the editor makes itself (F2, a quick fix, "Rename File to a Valid
Name…", the Explorer) is journaled as one `move` of the editor's, not as an external
delete plus create (issue 34 point 6), whichever comes first: the editor's
willRenameFiles / didRenameFiles or the watcher's sight of the files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from e2e_support import make_workspace
from lsprotocol import types
from test_lsp_journal_seen import Journaled, journaled

pytestmark = pytest.mark.asyncio


def _files(old: Path, new: Path) -> types.RenameFilesParams:
    return types.RenameFilesParams(
        files=[types.FileRename(old_uri=old.as_uri(), new_uri=new.as_uri())]
    )


async def will_rename(j: Journaled, old: Path, new: Path) -> None:
    await j.server.client.workspace_will_rename_files_async(_files(old, new))


def did_rename(j: Journaled, old: Path, new: Path) -> None:
    j.server.client.workspace_did_rename_files(_files(old, new))


def moves(entries: list[dict[str, Any]]) -> list[tuple[str, str, str, str]]:
    return [(e["kind"], e["name"], e.get("newName", ""), e["source"]) for e in entries]


async def test_a_rename_the_editor_announces_is_one_move_of_the_editors(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "w")
    old = workspace.primary / "style_guide.md"
    new = workspace.primary / "writing_style.md"
    async with journaled(workspace, tmp_path / "c") as j:
        await j.until_entries(0)
        # VS Code's order: willRenameFiles (answered), the move on disk, didRenameFiles.
        await will_rename(j, old, new)
        os.rename(old, new)
        answer = await j.until(lambda a: a["ready"] and a["latest"] >= 1)
        did_rename(j, old, new)
        # The watcher's events came and went: still one entry, the editor's move.
        await j.until(lambda a: a["ready"] and a["latest"] >= 1)
        entries = await j.recent()
        assert moves(entries) == [("moved", "style_guide", "writing_style", "editor")]
        (entry,) = entries
        assert entry["uri"] == old.as_uri() and entry["newUri"] == new.as_uri()
        assert answer["latest"] == entry["id"]
        shown = await j.request("entry", {"id": entry["id"]})
        assert shown["before"] == shown["after"] == "# Style guide (project)\n"


async def test_a_delete_and_create_seen_first_become_the_editors_move(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "w")
    old = workspace.primary / "auth" / "login_flow.md"
    new = workspace.primary / "auth" / "sign_in_flow.md"
    async with journaled(workspace, tmp_path / "c") as j:
        await j.until_entries(0)
        # No willRenameFiles (another client, or a filter that did not match): the
        # watcher journals what it sees, and the later didRenameFiles makes it one move.
        os.rename(old, new)
        seen = await j.until(lambda a: a["ready"] and len(a["entries"]) >= 2)
        assert sorted(e["kind"] for e in seen["entries"]) == ["created", "deleted"]
        did_rename(j, old, new)
        await j.until(lambda a: len(a["entries"]) == 1 and a["entries"][0]["kind"] == "moved")
        entries = await j.recent()
        assert moves(entries) == [("moved", "auth/login_flow", "auth/sign_in_flow", "editor")]
        shown = await j.request("entry", {"id": entries[0]["id"]})
        assert shown["before"] == "---\ntags: [auth]\n---\n# Login flow\n"
        # Undo puts it back where it was.
        await j.request("revert", {"id": entries[0]["id"]})
        assert old.is_file() and not new.exists()


async def test_a_folder_the_editor_moves_journals_each_memory_in_it_as_moved(
    tmp_path: Path,
) -> None:
    workspace = make_workspace(tmp_path / "w")
    old = workspace.primary / "auth"
    new = workspace.primary / "identity"
    async with journaled(workspace, tmp_path / "c") as j:
        await j.until_entries(0)
        await will_rename(j, old, new)
        os.rename(old, new)
        did_rename(j, old, new)
        await j.until(lambda a: a["ready"] and a["latest"] >= 1)
        entries = await j.recent()
        assert moves(entries) == [("moved", "auth/login_flow", "identity/login_flow", "editor")]


async def test_the_editor_is_asked_for_did_rename_of_the_memory_files(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "w")
    async with journaled(workspace, tmp_path / "c") as j:
        await j.until_entries(0)
        registered = [
            r for r in j.server.registrations if r.method == types.WORKSPACE_DID_RENAME_FILES
        ]
        assert registered
        options: Any = registered[-1].register_options  # raw JSON in the test client
        globs = [f["pattern"]["glob"] for f in options["filters"]]
        assert any(glob.endswith("/**/*.md") for glob in globs)
