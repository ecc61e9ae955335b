"""Navigation with a client that supports little (SPEC 3.4): no file operations in workspace
edits, plain `changes`, flat document symbols, plain locations. Each feature falls back
to what the client can apply, or says clearly why it cannot."""

from __future__ import annotations

from collections.abc import AsyncIterator

import attrs
import pytest
import pytest_asyncio
from e2e_support import Session, Workspace, make_workspace, session
from lsprotocol import types
from navigation_support import Editor, code_actions, store_of
from pygls.exceptions import JsonRpcException
from pytest_lsp import client_capabilities

from memory_ls.core import check_store

pytestmark = pytest.mark.asyncio(loop_scope="module")

NOTE = "# Note\n## Part\n[[FEATURE_checkout]] and [[style_guid]]\n# Next\n"


def limited_capabilities() -> types.ClientCapabilities:
    """Neovim's capabilities without resource operations, document changes, hierarchical
    symbols or location links."""
    base = client_capabilities("neovim")
    assert base.workspace is not None and base.text_document is not None
    document = base.text_document
    assert document.document_symbol is not None and document.definition is not None
    return attrs.evolve(
        base,
        workspace=attrs.evolve(
            base.workspace, workspace_edit=types.WorkspaceEditClientCapabilities()
        ),
        text_document=attrs.evolve(
            document,
            document_symbol=attrs.evolve(
                document.document_symbol, hierarchical_document_symbol_support=False
            ),
            definition=attrs.evolve(document.definition, link_support=False),
        ),
    )


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Session]:
    """One server for the module, initialized with the limited capabilities."""
    ws: Workspace = make_workspace(tmp_path_factory.mktemp("fallbacks"))
    ws.write(".serena/memories/FEATURE_search.md", "# Search\n")
    async with session(ws, capabilities=limited_capabilities()) as running:
        yield running


def identifier(uri: str) -> types.TextDocumentIdentifier:
    """A document identifier."""
    return types.TextDocumentIdentifier(uri=uri)


async def test_rename_is_refused_with_a_way_out(server: Session) -> None:
    uri = server.open("notes/rename.md", NOTE)
    at = types.Position(line=2, character=4)
    with pytest.raises(JsonRpcException) as prepared:
        await server.client.text_document_prepare_rename_async(
            types.PrepareRenameParams(text_document=identifier(uri), position=at)
        )
    with pytest.raises(JsonRpcException) as renamed:
        await server.client.text_document_rename_async(
            types.RenameParams(text_document=identifier(uri), position=at, new_name="x")
        )
    for refusal in (prepared.value, renamed.value):
        assert "cannot rename files" in refusal.message
        assert "memory.move" in refusal.message
    assert server.workspace.path("shared/feature/FEATURE_checkout.md").exists()


async def test_a_misrouted_memory_is_moved_by_the_move_command(server: Session) -> None:
    ws = server.workspace
    editor = Editor(server)
    old = ws.path(".serena/memories/FEATURE_search.md")
    uri = editor.open(old)
    await server.wait_for_codes(uri, bool)
    (move,) = await code_actions(
        server,
        types.CodeActionParams(
            text_document=identifier(uri),
            range=types.Range(
                start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)
            ),
            context=types.CodeActionContext(diagnostics=list(server.client.diagnostics[uri])),
        ),
    )
    assert isinstance(move, types.CodeAction) and move.edit is None and move.command is not None
    assert move.command.command == "memory.move"
    result = await server.command(move.command.command, *(move.command.arguments or []))
    editor.close_all()
    assert result["path"] == str(ws.path("shared/feature/FEATURE_search.md"))
    assert not old.exists()
    found = check_store(store_of(ws, ws.init_options()), [result["path"]])
    assert [d.code for d in found] == []


async def test_did_you_mean_edits_come_as_plain_changes(server: Session) -> None:
    uri = server.open("notes/typo.md", NOTE)
    await server.wait_for_codes(uri, bool)
    actions = await code_actions(
        server,
        types.CodeActionParams(
            text_document=identifier(uri),
            range=types.Range(
                start=types.Position(line=2, character=27), end=types.Position(line=2, character=27)
            ),
            context=types.CodeActionContext(diagnostics=list(server.client.diagnostics[uri])),
        ),
    )
    change = next(a for a in actions if isinstance(a, types.CodeAction) and a.edit is not None)
    assert change.edit is not None and change.edit.document_changes is None
    assert {key: list(edits) for key, edits in (change.edit.changes or {}).items()} == {
        uri: [
            types.TextEdit(
                range=types.Range(
                    start=types.Position(line=2, character=27),
                    end=types.Position(line=2, character=37),
                ),
                new_text="style_guide",
            )
        ]
    }


async def test_document_symbols_are_flat_with_their_parents(server: Session) -> None:
    uri = server.open("notes/symbols.md", NOTE)
    result = await server.client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=identifier(uri))
    )
    assert result is not None
    assert [
        (s.name, s.container_name, s.location.range.start.line, s.location.range.end.line)
        for s in result
        if isinstance(s, types.SymbolInformation)
    ] == [("Note", None, 0, 2), ("Part", "Note", 1, 2), ("Next", None, 3, 4)]


async def test_definition_is_a_plain_location(server: Session) -> None:
    uri = server.open("notes/definition.md", NOTE)
    result = await server.client.text_document_definition_async(
        types.DefinitionParams(
            text_document=identifier(uri), position=types.Position(line=2, character=5)
        )
    )
    target = server.workspace.path("shared/feature/FEATURE_checkout.md").as_uri()
    assert result == [
        types.Location(
            uri=target,
            range=types.Range(
                start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)
            ),
        )
    ]
