"""The "Create memory" quick fix writes what New Memory writes and opens the new memory."""

from __future__ import annotations

import asyncio
from pathlib import Path

from e2e_support import Session, make_workspace, session
from lsprotocol import types
from navigation_support import code_actions

from memory_ls.core.storage.gate import version_of


async def quick_fixes(server: Session, uri: str) -> list[types.CodeAction]:
    """The quick fixes for the document's broken links."""
    diagnostics = list(server.client.diagnostics[uri])
    actions = await code_actions(
        server,
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostics[0].range,
            context=types.CodeActionContext(diagnostics=diagnostics),
        ),
    )
    return [a for a in actions if isinstance(a, types.CodeAction)]


async def test_create_writes_a_heading_and_shows_the_memory(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    (ws.root / "shared" / "vendor").mkdir()
    options = ws.init_options()
    options["additionalFolders"].append("shared/vendor:ro")
    async with session(ws, init_options=options) as server:
        shown = server.client.shown_documents
        uri = server.open("notes/plan.md", "Next: [[auth/new_flow]] and [[VENDOR_x]]\n")
        await server.wait_for_codes(uri, bool)
        actions = await quick_fixes(server, uri)
        titles = [a.title for a in actions]
        assert "Create memory auth/new_flow in .serena/memories" in titles, titles
        # VENDOR_x routes to a read-only folder: a save would be refused, none is offered.
        assert not any(title.startswith("Create memory VENDOR_x") for title in titles), titles
        (create,) = [a for a in actions if a.title.startswith("Create memory auth/new_flow")]
        assert create.command is not None and create.command.command == "memory.create"
        result = await server.command("memory.create", *(create.command.arguments or []))
        path = ws.primary / "auth" / "new_flow.md"
        assert result["path"] == str(path) and result["created"] is True
        # Answered like every write: its version and what check finds in it (nothing here).
        assert result["diagnostics"] == [] and result["version"] == version_of(path.read_bytes())
        assert path.read_text() == "# new_flow\n\n"
        for _ in range(100):
            if shown:
                break
            await asyncio.sleep(0.02)
        (params,) = shown
        assert params.uri == path.as_uri() and params.take_focus
        end = types.Position(line=2, character=0)
        assert params.selection == types.Range(start=end, end=end)
        # A second run refuses rather than overwrite what was written meanwhile.
        path.write_text("# new_flow\n\nnotes\n")
        try:
            await server.command("memory.create", {"name": "auth/new_flow"})
        except Exception as error:  # the JSON-RPC error of the refusal
            assert "already exists" in str(error)
        else:
            raise AssertionError("memory.create overwrote an existing memory")
        assert path.read_text() == "# new_flow\n\nnotes\n"
