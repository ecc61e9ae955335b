"""Search (case-insensitive, tags, line numbers, limit), tag counts and list filters."""

from __future__ import annotations

import pytest
from store_helpers import Workspace

from memory_ls.core import Store


@pytest.fixture
def store(ws: Workspace) -> Store:
    store = ws.store(["team/feature"])
    store.save(
        "auth/login", "# Login\nThe LOGIN flow uses tokens.\nnothing here\n", tags=["auth", "web"]
    )
    store.save("FEATURE_tokens", "Refresh tokens\nlogin again after expiry\n", tags=["auth"])
    store.save("plain", "no frontmatter, but Login is mentioned\n")
    store.save("global/personal", "my login tricks\n", tags=["web", "me"])
    store.save("unrelated", "nothing to see\n", tags=["misc"])
    return store


def _file_line(ws: Workspace, path: str, text: str) -> int:
    lines = (ws.tmp / path).read_text().split("\n")
    return next(i for i, line in enumerate(lines, start=1) if text in line)


def test_search_is_case_insensitive_with_file_line_numbers(ws: Workspace, store: Store) -> None:
    results = store.search("lOgIn")["results"]
    hits = {(r["name"], r["line"], r["text"]) for r in results}
    login_path = str(ws.primary / "auth" / "login.md")
    assert ("auth/login", _file_line(ws, login_path, "# Login"), "# Login") in hits
    assert (
        "auth/login",
        _file_line(ws, login_path, "The LOGIN flow"),
        "The LOGIN flow uses tokens.",
    ) in hits
    assert ("plain", 1, "no frontmatter, but Login is mentioned") in hits
    assert {r["name"] for r in results} == {
        "auth/login",
        "FEATURE_tokens",
        "plain",
        "global/personal",
    }
    # Line numbers count the frontmatter: the body of a tagged memory starts after it.
    assert min(r["line"] for r in results if r["name"] == "auth/login") > 5
    assert all(r["path"].endswith(".md") for r in results)
    scores = [r["score"] for r in results]
    assert scores == sorted(scores, reverse=True), "best first"
    assert results[0]["name"] == "auth/login", "a name match ranks first"


def test_search_tags_must_all_match(store: Store) -> None:
    assert {r["name"] for r in store.search("login", tags=["auth"])["results"]} == {
        "auth/login",
        "FEATURE_tokens",
    }
    assert {r["name"] for r in store.search("login", tags=["auth", "web"])["results"]} == {
        "auth/login"
    }
    assert {r["name"] for r in store.search("login", tags=["web"])["results"]} == {
        "auth/login",
        "global/personal",
    }
    assert store.search("login", tags=["auth", "me"])["results"] == []
    assert store.search("login", tags=["nope"])["results"] == []


def test_search_scope_and_limit(store: Store) -> None:
    assert {r["name"] for r in store.search("login", scope="global")["results"]} == {
        "global/personal"
    }
    project = {r["name"] for r in store.search("login", scope="project")["results"]}
    assert "global/personal" not in project and "personal" not in project
    everything = store.search("login")["results"]
    assert len(everything) > 2
    limited = store.search("login", limit=2)["results"]
    assert limited == everything[:2]
    assert len(store.search("login", limit=1)["results"]) == 1


def test_search_finds_names(store: Store) -> None:
    results = store.search("feature_TOKENS")["results"]
    assert results and results[0]["name"] == "FEATURE_tokens"
    assert store.search("zebra quux")["results"] == []


def test_tag_counts(store: Store) -> None:
    assert store.tags() == {
        "tags": [
            {"tag": "auth", "count": 2},
            {"tag": "web", "count": 2},
            {"tag": "me", "count": 1},
            {"tag": "misc", "count": 1},
        ]
    }
    assert store.tags(scope="global") == {
        "tags": [{"tag": "me", "count": 1}, {"tag": "web", "count": 1}]
    }
    assert [t["tag"] for t in store.tags(scope="project")["tags"]] == ["auth", "misc", "web"]


def test_list_filters(store: Store) -> None:
    def names(**kwargs: object) -> list[str]:
        return [m["name"] for m in store.list_memories(**kwargs)["memories"]]

    assert names() == ["FEATURE_tokens", "auth/login", "global/personal", "plain", "unrelated"]
    assert names(tags=["auth"]) == ["FEATURE_tokens", "auth/login"]
    assert names(tags=["auth", "web"]) == ["auth/login"]
    assert names(prefix="FEATURE_") == ["FEATURE_tokens"]
    assert names(scope="global") == ["global/personal"]
    assert names(scope="all", tags=["web"]) == ["auth/login", "global/personal"]
    assert names(prefix="global/") == ["global/personal"]  # prefixes match Serena's names
    assert names(prefix="pers") == []
    memory = store.list_memories(prefix="auth/")["memories"][0]
    assert set(memory) == {
        "name",
        "path",
        "scope",
        "folder",
        "tags",
        "updatedAt",
        "readOnly",
        "validName",
        "shadows",
        "title",
        "supersededBy",
    }
    assert memory["tags"] == ["auth", "web"]
    assert memory["updatedAt"] is not None
