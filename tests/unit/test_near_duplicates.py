"""`near-duplicate` (SPEC 3.2): real files, near-duplicates found and related notes left alone."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from store_helpers import Workspace

from memory_ls.core import Store, check_store
from memory_ls.core.operations.duplicates import near_duplicate_diagnostics
from memory_ls.core.rules.similarity import name_key
from memory_ls.core.services.search import SearchIndex, fts5_available

RETRY = """# Payment retry policy

Failed card charges are retried by `billing/retry_worker.py`, not by the API handler.
The worker reads `payments.retry_schedule` from settings: 1 hour, 6 hours, 24 hours,
then 72 hours. After the fourth failure the subscription moves to `past_due` and the
customer gets the dunning email. Idempotency keys are `charge-{invoice_id}-{attempt}`.
"""

STAGING = (
    "# Staging database\n\nThe staging database is PostgreSQL 16 on `db-staging.internal`, "
    "with 2 replicas and nightly snapshots kept 7 days. Connect through the bastion "
    "`bastion-staging` with your SSO user; the read-only role is `readonly_staging`.\n"
)
PRODUCTION = (
    "# Production database\n\nThe production database is PostgreSQL 16 on `db-prod.internal`, "
    "with 6 replicas and hourly snapshots kept 35 days. Connect through the bastion "
    "`bastion-prod` with your SSO user; the read-only role is `readonly_prod`.\n"
)


def near(diagnostics: list) -> dict[str, list[str]]:  # type: ignore[type-arg]
    """File name -> the memories its near-duplicate diagnostic names."""
    return {
        Path(d.path).name: list(d.data["others"]) for d in diagnostics if d.code == "near-duplicate"
    }


def test_name_key_sets_aside_case_separators_plurals_and_filler() -> None:
    assert name_key("payments/retry_policy") == name_key("payments/retry_policies")
    assert name_key("auth_flow") == name_key("AUTH_FLOW_notes") == name_key("authFlow")
    assert name_key("plan_v1") != name_key("plan_v2")
    assert name_key("FEATURE_auth") != name_key("FEATURE_oauth")


def test_check_reports_both_memories_of_a_near_duplicate_pair(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "payments" / "retry_policy.md", RETRY)
    # Copied, and edited in three places.
    edited = RETRY.replace("1 hour", "2 hours").replace("fourth", "fifth").replace("Failed", "All")
    ws.write(ws.primary / "billing_retries.md", edited)
    # Same subject, plural name, other body.
    ws.write(ws.primary / "payments" / "retry_policies.md", "# Retries\n\nSee the worker.\n")
    found = near(check_store(store))
    assert found == {
        "retry_policy.md": ["billing_retries", "payments/retry_policies"],
        "billing_retries.md": ["payments/retry_policy"],
        "retry_policies.md": ["payments/retry_policy"],
    }
    diagnostic = next(d for d in check_store(store) if d.path.endswith("billing_retries.md"))
    assert diagnostic.severity == "information"
    assert "Merge them" in diagnostic.message and "[[payments/retry_policy]]" in diagnostic.message


def test_related_notes_templates_short_notes_and_linked_copies_are_not_near_duplicates(
    ws: Workspace,
) -> None:
    store = ws.store()
    ws.write(ws.primary / "staging_database.md", STAGING)
    ws.write(ws.primary / "production_database.md", PRODUCTION)
    ws.write(ws.primary / "plan_v1.md", "# Plan\n\nShip it.\n")
    ws.write(ws.primary / "plan_v2.md", "# Plan\n\nShip it.\n")  # short: alike by nature
    ws.write(ws.primary / "retry_policy.md", RETRY)
    # A copy that says what it replaces is related on purpose.
    ws.write(ws.primary / "retry_policy_2025.md", "---\nsupersedes: retry_policy\n---\n" + RETRY)
    ws.write(ws.primary / "retry_summary.md", "Summary of [[retry_policy]].\n\n" + RETRY)
    # Linking silences the linked pair only: these two copies do not link each other.
    assert near(check_store(store)) == {
        "retry_policy_2025.md": ["retry_summary"],
        "retry_summary.md": ["retry_policy_2025"],
    }


def test_a_project_and_a_global_memory_of_one_name_are_not_near_duplicates_by_name(
    ws: Workspace,
) -> None:
    store = ws.store()
    ws.write(ws.primary / "tips.md", "# Tips\n\nUse pnpm.\n")
    ws.write(ws.global_dir / "Tips_notes.md", "# Tips\n\nUse pnpm everywhere.\n")
    ws.write(ws.global_dir / "payment_retries.md", RETRY)  # but a copied body is
    ws.write(ws.primary / "retry_policy.md", RETRY)
    assert near(check_store(store)) == {
        "payment_retries.md": ["retry_policy"],
        "retry_policy.md": ["global/payment_retries"],
    }


def test_severity_off_turns_the_pass_off(ws: Workspace) -> None:
    store = ws.store(diagnostics={"near-duplicate": "off"})
    ws.write(ws.primary / "a_notes.md", RETRY)
    ws.write(ws.primary / "a.md", RETRY)
    assert near(check_store(store)) == {}
    path = str(ws.primary / "a.md")
    assert near_duplicate_diagnostics(store, path, "a", RETRY) == []


def test_check_of_one_file_compares_it_with_the_whole_store(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "retry_policy.md", RETRY)
    copy = ws.write(ws.primary / "retries_copy.md", RETRY)
    assert near(check_store(store, [str(copy)])) == {"retries_copy.md": ["retry_policy"]}


@pytest.mark.parametrize("indexed", [True, False])
def test_near_duplicate_diagnostics_of_a_memory_just_written(
    ws: Workspace, tmp_path: Path, indexed: bool
) -> None:
    if indexed and not fts5_available():
        pytest.skip("no FTS5 in this SQLite")
    plain = ws.store()
    index = SearchIndex(plain.config, str(tmp_path / "search.db"), live=False) if indexed else None
    store = Store(plain.config, index)
    ws.write(ws.primary / "retry_policy.md", RETRY)
    ws.write(ws.primary / "staging_database.md", STAGING)
    for number in range(30):  # other memories sharing a template's phrases
        ws.write(ws.primary / f"service_{number}.md", f"# Service {number}\n\n" + STAGING[19:])
    written = ws.write(ws.primary / "payments_retry.md", RETRY.replace("fourth", "fifth"))
    found = near_duplicate_diagnostics(store, str(written), "payments_retry", RETRY)
    assert [(d.code, d.data["others"]) for d in found] == [("near-duplicate", ["retry_policy"])]
    prod = ws.write(ws.primary / "production_database.md", PRODUCTION)
    assert near_duplicate_diagnostics(store, str(prod), "production_database", PRODUCTION) == []
    if index is not None:
        index.close()


def test_near_duplicate_diagnostics_is_fast_with_an_index(ws: Workspace, tmp_path: Path) -> None:
    if not fts5_available():
        pytest.skip("no FTS5 in this SQLite")
    plain = ws.store()
    for number in range(500):
        ws.write(ws.primary / f"topic_{number}.md", f"# Topic {number}\n\n" + RETRY[25:] * 2)
    index = SearchIndex(plain.config, str(tmp_path / "search.db"), live=False)
    store = Store(plain.config, index)
    path = str(ws.write(ws.primary / "new_note.md", RETRY))
    near_duplicate_diagnostics(store, path, "new_note", RETRY)  # builds the index
    started = time.perf_counter()
    found = near_duplicate_diagnostics(store, path, "new_note", RETRY)
    elapsed = time.perf_counter() - started
    # Every topic shares the copied text: a bucket that large is a template, no candidate.
    assert found == [] and elapsed < 1.0
    index.close()
