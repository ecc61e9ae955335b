"""list_memories sized for a context window, through the official MCP client over stdio:
pages and cursors, the views, what an answer says at 10,000 memories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcp import ClientSession
from mcp.types import TextContent
from test_mcp import Workspace, call, mcp_server, ok, refused, until, ws

__all__ = ["ws"]  # the workspace fixture of test_mcp.py

WORDS = ("auth", "cache", "deploy", "payments", "search")
# What an agent's context can afford for one listing: about 8,000 tokens.
ANSWER_BUDGET_CHARS = 32_000


def texts_of(result: Any) -> list[str]:
    """The text blocks of an answer."""
    return [block.text for block in result.content if isinstance(block, TextContent)]


async def every_page(
    session: ClientSession, between: Any = None, **arguments: Any
) -> tuple[list[str], int]:
    """The names of every page of a listing, following next_cursor; and the page count.
    `between(page_number)` runs after each page (to change the store meanwhile)."""
    names: list[str] = []
    pages = 0
    while True:
        _, result = await ok(session, "list_memories", **arguments)
        pages += 1
        names += [m["name"] for m in result["memories"]]
        if "next_cursor" not in result:
            return names, pages
        arguments = {"cursor": result["next_cursor"], "limit": arguments.get("limit")}
        if between is not None:
            await between(pages)


def big_store(ws: Workspace, size: int) -> dict[str, Path]:
    """`size` memories over the primary folder (topics and plain names), feature, global:
    name -> file, sorted by name."""
    names = {}
    ws.primary.mkdir(parents=True, exist_ok=True)
    ws.global_folder.mkdir(parents=True, exist_ok=True)
    for number in range(size):
        word = WORDS[number % len(WORDS)]
        slot = number % 4
        if slot == 0:
            name, path = f"{word}/note_{number:05d}", ws.primary / word / f"note_{number:05d}.md"
        elif slot == 1:
            name, path = f"{word}_notes_{number:05d}", ws.primary / f"{word}_notes_{number:05d}.md"
        elif slot == 2:
            name = f"FEATURE_{word}_{number:05d}"
            path = ws.feature / f"{name}.md"
        else:
            name = f"global/tip_{number:05d}"
            path = ws.global_folder / f"tip_{number:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# About {word}, note {number}\n\nSome text on {word}.\n")
        names[name] = path
    return dict(sorted(names.items()))


async def test_pages_cover_every_memory_once(ws: Workspace) -> None:
    expected = list(big_store(ws, 103))
    async with mcp_server(ws) as session:
        names, pages = await every_page(session, limit=10)
        assert names == expected
        assert pages == 11
        # The default page size, and the same memories in other views' pages.
        _, first = await ok(session, "list_memories")
        assert len(first["memories"]) == 50 and first["total"] == 103
        assert first["remaining"] == 53
        titled, _ = await every_page(session, limit=40, view="titles")
        assert titled == expected
        # A cursor carries its listing's filters.
        topic, _ = await every_page(session, limit=4, topic="auth")
        assert topic == [n for n in expected if n.startswith("auth/")]
        tagged_prefix, _ = await every_page(session, limit=7, prefix="FEATURE_")
        assert tagged_prefix == [n for n in expected if n.startswith("FEATURE_")]


async def test_pages_stay_right_when_memories_come_and_go_between_them(ws: Workspace) -> None:
    store = big_store(ws, 60)
    expected = list(store)
    removed = {expected[5], expected[40]}  # one on a page already seen, one on a later page
    added_late = "zz_added_after_the_first_page"
    added_early = "AAA_added_before_the_cursor"  # sorts before every name
    async with mcp_server(ws) as session:

        async def change(page: int) -> None:
            if page == 1:
                # Through the server, and behind its back on disk, within the same second.
                await ok(session, "write_memory", memory_name=added_late, content="# Late\n")
                (ws.primary / f"{added_early}.md").write_text("# Early\n")
                await ok(session, "delete_memory", memory_name=expected[40])
                store[expected[5]].unlink()

        names, _ = await every_page(session, change, limit=10)
        # Nothing twice; every memory there throughout exactly once; a memory added after
        # the cursor is listed, one added before it is not (its page is past).
        assert len(names) == len(set(names))
        assert [n for n in names if n not in removed and n != added_late] == [
            n for n in expected if n not in removed
        ]
        assert added_late in names and added_early not in names
        assert expected[40] not in names
        # A new listing sees the store as it is now, once the watch reported the changes
        # made behind the server's back (its own at once: see above).
        now = sorted({*expected, added_late, added_early} - removed)
        await until(
            session,
            "list_memories",
            lambda page: [m["name"] for m in page["memories"]] == now,
            limit=len(now),
        )
        names, _ = await every_page(session, limit=25)
        assert names == sorted({*expected, added_late, added_early} - removed)


async def test_the_default_answer_is_bounded_at_10_000_memories(ws: Workspace) -> None:
    expected = list(big_store(ws, 10_000))
    async with mcp_server(ws) as session:
        for arguments in ({}, {"topic": "payments"}, {"view": "titles"}, {"view": "topics"}):
            answer = await call(session, "list_memories", **arguments)
            assert not answer.is_error
            text = "\n".join(texts_of(answer))
            structured = json.dumps(answer.structured_content)
            assert len(text) + len(structured) <= ANSWER_BUDGET_CHARS, arguments

        answer = await call(session, "list_memories")
        serena, more = texts_of(answer)
        result = answer.structured_content or {}
        # Serena's JSON, of the page only; the text after it names no memory again.
        assert json.loads(serena) == {"memories": expected[:50]}
        assert not any(name in more for name in expected)
        assert "Memories 1-50 of 10,000 (sorted by name)." in more
        assert f'list_memories(cursor="{result["next_cursor"]}")' in more
        assert "9,950 more" in more
        # Where to narrow it: the largest name groups, as prefixes to list.
        assert 'list_memories(prefix="global/")' in more or "global/ (2,500)" in more
        assert "FEATURE_ (2,500)" in more

        _, result = await ok(session, "list_memories", topic="payments")
        assert result["total"] == 500 and len(result["memories"]) == 50
        assert all(m["name"].startswith("payments/") for m in result["memories"])


async def test_topics_view_counts_groups_and_folders_without_names(ws: Workspace) -> None:
    expected = list(big_store(ws, 200))
    (ws.primary / "project_overview.md").write_text("Overview.\n")
    async with mcp_server(ws) as session:
        answer = await call(session, "list_memories", view="topics")
        (text,) = texts_of(answer)
        result = answer.structured_content or {}
        assert result["total"] == 201
        groups = {g["prefix"]: g["count"] for g in result["groups"]}
        assert groups["FEATURE_"] == 50 and groups["global/"] == 50
        assert groups["auth/"] == 10 and groups["auth_"] == 10
        assert groups["project_"] == 1
        assert {f["folder"]: f["count"] for f in result["folders"]} == {
            str(ws.primary): 101,
            str(ws.feature): 50,
            str(ws.global_folder): 50,
        }
        assert "201 memories." in text and "- FEATURE_ 50" in text
        assert "additional folder feature 50" in text
        assert not any(name in text for name in expected)

        # Within a group, the next level: one group alone is divided further.
        _, result = await ok(session, "list_memories", view="topics", prefix="FEATURE_")
        assert result["base"] == "FEATURE_"
        assert {g["prefix"] for g in result["groups"]} == {f"FEATURE_{w}_" for w in WORDS}
        _, result = await ok(session, "list_memories", view="topics", topic="global")
        assert result["base"] == "global/tip_" and result["ungrouped"] == 50
        _, result = await ok(session, "list_memories", view="topics", tags=["nothing"])
        assert result["total"] == 0


async def test_titles_view_gives_one_row_per_memory_with_its_title(ws: Workspace) -> None:
    ws.primary.mkdir(parents=True)
    (ws.primary / "heading.md").write_text(
        "---\ntags: [alpha]\n---\nIntro line.\n\n## The real title ##\n"
    )
    (ws.primary / "first_line.md").write_text("\n\n  Just a first line  \nmore\n")
    (ws.primary / "fenced.md").write_text("```\n# not a heading\n```\nSetext title\n====\n")
    (ws.primary / "empty.md").write_text("")
    (ws.vendor / "VENDOR_x.md").write_text("# Vendor x\n")
    async with mcp_server(ws) as session:
        answer = await call(session, "list_memories", view="titles")
        (text,) = texts_of(answer)
        result = answer.structured_content or {}
        titles = {m["name"]: m["title"] for m in result["memories"]}
        assert titles == {
            "VENDOR_x": "Vendor x",
            "empty": None,
            "fenced": "Setext title",
            "first_line": "Just a first line",
            "heading": "The real title",
        }
        assert "- heading: The real title [tags alpha]\n" in text
        assert "- empty\n" in text and "- first_line: Just a first line\n" in text
        # A title that only repeats the name is left out; read-only memories say so.
        assert "- VENDOR_x [read-only]\n" in text
        assert text.count("VENDOR_x") == 1


async def test_an_empty_listing_says_what_it_means(ws: Workspace) -> None:
    async with mcp_server(ws) as session:
        serena, text = texts_of(await call(session, "list_memories"))
        assert json.loads(serena) == {}
        assert "nothing is stored yet" in text and "write_memory" in text
        await ok(session, "write_memory", memory_name="auth/login", content="# Login\n")
        serena, text = texts_of(await call(session, "list_memories", topic="payments"))
        assert json.loads(serena) == {}
        assert 'No memories under topic "payments"; the store holds 1 memory in all' in text


async def test_paging_arguments_are_checked(ws: Workspace) -> None:
    big_store(ws, 12)
    async with mcp_server(ws) as session:
        _, first = await ok(session, "list_memories", limit=5, topic="auth")
        cursor = first.get("next_cursor")
        for arguments, words in (
            ({"limit": 0}, ["limit"]),
            ({"limit": 501}, ["limit"]),
            ({"limit": "5"}, ["limit", "got string"]),
            ({"cursor": "garbage"}, ["cursor is not one a listing gave"]),
            ({"view": "everything"}, ["view"]),
        ):
            text = await refused(session, "list_memories", **arguments)
            assert text.startswith("[invalid-arguments] ")
            assert all(word in text for word in words), (arguments, text)
        # The topic "auth" holds 3 of the 12: one page; a cursor of a listing with more pages
        # refuses other filters.
        assert cursor is None
        _, first = await ok(session, "list_memories", limit=2, prefix="FEATURE_")
        text = await refused(session, "list_memories", cursor=first["next_cursor"], prefix="auth")
        assert "cursor continues a listing whose prefix is" in text


def test_store_sizes_in_this_file_are_what_the_tests_say(tmp_path: Path) -> None:
    """big_store's layout, which the counts above rely on."""
    space = Workspace(
        tmp=tmp_path,
        root=tmp_path / "repo",
        primary=tmp_path / "repo" / ".serena" / "memories",
        feature=tmp_path / "feature",
        spec=tmp_path / "spec",
        vendor=tmp_path / "vendor",
        plan=tmp_path / "plan",
        global_folder=tmp_path / "global",
    )
    names = big_store(space, 20)
    assert len(names) == len(set(names)) == 20
    assert sum(n.startswith("global/") for n in names) == 5
    assert sum(n.startswith("FEATURE_") for n in names) == 5
