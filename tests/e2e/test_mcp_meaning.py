"""Search by meaning through `memory-ls mcp` (the SDK's stdio client), issue 35: with
`[search.meaning]` pointing at an OpenAI-compatible endpoint on the loopback (the real
all-MiniLM-L6-v2, bench/embeddings_server.py), a question that shares no content word
with its memory finds it; without the table it does not, and the answer is as before."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from mcp import ClientSession
from test_mcp import Workspace, mcp_server, ok
from test_mcp import ws as ws  # the fixture, shared with test_mcp

QUESTION = "Who is in charge of the people handling money?"
NOTES = {
    "payments_team": "# Payments team\n\nThe payments team is led by Alice Martin.\n",
    "deploying": "# Deploying\n\nRun make deploy from the main branch once CI is green.\n",
    "fruit_stand": "# Fruit stand\n\nBananas are yellow and sold by the bunch.\n",
}
DEADLINE = 60.0


def _notes(ws: Workspace) -> None:
    ws.primary.mkdir(parents=True)
    for name, text in NOTES.items():
        (ws.primary / f"{name}.md").write_text(text, encoding="utf-8")


async def _settled(session: ClientSession, query: str) -> tuple[str, dict[str, Any]]:
    """search_memories once every memory is embedded (no note said any more)."""
    deadline = time.monotonic() + DEADLINE
    while True:
        text, result = await ok(session, "search_memories", query=query, limit=3)
        if "notes" not in result:
            return text, result
        assert time.monotonic() < deadline, text
        await asyncio.sleep(0.1)


async def test_a_paraphrase_finds_its_memory_by_meaning_and_not_without(
    ws: Workspace, embeddings_endpoint: tuple[str, Any]
) -> None:
    url, embeddings = embeddings_endpoint  # tests/conftest.py, shared by the whole run
    calls, texts = embeddings.calls, embeddings.texts
    _notes(ws)
    async with mcp_server(ws) as session:
        text, result = await ok(session, "search_memories", query=QUESTION, limit=3)
        assert [m["name"] for m in result["memories"]] == []
        assert "notes" not in result and "by meaning" not in text
    assert embeddings.calls == calls  # not configured: never asked

    (ws.root / "memory-ls.toml").write_text(
        f'[search.meaning]\nprovider = "openai"\nurl = "{url}"\nmodel = "all-MiniLM-L6-v2"\n',
        encoding="utf-8",
    )
    async with mcp_server(ws) as session:
        text, result = await _settled(session, QUESTION)
        first = result["memories"][0]
        assert first["name"] == "payments_team", text
        assert first["matched"] == [] and first["similarity"] > 0.3
        assert "payments_team" in text and "by meaning (similarity" in text
        # Keywords rank as before: the memory holding them first.
        _text, result = await _settled(session, "deploy")
        assert result["memories"][0]["name"] == "deploying"
        assert result["memories"][0]["matched"] == ["deploy"]

        # A write that says the same in other words is a near-duplicate, by meaning.
        text, result = await ok(
            session,
            "write_memory",
            memory_name="who_runs_payments",
            content="# Who runs payments\n\nAlice Martin leads the payments team.\n",
        )
        assert "Near-duplicate of payments_team" in text, text
        assert "alike in meaning" in text
    assert embeddings.texts - texts >= len(NOTES)
