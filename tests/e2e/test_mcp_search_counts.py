"""search_memories counts what it lists (issue 34, point 7), through `memory-ls mcp` and the
SDK's stdio client: a newer memory listed beside the match it supersedes, without the
query's words, counts in the total and its row says why it is there."""

from __future__ import annotations

from test_mcp import Workspace, mcp_server, ok
from test_mcp import ws as ws  # the fixture, shared with test_mcp


async def test_a_successor_listed_for_a_match_counts_and_says_why(ws: Workspace) -> None:
    ws.primary.mkdir(parents=True, exist_ok=True)
    (ws.primary / "deploy.md").write_text(
        "---\nsupersedes: deploy_2024\n---\n# Deploy\nUse the CI pipeline now.\n"
    )
    (ws.primary / "deploy_2024.md").write_text("# Deploy 2024\nkubectl apply by hand.\n")
    for number in range(6):
        (ws.primary / f"k{number}.md").write_text(f"# Note {number}\nkubectl tips {number}\n")
    async with mcp_server(ws) as session:
        text, result = await ok(session, "search_memories", query="kubectl")
        names = [memory["name"] for memory in result["memories"]]
        assert len(names) == 8 and result["total"] == 8 and result["more"] == 0
        # The newer memory comes right before the one it replaces.
        assert names.index("deploy") + 1 == names.index("deploy_2024")
        assert text.startswith(
            "8 of 8 memories, best first (relevance: kubectl); 7 match, 1 supersedes a match:"
        )
        assert "deploy — Deploy (supersedes deploy_2024, which matched)" in text
        assert "SUPERSEDED by deploy: read that instead" in text
        # Paged: the count holds on every page and the pages meet.
        _, first = await ok(session, "search_memories", query="kubectl", limit=5)
        assert first["total"] == 8 and first["more"] == 3 and first["next_cursor"] == "5"
        _, second = await ok(session, "search_memories", query="kubectl", limit=5, cursor="5")
        seen = [m["name"] for m in first["memories"] + second["memories"]]
        assert sorted(seen) == sorted(names)
