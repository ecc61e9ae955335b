"""Writes through memory-ls change only the frontmatter lines they must (issue 23): no key
reordered, no unchanged key requoted or reformatted, so git merges the result line by line."""

from __future__ import annotations

import difflib
import random
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from store_helpers import Workspace

from memory_ls.core.rules.document import key_span

FRONTMATTER = """---
title: "Deploy notes"
tags:
  - ops
  - release
owner: 'ann'    # asks the on-call
created_at: 2025-01-01T00:00:00Z
updated_at: "2025-01-02T00:00:00Z"
links: {runbook: "https://example.com/rb", level: 2}
---
"""
BODY = "# Deploy\n\nBuild with make.\n\nShip on Tuesdays.\n"
TEXT = FRONTMATTER + BODY
KEYS = ["title", "tags", "owner", "created_at", "updated_at", "links"]


def keys_of(text: str) -> list[str]:
    """Top-level keys of the frontmatter, in file order."""
    block = text.split("---\n")[1]
    return [m.group(1) for m in re.finditer(r"^([A-Za-z_]+):", block, re.MULTILINE)]


def changed_lines(before: str, after: str) -> list[str]:
    """The lines removed or added between two texts (`-old`, `+new`)."""
    return [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), n=0, lineterm="")
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def stamp_line(text: str) -> str:
    match = re.search(r'^updated_at: "\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"$', text, re.MULTILINE)
    assert match is not None, text
    return match.group(0)


def test_an_edit_changes_its_line_and_the_stamp_only(ws: Workspace) -> None:
    store = ws.store()
    path = ws.write(ws.primary / "deploy.md", TEXT)
    store.edit("deploy", needle="Ship on Tuesdays.", replacement="Ship daily.")
    after = path.read_text()
    assert keys_of(after) == KEYS
    assert changed_lines(TEXT, after) == [
        '-updated_at: "2025-01-02T00:00:00Z"',
        f"+{stamp_line(after)}",
        "-Ship on Tuesdays.",
        "+Ship daily.",
    ]


def test_saving_a_new_body_keeps_the_block_but_the_stamp(ws: Workspace) -> None:
    store = ws.store()
    path = ws.write(ws.primary / "deploy.md", TEXT)
    store.save("deploy", BODY.replace("make", "nix"))
    after = path.read_text()
    assert keys_of(after) == KEYS
    assert changed_lines(TEXT, after) == [
        '-updated_at: "2025-01-02T00:00:00Z"',
        f"+{stamp_line(after)}",
        "-Build with make.",
        "+Build with nix.",
    ]


def test_saving_tags_rewrites_the_tags_lines_only(ws: Workspace) -> None:
    store = ws.store()
    path = ws.write(ws.primary / "deploy.md", TEXT)
    store.save("deploy", BODY, ["ops", "release", "ci"])
    after = path.read_text()
    assert keys_of(after) == KEYS
    removed = [line for line in changed_lines(TEXT, after) if line.startswith("-")]
    assert removed == ["-  - ops", "-  - release", '-updated_at: "2025-01-02T00:00:00Z"']
    assert "tags:\n- ops\n- release\n- ci\nowner: 'ann'    # asks the on-call\n" in after


def test_the_same_tags_again_change_nothing_but_the_stamp(ws: Workspace) -> None:
    store = ws.store()
    path = ws.write(ws.primary / "deploy.md", TEXT)
    store.save("deploy", BODY, ["ops", "release"])
    after = path.read_text()
    assert changed_lines(TEXT, after) == [
        '-updated_at: "2025-01-02T00:00:00Z"',
        f"+{stamp_line(after)}",
    ]


def test_writing_back_what_was_read_keeps_every_key_in_place(ws: Workspace) -> None:
    """An agent reads the whole file (frontmatter included) and writes it back changed."""
    store = ws.store()
    path = ws.write(ws.primary / "deploy.md", TEXT)
    store.save("deploy", TEXT.replace("Ship on Tuesdays.", "Ship daily."))
    after = path.read_text()
    assert keys_of(after) == KEYS
    assert [line for line in changed_lines(TEXT, after) if "updated_at" not in line] == [
        "-Ship on Tuesdays.",
        "+Ship daily.",
    ]


def test_keys_left_out_of_written_content_come_back_where_they_were(ws: Workspace) -> None:
    store = ws.store()
    path = ws.write(ws.primary / "deploy.md", TEXT)
    # The writer kept only two keys; the others are the memory's and stay in their places.
    store.save("deploy", '---\ntitle: "Deploy notes"\nlinks: {level: 3}\n---\n' + BODY)
    after = path.read_text()
    assert keys_of(after) == KEYS


def test_a_save_without_a_stamp_change_is_byte_for_byte(ws: Workspace) -> None:
    """Restoring a memory with the stamps it had writes the very bytes it had."""
    store = ws.store()
    path = ws.write(ws.primary / "deploy.md", TEXT)
    store.save("deploy", TEXT)
    first = path.read_text()
    store.save("deploy", first.replace(stamp_line(first), 'updated_at: "2025-01-02T00:00:00Z"'))
    assert path.read_text() == TEXT


_EXTRA_KEYS = ["title", "owner", "status", "links", "area"]
_OPERATIONS = st.lists(
    st.sampled_from(["edit", "body", "tags", "same-tags", "read-back", "subset"]),
    min_size=1,
    max_size=5,
)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    st.permutations(["tags", "created_at", "updated_at", *_EXTRA_KEYS]),
    _OPERATIONS,
    st.randoms(use_true_random=False),
)
def test_no_write_reorders_the_keys(
    ws: Workspace, keys: list[str], operations: list[str], chance: random.Random
) -> None:
    values = {
        "tags": "[ops, release]",
        "created_at": "2025-01-01T00:00:00Z",
        "updated_at": "'2025-01-02T00:00:00Z'",
        "title": '"Deploy"',
        "owner": "ann   # on call",
        "status": "draft",
        "links": "{a: 1}",
        "area": "\n  - build\n  - ship",
    }
    block = "".join(f"{key}: {values[key]}\n".replace(": \n", ":\n") for key in keys)
    store = ws.store()
    path = ws.write(ws.primary / "deploy.md", f"---\n{block}---\n{BODY}")
    for operation in operations:
        text = path.read_text()
        body = text.split("---\n", 2)[2]
        if operation == "edit":
            store.edit("deploy", needle="Ship", replacement="Ship")
        elif operation == "body":
            store.save("deploy", body + "More.\n")
        elif operation == "tags":
            store.save("deploy", body, ["ops", f"t{chance.randrange(100)}"])
        elif operation == "same-tags":
            store.save("deploy", body, ["ops", "release"])
        elif operation == "read-back":
            store.save("deploy", text)
        else:  # the writer keeps some keys of the block only, as written
            lines = text.split("---\n")[1].splitlines(keepends=True)
            kept = [key for key in keys if chance.random() < 0.5]
            spans = [key_span(lines, key) for key in kept]
            block = "".join("".join(lines[s[0] : s[1]]) for s in spans if s is not None)
            store.save("deploy", f"---\n{block}---\n{body}")
    after = path.read_text()
    assert keys_of(after) == keys
    for key in keys:
        if key not in ("tags", "updated_at"):  # the keys writes change
            assert f"\n{key}: {values[key]}\n".replace(": \n", ":\n") in after, key
