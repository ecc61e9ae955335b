"""Every answer says its side effects (issue 34, point 2), through `memory-ls mcp` (the SDK's
stdio client): a delete names the memories whose links it broke, a rename those whose
references it rewrote; a delete nobody's links named says nothing more."""

from __future__ import annotations

from test_mcp import Workspace, mcp_server, ok
from test_mcp import ws as ws  # the fixture, shared with test_mcp


def _linked(ws: Workspace) -> None:
    """`payments` and three memories that link to it, in each form of link."""
    ws.primary.mkdir(parents=True, exist_ok=True)
    (ws.primary / "payments.md").write_text("# Payments\n\nStripe, retried 3 times.\n")
    (ws.primary / "checkout.md").write_text("# Checkout\n\n1\n2\nThen [[payments]].\n")
    (ws.primary / "refunds.md").write_text("# Refunds\n\nAs in [[payments|the payments]].\n")
    (ws.primary / "ops").mkdir()
    (ws.primary / "ops" / "oncall.md").write_text("Page on `mem:payments` failures.\n")
    (ws.primary / "unrelated.md").write_text("# Unrelated\n\n[[payments_old]] is not it.\n")


async def test_delete_names_the_memories_whose_links_break(ws: Workspace) -> None:
    _linked(ws)
    async with mcp_server(ws) as session:
        text, result = await ok(session, "delete_memory", memory_name="payments")
        assert result["brokenLinks"] == [
            {"name": "checkout", "path": str(ws.primary / "checkout.md"), "line": 5},
            {"name": "ops/oncall", "path": str(ws.primary / "ops" / "oncall.md"), "line": 1},
            {"name": "refunds", "path": str(ws.primary / "refunds.md"), "line": 3},
        ]
        assert result["moreBrokenLinks"] == 0
        assert text.startswith(f"Deleted payments ({ws.primary / 'payments.md'}).")
        assert (
            "3 memories link to it and now have broken links: checkout (line 5), "
            "ops/oncall (line 1) and refunds (line 3)." in text
        )
        # Nobody links to checkout: the answer says nothing more.
        text, result = await ok(session, "delete_memory", memory_name="checkout")
        assert set(result) == {"name", "path"}
        assert text == f"Deleted checkout ({ws.primary / 'checkout.md'})."


async def test_delete_of_a_much_linked_memory_lists_20_and_counts_the_rest(
    ws: Workspace,
) -> None:
    ws.primary.mkdir(parents=True, exist_ok=True)
    (ws.primary / "hub.md").write_text("# Hub\n")
    for number in range(23):
        (ws.primary / f"spoke_{number:02}.md").write_text(f"# Spoke\n[[hub]] {number}\n")
    async with mcp_server(ws) as session:
        text, result = await ok(session, "delete_memory", memory_name="hub")
    assert len(result["brokenLinks"]) == 20 and result["moreBrokenLinks"] == 3
    assert "23 memories link to it" in text and "spoke_19 (line 2) and 3 more." in text


async def test_rename_names_the_memories_whose_references_were_rewritten(ws: Workspace) -> None:
    _linked(ws)
    async with mcp_server(ws) as session:
        text, result = await ok(session, "rename_memory", old_name="payments", new_name="billing")
        assert result["updatedReferences"] == 3
        assert result["rewritten"] == ["checkout", "ops/oncall", "refunds"]
        assert result["moreRewritten"] == 0
        assert "3 references in other memories updated." in text
        assert "References rewritten in checkout, ops/oncall and refunds." in text
        assert (ws.primary / "refunds.md").read_text().endswith("[[billing|the payments]].\n")
        # Nobody refers to unrelated: as before, the count only.
        text, result = await ok(session, "rename_memory", old_name="unrelated", new_name="misc")
        assert "rewritten" not in result and result["updatedReferences"] == 0
        assert "0 references in other memories updated." in text
        assert "References rewritten" not in text
