"""`merge-conflict` in the editor (issue 23): a conflicted memory is an error at its
markers, and each block offers Accept ours / theirs / both, which resolve it."""

from __future__ import annotations

import pytest
from e2e_support import CLIENTS, Workspace, session, wait_until
from lsprotocol import types
from navigation_support import Editor, code_actions
from pygls.exceptions import JsonRpcException

pytestmark = pytest.mark.asyncio

CONFLICTED = """---
<<<<<<< HEAD
updated_at: 2025-02-01T00:00:00Z
=======
updated_at: 2025-03-01T00:00:00Z
>>>>>>> feature
---
# Deploy

<<<<<<< HEAD
Ship weekly.
||||||| base
Ship on Tuesdays.
=======
Ship daily.
>>>>>>> feature
Watch the dashboards."""  # the file ends without a line break


@pytest.mark.parametrize("client_name", CLIENTS)
async def test_conflict_blocks_are_errors_with_accept_actions(
    workspace: Workspace, client_name: str
) -> None:
    path = workspace.write(".serena/memories/deploy.md", CONFLICTED)
    async with session(workspace, client_name=client_name) as server:
        editor = Editor(server)
        uri = editor.open(path)

        def conflicts() -> list[types.Diagnostic]:
            found = [p for p in server.published if p.uri == uri]
            latest = list(found[-1].diagnostics) if found else []
            return [d for d in latest if d.code == "merge-conflict"]

        await wait_until(
            server.client, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, lambda: len(conflicts()) == 2
        )
        codes = {d.code for d in [p for p in server.published if p.uri == uri][-1].diagnostics}
        assert "invalid-frontmatter" not in codes  # the markers explain the broken block
        first, second = sorted(conflicts(), key=lambda d: d.range.start.line)
        assert first.severity == types.DiagnosticSeverity.Error
        assert (first.range.start.line, first.range.end.line) == (1, 5)
        assert (second.range.start.line, second.range.end.line) == (9, 15)

        async def actions_for(diagnostic: types.Diagnostic) -> list[types.CodeAction]:
            answer = await code_actions(
                server,
                types.CodeActionParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    range=diagnostic.range,
                    context=types.CodeActionContext(diagnostics=[diagnostic]),
                ),
            )
            return [a for a in answer if isinstance(a, types.CodeAction)]

        actions = await actions_for(second)
        assert [a.title for a in actions] == [
            "Accept ours",
            "Accept theirs",
            "Accept both (ours, then theirs)",
        ]
        both = actions[2].edit
        assert both is not None
        editor.apply(both)
        assert path.read_text() == CONFLICTED.replace(
            "<<<<<<< HEAD\nShip weekly.\n||||||| base\nShip on Tuesdays.\n=======\n"
            "Ship daily.\n>>>>>>> feature\n",
            "Ship weekly.\nShip daily.\n",
        )
        await wait_until(
            server.client, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, lambda: len(conflicts()) == 1
        )
        (left,) = conflicts()
        theirs = (await actions_for(left))[1]
        assert theirs.title == "Accept theirs" and theirs.edit is not None
        editor.apply(theirs.edit)
        assert path.read_text() == (
            "---\nupdated_at: 2025-03-01T00:00:00Z\n---\n# Deploy\n\n"
            "Ship weekly.\nShip daily.\nWatch the dashboards."
        )
        await wait_until(
            server.client, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, lambda: not conflicts()
        )
        editor.close_all()


@pytest.mark.parametrize("client_name", CLIENTS[:1])
async def test_a_block_at_the_end_without_a_line_break_is_resolved_whole(
    workspace: Workspace, client_name: str
) -> None:
    text = "# X\n<<<<<<< HEAD\na\n=======\nb\n>>>>>>> feature"
    path = workspace.write(".serena/memories/x.md", text)
    async with session(workspace, client_name=client_name) as server:
        editor = Editor(server)
        uri = editor.open(path)

        def conflicts() -> list[types.Diagnostic]:
            found = [p for p in server.published if p.uri == uri]
            latest = list(found[-1].diagnostics) if found else []
            return [d for d in latest if d.code == "merge-conflict"]

        await wait_until(
            server.client, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, lambda: bool(conflicts())
        )
        answer = await code_actions(
            server,
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                range=conflicts()[0].range,
                context=types.CodeActionContext(diagnostics=conflicts()),
            ),
        )
        ours = next(a for a in answer if isinstance(a, types.CodeAction))
        assert ours.title == "Accept ours" and ours.edit is not None
        editor.apply(ours.edit)
        assert path.read_text() == "# X\na"
        editor.close_all()


@pytest.mark.parametrize("client_name", CLIENTS[:1])
async def test_markers_in_a_fenced_example_are_not_a_conflict(
    workspace: Workspace, client_name: str
) -> None:
    text = (
        "# Resolving conflicts\n\nSee [[no_such_memory]]. Git shows:\n\n```text\n"
        "<<<<<<< HEAD\nours\n||||||| base\nbase\n=======\ntheirs\n>>>>>>> feature\n```\n"
    )
    path = workspace.write(".serena/memories/resolving.md", text)
    async with session(workspace, client_name=client_name) as server:
        editor = Editor(server)
        uri = editor.open(path)

        def codes() -> set[str]:
            found = [p for p in server.published if p.uri == uri]
            return {str(d.code) for d in found[-1].diagnostics} if found else set()

        # The broken link shows the document was checked; the example is no conflict.
        await wait_until(
            server.client, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, lambda: "broken-link" in codes()
        )
        assert "merge-conflict" not in codes()
        editor.close_all()


@pytest.mark.parametrize("client_name", CLIENTS[:1])
async def test_memory_save_and_edit_refuse_conflict_markers(
    workspace: Workspace, client_name: str
) -> None:
    conflicted = "# Deploy\n<<<<<<< HEAD\nweekly\n=======\ndaily\n>>>>>>> feature\n"
    async with session(workspace, client_name=client_name) as server:
        with pytest.raises(JsonRpcException) as info:
            await server.command("memory.save", {"name": "deploy", "content": conflicted})
        assert isinstance(info.value.data, dict) and info.value.data["code"] == "merge-conflict"
        assert "keep one side" in info.value.message
        assert not (workspace.primary / "deploy.md").exists()
        await server.command("memory.save", {"name": "deploy", "content": "# Deploy\nweekly\n"})
        with pytest.raises(JsonRpcException) as info:
            await server.command(
                "memory.edit",
                {"name": "deploy", "needle": "weekly", "replacement": conflicted},
            )
        assert isinstance(info.value.data, dict) and info.value.data["code"] == "merge-conflict"
        assert "<<<<<<<" not in (workspace.primary / "deploy.md").read_text()
