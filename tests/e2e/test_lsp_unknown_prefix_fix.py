"""Quick fixes for `unknown-prefix` (issue 34): "Create folder" makes the folder the
prefix names and lists it in the project file (a prefix routes only to a configured
folder that exists, SPEC 2.4), after which the memory is `misrouted` and moves there;
"Rename without the prefix" renames the file as the editor renames files."""

from __future__ import annotations

import pytest
from e2e_support import CLIENTS, Session, Workspace, make_workspace, session, wait_until
from lsprotocol import types
from navigation_support import Editor, code_actions
from pygls.exceptions import JsonRpcException

pytestmark = pytest.mark.asyncio

PROJECT_FILE = (
    "# The team's memory store.\n"
    "additional-folders = [\n"
    '  "shared/feature",  # one folder per prefix\n'
    '  "shared/spec",\n'
    "]\n"
)
MEMORY = ".serena/memories/BUGFIX_login_crash.md"


def project_workspace(workspace: Workspace) -> dict[str, str]:
    """The standard workspace with its folders in memory-ls.toml, not in the editor's
    settings; the initialization options that go with it."""
    workspace.write("memory-ls.toml", PROJECT_FILE)
    workspace.write(MEMORY, "# Login crash\n")
    return {"globalFolder": str(workspace.global_folder)}


async def prefix_actions(server: Session, editor: Editor, uri: str) -> list[types.CodeAction]:
    """The quick fixes offered for the memory's unknown-prefix diagnostic."""
    path = server.workspace.path(MEMORY)

    def found() -> list[types.Diagnostic]:
        published = editor.publications(path)
        last = published[-1].diagnostics if published else []
        return [d for d in last if d.code == "unknown-prefix"]

    await wait_until(server.client, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, lambda: bool(found()))
    diagnostics = found()
    actions = await code_actions(
        server,
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostics[0].range,
            context=types.CodeActionContext(diagnostics=diagnostics),
        ),
    )
    return [a for a in actions if isinstance(a, types.CodeAction)]


@pytest.mark.parametrize("client_name", CLIENTS)
async def test_create_folder_lists_it_in_the_project_file(
    workspace: Workspace, client_name: str
) -> None:
    options = project_workspace(workspace)
    async with session(workspace, client_name=client_name, init_options=options) as server:
        editor = Editor(server)
        uri = editor.open(workspace.path(MEMORY))
        actions = await prefix_actions(server, editor, uri)
        title = "Create folder shared/bugfix for BUGFIX_ memories (added to memory-ls.toml)"
        create = next(a for a in actions if a.title == title)
        assert create.command is not None and create.edit is None
        result = await server.command(create.command.command, *create.command.arguments or [])
        folder = workspace.path("shared/bugfix")
        assert result == {"path": str(folder), "projectFile": str(workspace.path("memory-ls.toml"))}
        assert folder.is_dir()
        # The file keeps its comments; the folder joins the list.
        assert workspace.path("memory-ls.toml").read_text() == PROJECT_FILE.replace(
            '"shared/spec",\n', '"shared/spec",\n  "shared/bugfix",\n'
        )
        # The prefix now routes: the memory is in the wrong folder, and its fix moves it.
        codes = await server.wait_for_codes(uri, lambda codes: "unknown-prefix" not in codes)
        assert "misrouted" in codes
        route = await server.command("memory.route", {"name": "BUGFIX_other"})
        assert route["folder"] == str(folder)
        editor.close_all()


async def test_rename_without_the_prefix(workspace: Workspace) -> None:
    options = project_workspace(workspace)
    workspace.write(".serena/memories/crash_notes.md", "See [[BUGFIX_login_crash]].\n")
    async with session(workspace, init_options=options) as server:
        editor = Editor(server)
        uri = editor.open(workspace.path(MEMORY))
        actions = await prefix_actions(server, editor, uri)
        rename = next(a for a in actions if a.title.startswith("Rename without the prefix"))
        assert rename.title == "Rename without the prefix: login_crash"
        assert rename.edit is not None
        editor.apply(rename.edit)
        assert workspace.path(".serena/memories/login_crash.md").read_text() == "# Login crash\n"
        assert not workspace.path(MEMORY).exists()

        async def listed() -> bool:
            result = await server.command("memory.list", {"scope": "project"})
            return "login_crash" in {memory["name"] for memory in result["memories"]}

        await server.eventually(listed, "the renamed memory listed")
        editor.close_all()


async def test_no_create_folder_where_the_editor_sets_the_folders(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    # The standard workspace lists its folders in the editor's settings, which win over
    # the project file: writing the file would change nothing, so only the rename is offered.
    workspace = make_workspace(tmp_path_factory.mktemp("editor_folders"))
    workspace.write(MEMORY, "# Login crash\n")
    async with session(workspace) as server:
        editor = Editor(server)
        uri = editor.open(workspace.path(MEMORY))
        titles = [a.title for a in await prefix_actions(server, editor, uri)]
        assert titles == ["Rename without the prefix: login_crash"]
        with pytest.raises(JsonRpcException, match="set in the editor"):
            await server.command("memory.createFolder", {"prefix": "BUGFIX"})
        assert not workspace.path("shared/bugfix").exists()
        editor.close_all()
