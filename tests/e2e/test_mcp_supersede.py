"""read_memory over MCP: the pointer from a superseded memory to the newer one, and the
memories one link away (`related`), through the official MCP client over stdio."""

from __future__ import annotations

from mcp.types import TextContent
from test_mcp import Workspace, call, mcp_server, ok
from test_mcp import ws as ws  # the fixture: its shared folders, global folder and HOME


def _blocks(answer: object) -> list[str]:
    content = getattr(answer, "content", [])
    return [block.text for block in content if isinstance(block, TextContent)]


async def test_a_superseded_memory_points_to_the_newer_one_before_its_text(
    ws: Workspace,
) -> None:
    ws.primary.mkdir(parents=True)
    old_text = "# Deploy, 2024\nRun the old script.\n"
    (ws.primary / "deploy_2024.md").write_text(old_text)
    (ws.primary / "deploy.md").write_text("---\nsupersedes: deploy_2024\n---\n# Deploy\nUse CI.\n")
    (ws.primary / "unrelated.md").write_text("# Unrelated\n")
    async with mcp_server(ws) as session:
        answer = await call(session, "read_memory", memory_name="deploy_2024")
        assert not answer.is_error
        note, text = _blocks(answer)
        assert note.startswith("Note: this memory (deploy_2024) is superseded by deploy")
        assert "deploy's frontmatter says so" in note and "read that one" in note
        # Serena's answer is the file's text, alone in its block.
        assert text == old_text
        assert (answer.structured_content or {})["supersededBy"] == ["deploy"]

        # The newer memory is not superseded: its answer is Serena's, unchanged.
        answer = await call(session, "read_memory", memory_name="deploy")
        assert _blocks(answer) == [(ws.primary / "deploy.md").read_text()]
        assert (answer.structured_content or {})["supersededBy"] == []

        # The old memory's own frontmatter can say it too, and a write is seen at once.
        await ok(
            session,
            "write_memory",
            memory_name="unrelated",
            content="---\nsuperseded_by: deploy\n---\n# Unrelated\n",
        )
        note, _text = _blocks(await call(session, "read_memory", memory_name="unrelated"))
        assert "superseded by deploy (unrelated's frontmatter says so)" in note


async def test_related_lists_links_with_titles_and_backlinks_with_their_line(
    ws: Workspace,
) -> None:
    ws.primary.mkdir(parents=True)
    (ws.primary / "auth.md").write_text(
        "# Auth\nTokens: see [[tokens]] and `mem:sessions`; old notes in [[gone]].\n"
    )
    (ws.primary / "tokens.md").write_text("---\ntags: [a]\n---\n\n## Token lifetimes\nbody\n")
    (ws.primary / "sessions.md").write_text("Sessions last a day.\nmore\n")
    (ws.primary / "plans.md").write_text("# Plans\n\nNext: rework [[auth]] this week.\n")
    (ws.primary / "auth_v0.md").write_text("# Not a link to auth\n")
    async with mcp_server(ws) as session:
        plain = await call(session, "read_memory", memory_name="auth")
        assert _blocks(plain) == [(ws.primary / "auth.md").read_text()]
        assert "related" not in (plain.structured_content or {})

        answer = await call(session, "read_memory", memory_name="auth", related=True)
        text, block = _blocks(answer)
        assert text == (ws.primary / "auth.md").read_text()
        related = (answer.structured_content or {})["related"]
        assert related["links"] == [
            {"name": "tokens", "title": "Token lifetimes", "broken": False},
            {"name": "sessions", "title": "Sessions last a day.", "broken": False},
            {"name": "gone", "broken": True},
        ]
        assert related["backlinks"] == [
            {"name": "plans", "line": 3, "text": "Next: rework [[auth]] this week."}
        ]
        assert (related["moreLinks"], related["moreBacklinks"]) == (0, 0)
        assert "- tokens — Token lifetimes" in block
        assert "- gone (broken: no memory has this name)" in block
        assert "- plans, line 3: Next: rework [[auth]] this week." in block


async def test_related_is_bounded_and_says_how_many_more(ws: Workspace) -> None:
    ws.primary.mkdir(parents=True)
    links = " ".join(f"[[n{i}]]" for i in range(25))
    (ws.primary / "hub.md").write_text(f"# Hub\n{links}\n")
    for i in range(23):
        (ws.primary / f"n{i}.md").write_text(f"# N{i}\nBack to [[hub]].\n")
    async with mcp_server(ws) as session:
        _, result = await ok(session, "read_memory", memory_name="hub", related=True)
        related = result["related"]
        assert len(related["links"]) == 20 and related["moreLinks"] == 5
        assert len(related["backlinks"]) == 20 and related["moreBacklinks"] == 3
        assert [link["broken"] for link in related["links"]] == [False] * 20
