# ruff: noqa: E501  (labelled data: one memory text a line reads best)
"""Labelled pairs of memories: near-duplicates, and pairs that are merely related.

Each pair is (kind, duplicate, (name, text), (name, text)). Positives are what agents
do: the same memory written again under a slightly different name, copied with a few
words changed, reformatted, given frontmatter. Negatives are what a store is full of:
notes on the same topic, a template filled differently, v1/v2 notes, numbered steps,
short one-liners, names one letter apart that mean different things.
"""

from __future__ import annotations

from bases import (
    ADR_TEMPLATE,
    AUTH,
    CACHE,
    DB_MIGRATIONS,
    DEPLOY,
    FRONTEND_STATE,
    INCIDENT_TEMPLATE,
    LOGGING,
    ONBOARDING,
    RATE_LIMIT,
    RETRY,
    TESTING,
)

Memory = tuple[str, str]
Pair = tuple[str, bool, Memory, Memory]

FRONTMATTER = (
    "---\ntags: [{tags}]\ncreated_at: 2025-10-01T09:00:00Z\nupdated_at: 2025-10-08T03:07:11Z\n---\n"
)


def edit(text: str, *changes: tuple[str, str]) -> str:
    """The text with each (old, new) replaced once; fails loudly on a stale label."""
    for old, new in changes:
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


def adr(number: int, title: str, context: str, decision: str, consequences: str) -> str:
    return ADR_TEMPLATE.format(
        number=number, title=title, context=context, decision=decision, consequences=consequences
    )


def incident(
    date: str, title: str, summary: str, cause: str, followups: str, hours: tuple[str, str, str]
) -> str:
    start, detected, end = hours
    return INCIDENT_TEMPLATE.format(
        date=date,
        title=title,
        summary=summary,
        cause=cause,
        followups=followups,
        start=start,
        detected=detected,
        end=end,
    )


POSITIVES: list[Pair] = [
    # The same subject under a plural, another case, a filler word, camelCase, another order.
    (
        "name: plural",
        True,
        ("payments/retry_policy", RETRY),
        ("payments/retry_policies", RETRY.replace("1 hour, 6 hours", "1h, 6h")),
    ),
    (
        "name: plural, new body",
        True,
        ("payments/retry_policy", RETRY),
        (
            "payments/retry_policies",
            "# Retry policies\n\nRetries are done by the retry worker with the schedule from settings; card_declined with reason fraudulent is never retried.\n",
        ),
    ),
    ("name: caps and filler, same body", True, ("auth_flow", AUTH), ("AUTH_FLOW_notes", AUTH)),
    (
        "name: camelCase",
        True,
        ("deploymentChecklist", DEPLOY),
        ("deployment_checklist", edit(DEPLOY, ("about 8 minutes", "about ten minutes"))),
    ),
    (
        "name: word order",
        True,
        ("conventions_testing", TESTING),
        (
            "testing_conventions",
            TESTING + "\nFlaky tests are quarantined with `@pytest.mark.flaky`.\n",
        ),
    ),
    (
        "name: notes suffix",
        True,
        ("caching_layer", CACHE),
        (
            "caching_layer_notes",
            "# Caching\n\nRedis, 5 minutes, page:{slug}:{locale}; invalidated on product_updated.\n",
        ),
    ),
    ("name: dash vs underscore", True, ("rate-limits", RATE_LIMIT), ("rate_limits", RATE_LIMIT)),
    (
        "name: memory suffix, topic",
        True,
        ("frontend/state_management", FRONTEND_STATE),
        ("frontend/state_management_memory", FRONTEND_STATE.replace("Zustand", "zustand")),
    ),
    # Copies under another name, edited in a few places.
    ("body: copy, other name", True, ("auth_flow", AUTH), ("login_session_cookie", AUTH)),
    (
        "body: three words changed",
        True,
        ("deployment_checklist", DEPLOY),
        (
            "release_steps",
            edit(
                DEPLOY,
                ("about 8 minutes", "about 12 minutes"),
                ("15 minutes", "30 minutes"),
                ("Actions tab", "GitHub Actions page"),
            ),
        ),
    ),
    (
        "body: sentence added",
        True,
        ("db_migrations", DB_MIGRATIONS),
        (
            "alembic_rules",
            DB_MIGRATIONS + "Never edit a migration that has been merged; write a new one.\n",
        ),
    ),
    (
        "body: sentence removed",
        True,
        ("logging_rules", LOGGING),
        ("how_we_log", edit(LOGGING, ("Logs go to Loki;\nretention is 30 days. ", ""))),
    ),
    (
        "body: frontmatter added",
        True,
        ("onboarding", ONBOARDING),
        ("new_dev_setup", FRONTMATTER.format(tags="onboarding, setup") + ONBOARDING),
    ),
    (
        "body: title renamed",
        True,
        ("caching_layer", CACHE),
        ("redis_cache", edit(CACHE, ("# Caching layer", "# Redis cache"))),
    ),
    (
        "body: reworded in places",
        True,
        ("api_rate_limits", RATE_LIMIT),
        (
            "limits_for_api_keys",
            edit(
                RATE_LIMIT,
                ("Public API keys get", "Public keys get"),
                ("can be raised", "can be changed"),
                ("sliding window in Redis", "sliding window kept in Redis"),
            ),
        ),
    ),
    (
        "body: list re-marked",
        True,
        ("deployment_checklist", DEPLOY),
        (
            "ship_it",
            "\n".join(
                ("- " + line[3:]) if line[:1].isdigit() else line for line in DEPLOY.split("\n")
            ),
        ),
    ),
    (
        "body: global copy of a project note",
        True,
        ("testing_conventions", TESTING),
        ("global/pytest_habits", edit(TESTING, ("marked `slow`", "marked slow"))),
    ),
    (
        "body: a typo fixed and a path changed",
        True,
        ("frontend_state", FRONTEND_STATE),
        (
            "web_state",
            edit(
                FRONTEND_STATE,
                ("web/src/stores", "web/src/state"),
                ("narrowest key", "narrowest query key"),
            ),
        ),
    ),
    (
        "name: typo and body copy",
        True,
        ("deployment_checklist", DEPLOY),
        ("deploymnet_checklist", DEPLOY),
    ),
    (
        "body: AI Coder style copy",
        True,
        ("DB_migrations", DB_MIGRATIONS),
        (
            "db_migration_policy",
            edit(
                DB_MIGRATIONS,
                ("# Database migrations", "# Migration policy"),
                ("in a later release", "in the next release"),
            ),
        ),
    ),
    (
        "body: copy with a paragraph appended",
        True,
        ("caching_layer", CACHE),
        (
            "storefront_cache",
            CACHE
            + "\nWhen the catalog service is deployed it replays the last hour of `product_updated` events, so a deploy briefly invalidates more than usual; the hit rate drops for a few minutes and recovers on its own. Do not page anyone for it.\n",
        ),
    ),
    (
        "body: copy, one sentence rewritten",
        True,
        ("onboarding", ONBOARDING),
        (
            "dev_onboarding_steps",
            edit(
                ONBOARDING,
                (
                    "Ask in #platform for access to the staging\ncluster and to the Sentry project.",
                    "Request staging cluster and Sentry access through the #platform channel.",
                ),
            ),
        ),
    ),
    (
        "body: copy updated with new numbers",
        True,
        ("api_rate_limits", RATE_LIMIT),
        (
            "rate_limiting",
            edit(
                RATE_LIMIT,
                (
                    "600 requests per minute, partner keys 6,000",
                    "1,000 requests per minute, partner keys 10,000",
                ),
                ("buckets of 5", "buckets of 10"),
            ),
        ),
    ),
]

NEGATIVES: list[Pair] = [
    # Fill-in-the-blanks notes: the same sentences, different facts.
    (
        "template: staging vs production database",
        False,
        (
            "staging_database",
            "# Staging database\n\nThe staging database is PostgreSQL 16 on `db-staging.internal`, with 2 replicas and nightly snapshots kept 7 days. Connect through the bastion `bastion-staging` with your SSO user; the read-only role is `readonly_staging`. Data is a masked copy of production refreshed every Monday.\n",
        ),
        (
            "production_database",
            "# Production database\n\nThe production database is PostgreSQL 16 on `db-prod.internal`, with 6 replicas and hourly snapshots kept 35 days. Connect through the bastion `bastion-prod` with your SSO user; the read-only role is `readonly_prod`. Data is the real customer data: access is logged and reviewed weekly.\n",
        ),
    ),
    (
        "template: two service cards",
        False,
        (
            "services/billing",
            "# Service: billing\n\n- Owner: team-payments\n- Language: Python 3.12, FastAPI\n- Repository: `services/billing`\n- On-call: payments rotation in PagerDuty\n- Dashboard: Grafana board Billing overview\n- Depends on: Stripe, Postgres, Redis\n- Runbook: see the deployment checklist and the retry policy\n",
        ),
        (
            "services/search",
            "# Service: search\n\n- Owner: team-discovery\n- Language: Go 1.22\n- Repository: `services/search`\n- On-call: discovery rotation in PagerDuty\n- Dashboard: Grafana board Search latency\n- Depends on: OpenSearch, Kafka\n- Runbook: see the reindex guide and the relevance notes\n",
        ),
    ),
    (
        "template: two weekly summaries",
        False,
        (
            "weekly/2025-w40",
            "# Week 40\n\n## Done\n- Shipped cursor pagination for orders\n- Fixed the flaky checkout test\n\n## Next\n- Backfill the invoices table\n- Review the caching layer\n\n## Risks\n- Stripe API version upgrade deadline in November\n",
        ),
        (
            "weekly/2025-w41",
            "# Week 41\n\n## Done\n- Backfilled the invoices table\n- Reviewed the caching layer\n\n## Next\n- Start the billing service split\n- Rotate the staging credentials\n\n## Risks\n- The billing split needs a second reviewer from payments\n",
        ),
    ),
    # Same topic, different content.
    (
        "related: login vs logout",
        False,
        ("auth/login_flow", AUTH),
        (
            "auth/logout_flow",
            "# Logout\n\nLogout calls `DELETE /api/session`, which drops the server-side session in Redis and clears the `sid` cookie. Other tabs notice on their next request (401) and redirect to the login page. Revoking all sessions of a user is in the admin panel.\n",
        ),
    ),
    (
        "related: two notes on payments",
        False,
        ("payments/retry_policy", RETRY),
        (
            "payments/refunds",
            "# Refunds\n\nRefunds are issued from the admin panel or by the support bot. Partial refunds need an amount; the refund is sent to Stripe and the invoice gets a credit note. A refund of a disputed charge is refused: the dispute flow handles it. Refunds over 500 EUR need a second approver.\n",
        ),
    ),
    (
        "related: cache vs rate limits (both Redis)",
        False,
        ("caching_layer", CACHE),
        ("api_rate_limits", RATE_LIMIT),
    ),
    (
        "related: testing vs deployment",
        False,
        ("testing_conventions", TESTING),
        ("deployment_checklist", DEPLOY),
    ),
    (
        "related: migrations vs logging",
        False,
        ("db_migrations", DB_MIGRATIONS),
        ("logging_rules", LOGGING),
    ),
    # A template filled differently.
    (
        "template: two ADRs",
        False,
        (
            "adr/0007_use_postgres",
            adr(
                7,
                "Use PostgreSQL",
                "We need transactions across orders and payments and the team knows SQL.",
                "Use PostgreSQL 16 on the managed service, one database per environment.",
                "We give up the document model; schema changes go through migrations.",
            ),
        ),
        (
            "adr/0008_use_redis_queues",
            adr(
                8,
                "Use Redis for queues",
                "Background jobs need retries and scheduling; we already run Redis.",
                "Use RQ on the existing Redis cluster, one queue per job family.",
                "Jobs are lost if Redis loses data; critical jobs are also logged to the database.",
            ),
        ),
    ),
    (
        "template: two ADRs, one word of title shared",
        False,
        (
            "adr/0010_api_versioning",
            adr(
                10,
                "API versioning",
                "Partners integrate against the API and cannot follow breaking changes quickly.",
                "Version the API in the path (/v1, /v2) and keep each version for 18 months.",
                "Two versions run side by side; the gateway routes by prefix.",
            ),
        ),
        (
            "adr/0011_api_pagination",
            adr(
                11,
                "API pagination",
                "Lists grow beyond what one response can carry and offsets get slow on large tables.",
                "Use cursor pagination with opaque cursors for every list endpoint.",
                "Clients cannot jump to a page number; exports use a separate endpoint.",
            ),
        ),
    ),
    (
        "template: two incident reports",
        False,
        (
            "incidents/2025-03-02_checkout_down",
            incident(
                "2025-03-02",
                "Checkout down",
                "Checkout returned 500 for 40 minutes after a deploy.",
                "A migration added a NOT NULL column without a default; old pods failed to insert orders.",
                "- Add a migration linter\n- Deploy migrations in two steps",
                ("14:02", "14:05", "14:42"),
            ),
        ),
        (
            "incidents/2025-04-17_search_slow",
            incident(
                "2025-04-17",
                "Search slow",
                "Search took 8 seconds at the 95th percentile for two hours.",
                "The index was rebuilt during peak hours by a cron job that ran in the wrong time zone.",
                "- Move the cron job to UTC\n- Alert on search latency",
                ("09:10", "09:30", "11:05"),
            ),
        ),
    ),
    # v1 and v2: the second rewrote the first.
    (
        "versions: plan v1 vs v2",
        False,
        (
            "migration_plan_v1",
            "# Migration plan v1\n\nMove the monolith's billing module to its own service in one step over a weekend: freeze writes on Friday, copy the tables, switch the DNS on Sunday and keep the old code paths for a week in case we need to go back.\n",
        ),
        (
            "migration_plan_v2",
            "# Migration plan v2\n\nThe weekend cut-over was rejected. Billing moves in three phases: first the service reads through the monolith's API, then it owns new invoices while old ones stay, and last the history is backfilled. Each phase ships behind a flag and can be turned off on its own.\n",
        ),
    ),
    (
        "versions: API notes v1 vs v2",
        False,
        (
            "api_v1_notes",
            "# API v1\n\nThe v1 API uses offset pagination and returns dates as Unix timestamps. Errors are plain strings in `error`. It is frozen: only security fixes. Partners still on it are listed in the partner sheet; the sunset date is June 2026.\n",
        ),
        (
            "api_v2_notes",
            "# API v2\n\nThe v2 API uses cursor pagination, ISO 8601 dates and problem+json errors with a `type` URI. New endpoints go here only. The client SDKs are generated from `openapi/v2.yaml` on each release.\n",
        ),
    ),
    # Numbered steps and names one letter apart.
    (
        "names: numbered steps",
        False,
        (
            "setup_step_1",
            "# Setup step 1\n\nInstall the toolchain: `make bootstrap` installs Python with uv and Node with fnm, then the pre-commit hooks run once over the repository to warm their caches.\n",
        ),
        (
            "setup_step_2",
            "# Setup step 2\n\nLoad the seed data with `make seed` and log in as the admin user; then create a personal API key in the settings page for the command-line client.\n",
        ),
    ),
    (
        "names: auth vs oauth",
        False,
        ("FEATURE_auth", AUTH),
        (
            "FEATURE_oauth",
            "# OAuth providers\n\nGoogle and GitHub are configured in `auth/providers.py`. Each needs a client id and secret from the secret store; callback URLs are registered per environment. Adding a provider means a new entry there and a button in the login page; scopes are kept minimal (email and profile).\n",
        ),
    ),
    (
        "names: cache vs caches dir note",
        False,
        (
            "cache_keys",
            "# Cache keys\n\nKeys are `kind:id:locale`. Never put user ids in a shared cache key; per-user data goes in the session cache with a 10 minute lifetime.\n",
        ),
        (
            "cache_warmup",
            "# Cache warm-up\n\nAfter a deploy the top 500 product pages are fetched by the `warm_cache` job so the first visitors do not hit a cold cache. The list comes from yesterday's analytics export.\n",
        ),
    ),
    (
        "names: same words, different subject",
        False,
        (
            "testing/frontend",
            "# Frontend tests\n\nComponent tests use Vitest and Testing Library; end-to-end tests use Playwright against the preview deployment. Visual snapshots are stored in the repo and reviewed like code.\n",
        ),
        (
            "frontend/testing_budget",
            "# Frontend performance budget\n\nThe main bundle stays under 250 kB gzipped; CI fails when it grows more than 5 percent in one pull request. Images are served as AVIF with WebP fallback.\n",
        ),
    ),
    # Short memories: alike by nature.
    (
        "short: one-liners",
        False,
        ("package_manager", "Use pnpm, not npm.\n"),
        ("node_version", "Use Node 20, not 18.\n"),
    ),
    (
        "short: two preferences",
        False,
        ("style_quotes", "# Quotes\n\nPrefer double quotes in Python.\n"),
        ("style_indent", "# Indent\n\nPrefer four spaces in Python.\n"),
    ),
    (
        "short: skeletons",
        False,
        ("todo_auth", "# todo_auth\n\n"),
        ("todo_billing", "# todo_billing\n\n"),
    ),
    # Generated-looking notes (as bench/run.py writes a store).
    (
        "templated: generated notes",
        False,
        (
            "auth_notes_000123",
            "# auth_notes_000123\n\nNotes about auth. See [[cache_notes_000017]] [[FEATURE_auth_000045]] [[global/personal_auth_000009]].\n",
        ),
        (
            "auth_notes_000124",
            "# auth_notes_000124\n\nNotes about auth. See [[cache_notes_000022]] [[FEATURE_auth_000061]] [[global/personal_auth_000019]].\n",
        ),
    ),
    # Related on purpose: one supersedes or links the other.
    (
        "linked: a copy that says what it replaces",
        False,
        ("deployment_checklist", DEPLOY),
        (
            "deployment_checklist_2025",
            "---\nsupersedes: deployment_checklist\n---\n"
            + edit(DEPLOY, ("about 8 minutes", "about 5 minutes")),
        ),
    ),
    (
        "related: same structure, other service",
        False,
        (
            "billing/deploy",
            "# Billing deploy\n\n1. Run `make check`.\n2. Tag `billing-vX.Y.Z`.\n3. The billing pipeline deploys to staging; run the invoice dry run there.\n4. Promote with `promote billing`.\n5. Watch the invoice error rate for an hour; invoices are generated at 02:00 UTC.\n",
        ),
        (
            "search/deploy",
            "# Search deploy\n\n1. Run `make check`.\n2. Tag `search-vX.Y.Z`.\n3. The search pipeline builds a new index in staging; compare relevance on the golden queries.\n4. Promote with `promote search`; the alias is switched after the index is warm.\n5. Keep the old index for a day to switch back.\n",
        ),
    ),
]

PAIRS: list[Pair] = POSITIVES + NEGATIVES
