"""Three-way merge of memories (core/services/merge.py): frontmatter key by key, the body
as text."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_ls.core.rules.conflicts import find_conflicts
from memory_ls.core.rules.document import parse_document
from memory_ls.core.services.merge import (
    MISSING,
    Labels,
    merge_memory,
    merge_tags,
    merge_text,
    merge_value,
)

BASE = """---
tags: [auth, api]
created_at: 2025-01-01T00:00:00Z
updated_at: 2025-01-02T00:00:00Z
owner: 'ann'   # who answers questions
---
# Login

First paragraph.

Second paragraph.

Third paragraph.
"""


def stamped(text: str, updated: str) -> str:
    return text.replace("updated_at: 2025-01-02T00:00:00Z", f"updated_at: {updated}")


def test_different_paragraphs_both_stamped_merge_clean_with_the_later_stamp() -> None:
    ours = stamped(BASE.replace("First paragraph.", "First, ours."), "2025-03-01T10:00:00Z")
    theirs = stamped(BASE.replace("Third paragraph.", "Third, theirs."), "2025-02-01T10:00:00Z")
    result = merge_memory(BASE, ours, theirs)
    assert result.clean and result.by_key
    assert result.text == stamped(
        BASE.replace("First paragraph.", "First, ours.").replace(
            "Third paragraph.", "Third, theirs."
        ),
        "2025-03-01T10:00:00Z",
    )
    # Either way round: the later time wins, not our side.
    assert "updated_at: 2025-03-01T10:00:00Z" in merge_memory(BASE, theirs, ours).text


def test_tags_added_on_both_sides_are_united_and_a_removal_is_kept() -> None:
    ours = BASE.replace("[auth, api]", "[auth, api, login]")
    theirs = BASE.replace("[auth, api]", "[auth, sessions]")  # adds sessions, removes api
    result = merge_memory(BASE, ours, theirs)
    assert result.clean
    assert result.text == BASE.replace("[auth, api]", "[auth, login, sessions]")


def test_block_list_tags_stay_a_block_list() -> None:
    base = BASE.replace("tags: [auth, api]", "tags:\n  - auth\n  - api")
    ours = base.replace("  - api\n", "  - api\n  - login\n")
    theirs = base.replace("  - api\n", "  - api\n  - sessions\n")
    result = merge_memory(base, ours, theirs)
    assert result.clean
    assert "tags:\n- auth\n- api\n- login\n- sessions\n" in result.text
    assert parse_document(result.text).tags == ["auth", "api", "login", "sessions"]


def test_created_at_takes_the_earlier_time() -> None:
    ours = BASE.replace("created_at: 2025-01-01T00:00:00Z", "created_at: 2024-06-01T00:00:00Z")
    theirs = BASE.replace("created_at: 2025-01-01T00:00:00Z", "created_at: 2024-09-01T00:00:00Z")
    assert "created_at: 2024-06-01T00:00:00Z" in merge_memory(BASE, ours, theirs).text
    assert "created_at: 2024-06-01T00:00:00Z" in merge_memory(BASE, theirs, ours).text


def test_a_key_changed_on_one_side_takes_their_line_as_written() -> None:
    theirs = BASE.replace("owner: 'ann'   # who answers questions", 'owner: "bob"  # since May')
    result = merge_memory(BASE, BASE, theirs)
    assert result.clean
    assert result.text == theirs


def test_unchanged_keys_keep_our_formatting_and_order() -> None:
    ours = BASE.replace("owner: 'ann'   # who answers questions", "owner:   'ann'   # ours")
    theirs = stamped(BASE, "2025-05-05T05:05:05Z")
    result = merge_memory(BASE, ours, theirs)
    assert result.text == stamped(ours, "2025-05-05T05:05:05Z")


def test_a_key_added_by_them_goes_after_the_key_it_follows_there() -> None:
    theirs = BASE.replace("created_at:", "status: draft\ncreated_at:")
    ours = BASE.replace("First paragraph.", "First, ours.")
    result = merge_memory(BASE, ours, theirs)
    assert result.clean
    assert result.text == theirs.replace("First paragraph.", "First, ours.")


def test_a_key_removed_on_one_side_is_removed() -> None:
    ours = BASE.replace("owner: 'ann'   # who answers questions\n", "")
    theirs = stamped(BASE, "2025-05-05T05:05:05Z")
    result = merge_memory(BASE, ours, theirs)
    assert result.clean
    assert "owner" not in result.text


def test_both_sides_changing_one_key_differently_is_a_marked_conflict() -> None:
    ours = BASE.replace("owner: 'ann'   # who answers questions", "owner: bob")
    theirs = BASE.replace("owner: 'ann'   # who answers questions", "owner: cat")
    result = merge_memory(BASE, ours, theirs, Labels("HEAD", "base", "feature"))
    assert result.conflicts == 1 and result.conflicted_keys == ("owner",)
    assert (
        "<<<<<<< HEAD\nowner: bob\n=======\nowner: cat\n>>>>>>> feature\n---\n# Login"
        in result.text
    )
    found = find_conflicts(result.text)
    assert [(b.start, b.separator, b.end) for b in found.blocks] == [(4, 6, 8)]


def test_diff3_style_shows_the_base_of_a_conflict() -> None:
    ours = BASE.replace("Second paragraph.", "Second, ours.")
    theirs = BASE.replace("Second paragraph.", "Second, theirs.")
    result = merge_memory(BASE, ours, theirs, style="diff3")
    assert result.conflicts == 1
    assert (
        "<<<<<<< ours\nSecond, ours.\n||||||| base\nSecond paragraph.\n=======\n"
        "Second, theirs.\n>>>>>>> theirs\n" in result.text
    )


def test_same_line_changed_differently_in_the_body_conflicts() -> None:
    ours = stamped(BASE.replace("Second paragraph.", "Second, ours."), "2025-02-01T00:00:00Z")
    theirs = stamped(BASE.replace("Second paragraph.", "Second, theirs."), "2025-03-01T00:00:00Z")
    result = merge_memory(BASE, ours, theirs)
    assert result.conflicts == 1 and result.conflicted_keys == ()
    assert "updated_at: 2025-03-01T00:00:00Z" in result.text
    (block,) = find_conflicts(result.text).blocks
    lines = result.text.split("\n")
    assert lines[block.start] == "<<<<<<< ours" and lines[block.end] == ">>>>>>> theirs"


def test_plain_memories_merge_as_text() -> None:
    base = "# Notes\n\none\n\ntwo\n"
    result = merge_memory(base, base.replace("one", "ONE"), base.replace("two", "TWO"))
    assert result.clean and not result.by_key
    assert result.text == "# Notes\n\nONE\n\nTWO\n"


def test_broken_frontmatter_falls_back_to_a_whole_file_merge() -> None:
    base = "---\ntags: [a\n---\nbody one\n\nbody two\n"
    ours = base.replace("body one", "ONE")
    theirs = base.replace("body two", "TWO")
    result = merge_memory(base, ours, theirs)
    assert result.clean and not result.by_key
    assert result.text == "---\ntags: [a\n---\nONE\n\nTWO\n"


def test_frontmatter_added_on_one_side_to_a_plain_memory() -> None:
    base = "# Notes\n\none\n\ntwo\n"
    ours = "---\ntags: [x]\ncreated_at: 2025-01-01T00:00:00Z\n---\n" + base
    theirs = base.replace("two", "TWO")
    result = merge_memory(base, ours, theirs)
    assert result.clean
    assert result.text == ours.replace("two", "TWO")


def test_both_added_the_same_new_memory_with_different_stamps() -> None:
    ours = (
        "---\ntags: [a]\ncreated_at: 2025-01-01T00:00:00Z\n"
        "updated_at: 2025-01-01T00:00:00Z\n---\nSame.\n"
    )
    theirs = ours.replace("2025-01-01", "2025-01-02").replace("[a]", "[b]")
    result = merge_memory("", ours, theirs)
    assert result.clean
    assert result.text == (
        "---\ntags: [a, b]\ncreated_at: 2025-01-01T00:00:00Z\n"
        "updated_at: 2025-01-02T00:00:00Z\n---\nSame.\n"
    )


def test_crlf_memories_keep_their_line_breaks() -> None:
    base = BASE.replace("\n", "\r\n")
    ours = stamped(base, "2025-03-01T00:00:00Z").replace("First paragraph.", "First, ours.")
    theirs = base.replace("[auth, api]", "[auth, api, x]").replace("Third paragraph.", "3.")
    result = merge_memory(base, ours, theirs)
    assert result.clean
    assert "\n" not in result.text.replace("\r\n", "")
    assert "tags: [auth, api, x]\r\n" in result.text and "3.\r\n" in result.text


def test_merge_tags_order_is_ours_then_their_additions() -> None:
    assert merge_tags(["a", "b"], ["b", "a", "c"], ["a", "b", "d"]) == ["b", "a", "c", "d"]
    assert merge_tags(["a", "b"], ["a"], ["a", "b", "d"]) == ["a", "d"]
    assert merge_tags([], ["x"], ["x", "y"]) == ["x", "y"]


def test_merge_value_three_way_rules() -> None:
    assert merge_value("k", 1, 1, 2) == (2, False)
    assert merge_value("k", 1, 2, 1) == (2, False)
    assert merge_value("k", 1, 2, 3) == (MISSING, True)
    assert merge_value("k", MISSING, 2, MISSING) == (2, False)
    assert merge_value("k", 1, True, 1) == (True, False)  # `true` is not `1`
    later = dt.datetime(2025, 2, 1, tzinfo=dt.timezone.utc)
    earlier = dt.datetime(2025, 1, 15, tzinfo=dt.timezone.utc)
    assert merge_value("updated_at", "x", earlier, later) == (later, False)
    assert merge_value("created_at", "x", later, earlier) == (earlier, False)
    assert merge_value("updated_at", "x", "garbage", later) == (MISSING, True)


def test_merge_text_counts_conflicts() -> None:
    base = "a\nb\nc\n"
    assert merge_text(base, "A\nb\nc\n", "a\nb\nC\n") == ("A\nb\nC\n", 0)
    text, conflicts = merge_text(base, "X\nb\nc\n", "Y\nb\nc\n")
    assert conflicts == 1 and text.startswith("<<<<<<< ours\nX\n=======\nY\n>>>>>>> theirs\n")


# ----- properties ---------------------------------------------------------------------

_WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta", "auth", "api", "db", "ui"])
_PARAGRAPHS = 6


def _memory(tags: list[str], updated: int, paragraphs: list[str], extra: str = "") -> str:
    stamp = (
        dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(hours=updated)
    ).strftime("%Y-%m-%dT%H:%M:%SZ")
    head = f"tags: [{', '.join(tags)}]\ncreated_at: 2024-12-01T00:00:00Z\nupdated_at: {stamp}\n"
    return f"---\n{head}{extra}---\n# Title\n\n" + "\n\n".join(paragraphs) + "\n"


@st.composite
def _edits(draw: st.DrawFn) -> tuple[str, str, str, dict[str, object]]:
    """A base and two sides editing disjoint paragraphs, adding tags and restamping."""
    base_tags = draw(st.lists(_WORDS, unique=True, max_size=3))
    paragraphs = [f"Paragraph {n}." for n in range(_PARAGRAPHS)]
    ours_para = draw(st.sets(st.integers(0, _PARAGRAPHS - 1), max_size=3))
    # Their paragraphs are at least two away from ours (adjacent edits conflict in git too).
    free = [n for n in range(_PARAGRAPHS) if all(abs(n - m) > 1 for m in ours_para)]
    theirs_para = draw(st.sets(st.sampled_from(free), max_size=3)) if free else set()
    ours_tags = base_tags + [
        t for t in draw(st.lists(_WORDS, unique=True, max_size=2)) if t not in base_tags
    ]
    theirs_tags = base_tags + [
        t for t in draw(st.lists(_WORDS, unique=True, max_size=2)) if t not in base_tags
    ]
    ours_time, theirs_time = draw(st.integers(1, 500)), draw(st.integers(1, 500))
    base = _memory(base_tags, 0, paragraphs)
    ours = _memory(
        ours_tags,
        ours_time,
        [f"{p} ours" if n in ours_para else p for n, p in enumerate(paragraphs)],
    )
    theirs = _memory(
        theirs_tags,
        theirs_time,
        [f"{p} theirs" if n in theirs_para else p for n, p in enumerate(paragraphs)],
    )
    expected = {
        "tags": set(ours_tags) | set(theirs_tags),
        "updated": max(ours_time, theirs_time),
        "ours": ours_para,
        "theirs": theirs_para,
    }
    return base, ours, theirs, expected


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_edits())
def test_disjoint_edits_always_merge_clean(case: tuple[str, str, str, dict[str, object]]) -> None:
    base, ours, theirs, expected = case
    result = merge_memory(base, ours, theirs)
    assert result.clean, result.text
    doc = parse_document(result.text)
    assert doc.problem is None
    assert set(doc.tags) == expected["tags"]
    hours = expected["updated"]
    assert isinstance(hours, int)
    assert doc.metadata["updated_at"] == dt.datetime(
        2025, 1, 1, tzinfo=dt.timezone.utc
    ) + dt.timedelta(hours=hours)
    for side in ("ours", "theirs"):
        touched = expected[side]
        assert isinstance(touched, set)
        for n in touched:
            assert f"Paragraph {n}. {side}" in doc.body
    # Merging is symmetric but for the order of tags.
    mirrored = parse_document(merge_memory(base, theirs, ours).text)
    assert mirrored.body == doc.body and set(mirrored.tags) == set(doc.tags)


@settings(max_examples=40, deadline=None)
@given(_edits())
def test_a_side_that_changed_nothing_gives_the_other_side(
    case: tuple[str, str, str, dict[str, object]],
) -> None:
    base, ours, theirs, _expected = case
    assert merge_memory(base, base, theirs).text == theirs
    assert merge_memory(base, ours, base).text == ours
    assert merge_memory(base, ours, ours).text == ours


@pytest.mark.parametrize(
    "extra",
    ["owner: ann\n", "meta:\n  team: core\n  level: 2\n", "# a comment\nowner: ann\n"],
)
def test_other_keys_survive_a_merge_byte_for_byte(extra: str) -> None:
    base = _memory(["a"], 0, ["One.", "Two.", "Three."], extra)
    ours = _memory(["a", "b"], 5, ["One!", "Two.", "Three."], extra)
    theirs = _memory(["a", "c"], 7, ["One.", "Two.", "Three!"], extra)
    result = merge_memory(base, ours, theirs)
    assert result.clean
    assert result.text == _memory(["a", "b", "c"], 7, ["One!", "Two.", "Three!"], extra)


_LINES = st.lists(st.sampled_from(["a", "b", "c", "d", "", "# h"]), min_size=1, max_size=12)


@st.composite
def _three_texts(draw: st.DrawFn) -> tuple[str, str, str]:
    """A base text and two versions of it, each with some lines replaced, added or removed."""
    base = draw(_LINES)

    def variant() -> list[str]:
        lines = list(base)
        for _ in range(draw(st.integers(0, 3))):
            at = draw(st.integers(0, len(lines)))
            action = draw(st.sampled_from(["replace", "insert", "delete"]))
            if action == "insert" or not lines or at == len(lines):
                lines.insert(at, draw(st.sampled_from(["x", "y", "z"])))
            elif action == "replace":
                lines[at] = draw(st.sampled_from(["x", "y", "z"]))
            else:
                del lines[at]
        return lines

    def text(lines: list[str]) -> str:
        return "".join(f"{line}\n" for line in lines)

    return text(base), text(variant()), text(variant())


@settings(max_examples=60, deadline=None)
@given(_three_texts(), st.sampled_from(["merge", "diff3"]))
def test_the_detector_finds_every_conflict_git_marks(
    texts: tuple[str, str, str], style: str
) -> None:
    base, ours, theirs = texts
    merged, conflicts = merge_text(base, ours, theirs, style=style)  # type: ignore[arg-type]
    found = find_conflicts(merged)
    assert len(found.blocks) == conflicts and found.stray == ()
    assert all((block.base is not None) == (style == "diff3") for block in found.blocks)


def test_a_key_the_line_editor_cannot_find_is_merged_as_text_never_doubled() -> None:
    base = '---\n"owner": ann\nupdated_at: 2025-01-01T00:00:00Z\n---\none\n\ntwo\n'
    ours = base.replace("one", "ONE")
    theirs = base.replace('"owner": ann', "owner: bob")
    result = merge_memory(base, ours, theirs)
    assert result.clean and not result.by_key
    assert result.text == theirs.replace("one", "ONE")
