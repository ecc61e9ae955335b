"""Near-duplicates by heading: one first heading and bodies alike in their words (issue 34 p. 7).

The threshold (similarity.TITLE_THRESHOLD) is measured on the texts below: each memory
written again in other words keeps 58 to 78% of its words (its word 3-shingles only 10
to 27%, under the body rule's 50), unrelated memories under one generic heading 7 to 17%.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from store_helpers import Workspace

from memory_ls.core import Store, check_store
from memory_ls.core.operations.duplicates import near_duplicate_diagnostics
from memory_ls.core.rules.similarity import (
    BODY_THRESHOLD,
    BUCKET_LIMIT,
    TITLE_KEY,
    TITLE_THRESHOLD,
    Memo,
    bucket_limit,
    heading_key,
    jaccard,
    jaccard_of,
    keys,
    near_duplicate,
)
from memory_ls.core.services.search import SearchIndex, fts5_available

PARAPHRASES: list[tuple[str, str]] = [
    (
        """# Payment retry policy

Failed card charges are retried by `billing/retry_worker.py`, not by the API handler.
The worker reads `payments.retry_schedule` from settings: 1 hour, 6 hours, 24 hours,
then 72 hours. After the fourth failure the subscription moves to `past_due` and the
customer gets the dunning email. Never retry a charge that failed with `card_declined`
and reason `fraudulent`: Stripe flags the account. Idempotency keys are
`charge-{invoice_id}-{attempt}` so a worker restart cannot charge twice.
""",
        """# Payment retry policy

The retry worker in `billing/retry_worker.py` retries failed card charges; the API
handler does not. It takes its schedule from `payments.retry_schedule` in settings:
1 hour, 6 hours, 24 hours and finally 72 hours. When the fourth attempt fails, the
subscription goes to `past_due` and the customer is sent the dunning email. A charge
declined with `card_declined` and reason `fraudulent` must never be retried, since
Stripe would flag the account. Idempotency keys look like `charge-{invoice_id}-{attempt}`,
so restarting the worker cannot charge anyone twice.
""",
    ),
    (
        """# Auth flow

Login goes through `/api/session` which sets an HttpOnly cookie `sid` (14 days, rolling).
The SPA never sees the token. Refresh is implicit: every request within the last
24 hours of the cookie's life extends it. OAuth (Google, GitHub) lands on
`/oauth/callback`, which creates the user on first login and links by verified email
otherwise. Tests for the flow live in `tests/auth/test_session.py`; they need Redis
running (`docker compose up redis`).
""",
        """# Auth flow

Users log in via `/api/session`, which sets the HttpOnly cookie `sid` (rolling, 14 days).
The token is never visible to the SPA. There is no explicit refresh: a request made in
the cookie's last 24 hours extends it. OAuth logins (Google, GitHub) arrive at
`/oauth/callback`; on the first login it creates the user, otherwise it links the
account by verified email. The flow's tests are in `tests/auth/test_session.py` and
need a running Redis (`docker compose up redis`).
""",
    ),
    (
        """# Deployment checklist

1. Run `make check` locally; CI runs the same target.
2. Bump the version in `pyproject.toml` and add the changelog entry.
3. Tag `vX.Y.Z` on main; the release workflow builds the wheel and the image.
4. Staging deploys automatically from the tag; wait for the smoke tests (about 8 minutes).
5. Promote to production from the Actions tab with the `promote` workflow.
6. Watch the error rate dashboard for 15 minutes; roll back with `promote --previous`.
""",
        """# Deployment checklist

1. Locally, run `make check` (CI uses the same target).
2. Update the version in `pyproject.toml` and write the changelog entry.
3. Create the tag `vX.Y.Z` on main: the release workflow then builds the wheel and the image.
4. The tag deploys to staging automatically; wait until the smoke tests pass (roughly 8 minutes).
5. Promote to production with the `promote` workflow in the Actions tab.
6. Keep an eye on the error rate dashboard for 15 minutes; `promote --previous` rolls back.
""",
    ),
    (
        """# Testing conventions

Unit tests sit next to the code in `tests/unit`, one file per module. They never touch
the network or the real database: use the `tmp_db` fixture, which creates a SQLite file
per test. End-to-end tests in `tests/e2e` start the real server on a random port and are
marked `slow`; run them with `pytest -m slow`. Snapshots are updated with
`pytest --snapshot-update` and must be reviewed in the diff before committing.
""",
        """# Testing conventions

Unit tests live beside the code in `tests/unit`, with one file for each module. They
must not use the network or the real database; the `tmp_db` fixture gives every test
its own SQLite file. The end-to-end tests in `tests/e2e` run the real server on a
random port and carry the `slow` marker, so run them with `pytest -m slow`. Update
snapshots with `pytest --snapshot-update` and review them in the diff before you commit.
""",
    ),
    (
        """# Caching layer

Product pages are cached in Redis for 5 minutes under `page:{slug}:{locale}`. The cache
is invalidated by the `product_updated` event, which the catalog service publishes after
each write. Search results are not cached: they depend on the user's permissions. If
Redis is down the site serves from the database directly and logs a warning once per
minute; nothing fails. The hit rate is on the Grafana board "Storefront cache".
""",
        """# Caching layer

We cache product pages in Redis for 5 minutes, keyed `page:{slug}:{locale}`. The
`product_updated` event, published by the catalog service after every write, invalidates
the cache. Search results are never cached because they depend on the user's
permissions. When Redis is down the site reads straight from the database and logs a
warning once a minute; nothing breaks. See the Grafana board "Storefront cache" for the hit rate.
""",
    ),
    (
        """# Database migrations

Migrations are written with Alembic in `db/migrations`. Every migration must be
reversible: write the downgrade too, and test both with `make migrate-roundtrip`.
Large tables (orders, events) are never altered in one transaction: add the column
nullable, backfill in batches of 10,000 with the `backfill` command, then add the
constraint in a later release. Migrations run before the new code is deployed.
""",
        """# Database migrations

We write migrations with Alembic, in `db/migrations`. Each one has to be reversible, so
write its downgrade as well and test both directions with `make migrate-roundtrip`. Never
alter a large table (orders, events) in a single transaction: first add the column as
nullable, then backfill it in batches of 10,000 using the `backfill` command, and add
the constraint in a later release. Migrations are run before the new code is deployed.
""",
    ),
    (
        """# Logging

Use the structured logger from `app.log`, never print. Every log line carries the
request id (middleware sets it) and the user id when known. Levels: debug for local
detail, info for business events (order placed, refund issued), warning for things an
operator may want to look at, error only when a human must act. Logs go to Loki;
retention is 30 days. Do not log card numbers, tokens or email addresses.
""",
        """# Logging

Always log with the structured logger in `app.log`; never use print. The middleware
sets a request id that every log line carries, plus the user id when we know it. Use
debug for local detail, info for business events such as an order placed or a refund
issued, warning for something an operator may want to check, and error only when a
human has to act. Logs are shipped to Loki and kept for 30 days. Never log card
numbers, tokens or email addresses.
""",
    ),
    (
        """# API rate limits

Public API keys get 600 requests per minute, partner keys 6,000. The limiter is a
sliding window in Redis implemented in `api/limits.py`; the window is 60 seconds in
buckets of 5. Responses carry `X-RateLimit-Remaining` and, when limited, status 429 with
`Retry-After`. Internal services bypass the limiter with the `internal` scope on their
token. Limits per customer can be raised in the admin panel under Plans.
""",
        """# API rate limits

Public API keys are limited to 600 requests a minute and partner keys to 6,000. The
limiter, in `api/limits.py`, is a sliding window kept in Redis: 60 seconds split into
buckets of 5. Every response has `X-RateLimit-Remaining`; a limited one gets status 429
and `Retry-After`. Internal services skip the limiter thanks to the `internal` scope on
their token. A customer's limits can be raised in the admin panel, under Plans.
""",
    ),
]
GENERIC: list[tuple[str, str]] = [
    (
        """# Overview

The billing service owns invoices, payments and refunds. It is a Django app deployed
as two processes: the API and the retry worker. Its database is the `billing` schema
on the main Postgres cluster, and it talks to Stripe through `billing/stripe_client.py`.
Other services never write to its tables; they call its API or listen to its events.
""",
        """# Overview

The search service indexes products and answers the storefront's queries. It runs
OpenSearch with one index per locale, rebuilt nightly from the catalog export. Queries
go through `search/api.py`, which adds the user's permissions as a filter. Synonyms are
maintained by the merchandising team in `search/synonyms.txt` and loaded on deploy.
""",
    ),
    (
        """# Notes

The staging cluster is reset every Sunday at 02:00 UTC; anything stored there is lost.
Use the `seed-staging` job to load the demo catalog again after a reset. Access is
granted by the platform team through the `staging-users` group in Okta.
""",
        """# Notes

Our React components use CSS modules, one file per component, named like the component.
Global styles are limited to `web/src/styles/base.css`. Colours and spacing come from the
design tokens in `web/src/tokens.ts`; never hard-code a hex value in a component.
""",
    ),
    (
        """# Summary

The checkout incident of March was caused by a connection pool exhausted by a slow
query on the orders table. The query was fixed with an index on `orders.customer_id`,
and the pool size was raised from 20 to 40 connections per process.
""",
        """# Summary

The mobile app release 4.2 moved the cart to a bottom sheet and added Apple Pay. The
crash rate stayed under 0.3 percent in the first week. Android got the same changes in
4.2.1 after the Play Store review asked for a new privacy label.
""",
    ),
    (
        """# Context

We need a message queue for order events because the current polling of the orders table
costs 15 percent of the database's CPU. The volume is about 200 events a second at peak,
and consumers must be able to replay the last seven days.
""",
        """# Context

Designers hand off screens in Figma with the components from the shared library. The
web team builds them with the design tokens and reviews the result with the designer in
a short call before the pull request is merged.
""",
    ),
    (
        """# TODO

- Move the retry schedule from settings to the database so support can change it.
- Add a metric for the number of charges retried per hour.
- Remove the legacy `charge_v1` endpoint once the mobile apps stop calling it.
- Write the runbook for a Stripe outage.
""",
        """# TODO

- Upgrade the search cluster to OpenSearch 2.11 before the end of the quarter.
- Add the German synonyms file from the merchandising team.
- Cache the facet counts for the category pages.
- Remove the unused `legacy_search` index and its nightly job.
""",
    ),
    (
        """# Setup

Install Docker Desktop and give it at least 8 GB of memory. Run `make up` to start
Postgres, Redis and the mail catcher, then `make migrate` and `make seed`. The app is
served on port 8000 and the mail catcher's inbox on port 8025.
""",
        """# Setup

The analytics notebooks need Python 3.11 and the packages in `analytics/requirements.txt`.
Ask the data team for read access to the warehouse, then copy `analytics/.env.example`
to `.env` and fill in the token. Notebooks must not be committed with their outputs.
""",
    ),
    (
        """# Deployment checklist

1. Run `make check` locally; CI runs the same target.
2. Bump the version in `web/package.json` and add the changelog entry.
3. Merge to main; the web workflow builds the static bundle.
4. The bundle is uploaded to the CDN bucket `web-prod` and the cache is purged.
5. Watch the Sentry release page for new errors for 15 minutes.
""",
        """# Deployment checklist

1. Run the Fastlane lane `beta` to build the iOS app and upload it to TestFlight.
2. Ask QA to run the smoke test plan on the two oldest supported devices.
3. Submit the build for review with the release notes from the product team.
4. Release in phases over seven days; pause the rollout if the crash rate rises.
""",
    ),
    (
        """# Architecture

The storefront is a Next.js app rendered on the server. It reads the catalog from the
catalog service's GraphQL API and the cart from the cart service. Sessions are kept in
Redis. Static assets are served from the CDN, and images are resized on the fly.
""",
        """# Architecture

The data pipeline loads events from Kafka into the warehouse every five minutes with
a Flink job. dbt models turn the raw events into the reporting tables, which the
Metabase dashboards read. Backfills run as Airflow jobs on the same cluster.
""",
    ),
]


def _memo(text: str, number: int) -> Memo:
    return Memo.of(f"/m/note_{number}.md", f"note_{number}", False, text)


def _pairs(pairs: list[tuple[str, str]]) -> list[tuple[Memo, Memo]]:
    return [(_memo(a, 2 * i), _memo(b, 2 * i + 1)) for i, (a, b) in enumerate(pairs)]


def test_heading_key_normalises_as_names_and_skips_code() -> None:
    assert heading_key("# Payment retry policy\n\ntext\n") == heading_key(
        "intro\n\n## Payment Retry Policies ##\n"
    )
    assert heading_key("# Overview\n") == "overview"
    assert heading_key("```\n# not a heading\n```\n\n# Real one\n") == heading_key("# Real one")
    assert heading_key("No heading at all.\n") == ""
    assert heading_key("#hashtag, not a heading\n") == ""


def test_the_threshold_separates_paraphrases_from_unrelated_memories_under_one_heading() -> None:
    paraphrased = [jaccard_of(a.word_set, b.word_set) for a, b in _pairs(PARAPHRASES)]
    unrelated = [jaccard_of(a.word_set, b.word_set) for a, b in _pairs(GENERIC)]
    assert round(min(paraphrased)) == 58 and round(max(paraphrased)) == 78
    assert round(max(unrelated)) == 17
    assert max(unrelated) < TITLE_THRESHOLD < min(paraphrased)
    # The body rule alone misses every paraphrase: what this rule is for.
    shingled = [jaccard(a.shingles, b.shingles) for a, b in _pairs(PARAPHRASES)]
    assert max(shingled) < BODY_THRESHOLD


def test_a_paraphrase_under_the_same_heading_is_a_near_duplicate() -> None:
    for a, b in _pairs(PARAPHRASES):
        verdict = near_duplicate(a, b)
        assert verdict is not None and verdict.reason == "title", a.text[:30]
        assert verdict.score >= TITLE_THRESHOLD


def test_unrelated_memories_under_a_generic_heading_are_not() -> None:
    for a, b in _pairs(GENERIC):
        assert a.title == b.title != ""
        assert near_duplicate(a, b) is None, a.text[:30]


def test_a_paraphrase_under_another_heading_or_too_short_is_not() -> None:
    original, paraphrase = PARAPHRASES[0]
    retitled = paraphrase.replace("# Payment retry policy", "# How failed charges are retried")
    assert near_duplicate(_memo(original, 1), _memo(retitled, 2)) is None
    short = "# Payment retry policy\n\nRetry failed charges after 1, 6, 24 and 72 hours.\n"
    assert near_duplicate(_memo(short, 1), _memo(short.replace("Retry", "We retry"), 2)) is None


def test_the_heading_is_a_key_only_of_bodies_long_enough_and_a_common_one_proposes_nothing() -> (
    None
):
    original = PARAPHRASES[0][0]
    words = _memo(original, 1).words
    titled = keys("note", False, words, heading_key(original))
    assert [k for k in titled if k & 3 == TITLE_KEY] != []
    assert [k for k in keys("note", False, "too few words", "overview") if k & 3 == TITLE_KEY] == []
    assert bucket_limit(next(k for k in titled if k & 3 == TITLE_KEY)) == BUCKET_LIMIT


def _store_with_pairs(ws: Workspace) -> Store:
    """A store holding the first paraphrase's original and two unrelated `# Overview` notes."""
    store = ws.store(global_enabled=False)
    ws.write(ws.primary / "payments" / "retry_policy.md", PARAPHRASES[0][0])
    ws.write(ws.primary / "billing_overview.md", GENERIC[0][0])
    ws.write(ws.primary / "search_overview.md", GENERIC[0][1])
    return store


def test_check_reports_a_paraphrase_under_one_heading(ws: Workspace) -> None:
    store = _store_with_pairs(ws)
    ws.write(ws.primary / "charge_retries.md", PARAPHRASES[0][1])
    found = {
        Path(d.path).name: (d.data["others"], d.data["reason"])
        for d in check_store(store)
        if d.code == "near-duplicate"
    }
    assert found == {
        "charge_retries.md": (["payments/retry_policy"], "title"),
        "retry_policy.md": (["charge_retries"], "title"),
    }
    message = next(d.message for d in check_store(store) if d.code == "near-duplicate")
    assert "the same heading" in message and "of their words in common" in message


@pytest.mark.parametrize("indexed", [True, False])
def test_a_memory_just_written_is_compared_by_heading(
    ws: Workspace, tmp_path: Path, indexed: bool
) -> None:
    if indexed and not fts5_available():
        pytest.skip("no FTS5 in this SQLite")
    plain = _store_with_pairs(ws)
    index = SearchIndex(plain.config, str(tmp_path / "search.db"), live=False) if indexed else None
    store = Store(plain.config, index)
    written = ws.write(ws.primary / "charge_retries.md", PARAPHRASES[0][1])
    found = near_duplicate_diagnostics(store, str(written), "charge_retries", PARAPHRASES[0][1])
    assert [(d.data["others"], d.data["reason"]) for d in found] == [
        (["payments/retry_policy"], "title")
    ]
    # A third `# Overview` about something else: compared with the other two, not flagged.
    text = GENERIC[1][0].replace("# Notes", "# Overview")
    other = ws.write(ws.primary / "staging_overview.md", text)
    assert near_duplicate_diagnostics(store, str(other), "staging_overview", text) == []
    if index is not None:
        index.close()
