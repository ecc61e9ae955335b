"""The quick fix for `invalid-name` (issue 12): a file whose name breaks the rules is renamed
to the closest free valid name, as the editor renames files, and the problem goes away."""

from __future__ import annotations

import pytest
from e2e_support import CLIENTS, Session, Workspace, session, wait_until
from lsprotocol import types
from navigation_support import Editor, code_actions
from pygls.uris import to_fs_path

pytestmark = pytest.mark.asyncio

# Serena accepts `:` in a name; memory-ls refuses it (no such file can exist on Windows).
BAD_NAME = "standup 10:30"


@pytest.mark.parametrize("client_name", CLIENTS)
async def test_an_invalid_file_name_is_renamed_to_a_free_valid_one(
    workspace: Workspace, client_name: str
) -> None:
    bad = workspace.write(f".serena/memories/{BAD_NAME}.md", "# Stand-up\n")
    # The closest valid name is taken: the fix must not hide or overwrite that memory.
    workspace.write(".serena/memories/standup 10_30.md", "# Another\n")
    async with session(workspace, client_name=client_name) as server:
        editor = Editor(server)
        uri = editor.open(bad)

        def published() -> list[types.Diagnostic]:
            # Compared by path: the URI of a name with `:` or spaces may come back spelled
            # with or without percent-encoding, which clients read as the same file.
            found = [p for p in server.published if to_fs_path(p.uri) == str(bad)]
            return list(found[-1].diagnostics) if found else []

        await wait_until(
            server.client, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, lambda: bool(published())
        )
        diagnostics = [d for d in published() if d.code == "invalid-name"]
        assert len(diagnostics) == 1, published()
        actions = await code_actions(
            server,
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=diagnostics[0].range,
                context=types.CodeActionContext(diagnostics=diagnostics),
            ),
        )
        renames = [a for a in actions if isinstance(a, types.CodeAction)]
        assert [a.title for a in renames] == ["Rename to standup 10_30_2"]
        assert renames[0].edit is not None
        editor.apply(renames[0].edit)
        renamed = workspace.path(".serena/memories/standup 10_30_2.md")
        assert renamed.read_text() == "# Stand-up\n"
        assert not bad.exists()
        await server.eventually(
            lambda: _listed(server, "standup 10_30_2"), "the renamed memory listed"
        )
        assert await _listed(server, "standup 10_30"), "the other memory is untouched"
        editor.close_all()


async def _listed(server: Session, name: str) -> bool:
    result = await server.command("memory.list", {"scope": "project"})
    return name in {memory["name"] for memory in result["memories"]}
