"""The full-text index (core/services/search/): the query language, both ways of answering
(the index, and reading every memory) agreeing, staleness, rebuilds and a cache that
is corrupt, locked or cannot be written."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from store_helpers import Workspace

from memory_ls.core import Store
from memory_ls.core.rules.errors import InvalidArguments
from memory_ls.core.services import relevance
from memory_ls.core.services.index import MemoryIndex
from memory_ls.core.services.relevance import (
    ALL_WORDS,
    RELEVANCE,
    Part,
    ScanRanker,
    parse_query,
    rows_of,
)
from memory_ls.core.services.rough_ranking import RoughRanker
from memory_ls.core.services.search import SearchIndex, database, schema, search_index_path
from memory_ls.core.services.search import files as file_io
from memory_ls.core.services.search import index as lifecycle
from memory_ls.core.services.search import worker as workers
from memory_ls.core.storage.listing import ScanCache

Search = Callable[..., list[dict[str, Any]]]


def _store(ws: Workspace, **values: Any) -> Store:
    store = ws.store(["team/feature"], **values)
    store.save(
        "auth/login_flow",
        "# Login flow\nThe LOGIN flow uses tokens.\nnothing here\n",
        ["auth", "web"],
    )
    store.save("FEATURE_tokens", "Refresh tokens\nlogin again after expiry\n", ["auth"])
    store.save("plain", "no frontmatter, but sign-in is mentioned\nand the relogin button\n")
    store.save("global/personal", "my login tricks\nCafé au lait, naïve résumé\n", ["web", "me"])
    store.save("unrelated", "nothing to see\nauthor of the login page\n", ["misc"])
    return store


def _indexed(store: Store, *, live: bool = False) -> Store:
    return Store(store.config, SearchIndex(store.config, live=live))


def _searcher(store: Store, way: str, default_mode: str) -> Search:
    """Search through the index (proved to answer) or by reading every memory."""
    if way == "scan":
        return lambda query, **kw: store.search(query, **{"mode": default_mode, **kw})["results"]
    index = SearchIndex(store.config, live=False)
    indexed = Store(store.config, index)

    def through_index(query: str, **kw: Any) -> list[dict[str, Any]]:
        kw = {"mode": default_mode, **kw}
        limit = kw.get("limit") or 50
        found = index.search(
            parse_query(query, kw["mode"]), kw.get("tags") or [], kw.get("scope"), limit
        )
        assert found is not None, "the index must answer"
        results = indexed.search(query, **kw)["results"]
        assert results == rows_of(found.hits, limit)
        return results

    return through_index


@pytest.fixture(params=["index", "scan"])
def search(request: pytest.FixtureRequest, ws: Workspace) -> Search:
    """Strict (all words) search, through the index or by reading every memory."""
    return _searcher(_store(ws), request.param, ALL_WORDS)


@pytest.fixture(params=["index", "scan"])
def relevant(request: pytest.FixtureRequest, ws: Workspace) -> Search:
    """Relevance search (the default), through the index or by reading every memory."""
    return _searcher(_store(ws), request.param, RELEVANCE)


def _names(results: list[dict[str, Any]]) -> set[str]:
    return {r["name"] for r in results}


# ----- the query language ------------------------------------------------------------


def test_queries_parse_into_words_phrases_and_prefixes() -> None:
    query = parse_query('Auth "Login  Flow" tok* feature_Tokens résumé')
    assert query.parts == (
        Part(("auth",)),
        Part(("login", "flow")),
        Part(("tok",), prefix=True),
        Part(("feature", "tokens")),
        Part(("resume",), prefix=True),  # the last word, still being typed
    )
    assert parse_query("login ").parts == (Part(("login",)),), "a space ends the word"
    assert parse_query('"login flow"').parts == (Part(("login", "flow")),)
    assert parse_query('"login flow"*').parts == (Part(("login", "flow"), prefix=True),)
    assert parse_query("login login").parts == (Part(("login",)), Part(("login",), prefix=True))
    assert parse_query('"unclosed phrase').parts == (Part(("unclosed", "phrase")),)
    assert parse_query("auth/login").expression() == '"auth login" *'


@pytest.mark.parametrize("query", ["!!!", '""', "* - *"])
def test_a_query_without_words_is_refused(ws: Workspace, query: str) -> None:
    with pytest.raises(InvalidArguments, match="no word"):
        _store(ws).search(query)


# ----- what matches (both ways agree) --------------------------------------------------


def test_every_word_must_match_in_the_name_or_the_body(search: Search) -> None:
    assert _names(search("login tokens")) == {"auth/login_flow", "FEATURE_tokens"}
    # `flow` is only in auth/login_flow's name, `uses` only in its body.
    assert _names(search("flow uses")) == {"auth/login_flow"}
    assert search("login zebra") == []


def test_words_are_whole_words_and_the_last_one_a_prefix(search: Search) -> None:
    assert "plain" not in _names(search("login ")), "relogin is not login"
    assert _names(search("relog")) == {"plain"}
    assert _names(search("sign in")) == {"plain"}
    assert "unrelated" in _names(search("auth")), "the last word is a prefix: author"
    assert "unrelated" not in _names(search("auth ")), "a space ends it"
    assert _names(search("tok* refresh")) == {"FEATURE_tokens"}


def test_phrases_match_words_in_order(search: Search) -> None:
    assert _names(search('"login flow"')) == {"auth/login_flow"}
    assert _names(search('"flow login"')) == set()
    assert _names(search('"login again"')) == {"FEATURE_tokens"}


def test_case_and_accents_do_not_matter(search: Search) -> None:
    assert _names(search("CAFE resume")) == {"global/personal"}
    assert _names(search("naïve")) == {"global/personal"}
    hit = next(r for r in search("cafe") if r["name"] == "global/personal")
    assert hit["text"] == "Café au lait, naïve résumé"


def test_tags_must_all_match_and_scope_filters(search: Search) -> None:
    assert _names(search("login", tags=["auth"])) == {"auth/login_flow", "FEATURE_tokens"}
    assert _names(search("login", tags=["auth", "web"])) == {"auth/login_flow"}
    assert _names(search("login", tags=["web"])) == {"auth/login_flow", "global/personal"}
    assert search("login", tags=["nope"]) == []
    assert _names(search("login", scope="global")) == {"global/personal"}
    assert "global/personal" not in _names(search("login", scope="project"))


def test_results_are_lines_best_first_with_file_line_numbers(ws: Workspace, search: Search) -> None:
    results = search("login")
    scores = [r["score"] for r in results]
    assert scores == sorted(scores, reverse=True)
    assert results[0]["name"] == "auth/login_flow", "a match in the name weighs most"
    path = ws.primary / "auth" / "login_flow.md"
    lines = path.read_text().split("\n")
    hits = [(r["line"], r["text"]) for r in results if r["name"] == "auth/login_flow"]
    assert hits == [
        (lines.index("# Login flow") + 1, "# Login flow"),
        (lines.index("The LOGIN flow uses tokens.") + 1, "The LOGIN flow uses tokens."),
    ]
    assert all(r["path"].endswith(".md") and os.path.isabs(r["path"]) for r in results)
    assert set(results[0]) == {
        "name",
        "path",
        "line",
        "text",
        "score",
        "title",
        "matched",
        "supersededBy",
    }
    assert search("login", limit=2) == results[:2]


def test_a_memory_that_matches_only_by_name_shows_its_first_line(
    ws: Workspace, search: Search
) -> None:
    results = search("personal")
    lines = (ws.global_dir / "personal.md").read_text().split("\n")
    first = lines.index("my login tricks") + 1
    assert [(r["name"], r["line"], r["text"]) for r in results] == [
        ("global/personal", first, "my login tricks")
    ]


def test_more_occurrences_rank_higher(ws: Workspace) -> None:
    store = ws.store()
    store.save("once", "deploy the thing and then a lot of other words follow here\n")
    store.save("often", "deploy deploy\ndeploy again\n")
    for searching in (store, _indexed(store)):
        assert [r["name"] for r in searching.search("deploy")["results"]][:1] == ["often"]


def test_crlf_and_unicode_content(ws: Workspace, search: Search) -> None:
    ws.write(
        ws.primary / "windows.md",
        "---\r\ntags: [win]\r\n---\r\nfirst line\r\nZürich straße 東京 login\r\n",
    )
    store = _store(ws)
    for searching in (store, _indexed(store)):
        results = searching.search("zurich")["results"]
        assert [(r["name"], r["line"], r["text"]) for r in results] == [
            ("windows", 5, "Zürich straße 東京 login")
        ]
        assert _names(searching.search("東京", tags=["win"])["results"]) == {"windows"}


def test_shadowed_and_ignored_memories_are_not_returned(ws: Workspace) -> None:
    ws.write(ws.root / ".serena" / "project.yml", "ignored_memory_patterns: ['secret.*']\n")
    store = ws.store(["team/feature"])
    store.save("dup", "shadow words in primary\n")
    ws.write(ws.root / "team" / "feature" / "dup.md", "shadow words in feature\n")
    ws.write(ws.primary / "secret_plan.md", "shadow words nobody may see\n")
    for searching in (store, _indexed(store)):
        results = searching.search("shadow")["results"]
        assert [(r["name"], r["text"]) for r in results] == [("dup", "shadow words in primary")]


def test_files_far_over_the_limit_are_found_by_name_only(ws: Workspace) -> None:
    store = ws.store(max_memory_bytes=100)
    ws.write(ws.primary / "huge_log.md", "needle " * 100)
    for searching in (store, _indexed(store)):
        assert _names(searching.search("needle")["results"]) == set()
        assert _names(searching.search("huge")["results"]) == {"huge_log"}


# ----- kept in line with the disk ----------------------------------------------------


def _touch_later(path: Path, text: str) -> None:
    """Rewrite a file so that its stamp surely changes (same size, newer time)."""
    before = path.stat().st_mtime_ns
    path.write_text(text)
    os.utime(path, ns=(before + 10**9, before + 10**9))


def test_a_new_process_sees_every_change_made_behind_its_back(ws: Workspace) -> None:
    store = _store(ws)
    assert _indexed(store).search("expiry")["results"]
    tokens = ws.root / "team" / "feature" / "FEATURE_tokens.md"
    _touch_later(tokens, tokens.read_text().replace("expiry", "timeout"))
    ws.write(ws.primary / "created.md", "an expiry note\n")
    (ws.primary / "plain.md").rename(ws.primary / "renamed.md")
    (ws.primary / "unrelated.md").unlink()
    searching = _indexed(store)  # a new process, the same cache
    assert _names(searching.search("expiry")["results"]) == {"created"}
    assert _names(searching.search("timeout")["results"]) == {"FEATURE_tokens"}
    assert _names(searching.search("mentioned")["results"]) == {"renamed"}
    assert searching.search("author")["results"] == []


def test_a_live_index_rereads_what_changed_before_it_answers(ws: Workspace) -> None:
    store = _store(ws)
    index = SearchIndex(store.config, live=True)
    live = Store(store.config, index)
    assert index.search(parse_query("tokens"), [], None, 50) is None, "not synced yet"
    assert index.sync(store.scan())
    path = ws.primary / "auth" / "login_flow.md"
    # Changed without an event: a result about to be returned is read again first.
    _touch_later(path, path.read_text().replace("uses tokens", "uses cookies"))
    results = live.search("tokens")["results"]
    assert "The LOGIN flow uses tokens." not in {r["text"] for r in results}
    assert "auth/login_flow" not in _names(live.search("tokens")["results"])
    # Events bring new and removed files in.
    created = ws.write(ws.primary / "fresh.md", "brand new tokens\n")
    (ws.primary / "plain.md").unlink()
    index.apply([str(created), str(ws.primary / "plain.md")])
    assert "fresh" in _names(live.search("tokens")["results"])
    assert live.search("mentioned")["results"] == []
    assert index.search(parse_query("cookies"), [], None, 50) is not None


def test_the_index_is_rebuilt_for_another_configuration_or_schema(ws: Workspace) -> None:
    store = _store(ws)
    first = search_index_path(store.config)
    assert _indexed(store).search("tokens")["results"]
    assert os.path.exists(first)
    other = _store(ws, max_memory_bytes=1000)
    assert search_index_path(other.config) != first
    # A file whose stored fingerprint differs (an older schema) is made again.
    with sqlite3.connect(first) as db:
        db.execute("UPDATE meta SET value = 'old' WHERE key = 'fingerprint'")
        db.execute("DELETE FROM files")
    assert _names(_indexed(store).search("tokens")["results"]) == {
        "auth/login_flow",
        "FEATURE_tokens",
    }
    with sqlite3.connect(first) as db:
        assert db.execute("SELECT count(*) FROM files").fetchone()[0] == 5


def test_a_corrupt_cache_file_is_made_again(ws: Workspace) -> None:
    store = _store(ws)
    path = search_index_path(store.config)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    Path(path).write_bytes(b"this is not a database" * 100)
    index = SearchIndex(store.config, live=False)
    assert index.search(parse_query("tokens"), [], None, 50) is not None
    assert _names(Store(store.config, index).search("tokens")["results"]) == {
        "auth/login_flow",
        "FEATURE_tokens",
    }


def test_a_locked_cache_still_gives_the_right_answer(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(database, "BUSY_TIMEOUT_SECONDS", 0.05)
    store = _store(ws)
    assert _indexed(store).search("tokens")["results"]
    ws.write(ws.primary / "late.md", "late tokens\n")
    holder = sqlite3.connect(search_index_path(store.config), isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        index = SearchIndex(store.config, live=False)
        started = time.monotonic()
        assert index.search(parse_query("tokens"), [], None, 50) is None
        results = Store(store.config, index).search("tokens")["results"]
        assert time.monotonic() - started < 5
        assert "late" in _names(results), "answered by reading the files"
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "late" in _names(_indexed(store).search("tokens")["results"])


def test_an_unwritable_cache_still_gives_the_right_answer(ws: Workspace) -> None:
    store = _store(ws)
    blocked = ws.tmp / "blocked"
    blocked.write_text("a file where the cache directory would be")
    index = SearchIndex(store.config, str(blocked / "index" / "x.sqlite3"), live=False)
    assert index.search(parse_query("tokens"), [], None, 50) is None
    assert _names(Store(store.config, index).search("tokens")["results"]) == {
        "auth/login_flow",
        "FEATURE_tokens",
    }


def test_without_fts5_every_memory_is_read(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(database, "fts5_available", lambda: False)
    store = _store(ws)
    index = SearchIndex(store.config, live=False)
    assert index.search(parse_query("tokens"), [], None, 50) is None
    assert _names(Store(store.config, index).search("tokens")["results"]) == {
        "auth/login_flow",
        "FEATURE_tokens",
    }


def test_the_walk_finds_what_the_store_scan_finds(ws: Workspace) -> None:
    ws.write(ws.root / ".serena" / "project.yml", "ignored_memory_patterns: ['skip_.*']\n")
    store = ws.store(["team/feature", ".serena/memories/inner"])
    ws.write(ws.primary / "a.md", "a")
    ws.write(ws.primary / ".hidden" / "b.md", "b")
    ws.write(ws.primary / "topic" / "deep" / "c.md", "c")
    ws.write(ws.primary / "inner" / "d.md", "d")
    ws.write(ws.primary / "skip_me.md", "ignored")
    ws.write(ws.primary / ".x.md.1234.memory-ls-tmp", "temp")
    ws.write(ws.primary / "notes.txt", "not markdown")
    (ws.primary / "folder.md").mkdir()
    ws.write(ws.primary / "folder.md" / "inside.md", "in a folder named like a memory")
    ws.write(ws.primary / "folder.md" / "deeper.md" / "deepest.md", "two levels of them")
    outside = ws.write(ws.tmp / "outside" / "shared.md", "linked")
    os.symlink(outside.parent, ws.primary / "linked")
    os.symlink(outside, ws.primary / "link_file.md")
    os.symlink(outside.parent, ws.primary / "linked_folder.md")  # followed by neither
    os.symlink(ws.tmp / "missing.md", ws.primary / "dangling.md")
    os.symlink(ws.primary, ws.primary / "topic" / "loop")
    ws.write(ws.root / "team" / "feature" / "FEATURE_x.md", "x")
    index = SearchIndex(store.config, live=False)
    walked = {(rank, name) for rank, name, _mtime, _size in index.walk().rows()}
    folders = store.config.folders
    scanned = {(folders.index(m.folder), m.name) for m in store.scan()}
    assert walked == scanned
    assert (0, "linked/shared") in walked and (0, "skip_me") not in walked
    assert {(0, "folder.md/inside"), (0, "folder.md/deeper.md/deepest")} <= walked


def test_many_matches_come_best_first_names_holding_the_query_on_top(ws: Workspace) -> None:
    store = ws.store()
    for number in range(80):
        name = f"deploy_{number:02d}" if number % 10 == 0 else f"note_{number:02d}"
        filler = " ".join(["other"] * (number % 13))
        store.save(name, f"{'deploy ' * (number % 7 + 1)}{filler}\n")
    for number in range(100):  # bm25 weighs a word in fewer than half of the memories
        store.save(f"unrelated_{number:02d}", "nothing to see\n")
    for searching in (store, _indexed(store)):
        results = searching.search("deploy", limit=80)["results"]
        scores = [r["score"] for r in results]
        assert len(results) == 80 and scores == sorted(scores, reverse=True)
        assert {r["name"] for r in results[:8]} == {f"deploy_{n:02d}" for n in range(0, 80, 10)}
        assert all(1 <= s < 2 for s in scores[:8]) and all(0.5 <= s <= 1 for s in scores[8:])
        # Among the others, more mentions in a shorter text rank higher.
        assert results[8]["name"] == "note_13" and results[-1]["name"] == "note_77"


def test_many_files_are_stated_in_two_processes_with_the_same_result(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = [ws.write(ws.primary / f"n{number}.md", "x" * number) for number in range(40)]
    (ws.primary / "dir.md").mkdir()
    paths = [str(path) for path in files] + [str(ws.primary / "dir.md"), str(ws.tmp / "gone.md")]
    serial = file_io.stat_files(paths)
    assert list(serial[1][-2:]) == [file_io.FOLDER_SIZE, -1] and list(serial[0][-2:]) == [0, 0]
    assert (serial[0][3], serial[1][3]) == (files[3].stat().st_mtime_ns, 3)
    forks: list[int] = []
    real_fork = os.fork

    def counted_fork() -> int:
        forks.append(1)
        return real_fork()

    monkeypatch.setattr(file_io, "PARALLEL_STAT_FILES", 2)
    monkeypatch.setattr(file_io, "_may_fork", lambda: True)
    monkeypatch.setattr(os, "fork", counted_fork)
    assert file_io.stat_files(paths) == serial
    assert forks == [1], "the second half was stated by a child process"
    # A child that fails costs time, not results.
    monkeypatch.setattr(file_io.marshal, "dumps", lambda value: b"\x00broken")
    assert file_io.stat_files(paths) == serial


def test_a_new_process_reads_the_manifest_and_sees_changes_made_after_it(
    ws: Workspace,
) -> None:
    store = _store(ws)
    first = SearchIndex(store.config, live=False)
    assert Store(store.config, first).search("expiry")["results"]

    def manifest() -> Any:
        with sqlite3.connect(first.path) as db:
            row = db.execute("SELECT data FROM manifest").fetchone()
        return row[0] if row else None

    assert manifest() is not None, "a sync that changed the index writes its manifest"
    # A live process (an editor) indexes a change: the manifest no longer says what the
    # index holds, and goes.
    created = ws.write(ws.primary / "created.md", "an expiry note\n")
    live = SearchIndex(store.config, live=True)
    live.apply([str(created)])
    assert manifest() is None
    assert live.sync(store.scan())
    assert manifest() is None, "a live index leaves it to the processes that read it"
    searching = Store(store.config, SearchIndex(store.config, live=False))
    assert _names(searching.search("expiry")["results"]) == {"FEATURE_tokens", "created"}
    assert manifest() is not None
    # A manifest that cannot be read is passed over: the rows are read instead.
    with sqlite3.connect(first.path) as db:
        db.execute("UPDATE manifest SET data = x'00ff'")
    tokens = ws.root / "team" / "feature" / "FEATURE_tokens.md"
    _touch_later(tokens, tokens.read_text().replace("expiry", "timeout"))
    searching = Store(store.config, SearchIndex(store.config, live=False))
    assert _names(searching.search("expiry")["results"]) == {"created"}


def test_an_unchanged_store_is_recognised_from_the_manifest_alone(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(ws)
    assert _indexed(store).search("expiry")["results"]  # builds the index and its manifest

    def no_rows(self: schema.Listing) -> set[tuple[int, str, int, int]]:
        raise AssertionError("rows compared one by one")

    with monkeypatch.context() as patched:
        patched.setattr(schema.Listing, "rows", no_rows)
        index = SearchIndex(store.config, live=False)
        assert index.sync()
        assert _names(Store(store.config, index).search("expiry")["results"]) == {"FEATURE_tokens"}
    # An edit in place (same size, later mtime) is a change: the slow comparison finds it.
    tokens = ws.root / "team" / "feature" / "FEATURE_tokens.md"
    _touch_later(tokens, tokens.read_text().replace("expiry", "timeout"))
    assert not _indexed(store).search("expiry")["results"]
    assert _names(_indexed(store).search("timeout")["results"]) == {"FEATURE_tokens"}


def test_the_manifest_is_written_only_when_the_index_holds_what_the_walk_found(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(ws)
    index = SearchIndex(store.config, live=False)
    assert index.sync()
    before = index.walk()
    created = ws.write(ws.primary / "created.md", "an expiry note\n")
    plain = ws.primary / "plain.md"
    _touch_later(plain, plain.read_text() + "edited after the walk\n")
    # The walk saw `created`; the edit to `plain` came after it, and indexing sees it.
    seen = index.walk()
    stale = schema.Listing(
        seen.ranks,
        seen.names,
        schema.array.array(
            "q",
            [
                m if n != "plain" else before.mtimes[before.names.index("plain")]
                for n, m in zip(seen.names, seen.mtimes, strict=True)
            ],
        ),
        seen.sizes,
    )
    monkeypatch.setattr(SearchIndex, "walk", lambda self: stale)
    fresh = SearchIndex(store.config, live=False)
    assert fresh.sync()
    with sqlite3.connect(fresh.path) as db:
        assert db.execute("SELECT data FROM manifest").fetchone() is None
        mtime = db.execute("SELECT mtime_ns FROM files WHERE name = 'plain'").fetchone()[0]
    assert mtime == plain.stat().st_mtime_ns, "indexed as the disk has it, not as walked"
    monkeypatch.undo()
    again = SearchIndex(store.config, live=False)
    assert _names(Store(store.config, again).search("expiry")["results"]) == {
        "FEATURE_tokens",
        "created",
    }
    with sqlite3.connect(again.path) as db:
        assert db.execute("SELECT data FROM manifest").fetchone() is not None
    assert created.exists()


def test_a_change_indexed_by_another_process_meanwhile_keeps_the_manifest_out(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(ws)
    tokens = ws.root / "team" / "feature" / "FEATURE_tokens.md"
    live = SearchIndex(store.config, live=True)
    assert live.sync(store.scan())  # indexed by an editor: no manifest
    real_write = database.Database.write_manifest

    def editor_indexes_an_edit_first(self: database.Database, *args: Any) -> None:
        # The walk and the rows agreed; before the manifest is written an editor indexes
        # an edit that the walk did not see.
        _touch_later(tokens, tokens.read_text().replace("expiry", "timeout"))
        live.apply([str(tokens)])
        real_write(self, *args)

    monkeypatch.setattr(database.Database, "write_manifest", editor_indexes_an_edit_first)
    assert SearchIndex(store.config, live=False).sync()
    monkeypatch.undo()
    with sqlite3.connect(live.path) as db:
        assert db.execute("SELECT data FROM manifest").fetchone() is None
    searching = _indexed(store)
    assert not searching.search("expiry")["results"]
    assert _names(searching.search("timeout")["results"]) == {"FEATURE_tokens"}


def test_a_packed_listing_comes_back_as_it_was_empty_or_with_a_nameless_file() -> None:
    def listing(names: list[str]) -> schema.Listing:
        count = len(names)
        return schema.Listing(
            schema.array.array("i", [0] * count),
            names,
            schema.array.array("q", [7] * count),
            schema.array.array("q", [1] * count),
        )

    for names in ([], [""], ["", "a"], ["a", "b/c"]):
        packed = listing(names).packed()
        assert schema._well_formed(packed), names
        assert schema.Listing.unpacked(packed) == listing(names)
    ranks, joined, mtimes, sizes = listing(["a", "b"]).packed()
    assert not schema._well_formed((ranks, "a", mtimes, sizes)), "a name short"
    assert not schema._well_formed((ranks, joined, mtimes[:8], sizes))
    assert not schema._well_formed((b"", "a", b"", b""))


# ----- relevance ranking (the default) ----------------------------------------------------


def _ranked_store(ws: Workspace) -> Store:
    store = ws.store()
    store.save("payments/retry_policy", "# Retry policy\nFailed captures are retried 5 times.\n")
    store.save("auth/session_tokens", "# Session tokens\nA token expires after 4 hours.\n")
    store.save("refunds", "Refunds are issued by the support team, never retried.\n")
    store.save("howto_do_the_thing", "How do you do the thing? Like this.\n")
    store.save("glossary", "Words: session, cart, checkout, the shop.\n")
    return store


@pytest.fixture(params=["index", "scan"])
def ranked(request: pytest.FixtureRequest, ws: Workspace) -> Search:
    return _searcher(_ranked_store(ws), request.param, RELEVANCE)


def _order(results: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(r["name"] for r in results))


def test_memories_holding_some_words_come_back_ranked(ranked: Search) -> None:
    results = ranked("refund retry ")
    # Both words (as stems) in `refunds`; only one in the retry policy, in its name.
    assert _order(results) == ["refunds", "payments/retry_policy"]
    first = results[0]
    assert first["matched"] == ["refund", "retry"] and first["score"] >= 0.5
    assert {r["name"]: r["matched"] for r in results}["payments/retry_policy"] == ["retry"]
    assert all(r["score"] < 0.5 for r in results if r["name"] != "refunds")


def test_words_match_by_their_stem(ranked: Search) -> None:
    assert _order(ranked("retries ")) == ["payments/retry_policy", "refunds"]
    assert _order(ranked("tokens ")) == ["auth/session_tokens"]
    hit = ranked("tokens ")
    assert [(r["line"], r["text"]) for r in hit] == [
        (1, "# Session tokens"),
        (2, "A token expires after 4 hours."),
    ]
    # The last word, unfinished or whole, finds words it begins and words of its stem.
    assert _order(ranked("retries"))[:1] == ["payments/retry_policy"]
    assert _order(ranked("sess")) == ["auth/session_tokens", "glossary"]


def test_stop_words_are_not_required_and_do_not_dominate(ranked: Search) -> None:
    results = ranked("how long do session tokens last")
    assert _order(results)[0] == "auth/session_tokens"
    assert "howto_do_the_thing" not in _order(results), "matches only stop words"
    assert results[0]["matched"] == ["session", "tokens"]
    # A query of stop words only still looks for them.
    assert _order(ranked("how do ")) == ["howto_do_the_thing"]


def test_the_name_and_first_heading_weigh_above_the_body(ws: Workspace) -> None:
    store = ws.store()
    store.save("notes_a", "# Checkout flow\nSteps of the purchase.\n")
    store.save("notes_b", "# Misc\nThe checkout button is blue; checkout twice, flow once.\n")
    store.save("checkout", "About the cart.\n")
    for searching in (store, _indexed(store)):
        results = searching.search("checkout ")["results"]
        assert _order(results) == ["checkout", "notes_a", "notes_b"]
        assert results[0]["title"] == "About the cart."
        assert {r["name"]: r["title"] for r in results}["notes_a"] == "Checkout flow"


def test_all_words_mode_keeps_the_strict_semantics(ws: Workspace) -> None:
    store = _ranked_store(ws)
    for searching in (store, _indexed(store)):
        assert searching.search("refund retry", mode="all_words")["results"] == []
        assert searching.search("retries ", mode="all_words")["results"] == []
        strict = searching.search("retried refunds", mode="all_words")["results"]
        assert _order(strict) == ["refunds"]
        assert strict[0]["matched"] == ["retried", "refunds"]
        with pytest.raises(InvalidArguments, match="mode"):
            searching.search("x", mode="fuzzy")


def test_a_superseded_memory_ranks_right_after_the_one_that_replaces_it(ws: Workspace) -> None:
    store = ws.store()
    store.save("decision_ttl_2023", "# Session TTL\nSession idle timeout: 30 minutes. TTL TTL.\n")
    store.save(
        "auth/session_ttl",
        "---\nsupersedes: decision_ttl_2023\n---\n# Session lifetime\nIdle timeout is 4 hours.\n",
    )
    store.save("old_pool", "---\nsuperseded_by: '[[new_pool]]'\n---\nPool size 10 timeout\n")
    store.save("new_pool", "Pool size 5.\n")
    store.save("unrelated_timeout", "A timeout elsewhere, timeout timeout.\n")
    for searching in (store, _indexed(store)):
        results = searching.search("session idle timeout")["results"]
        order = _order(results)
        assert order.index("auth/session_ttl") < order.index("decision_ttl_2023")
        assert order[:2] == ["auth/session_ttl", "decision_ttl_2023"]
        marks = {r["name"]: r["supersededBy"] for r in results}
        assert marks["decision_ttl_2023"] == ["auth/session_ttl"]
        assert marks["auth/session_ttl"] == []
        scores = [r["score"] for r in results]
        assert scores == sorted(scores, reverse=True)
        # Declared on the old side only; the newer one matches the query too.
        order = _order(searching.search("pool timeout")["results"])
        assert order.index("new_pool") < order.index("old_pool")
        # In strict mode too, among the memories that hold every word.
        strict = searching.search("pool size", mode="all_words")["results"]
        assert _order(strict) == ["new_pool", "old_pool"]
        assert strict[-1]["supersededBy"] == ["new_pool"]
        # The replacement comes first even when it words things otherwise (a paraphrase
        # found only the old wording): it is what holds now about what the query found.
        order = _order(searching.search("idle minutes")["results"])
        assert order[:2] == ["auth/session_ttl", "decision_ttl_2023"]


def test_light_stemming_takes_off_inflections_only() -> None:
    from memory_ls.core.rules.stemming import stem

    same = [
        ("retries", "retry", "retried", "retrying"),
        ("tokens", "token"),
        ("caches", "cache", "cached", "caching"),
        ("hoping", "hope", "hoped", "hopes"),
        ("deploys", "deploy", "deployed", "deploying"),
    ]
    for words in same:
        assert len({stem(word) for word in words}) == 1, words
    # Derivations keep their meaning apart; short words are left alone.
    assert stem("production") != stem("product") and stem("general") != stem("generous")
    assert [stem(word) for word in ("is", "as", "ss", "caress", "sky")] == [
        "is",
        "as",
        "ss",
        "caress",
        "sky",
    ]
    # A word begins with its stem but for the stem's last letter (how the index finds them).
    for word in ("happy", "ponies", "hoping", "troubled", "sized", "agreed", "naïvely"):
        assert word.startswith(stem(word)[:-1]), word


def test_the_file_helper_states_and_reads_half_of_each_list_and_goes_with_its_parent(
    tmp_path: Path,
) -> None:
    paths = []
    for number in range(50):
        path = tmp_path / f"m{number}.md"
        path.write_text("x" * number)
        paths.append(str(path))
    (tmp_path / "folder.md").mkdir()
    paths += [str(tmp_path / "folder.md"), str(tmp_path / "missing.md")]
    (tmp_path / "large.md").write_text("y" * 5000)
    paths.append(str(tmp_path / "large.md"))
    serial = file_io._stat_each(paths)
    read = [file_io._read_small(path, 1000) for path in paths]
    assert read[-1] == b"" and read[-2] is None and read[-3] is None and read[7] == b"x" * 7
    helper = file_io.FileHelper()
    try:
        assert helper.stat_files(paths) == serial
        assert helper.stat_files(paths[:3]) == file_io._stat_each(paths[:3])
        # Reads too: too large (b""), a folder and a missing file (None) as here.
        assert helper.read_files(paths, 1000) == read
        assert helper.read_files(paths[:1], 1000) == read[:1]
        assert helper.working
        # A helper that died costs time, never results.
        os.kill(helper.pid, signal.SIGKILL)
        os.waitpid(helper.pid, 0)
        assert helper.stat_files(paths) == serial
        assert not helper.working
        assert helper.read_files(paths, 1000) == read
    finally:
        helper.close()
    # A live helper leaves when its parent's end of the pipe closes (the parent exits).
    second = file_io.FileHelper()
    second._requests.close()
    assert os.waitpid(second.pid, 0)[1] == 0
    second.close()


@pytest.mark.parametrize(
    ("tags", "scope"), [(None, None), (["web"], None), (None, "global"), (["auth"], "project")]
)
def test_the_index_counts_the_matching_memories_as_a_reading_of_every_memory_does(
    ws: Workspace, tags: list[str] | None, scope: str | None
) -> None:
    store = _store(ws)
    indexed = _indexed(store)
    for query in ("login", "tokens login", "nothing", "zzz"):
        by_index = indexed.search_memories(query, tags, scope, 1, per_memory=True, count=True)
        by_reading = store.search_memories(query, tags, scope, 100, per_memory=True)
        assert by_index.total == len(by_reading.hits), (query, tags, scope)


def _bulk(ws: Workspace, count: int) -> tuple[Store, set[str]]:
    """A store of `count` notes, one in ten holding a rare word, some with tags."""
    planted = set()
    for number in range(count):
        text = f"# Note {number}\nabout the usual cache things\n"
        if number % 10 == 3:
            text += "an okapi walks by\n"
            planted.add(f"note_{number:03d}")
        if number % 4 == 0:
            text = f"---\ntags: [four]\n---\n{text}"
        ws.write(ws.primary / f"note_{number:03d}.md", text)
    # Hidden by the primary folder's memory of the same name: never an answer.
    ws.write(ws.root / "team" / "feature" / "note_005.md", "an okapi, hidden\n")
    ws.write(ws.root / "team" / "feature" / "okapi_feature.md", "# Okapi feature\n")
    ws.write(ws.global_dir / "note_003.md", "a global okapi of the same name\n")
    planted |= {"okapi_feature", "global/note_003"}
    return ws.store(["team/feature"]), planted


@pytest.mark.parametrize(("worker", "helper"), [(False, False), (True, False), (True, True)])
def test_a_search_during_the_first_sync_answers_from_the_index_and_the_rest(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch, worker: bool, helper: bool
) -> None:
    """Batch by batch (in this process, or reported by the worker process), each search
    meanwhile gives the memories a search over every file gives: no memory missed (the
    files it reads read half by the file helper, or all here)."""
    store, planted = _bulk(ws, 120)
    monkeypatch.setattr(lifecycle, "BATCH_FILES", 25)
    monkeypatch.setattr(lifecycle, "WORKER_FILES", 1 if worker else 10**9)
    if helper:
        monkeypatch.setattr(file_io, "_HELPER", file_io.FileHelper())
        monkeypatch.setattr(file_io, "HELPER_FILES", 1)
    index = SearchIndex(store.config, live=True)
    live = Store(store.config, index)
    checked: list[tuple[int, int]] = []
    # Not a single result missing, whatever the step: the rare word, with tags, all words.
    queries = [
        ("okapi", {}),
        ("okapi", {"tags": ["four"]}),
        ("okapi", {"scope": "global"}),
        ("okapi", {"scope": "project"}),
        ("note 42", {"mode": ALL_WORDS}),
    ]
    expected = {
        (query, str(kw)): _names(store.search(query, limit=500, **kw)["results"])
        for query, kw in queries
    }
    assert expected[("okapi", "{}")] == planted

    def mid_sync(done: int, total: int) -> None:
        if done == total:
            return
        assert index.search(parse_query("okapi"), [], None, 50) is None, "not complete yet"
        for query, kw in queries:
            found = _names(live.search(query, limit=500, **kw)["results"])
            assert found == expected[(query, str(kw))], (done, query, kw)
        # The best first: a common word's answer is full, its memories hold the word.
        common = live.search("cache", limit=7)["results"]
        assert len(common) == 7 and all("cache" in row["text"] for row in common)
        checked.append((done, total))

    index.expect_sync()
    assert index.sync(store.scan(), report=mid_sync)
    assert len(checked) == 123 // 25 and checked[0][1] == 123
    assert index.search(parse_query("okapi"), [], None, 500) is not None
    assert _names(live.search("okapi", limit=500)["results"]) == planted
    if helper:
        assert file_io._HELPER is not None and file_io._HELPER.working
        file_io._HELPER.close()


def test_a_search_as_the_first_sync_ends_is_answered_by_the_index(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Asked just before the first sync ended (the index not complete yet) and looking for
    the files not indexed just after (none left): the index answers, no file is read."""
    store, planted = _bulk(ws, 40)
    index = SearchIndex(store.config, live=True)
    live = Store(store.config, index)
    index.expect_sync()
    assert index.sync(store.scan())
    asked = index.search
    first: list[bool] = []

    def not_yet_the_first_time(*args: Any, **kwargs: Any) -> Any:
        if not first:
            first.append(True)
            return None  # as the index answered a moment before the sync ended
        return asked(*args, **kwargs)

    def read_every_file(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("every file read though the index was complete")

    monkeypatch.setattr(index, "search", not_yet_the_first_time)
    monkeypatch.setattr(live, "_searchable", read_every_file)
    assert _names(live.search("okapi", limit=500)["results"]) == planted
    assert first == [True]


def test_the_indexing_workers_start_after_the_search_under_way(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A search sent as the server starts reads every file: the workers that would read
    them too (and send their facts to this process) are started once it is answered."""
    store, planted = _bulk(ws, 40)
    monkeypatch.setattr(lifecycle, "WORKER_FILES", 1)
    index = SearchIndex(store.config, live=True)
    live = Store(store.config, index)
    searches_at_start: list[int] = []
    popen = subprocess.Popen

    def start_worker(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        searches_at_start.append(index.turns._searches)
        return popen(*args, **kwargs)

    monkeypatch.setattr(workers.subprocess, "Popen", start_worker)
    index.expect_sync()
    syncing = threading.Thread(target=lambda: index.sync(store.scan()))
    with index.turns.searching():  # the first search, under way before the sync begins
        syncing.start()
        # Until the sync waits for it (the workers would have started by now otherwise).
        deadline = time.monotonic() + 30
        while not searches_at_start and not index.turns._changed._waiters:  # type: ignore[attr-defined]
            assert time.monotonic() < deadline, "the sync neither waited nor started workers"
            time.sleep(0.01)
        found = _names(live.search("okapi", limit=500)["results"])
    syncing.join(60)
    assert found == planted
    assert searches_at_start and set(searches_at_start) == {0}
    assert _names(live.search("okapi", limit=500)["results"]) == planted


@pytest.mark.parametrize(("head_start", "expected"), [(0.0, 0.4), (0.5, 0.7)])
def test_the_first_sync_lets_searches_run_up_to_their_share(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch, head_start: float, expected: float
) -> None:
    """A search under way holds an indexing's next step back, but no longer than the
    searches have had their share of the time (back to back, they cannot stop it), or
    SEARCH_HEAD_START seconds in all: a first search has the interpreter to itself."""
    monkeypatch.setattr(workers, "SEARCH_HEAD_START", head_start)
    turns = workers.Turns()
    pause = turns.pauser()
    with turns.searching():
        started = time.monotonic()
        time.sleep(0.2)  # the indexing's first step ran this long
        pause()  # holds back while the search runs, up to the share of the time
        held = time.monotonic() - started
    # Share 0.5: held w after 0.2 s, until w = 0.5 * (0.2 + w), or the head start.
    assert expected - 0.05 <= held < expected + 0.3
    started = time.monotonic()
    pause()  # no search: no wait
    assert time.monotonic() - started < 0.05


def test_searches_share_the_time_with_indexing_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """While workers index, searches back to back wait their turn once they had their
    share of the time (the workers get the rest of the cores), never longer than
    MAX_SEARCH_WAIT; with no workers, or when they end, no search waits."""
    monkeypatch.setattr(workers, "WORKER_SEARCH_ALLOWANCE", 0.0)
    turns = workers.Turns()

    def search(seconds: float) -> float:
        """A search that runs `seconds`; how long it waited for its turn."""
        asked = time.monotonic()
        with turns.searching():
            waited = time.monotonic() - asked
            time.sleep(seconds)
        return waited

    assert search(0.3) < 0.05  # no workers: never waits
    assert search(0.01) < 0.05
    with turns.workers_indexing():
        assert search(0.3) < 0.05  # the first: nothing taken yet
        # 0.3 s of searches in 0.3 s: the share (0.5) comes back after 0.3 s more.
        assert 0.25 <= search(0.01) < 0.5
        monkeypatch.setattr(workers, "MAX_SEARCH_WAIT", 0.2)
        assert search(1.0) < 0.25  # about at its share: it may wait, the bound at most
        assert 0.15 <= search(0.01) < 0.35  # far over its share: waits the bound only
    # The workers ended: no turn to wait for.
    assert search(0.01) < 0.05


def test_a_search_waiting_its_turn_goes_when_the_workers_end() -> None:
    """The workers' end lets a search waiting its turn go at once."""
    turns = workers.Turns()
    waited: list[float] = []
    with turns.workers_indexing():
        with turns.searching():
            time.sleep(1.2)  # far over the share: the next waits (MAX_SEARCH_WAIT)

        def second() -> None:
            asked = time.monotonic()
            with turns.searching():
                waited.append(time.monotonic() - asked)

        thread = threading.Thread(target=second)
        thread.start()
        time.sleep(0.2)
    thread.join()
    assert 0.15 <= waited[0] < 0.6


_WORDS = ["okapi", "notes", "about", "cache", "caches", "Café", "cafe", "auth", "author", "x"]


@settings(max_examples=200, deadline=None)
@given(
    texts=st.lists(
        st.lists(st.sampled_from([*_WORDS, " ", ", ", "\n", "_", "-"]), max_size=12).map("".join),
        min_size=1,
        max_size=8,
    ),
    query=st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3).map(" ".join),
    quoted=st.booleans(),
    mode=st.sampled_from([RELEVANCE, ALL_WORDS]),
)
def test_the_rough_order_keeps_every_memory_a_scan_finds(
    texts: list[str], query: str, quoted: bool, mode: str
) -> None:
    """What a search during the first indexing reads first (core/services/relevance.py
    `RoughRanker`) holds every memory that the scan of every file ranks."""
    parsed = parse_query(f'"{query}"' if quoted else query, mode)
    rough, scan = RoughRanker(parsed), ScanRanker(parsed)
    for number, text in enumerate(texts):
        name = f"memory_{number}" if number % 2 else text.replace(" ", "_")[:20] or "n"
        rough.add(name, text.encode(), number)
        scan.add(name, text, number)
    assert {item for _score, item in scan.ranked()} <= set(rough.ordered())


@settings(max_examples=300, deadline=None)
@given(
    texts=st.lists(
        st.lists(
            st.sampled_from([*_WORDS, "NOTES", "Auth", " ", ", ", "\n", "_", "-", "\0", "é"]),
            max_size=12,
        ).map("".join),
        min_size=1,
        max_size=12,
    ),
    names=st.lists(st.sampled_from(["n", "Notes_x", "auth_cache", "café_notes", "x"]), min_size=12),
    query=st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3).map(" ".join),
    quoted=st.booleans(),
    mode=st.sampled_from([RELEVANCE, ALL_WORDS]),
    chunk=st.sampled_from([1, 7, 40, 4 * 2**20]),
)
def test_the_rough_order_of_many_files_at_once_is_that_of_one_at_a_time(
    texts: list[str],
    names: list[str],
    query: str,
    quoted: bool,
    mode: str,
    chunk: int,
) -> None:
    """`RoughRanker.add_many` (the files' bytes joined, in chunks of any size, some not
    ASCII) keeps and orders what `add` of each keeps, with the same statistics."""
    parsed = parse_query(f'"{query}"' if quoted else query, mode)
    one, many = RoughRanker(parsed), RoughRanker(parsed)
    entries = [
        (f"{names[number]}_{number}", text.encode(), number) for number, text in enumerate(texts)
    ]
    for entry in entries:
        one.add(*entry)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(relevance, "ROUGH_CHUNK", chunk)
        many.add_many(entries)
    assert many.ordered() == one.ordered()
    assert (many.documents, many.total_bytes, many.total_spaces, many.containing) == (
        one.documents,
        one.total_bytes,
        one.total_spaces,
        one.containing,
    )


def test_the_rough_order_puts_a_phrase_as_written_first() -> None:
    parsed = parse_query('"notes about cache"', RELEVANCE)
    rough = RoughRanker(parsed)
    rough.add("auth_notes_1", b"# a\n\nNotes about auth.\n", "name holds a word")
    rough.add("cache_2", b"# b\n\nNotes about cache.\n", "phrase")
    rough.add("other_3", b"# c\n\nNotes, about the cache.\n", "words apart")
    assert rough.ordered() == ["phrase", "name holds a word", "words apart"]


def test_closest_query_takes_tags_from_the_index_without_reading_memories(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = _store(ws)
    plain.save("SPEC_payments_api", "# API\n", tags=["billing"])
    plain.save("global/mine", "x\n", tags=["ledger"])
    store = _indexed(plain)
    every, project = store.search_index.tags_in(None), store.search_index.tags_in("project")
    assert every is not None and project is not None
    assert {"billing", "ledger"} <= set(every) and len(every) == len(set(every))
    assert "billing" in project and "ledger" not in project

    def no_read(*_args: object) -> None:
        raise AssertionError("a memory was read")

    monkeypatch.setattr(Store, "_safe_load", no_read)
    assert store.closest_query("paymnt biling") == "payments billing"
    assert store.closest_query("ledgr", "project") is None  # a global memory's tag
    assert store.closest_query("ledgr") == "ledger"


def test_the_tags_kept_for_closest_words_follow_a_change_by_any_process(ws: Workspace) -> None:
    """`tags_in` keeps its answer until the index changes, here or in another process."""
    plain = _store(ws)
    plain.save("SPEC_payments_api", "# API\n", tags=["billing"])
    store = _indexed(plain)
    index = store.search_index
    assert index is not None
    before = set(index.tags_in(None) or ())
    assert "billing" in before and "ledger" not in before
    assert set(index.tags_in(None) or ()) == before  # kept
    # Another process (here another connection) indexes a memory with a new tag.
    other = _indexed(plain)
    other.save("PLAN_ledger", "# Ledger\n", tags=["ledger"])
    assert other.search("ledger")["results"]
    assert set(index.tags_in(None) or ()) == before | {"ledger"}
    assert store.closest_query("ledgr") == "ledger"


def test_the_name_words_kept_for_closest_words_follow_the_folders(ws: Workspace) -> None:
    """With a scan cache (the MCP server's), the words of the names are worked out once
    per version of the folders: a memory made since is a word the next search suggests."""
    plain = _store(ws)
    cache = ScanCache()
    store = Store(plain.config, SearchIndex(plain.config, live=False), scan_cache=cache)
    assert store.closest_query("zanzibr") is None
    store.save("PLAN_zanzibar_trip", "# Trip\n")
    assert store.closest_query("zanzibr") == "zanzibar"


def test_closest_words_come_from_a_name_index_without_listing_the_folders(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The language server gives its name index's words: a search that matches nothing
    lists no folder for its suggestion (0.85 s at 100,000 memories)."""
    plain = _store(ws)
    plain.save("PLAN_zanzibar_trip", "# Trip\n")
    index = MemoryIndex(plain.config)
    index.scan()
    store = Store(plain.config, SearchIndex(plain.config, live=False), name_words=index.name_words)
    assert store.search_index is not None and store.search_index.tags_in(None) is not None

    def no_listing(*_args: object) -> None:
        raise AssertionError("the folders were listed")

    monkeypatch.setattr(Store, "scan", no_listing)
    assert store.closest_query("zanzibr") == "zanzibar"
    assert store.fork().closest_query("zanzibr trp") == "zanzibar trip"


@pytest.mark.parametrize("buffered", [True, False])
def test_a_memory_file_is_read_whole_in_one_read_or_more(tmp_path: Path, buffered: bool) -> None:
    """`_read_small` (a search reading the files not indexed yet): the exact bytes of a
    file smaller than, as large as and larger than its first read, b"" beyond the limit,
    None for a file that cannot be read."""
    first = file_io.FIRST_READ
    buffer = bytearray(first) if buffered else None
    for size in (0, 1, 300, first - 1, first, first + 1, 3 * first + 7):
        path = tmp_path / f"m{size}.md"
        data = bytes((n * 7 + size) % 251 for n in range(size))
        path.write_bytes(data)
        read = file_io._read_small(str(path), 4 * first, buffer)
        assert read == data and type(read) is bytes
    assert file_io._read_small(str(tmp_path / f"m{3 * first + 7}.md"), first, buffer) == b""
    assert file_io._read_small(str(tmp_path / "m300.md"), 299, buffer) == b""
    assert file_io._read_small(str(tmp_path / "missing.md"), first, buffer) is None
