"""The `superseded` diagnostic in the language server: open documents as typed, closed
files as on disk (pushed), following the other memory's frontmatter as it changes."""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_support import Session, make_workspace, session, write_file
from lsprotocol import types

pytestmark = pytest.mark.asyncio(loop_scope="function")


def superseded(server: Session, uri: str) -> list[types.Diagnostic]:
    return [d for d in server.client.diagnostics.get(uri, ()) if d.code == "superseded"]


def kinds(server: Session, uri: str) -> list[str]:
    return sorted(str(d.data["kind"]) for d in superseded(server, uri) if d.data)


async def test_an_open_memory_is_marked_when_another_supersedes_it(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    ws.write(".serena/memories/deploy_old.md", "# Deploy, the old way\n")
    ws.write(".serena/memories/deploy.md", "# Deploy\n")
    options = ws.init_options(diagnosticsScope="openFiles")
    async with session(ws, init_options=options) as server:
        old = server.open(".serena/memories/deploy_old.md")
        assert await server.wait_for_codes(old, lambda codes: True) == []

        # Another process writes the newer memory's key: the open one gets the hint.
        write_file(ws.primary / "deploy.md", "---\nsupersedes: deploy_old\n---\n# Deploy\n")
        assert await server.wait_for_codes(old, bool) == ["superseded"]
        (hint,) = superseded(server, old)
        assert hint.severity == types.DiagnosticSeverity.Hint
        assert hint.source == "memory-ls"
        assert hint.message.startswith("Superseded by deploy: read that one")

        # Typed into the open document: the old one answers back, a cycle (an error on its
        # key's line), gone again when the key is removed.
        server.replace_text(old, "---\nsupersedes: deploy\n---\n# Deploy, the old way\n", 2)
        await server.wait_for_codes(old, lambda codes: kinds(server, old) == ["cycle"])
        (cycle,) = superseded(server, old)
        assert cycle.severity == types.DiagnosticSeverity.Error
        assert cycle.range.start.line == 1 and cycle.range.end.character == len("supersedes")
        # A name no memory has: an error on the key; the hint stays (deploy still says so).
        server.replace_text(old, "---\nsupersedes: nowhere\n---\n# Old\n", 3)
        await server.wait_for_codes(
            old, lambda codes: kinds(server, old) == ["missing", "superseded"]
        )

        # The newer memory drops its key: nothing supersedes the old one any more.
        server.replace_text(old, "# Deploy, the old way\n", 4)
        await server.wait_for_codes(old, lambda codes: kinds(server, old) == ["superseded"])
        write_file(ws.primary / "deploy.md", "# Deploy\n")
        assert await server.wait_for_codes(old, lambda codes: not codes) == []


async def test_closed_memories_get_it_from_the_workspace_check(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    ws.write(".serena/memories/style_v1.md", "---\nsuperseded_by: style\n---\n# Style\n")
    ws.write(".serena/memories/style.md", "# Style, current\n")
    ws.write(".serena/memories/a.md", "---\nsupersedes: b\n---\nA\n")
    ws.write(".serena/memories/b.md", "---\nsupersedes: a\n---\nB\n")
    async with session(ws, client_name="neovim@v0.7.0") as server:
        v1 = ws.uri(".serena/memories/style_v1.md")
        assert await server.wait_for_codes(v1, bool) == ["superseded"]
        (hint,) = superseded(server, v1)
        assert hint.severity == types.DiagnosticSeverity.Hint
        assert hint.range.start.line == 1  # on its `superseded_by` key
        for name in ("a", "b"):
            uri = ws.uri(f".serena/memories/{name}.md")
            assert await server.wait_for_codes(uri, bool) == ["superseded"]
            assert superseded(server, uri)[0].severity == types.DiagnosticSeverity.Error
        # The cycle is broken on disk: both files are checked again.
        write_file(ws.primary / "b.md", "B\n")
        a_uri = ws.uri(".serena/memories/a.md")
        b_uri = ws.uri(".serena/memories/b.md")
        assert await server.wait_for_codes(a_uri, lambda codes: not codes) == []
        await server.wait_for_codes(b_uri, lambda codes: kinds(server, b_uri) == ["superseded"])
        assert superseded(server, b_uri)[0].severity == types.DiagnosticSeverity.Hint


async def test_memory_read_says_what_supersedes_it_and_what_is_related(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    ws.write(".serena/memories/api_v1.md", "# API v1\nSee [[api_notes]] and [[missing_one]].\n")
    ws.write(".serena/memories/api.md", "---\nsupersedes: api_v1\n---\n# API\nNot [[api_v1]].\n")
    ws.write(".serena/memories/api_notes.md", "# Notes on the API\n")
    async with session(ws) as server:
        result = await server.command("memory.read", {"name": "api_v1"})
        assert result["supersededBy"] == ["api"]
        assert "related" not in result
        result = await server.command("memory.read", {"name": "api_v1", "related": True})
        assert result["related"] == {
            "links": [
                {"name": "api_notes", "title": "Notes on the API", "broken": False},
                {"name": "missing_one", "broken": True},
            ],
            "moreLinks": 0,
            "backlinks": [{"name": "api", "line": 5, "text": "Not [[api_v1]]."}],
            "moreBacklinks": 0,
        }
        assert (await server.command("memory.read", {"name": "api"}))["supersededBy"] == []
