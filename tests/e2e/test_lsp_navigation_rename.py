"""Rename (SPEC 3.4): from a reference or inside the memory file, a workspace edit that moves
the file where the new name routes and rewrites every reference; refusals; and the
reference rewrites when the editor renames a memory file (workspace/willRenameFiles).
Each test applies the returned edit as the client would and checks the store on disk."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from e2e_support import CLIENTS, Session, Workspace, make_workspace, session, write_file
from lsprotocol import types
from navigation_support import Editor, position, span, store_of
from pygls.exceptions import JsonRpcException

from memory_ls.core import Store, check_store

pytestmark = pytest.mark.asyncio(loop_scope="module")

PAY_NOTES = (
    "# Pay notes\n"
    "😀 See [[FEATURE_payflow]], [[FEATURE_payflow|the flow]] and `mem:FEATURE_payflow.md`.\n"
    "Not [[FEATURE_payflow_old]] nor `FEATURE_payflow`.\n"
)
LINK_CODES = {"broken-link", "misrouted", "unknown-prefix"}


def options(ws: Workspace) -> dict[str, Any]:
    """The standard folders plus a read-only vendor folder."""
    configured = ws.init_options()
    configured["additionalFolders"].append("shared/vendor:ro")
    return configured


def make_rename_workspace(base: Path) -> Workspace:
    """The standard workspace, a read-only vendor folder, and memories to rename."""
    ws = make_workspace(base)
    ws.write("shared/feature/FEATURE_payflow.md", "# Pay flow\n")
    ws.write("shared/feature/FEATURE_payflow_old.md", "# Old pay flow\n")
    ws.write(".serena/memories/pay_notes.md", PAY_NOTES)
    ws.write("shared/vendor/vendor_sdk.md", "Vendor: [[FEATURE_payflow]] [[team_rules]]\n")
    write_file(ws.outside / "pay_rules.md", "Team: [[FEATURE_payflow]]\n")
    write_file(ws.global_folder / "pay_habits.md", "`mem:FEATURE_payflow`\n")
    ws.write(".serena/memories/inner_rename.md", "# Inner\nSelf link [[inner_rename]].\n")
    write_file(ws.global_folder / "personal_tip.md", "# Tip\n")
    # [[personal_tip]] names a project memory (none exists): it never means the global one.
    ws.write(
        ".serena/memories/tip_users.md",
        "[[global/personal_tip]] and [[global/personal_tip|g]] and `mem:global/personal_tip` "
        "but not [[personal_tip]]\n",
    )
    ws.write(".serena/memories/will_old.md", "# Will\n")
    ws.write(".serena/memories/will_users.md", "[[will_old]] [[wtopic/inner]]\n")
    ws.write(".serena/memories/wtopic/inner.md", "# Inner topic\n")
    return ws


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=CLIENTS)
async def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Session]:
    """One server and workspace per client flavour; each test renames its own memories."""
    ws = make_rename_workspace(tmp_path_factory.mktemp("rename"))
    async with session(ws, client_name=request.param, init_options=options(ws)) as running:
        yield running


@pytest.fixture
def editor(server: Session) -> Editor:
    """An editor whose documents are closed after the test."""
    return Editor(server)


@pytest.fixture(autouse=True)
def close_documents(editor: Editor) -> Any:
    """Close what a test opened, so the next one starts clean."""
    yield
    editor.close_all()


def store(server: Session) -> Store:
    """The store on disk, configured as the server is."""
    return store_of(server.workspace, options(server.workspace))


async def prepare(
    server: Session, uri: str, at: types.Position
) -> types.PrepareRenamePlaceholder | None:
    """prepareRename at a position."""
    result = await server.client.text_document_prepare_rename_async(
        types.PrepareRenameParams(text_document=types.TextDocumentIdentifier(uri=uri), position=at)
    )
    assert result is None or isinstance(result, types.PrepareRenamePlaceholder), result
    return result


async def rename(server: Session, uri: str, at: types.Position, new_name: str) -> Any:
    """rename at a position."""
    return await server.client.text_document_rename_async(
        types.RenameParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=at, new_name=new_name
        )
    )


async def refused(server: Session, uri: str, at: types.Position, new_name: str) -> tuple[str, str]:
    """A rename that must be refused: (data.code, message)."""
    with pytest.raises(JsonRpcException) as info:
        await rename(server, uri, at, new_name)
    assert isinstance(info.value.data, dict), info.value
    return info.value.data["code"], info.value.message


def clean(server: Session, paths: list[Path]) -> list[str]:
    """Link diagnostics left in these files (after the edit was applied)."""
    found = check_store(store(server), [str(p) for p in paths if p.exists()])
    return [f"{d.path}: {d.code}" for d in found if d.code in LINK_CODES]


async def test_rename_changes_the_prefix_and_moves_the_file_to_another_folder(
    server: Session, editor: Editor
) -> None:
    ws = server.workspace
    draft_text = "Draft: [[FEATURE_payflow]]\n"
    draft = editor.open(ws.path("notes/pay_draft.md"), draft_text)
    at = position(server, draft_text, "payflow")
    placeholder = await prepare(server, draft, at)
    assert placeholder is not None and placeholder.placeholder == "FEATURE_payflow"
    assert placeholder.range == span(server, draft_text, "FEATURE_payflow")
    vendor_before = ws.path("shared/vendor/vendor_sdk.md").read_text()

    edit = await rename(server, draft, at, "SPEC_payflow")

    changes = edit.document_changes
    assert isinstance(changes[-1], types.RenameFile)
    assert changes[-1].old_uri == ws.path("shared/feature/FEATURE_payflow.md").as_uri()
    assert changes[-1].new_uri == ws.path("shared/spec/SPEC_payflow.md").as_uri()
    versions = {c.text_document.uri: c.text_document.version for c in changes[:-1]}
    assert versions == {
        draft: 1,  # the open document, at the version the edit was made for
        ws.path(".serena/memories/pay_notes.md").as_uri(): None,
        (ws.outside / "pay_rules.md").as_uri(): None,
        (ws.global_folder / "pay_habits.md").as_uri(): None,
    }
    touched = editor.apply(edit)

    memories = store(server)
    assert memories.find("SPEC_payflow").path == str(ws.path("shared/spec/SPEC_payflow.md"))
    assert not ws.path("shared/feature/FEATURE_payflow.md").exists()
    assert ws.path(".serena/memories/pay_notes.md").read_text() == (
        PAY_NOTES.replace("[[FEATURE_payflow]]", "[[SPEC_payflow]]")
        .replace("[[FEATURE_payflow|", "[[SPEC_payflow|")
        .replace("`mem:FEATURE_payflow.md`", "`mem:SPEC_payflow.md`")  # as Serena rewrites it
    )
    assert (ws.outside / "pay_rules.md").read_text() == "Team: [[SPEC_payflow]]\n"
    assert (ws.global_folder / "pay_habits.md").read_text() == "`mem:SPEC_payflow`\n"
    assert editor.documents[ws.path("notes/pay_draft.md")][0] == "Draft: [[SPEC_payflow]]\n"
    assert ws.path("shared/vendor/vendor_sdk.md").read_text() == vendor_before  # read-only
    assert clean(server, touched) == []
    await server.wait_for_codes(draft, lambda codes: not codes)


async def test_rename_inside_the_memory_file_moves_it_under_a_topic(
    server: Session, editor: Editor
) -> None:
    ws = server.workspace
    old = ws.path(".serena/memories/inner_rename.md")
    uri = editor.open(old)
    at = types.Position(line=0, character=3)  # in the heading, not on a reference
    placeholder = await prepare(server, uri, at)
    assert placeholder is not None and placeholder.placeholder == "inner_rename"
    edit = await rename(server, uri, at, "topic/renamed_inner")
    first, moved = edit.document_changes
    assert first.text_document.version == 1  # the open file's own self-reference
    assert moved.new_uri == ws.path(".serena/memories/topic/renamed_inner.md").as_uri()
    touched = editor.apply(edit)
    new = ws.path(".serena/memories/topic/renamed_inner.md")
    assert new.read_text() == "# Inner\nSelf link [[topic/renamed_inner]].\n"
    assert not old.exists()
    assert clean(server, touched) == []


async def test_a_global_memory_keeps_its_scope_unless_told(server: Session, editor: Editor) -> None:
    ws = server.workspace
    users = ws.path(".serena/memories/tip_users.md")
    text = users.read_text()
    uri = editor.open(users)
    at = position(server, text, "personal_tip]]")
    placeholder = await prepare(server, uri, at)
    assert placeholder is not None and placeholder.placeholder == "global/personal_tip"
    touched = editor.apply(await rename(server, uri, at, "global/personal_hint"))
    assert (ws.global_folder / "personal_hint.md").read_text() == "# Tip\n"
    assert users.read_text() == (
        "[[global/personal_hint]] and [[global/personal_hint|g]] and `mem:global/personal_hint` "
        "but not [[personal_tip]]\n"
    )
    assert clean(server, [p for p in touched if p != users]) == []


async def test_rename_refused_when_the_name_is_taken(server: Session, editor: Editor) -> None:
    ws = server.workspace
    text = "[[FEATURE_checkout]]\n"
    uri = editor.open(ws.path("notes/taken.md"), text)
    code, message = await refused(server, uri, types.Position(line=0, character=4), "style_guide")
    assert code == "exists"
    assert message == f"A memory named 'style_guide' already exists at {ws.primary}/style_guide.md."
    assert ws.path("shared/feature/FEATURE_checkout.md").exists()


async def test_rename_refused_for_an_invalid_name(server: Session, editor: Editor) -> None:
    uri = editor.open(server.workspace.path("notes/invalid.md"), "[[FEATURE_checkout]]\n")
    code, message = await refused(server, uri, types.Position(line=0, character=4), "bad:name")
    assert code == "invalid-name"
    assert "'bad:name'" in message and "':' is not allowed" in message


async def test_prepare_rename_says_what_cannot_be_renamed(server: Session, editor: Editor) -> None:
    text = "Plain text, [[vendor_sdk]] and [[nowhere]].\n"
    uri = editor.open(server.workspace.path("notes/prepare.md"), text)
    assert await prepare(server, uri, types.Position(line=0, character=2)) is None
    for needle, code in (("vendor_sdk", "read-only"), ("nowhere", "not-found")):
        with pytest.raises(JsonRpcException) as info:
            await prepare(server, uri, position(server, text, needle))
        assert isinstance(info.value.data, dict) and info.value.data["code"] == code
        assert needle in info.value.message


async def test_editor_renames_are_followed_by_reference_rewrites(
    server: Session, editor: Editor
) -> None:
    ws = server.workspace
    registered = [r for r in server.registrations if r.method == types.WORKSPACE_WILL_RENAME_FILES]
    if server.client.capabilities.workspace.file_operations is None:  # type: ignore[union-attr]
        assert registered == []  # Neovim renames files without telling servers
    else:
        options: Any = registered[-1].register_options  # raw JSON in the test client
        globs = [f["pattern"]["glob"] for f in options["filters"]]
        assert f"{ws.primary}/**/*.md" in globs
        assert f"{ws.global_folder}/**/*.md" in globs
        assert f"{ws.outside}/**/*.md" in globs
    old = ws.path(".serena/memories/will_old.md")
    new = ws.path(".serena/memories/will_new.md")
    topic, new_topic = ws.path(".serena/memories/wtopic"), ws.path(".serena/memories/wtopic2")
    edit = await server.client.workspace_will_rename_files_async(
        types.RenameFilesParams(
            files=[
                types.FileRename(old_uri=old.as_uri(), new_uri=new.as_uri()),
                types.FileRename(old_uri=topic.as_uri(), new_uri=new_topic.as_uri()),
            ]
        )
    )
    assert edit is not None
    assert not any(isinstance(c, types.RenameFile) for c in edit.document_changes or ())
    touched = editor.apply(edit)
    old.rename(new)  # the editor renames the files itself
    topic.rename(new_topic)
    users = ws.path(".serena/memories/will_users.md")
    assert users.read_text() == "[[will_new]] [[wtopic2/inner]]\n"
    assert clean(server, [*touched, new]) == []


async def test_renames_outside_the_memory_folders_change_nothing(server: Session) -> None:
    ws = server.workspace
    edit = await server.client.workspace_will_rename_files_async(
        types.RenameFilesParams(
            files=[
                types.FileRename(
                    old_uri=ws.path("notes/readme.md").as_uri(),
                    new_uri=ws.path("notes/readme2.md").as_uri(),
                ),
                types.FileRename(  # a memory moved out of every folder: no name to point to
                    old_uri=ws.path(".serena/memories/style_guide.md").as_uri(),
                    new_uri=ws.path("notes/style_guide.md").as_uri(),
                ),
            ]
        )
    )
    assert edit is None
