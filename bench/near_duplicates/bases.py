"""Realistic memory bodies, as agents write them, that the labelled pairs start from."""

RETRY = """# Payment retry policy

Failed card charges are retried by `billing/retry_worker.py`, not by the API handler.
The worker reads `payments.retry_schedule` from settings: 1 hour, 6 hours, 24 hours,
then 72 hours. After the fourth failure the subscription moves to `past_due` and the
customer gets the dunning email. Never retry a charge that failed with `card_declined`
and reason `fraudulent`: Stripe flags the account. Idempotency keys are
`charge-{invoice_id}-{attempt}` so a worker restart cannot charge twice.
"""

AUTH = """# Auth flow

Login goes through `/api/session` which sets an HttpOnly cookie `sid` (14 days, rolling).
The SPA never sees the token. Refresh is implicit: every request within the last
24 hours of the cookie's life extends it. OAuth (Google, GitHub) lands on
`/oauth/callback`, which creates the user on first login and links by verified email
otherwise. Tests for the flow live in `tests/auth/test_session.py`; they need Redis
running (`docker compose up redis`).
"""

DEPLOY = """# Deployment checklist

1. Run `make check` locally; CI runs the same target.
2. Bump the version in `pyproject.toml` and add the changelog entry.
3. Tag `vX.Y.Z` on main; the release workflow builds the wheel and the image.
4. Staging deploys automatically from the tag; wait for the smoke tests (about 8 minutes).
5. Promote to production from the Actions tab with the `promote` workflow.
6. Watch the error rate dashboard for 15 minutes; roll back with `promote --previous`.
"""

TESTING = """# Testing conventions

Unit tests sit next to the code in `tests/unit`, one file per module. They never touch
the network or the real database: use the `tmp_db` fixture, which creates a SQLite file
per test. End-to-end tests in `tests/e2e` start the real server on a random port and are
marked `slow`; run them with `pytest -m slow`. Snapshots are updated with
`pytest --snapshot-update` and must be reviewed in the diff before committing.
"""

CACHE = """# Caching layer

Product pages are cached in Redis for 5 minutes under `page:{slug}:{locale}`. The cache
is invalidated by the `product_updated` event, which the catalog service publishes after
each write. Search results are not cached: they depend on the user's permissions. If
Redis is down the site serves from the database directly and logs a warning once per
minute; nothing fails. The hit rate is on the Grafana board "Storefront cache".
"""

DB_MIGRATIONS = """# Database migrations

Migrations are written with Alembic in `db/migrations`. Every migration must be
reversible: write the downgrade too, and test both with `make migrate-roundtrip`.
Large tables (orders, events) are never altered in one transaction: add the column
nullable, backfill in batches of 10,000 with the `backfill` command, then add the
constraint in a later release. Migrations run before the new code is deployed.
"""

LOGGING = """# Logging

Use the structured logger from `app.log`, never print. Every log line carries the
request id (middleware sets it) and the user id when known. Levels: debug for local
detail, info for business events (order placed, refund issued), warning for things an
operator may want to look at, error only when a human must act. Logs go to Loki;
retention is 30 days. Do not log card numbers, tokens or email addresses.
"""

FRONTEND_STATE = """# Frontend state management

The web app keeps server data in TanStack Query and only UI state in Zustand stores
(`web/src/stores`). Do not copy query results into a store: invalidate the query
instead. Mutations call `queryClient.invalidateQueries` with the narrowest key.
Forms use react-hook-form with zod schemas shared with the API client in
`web/src/api/schemas.ts`.
"""

ONBOARDING = """# Onboarding a new developer

Clone the repository and run `make bootstrap`: it installs Python 3.12 with uv, Node 20
with fnm, and the pre-commit hooks. Ask in #platform for access to the staging
cluster and to the Sentry project. The seed data for local development is loaded with
`make seed`; the admin login is `admin@example.test` with the password from
`.env.example`. Read the architecture overview before the first pull request.
"""

RATE_LIMIT = """# API rate limits

Public API keys get 600 requests per minute, partner keys 6,000. The limiter is a
sliding window in Redis implemented in `api/limits.py`; the window is 60 seconds in
buckets of 5. Responses carry `X-RateLimit-Remaining` and, when limited, status 429 with
`Retry-After`. Internal services bypass the limiter with the `internal` scope on their
token. Limits per customer can be raised in the admin panel under Plans.
"""

ADR_TEMPLATE = """# ADR {number}: {title}

## Status
Accepted

## Context
{context}

## Decision
{decision}

## Consequences
{consequences}
"""

INCIDENT_TEMPLATE = """# Incident {date}: {title}

## Summary
{summary}

## Timeline
- {start}: alert fired
- {detected}: on-call acknowledged
- {end}: resolved

## Root cause
{cause}

## Follow-ups
{followups}
"""
