"""A paraphrased near-copy under the same heading is flagged when an agent writes it
(`memory-ls mcp` through the SDK's stdio client; issue 34 point 7)."""

from __future__ import annotations

from test_mcp import Workspace, mcp_server, ok
from test_mcp import ws as ws  # the fixture, shared with test_mcp

ORIGINAL = """# Payment retry policy

Failed card charges are retried by `billing/retry_worker.py`, not by the API handler.
The worker reads `payments.retry_schedule` from settings: 1 hour, 6 hours, 24 hours,
then 72 hours. After the fourth failure the subscription moves to `past_due` and the
customer gets the dunning email. Never retry a charge that failed with `card_declined`
and reason `fraudulent`: Stripe flags the account. Idempotency keys are
`charge-{invoice_id}-{attempt}` so a worker restart cannot charge twice.
"""
PARAPHRASE = """# Payment retry policy

The retry worker in `billing/retry_worker.py` retries failed card charges; the API
handler does not. It takes its schedule from `payments.retry_schedule` in settings:
1 hour, 6 hours, 24 hours and finally 72 hours. When the fourth attempt fails, the
subscription goes to `past_due` and the customer is sent the dunning email. A charge
declined with `card_declined` and reason `fraudulent` must never be retried, since
Stripe would flag the account. Idempotency keys look like `charge-{invoice_id}-{attempt}`,
so restarting the worker cannot charge anyone twice.
"""
OVERVIEWS = (
    "# Overview\n\nThe billing service owns invoices, payments and refunds. It is a Django app "
    "deployed as two processes: the API and the retry worker. Its database is the `billing` "
    "schema on the main Postgres cluster, and it talks to Stripe through its client module.\n",
    "# Overview\n\nThe search service indexes products and answers the storefront's queries. "
    "It runs OpenSearch with one index per locale, rebuilt nightly from the catalog export. "
    "Synonyms are maintained by the merchandising team and loaded on deploy.\n",
)


async def test_a_paraphrase_under_the_same_heading_is_flagged_and_a_generic_heading_is_not(
    ws: Workspace,
) -> None:
    async with mcp_server(ws) as session:
        _, first = await ok(
            session, "write_memory", memory_name="payments/retry_policy", content=ORIGINAL
        )
        assert first["diagnostics"] == []
        text, second = await ok(
            session, "write_memory", memory_name="billing/charge_retries", content=PARAPHRASE
        )
        found = [d for d in second["diagnostics"] if d["code"] == "near-duplicate"]
        assert len(found) == 1 and found[0]["new"] is True
        assert "Near-duplicate of payments/retry_policy" in found[0]["message"]
        assert "the same heading" in found[0]["message"]
        assert "near-duplicate" in text

        for number, overview in enumerate(OVERVIEWS):
            _, answer = await ok(
                session, "write_memory", memory_name=f"service_{number}/overview", content=overview
            )
            assert [d for d in answer["diagnostics"] if d["code"] == "near-duplicate"] == []
