"""`memory.links`: one memory's backlinks (every linking line) and outgoing links (resolved
or broken), as the editor's links view asks for them, agreeing with find references."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from e2e_support import Session, make_workspace, session, write_file
from lsprotocol import types
from pygls.exceptions import JsonRpcException

pytestmark = pytest.mark.asyncio


async def references_from(server: Session, uri: str) -> list[tuple[str, int, int, int]]:
    """(uri, line, start, end) of each reference to the memory a document is."""
    found = await server.client.text_document_references_async(
        types.ReferenceParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=0, character=0),
            context=types.ReferenceContext(include_declaration=False),
        )
    )
    return sorted(
        (loc.uri, loc.range.start.line, loc.range.start.character, loc.range.end.character)
        for loc in found or []
    )


def occurrences(answer: dict[str, Any]) -> list[tuple[str, int, int, int]]:
    """The answer's backlinks as (uri, line, start, end)."""
    return sorted(
        (
            source["uri"],
            link["line"],
            link["range"]["start"]["character"],
            link["range"]["end"]["character"],
        )
        for source in answer["linkedFrom"]
        for link in source["links"]
    )


async def test_links_of_a_memory_both_ways(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    write_file(
        ws.primary / "linker.md",
        "# Linker\nSee [[FEATURE_checkout]] and `mem:FEATURE_checkout`.\n\n"
        "```\n[[FEATURE_checkout]] in code is text\n```\nAgain [[FEATURE_checkout|the flow]].\n",
    )
    write_file(ws.outside / "team_notes.md", "Team: [[FEATURE_checkout]], [[nowhere]]\n")
    write_file(ws.primary / "unrelated.md", "FEATURE_checkout named, not linked.\n")
    checkout = ws.uri("shared/feature/FEATURE_checkout.md")
    write_file(
        ws.path("shared/feature/FEATURE_checkout.md"),
        "# Checkout\nUses [[auth/login_flow]], [[global/editor_tips]] and `mem:gone`.\n",
    )
    async with session(ws) as server:
        answer = await server.command("memory.links", {"uri": checkout})
        assert answer["name"] == "FEATURE_checkout"
        assert answer["complete"] is True
        sources = [(s["name"], len(s["links"])) for s in answer["linkedFrom"]]
        assert sorted(sources) == [("linker", 3), ("team_notes", 1)]
        linker = next(s for s in answer["linkedFrom"] if s["name"] == "linker")
        assert [link["line"] for link in linker["links"]] == [1, 1, 6]
        assert linker["links"][2]["text"] == "Again [[FEATURE_checkout|the flow]]."
        assert occurrences(answer) == await references_from(server, checkout)

        targets = [(link["target"], link["broken"], link["name"]) for link in answer["linksTo"]]
        assert targets == [
            ("auth/login_flow", False, "auth/login_flow"),
            ("global/editor_tips", False, "global/editor_tips"),
            ("gone", True, None),
        ]
        first = answer["linksTo"][0]
        assert first["uri"] == ws.uri(".serena/memories/auth/login_flow.md")
        assert first["line"] == 1 and first["range"]["start"]["character"] == 7

        # By name, and the open document's unsaved text counts.
        opened = server.open(".serena/memories/linker.md", "No links any more.\n")
        by_name = await server.command("memory.links", {"name": "FEATURE_checkout"})
        assert [s["name"] for s in by_name["linkedFrom"]] == ["team_notes"]
        assert occurrences(by_name) == await references_from(server, checkout)
        server.close(opened)

        with pytest.raises(JsonRpcException) as refused:
            await server.command("memory.links", {"name": "FEATURE_chekout"})
        assert refused.value.data["code"] == "not-found"
        assert "FEATURE_checkout" in refused.value.data["suggestions"]
        with pytest.raises(JsonRpcException) as bad:
            await server.command("memory.links", {})
        assert bad.value.data["code"] == "invalid-arguments"


async def test_only_memories_and_open_documents_are_read(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    secret = write_file(tmp_path / "elsewhere" / "secret.md", "SECRET [[style_guide]]\n")
    ws.write("notes/readme.md", "NOT A MEMORY [[style_guide]]\n")
    async with session(ws) as server:
        for path in (secret, ws.path("notes/readme.md")):
            with pytest.raises(JsonRpcException) as refused:
                await server.command("memory.links", {"uri": path.as_uri()})
            assert refused.value.data["code"] == "outside-store"
        # Opened in the editor, a workspace note is the user's: its links are answered.
        opened = server.open("notes/readme.md", "Open note: [[style_guide]]\n")
        answer = await server.command("memory.links", {"uri": opened})
        assert answer["name"] is None and answer["linkedFrom"] == []
        assert [link["name"] for link in answer["linksTo"]] == ["style_guide"]
        guide = await server.command("memory.links", {"name": "style_guide"})
        assert [(s["name"], s["uri"]) for s in guide["linkedFrom"]] == [(None, opened)]
        assert all("SECRET" not in link["text"] for s in guide["linkedFrom"] for link in s["links"])
