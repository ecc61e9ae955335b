"""Unresolved merge conflicts in memories (core/rules/conflicts.py): found, reported,
warned about."""

from __future__ import annotations

from store_helpers import Workspace

from memory_ls.core.operations.check import check_store
from memory_ls.core.rules.conflicts import ConflictBlock, find_conflicts, resolution

BODY_CONFLICT = """# Deploy

Steps:
<<<<<<< HEAD
Run make deploy.
=======
Run ./deploy.sh.
>>>>>>> feature
Then check the logs.
"""

FRONTMATTER_CONFLICT = """---
<<<<<<< HEAD
updated_at: 2025-02-01T00:00:00Z
=======
updated_at: 2025-03-01T00:00:00Z
>>>>>>> feature
---
# Deploy
"""


def test_blocks_with_and_without_diff3_base() -> None:
    assert find_conflicts(BODY_CONFLICT).blocks == (ConflictBlock(3, None, 5, 7),)
    diff3 = "<<<<<<< ours\na\n||||||| base\nb\n=======\nc\n>>>>>>> theirs\n"
    (block,) = find_conflicts(diff3).blocks
    assert block == ConflictBlock(0, 2, 4, 6)
    assert list(block.ours) == [1] and list(block.theirs) == [5]


def test_a_setext_heading_is_not_a_conflict() -> None:
    text = "Title\n=======\n\nText >>>>>>> here and a <<<<<<<< long arrow\n"
    assert not find_conflicts(text)


def test_markers_left_outside_a_block_are_stray() -> None:
    text = "a\n>>>>>>> feature\nb\n<<<<<<< HEAD\nc\n"
    found = find_conflicts(text)
    assert found.blocks == () and found.stray == (1, 3)


def test_crlf_markers_are_found() -> None:
    found = find_conflicts(BODY_CONFLICT.replace("\n", "\r\n"))
    assert found.blocks == (ConflictBlock(3, None, 5, 7),)


def test_resolution_keeps_ours_theirs_or_both() -> None:
    lines = BODY_CONFLICT.split("\n")
    (block,) = find_conflicts(BODY_CONFLICT).blocks
    assert resolution(lines, block, "ours") == ["Run make deploy."]
    assert resolution(lines, block, "theirs") == ["Run ./deploy.sh."]
    assert resolution(lines, block, "both") == ["Run make deploy.", "Run ./deploy.sh."]


def test_check_reports_a_body_conflict_at_its_marker_lines(ws: Workspace) -> None:
    store = ws.store()
    path = ws.write(ws.primary / "deploy.md", BODY_CONFLICT)
    found = [d for d in check_store(store) if d.code == "merge-conflict"]
    assert [(d.path, d.line, d.end_line, d.severity) for d in found] == [(str(path), 3, 7, "error")]
    assert "lines 4-8" in found[0].message


def test_a_conflicted_frontmatter_is_a_merge_conflict_not_bad_yaml(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "deploy.md", FRONTMATTER_CONFLICT)
    found = check_store(store)
    assert [(d.code, d.line, d.end_line) for d in found] == [("merge-conflict", 1, 5)]


def test_the_code_can_be_turned_off(ws: Workspace) -> None:
    store = ws.store(diagnostics={"merge-conflict": "off"})
    ws.write(ws.primary / "deploy.md", BODY_CONFLICT)
    assert [d for d in check_store(store) if d.code == "merge-conflict"] == []


def test_a_read_warns_first(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "deploy.md", BODY_CONFLICT)
    memory, data = store.read_file("deploy")
    result, _successors = store.read_answer(memory, data)
    assert result["warning"].startswith("Warning [merge-conflict]: memory 'deploy' holds 1 ")
    assert "from line 4" in result["warning"]
    ws.write(ws.primary / "clean.md", "# Clean\n\nTitle\n=======\n")
    memory, data = store.read_file("clean")
    assert "warning" not in store.read_answer(memory, data)[0]


# A memory about resolving conflicts: its examples are code, not a conflict (issue 34).
FENCED_EXAMPLE = """# Resolving a conflict

When git stops a merge, the file shows both sides:

```text
<<<<<<< HEAD
Run make deploy.
||||||| base
Run deploy.
=======
Run ./deploy.sh.
>>>>>>> feature
```

A lone marker too:

~~~~
>>>>>>> feature
~~~~

Indented:

    <<<<<<< HEAD
    =======
    >>>>>>> feature
"""


def test_markers_in_fenced_or_indented_code_are_not_a_conflict() -> None:
    assert not find_conflicts(FENCED_EXAMPLE)


def test_a_real_conflict_after_a_fenced_example_is_found() -> None:
    text = FENCED_EXAMPLE + "\n" + BODY_CONFLICT
    offset = len(FENCED_EXAMPLE.split("\n"))
    found = find_conflicts(text)
    assert found.blocks == (ConflictBlock(offset + 3, None, offset + 5, offset + 7),)
    assert found.stray == ()


def test_a_diff3_conflict_whose_side_opens_a_fence_is_found() -> None:
    # Ours opens a code block that theirs does not: the block is still followed to its end,
    # and the text after it is read as ours left it (in code, closed below).
    text = (
        "intro\n<<<<<<< HEAD\n```sh\nmake\n||||||| base\nold\n=======\nplain\n>>>>>>> x\n"
        "<<<<<<< not a marker in code\n```\n>>>>>>> feature\n"
    )
    found = find_conflicts(text)
    assert found.blocks == (ConflictBlock(1, 4, 6, 8),)
    assert found.stray == (11,)


def test_an_unclosed_fence_in_theirs_does_not_hide_later_conflicts() -> None:
    text = "<<<<<<< HEAD\nours\n=======\n```\ntheirs\n>>>>>>> feature\n" + BODY_CONFLICT
    found = find_conflicts(text)
    assert [block.start for block in found.blocks] == [0, 9]


def test_check_of_a_fenced_example_is_clean(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "resolving_conflicts.md", FENCED_EXAMPLE)
    assert [d for d in check_store(store) if d.code == "merge-conflict"] == []
    memory, data = store.read_file("resolving_conflicts")
    assert "warning" not in store.read_answer(memory, data)[0]


# ----- writes: content with conflict markers is refused, the fix is allowed ------------------


def test_a_write_with_conflict_markers_is_refused(ws: Workspace) -> None:
    store = ws.store()
    with ws.refuses("merge-conflict") as info:
        store.save("deploy", BODY_CONFLICT)
    message = str(info.value)
    assert "resolve the conflict: keep one side" in message.lower()
    assert "remove the markers" in message and "Nothing was written." in message
    diff3 = "# X\n<<<<<<< ours\na\n||||||| base\nb\n=======\nc\n>>>>>>> theirs\n"
    with ws.refuses("merge-conflict"):
        store.save("x", diff3)
    with ws.refuses("merge-conflict"):
        store.save("stray", "# X\nkept\n>>>>>>> feature\n")
    store.save("resolving_conflicts", FENCED_EXAMPLE)  # an example in code is fine
    store.save("clean", "# Clean\n\nsome line\n")
    with ws.refuses("merge-conflict"):
        store.edit(
            "clean", needle="some line", replacement="<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x"
        )


def test_writing_a_conflicted_memory_back_is_refused_and_the_fix_allowed(ws: Workspace) -> None:
    store = ws.store()
    two = BODY_CONFLICT + "\n<<<<<<< HEAD\nweekly\n=======\ndaily\n>>>>>>> feature\n"
    path = ws.write(ws.primary / "deploy.md", two)
    # An edit elsewhere keeps every marker: the markers would be written back.
    with ws.refuses("merge-conflict"):
        store.edit("deploy", needle="Then check the logs.", replacement="Then check logs.")
    with ws.refuses("merge-conflict"):
        store.save("deploy", two + "More.\n")
    # Resolving one block of two is a step of the fix.
    store.edit(
        "deploy",
        needle="<<<<<<< HEAD\nRun make deploy.\n=======\nRun ./deploy.sh.\n>>>>>>> feature\n",
        replacement="Run make deploy.\n",
    )
    assert len(find_conflicts(path.read_text()).blocks) == 1
    store.save("deploy", "# Deploy\n\nRun make deploy, daily.\n")
    assert not find_conflicts(path.read_text())
