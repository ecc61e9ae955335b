"""Superseded memories are marked in every answer that lists memories (issue 34, point 7),
through `memory-ls mcp` and the SDK's stdio client: list_memories (Serena's JSON kept, the
mark in the text after it and in view "titles") and find_memories_about (the outdated
memory after the current one, marked)."""

from __future__ import annotations

from test_mcp import Workspace, mcp_server, ok
from test_mcp import ws as ws  # the fixture, shared with test_mcp


def _deploys(ws: Workspace) -> None:
    """`deploy` supersedes `deploy_2024` (its frontmatter says so); both name the script."""
    ws.primary.mkdir(parents=True, exist_ok=True)
    (ws.root / "src").mkdir(exist_ok=True)
    (ws.root / "src" / "deploy.sh").write_text("echo deploy\n")
    (ws.primary / "deploy_2024.md").write_text(
        "# Deploy 2024\nRun `src/deploy.sh` by hand, then `src/deploy.sh --check`.\n"
    )
    (ws.primary / "deploy.md").write_text(
        "---\nsupersedes: deploy_2024\n---\n# Deploy\nCI runs `src/deploy.sh`.\n"
    )


async def test_list_memories_marks_a_superseded_memory(ws: Workspace) -> None:
    _deploys(ws)
    async with mcp_server(ws) as session:
        result = await session.call_tool("list_memories", {})
        texts = [block.text for block in result.content]  # type: ignore[union-attr]
        listed = {m["name"]: m for m in (result.structured_content or {})["memories"]}
        assert listed["deploy_2024"]["supersededBy"] == ["deploy"]
        assert listed["deploy"]["supersededBy"] == []
        # Serena's JSON as Serena answers it; the mark in the text after it.
        assert '"deploy", "deploy_2024"' in texts[0]
        assert "Superseded (read the newer memory instead): deploy_2024 by deploy." in texts[1]
        text, _ = await ok(session, "list_memories", view="titles")
        assert "- deploy_2024 [SUPERSEDED by deploy: read that instead]" in text
        assert "- deploy\n" in text + "\n"


async def test_find_memories_about_puts_the_current_memory_first_and_marks_the_old(
    ws: Workspace,
) -> None:
    _deploys(ws)
    async with mcp_server(ws) as session:
        text, result = await ok(session, "find_memories_about", target="src/deploy.sh")
    # The old memory mentions the script twice, yet the one that holds now comes first.
    assert [m["name"] for m in result["memories"]] == ["deploy", "deploy_2024"]
    assert [m["supersededBy"] for m in result["memories"]] == [[], ["deploy"]]
    assert text.splitlines()[2].startswith(
        "- deploy_2024 (Deploy 2024) [SUPERSEDED by deploy: read that instead]: 2: "
    )


async def test_find_memories_about_warns_of_a_memory_holding_conflict_markers(
    ws: Workspace,
) -> None:
    # Issue 34 point 3: conflicts are not knowledge, in every answer that finds memories.
    _deploys(ws)
    (ws.primary / "deploy.md").write_text(
        "# Deploy\n<<<<<<< HEAD\nCI runs `src/deploy.sh`.\n=======\n"
        "Run `src/deploy.sh` by hand.\n>>>>>>> theirs\n"
    )
    async with mcp_server(ws) as session:
        text, result = await ok(session, "find_memories_about", target="src/deploy.sh")
    by_name = {m["name"]: m for m in result["memories"]}
    assert by_name["deploy"]["warnings"] == ["merge-conflict"]
    assert "warnings" not in by_name["deploy_2024"]
    assert "- deploy (Deploy) [merge-conflict: unresolved conflict markers" in text
