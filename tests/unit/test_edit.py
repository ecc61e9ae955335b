"""Edit (content, literal and regex needles, allowMultiple) and delete (SPEC 2.6)."""

from __future__ import annotations

import time

import pytest
from store_helpers import Workspace

from memory_ls.core.storage.gate import version_of

BODY = "# Notes\nversion 1.2 (beta)\nsee a.b(c) here\nTODO one\nTODO two\n"


@pytest.fixture
def notes(ws: Workspace) -> Workspace:
    ws.write(ws.primary / "notes.md", BODY)
    return ws


def test_content_mode_replaces_the_body(notes: Workspace) -> None:
    store = notes.store()
    result = store.edit("notes", content="all new\n")
    assert result == {
        "name": "notes",
        "path": str(notes.primary / "notes.md"),
        "replacements": 1,
        "version": version_of(b"all new\n"),
        "previousVersion": version_of(BODY.encode()),
        "bytesBefore": len(BODY),
        "bytesAfter": 8,
    }
    assert (notes.primary / "notes.md").read_text() == "all new\n"


def test_literal_needle_is_taken_literally(notes: Workspace) -> None:
    store = notes.store()
    # Regex metacharacters in the needle and group references in the replacement are text.
    result = store.edit("notes", needle="a.b(c)", replacement=r"x\1$0")
    assert result["replacements"] == 1
    assert (notes.primary / "notes.md").read_text() == BODY.replace("a.b(c)", r"x\1$0")
    # "mode" defaults to literal: a regex-looking needle that only matches as a regex fails.
    with notes.refuses("no-match"):
        store.edit("notes", needle=r"version \d", replacement="v")


def test_regex_needle_with_groups(notes: Workspace) -> None:
    store = notes.store()
    # Serena's replacement: verbatim but for $!N back-references (named groups count too).
    result = store.edit(
        "notes",
        needle=r"version (\d+)\.(\d+) \((?P<stage>\w+)\)",
        replacement=r"version $!2.$!1 [$!3] \1 \g<stage> $0",
        mode="regex",
    )
    assert result["replacements"] == 1
    text = (notes.primary / "notes.md").read_text()
    assert "version 2.1 [beta] \\1 \\g<stage> $0\n" in text


def test_regex_is_multiline(notes: Workspace) -> None:
    store = notes.store()
    store.edit(
        "notes",
        needle=r"^TODO (one|two)$",
        replacement="DONE $!1",
        mode="regex",
        allow_multiple=True,
    )
    text = (notes.primary / "notes.md").read_text()
    assert "DONE one\nDONE two\n" in text


def test_allow_multiple(notes: Workspace) -> None:
    store = notes.store()
    with notes.refuses("ambiguous-match") as info:
        store.edit("notes", needle="TODO", replacement="DONE")
    assert "2" in str(info.value)
    result = store.edit("notes", needle="TODO", replacement="DONE", allow_multiple=True)
    assert result["replacements"] == 2
    assert (notes.primary / "notes.md").read_text().count("DONE") == 2
    # allowMultiple with one match is fine too.
    assert (
        store.edit("notes", needle="# Notes", replacement="# N", allow_multiple=True)[
            "replacements"
        ]
        == 1
    )


def test_no_match_and_bad_regex_change_nothing(notes: Workspace) -> None:
    store = notes.store()
    with notes.refuses("no-match"):
        store.edit("notes", needle="absent", replacement="x")
    with notes.refuses("no-match"):
        store.edit("notes", needle=r"\d{9}", replacement="x", mode="regex")
    with notes.refuses("invalid-arguments"):
        store.edit("notes", needle="[unclosed", replacement="x", mode="regex")
    with notes.refuses("invalid-arguments"):
        store.edit("notes", needle="(", replacement="x", mode="regex")
    with notes.refuses("invalid-arguments"):
        store.edit("notes", needle="Notes", replacement="$!1", mode="regex")


def test_a_regex_that_backtracks_without_end_is_stopped(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory_ls.core.rules import replace as replace_module

    monkeypatch.setattr(replace_module, "REGEX_TIMEOUT_SECONDS", 0.2)
    ws.write(ws.primary / "long.md", "a" * 60 + "b\n")
    store = ws.store()
    started = time.monotonic()
    with ws.refuses("invalid-arguments") as refused:
        # Alternatives that overlap, repeated, against a's and then a b: the number of ways
        # to split the a's grows exponentially, and each is tried.
        store.edit("long", needle=r"(a|aa)+$", replacement="x", mode="regex")
    assert time.monotonic() - started < 5
    assert "backtracks" in str(refused.value)
    # The folder's write lock was let go: the next write goes through.
    store.edit("long", needle="b", replacement="c")


def test_edit_never_reroutes(ws: Workspace) -> None:
    path = ws.write(ws.primary / "FEATURE_old.md", "stored before feature/ existed\n")
    store = ws.store(["team/feature"])
    store.edit("FEATURE_old", needle="stored", replacement="still")
    assert path.read_text() == "still before feature/ existed\n"
    store.edit("FEATURE_old", content="new")
    assert path.read_text() == "new"
    assert not (ws.root / "team" / "feature" / "FEATURE_old.md").exists()


def test_the_needle_searches_the_whole_file_frontmatter_included(ws: Workspace) -> None:
    store = ws.store()
    store.save("t", "tagged body\n", tags=["tagged"])
    # As Serena's does: `tagged` is in the tags and in the body, so it is ambiguous.
    with ws.refuses("ambiguous-match"):
        store.edit("t", needle="tagged", replacement="plain")
    store.edit("t", needle="tagged body", replacement="plain body")
    read = store.read("t")
    assert read["tags"] == ["tagged"]
    assert read["content"] == "plain body\n"


def test_edit_in_global_and_by_scope(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.global_dir / "g.md", "global text")
    ws.write(ws.primary / "g.md", "project text")
    store.edit("global/g", needle="text", replacement="edited")
    assert (ws.global_dir / "g.md").read_text() == "global edited"
    store.edit("g", scope="global", content="by scope")
    assert (ws.global_dir / "g.md").read_text() == "by scope"
    assert (ws.primary / "g.md").read_text() == "project text"


def test_delete(ws: Workspace) -> None:
    store = ws.store(["team/feature"])
    store.save("FEATURE_a", "a")
    store.save("topic/b", "b")
    path = ws.root / "team" / "feature" / "FEATURE_a.md"
    assert store.delete("FEATURE_a") == {"name": "FEATURE_a", "path": str(path)}
    assert not path.exists()
    assert store.delete("mem:topic/b.md")["path"] == str(ws.primary / "topic" / "b.md")
    assert store.list_memories()["memories"] == []
    with ws.refuses("not-found"):
        store.delete("FEATURE_a")
    assert (ws.root / "team" / "feature").is_dir(), "an additional folder is never removed"
