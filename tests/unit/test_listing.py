"""core/storage/listing.py and the store's paged listing: titles, groups, cursors, kept scans."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from store_helpers import Workspace

from memory_ls.core import Store
from memory_ls.core.rules.errors import InvalidArguments
from memory_ls.core.rules.titles import title_of
from memory_ls.core.storage.listing import ScanCache, decode_cursor, encode_cursor, group_names
from memory_ls.core.storage.memory import scan_folder

# Long enough ago that a directory counts as settled (core/storage/listing.py RACY_NS is 2 s).
LONG_AGO_NS = 1_600_000_000 * 10**9


@pytest.mark.parametrize(
    ("body", "title"),
    [
        ("# Title\ntext\n", "Title"),
        ("intro\n\n### Deeper  ###\n", "Deeper"),
        ("\n\n   first line \nsecond\n", "first line"),
        ("Setext\n---\n", "Setext"),
        ("```\n# code comment\n```\nafter\n", "after"),
        ("#hashtag\nreal\n", "#hashtag"),  # not a heading: no space after the marks
        ("", None),
        ("\n  \n", None),
        ("# " + "x" * 300, "x" * 99 + "…"),
    ],
)
def test_title_is_the_first_heading_else_the_first_line(body: str, title: str | None) -> None:
    assert title_of(body) == title


def test_groups_divide_names_by_their_next_segment() -> None:
    names = ["FEATURE_a_1", "FEATURE_a_2", "FEATURE_b_1", "auth/x", "auth/y", "global/t", "plain"]
    groups = group_names(names)
    assert groups.base == ""
    assert groups.groups == [("FEATURE_", 3), ("auth/", 2), ("global/", 1)]
    assert groups.ungrouped == 1
    # One group alone is divided further.
    assert group_names(["FEATURE_a_1", "FEATURE_a_2", "FEATURE_b_1"]).groups == [
        ("FEATURE_a_", 2),
        ("FEATURE_b_", 1),
    ]
    under = group_names(["FEATURE_a_1", "FEATURE_a_2"], "FEATURE_a_")
    assert (under.groups, under.ungrouped) == ([], 2)


def test_a_cursor_is_refused_unless_a_listing_gave_it() -> None:
    cursor = encode_cursor(("auth/x", "/p/auth/x.md"), {"topic": "auth"})
    assert decode_cursor(cursor) == (("auth/x", "\U0010ffff"), {"topic": "auth"})
    tied = encode_cursor(("x", "/p/x.md"), {}, tie=True)
    assert decode_cursor(tied) == (("x", "/p/x.md"), {})
    for bad in ("", "garbage!", "W10", cursor[:-3], 5):
        with pytest.raises(InvalidArguments):
            decode_cursor(bad)


def names_of(result: dict[str, object]) -> list[str]:
    memories = result["memories"]
    assert isinstance(memories, list)
    return [m["name"] for m in memories]


def test_pages_cover_the_listing_with_tags_and_invalid_names_that_share_one(
    ws: Workspace,
) -> None:
    for number in range(7):
        tags = "tags: [odd]\n" if number % 2 else "tags: [even]\n"
        ws.write(ws.primary / f"note_{number}.md", f"---\n{tags}---\n# Note {number}\n")
    # Two files whose (invalid) names are the same: sorted apart by path, listed both.
    ws.write(ws.primary / "bad:name.md", "a\n")
    ws.write(ws.root / "shared" / "feature" / "bad:name.md", "b\n")
    store = ws.store(["shared/feature"])
    everything = store.list_memories()
    assert "nextCursor" not in everything and everything["total"] == 9
    for limit in (1, 2, 3, 9):
        seen: list[str] = []
        paths: list[str] = []
        page = store.list_memories(limit=limit)
        while True:
            seen += names_of(page)
            paths += [m["path"] for m in page["memories"]]
            if "nextCursor" not in page:
                break
            page = store.list_memories(limit=limit, cursor=page["nextCursor"])
        assert seen == names_of(everything), limit
        assert len(set(paths)) == 9
    # With tags: files are read until the page is full, and the pages cover every match.
    odd: list[str] = []
    page = store.list_memories(tags=["odd"], limit=2)
    assert "total" not in page  # counting them all would read every file
    while True:
        odd += names_of(page)
        if "nextCursor" not in page:
            break
        page = store.list_memories(limit=2, cursor=page["nextCursor"])
    assert odd == ["note_1", "note_3", "note_5"]
    assert store.list_memories(tags=["odd"], limit=5)["total"] == 3


def test_a_kept_scan_is_used_until_a_directory_in_the_folder_changes(ws: Workspace) -> None:
    for name in ("a", "topic/b", "topic/deep/c"):
        ws.write(ws.primary / f"{name}.md", f"{name}\n")
    settle(ws.primary)
    config = ws.store().config
    cache = ScanCache()
    store = Store(config, scan_cache=cache)
    first = cache.scan(config.primary, (), scan_folder)
    assert cache.scan(config.primary, (), scan_folder) is first
    assert names_of(store.list_memories()) == ["a", "topic/b", "topic/deep/c"]

    # A file added deep down changes only its own directory: still seen at once.
    ws.write(ws.primary / "topic" / "deep" / "d.md", "d\n")
    assert names_of(store.list_memories()) == ["a", "topic/b", "topic/deep/c", "topic/deep/d"]
    # Just changed: not kept (a change within the same timestamp tick would go unseen).
    again = cache.scan(config.primary, (), scan_folder)
    assert not again.settled
    (ws.primary / "topic" / "b.md").unlink()
    assert names_of(store.list_memories()) == ["a", "topic/deep/c", "topic/deep/d"]

    # A new topic folder, and a folder that did not exist yet.
    settle(ws.primary)
    assert names_of(store.list_memories()) == ["a", "topic/deep/c", "topic/deep/d"]
    ws.write(ws.primary / "new" / "e.md", "e\n")
    assert "new/e" in names_of(store.list_memories())
    assert names_of(store.list_memories(scope="global")) == []
    ws.write(ws.global_dir / "tip.md", "tip\n")
    assert names_of(store.list_memories(scope="global")) == ["global/tip"]


def settle(folder: Path) -> None:
    """Date every directory under the folder long ago, as a store nobody touched lately."""
    for directory, _, _ in os.walk(folder):
        os.utime(directory, ns=(LONG_AGO_NS, LONG_AGO_NS))
