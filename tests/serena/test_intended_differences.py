"""The intended-difference predicates excuse what SPEC asks for, and nothing next to it."""

from __future__ import annotations

from typing import Any

import intended
from tree_snapshot import Snapshot, file_entry

KEY = "project/.serena/memories/notes.md"
OK = {"kind": "ok"}


def _explain(op: dict[str, Any], before: bytes | None, serena: bytes, mls: bytes) -> str | None:
    trees: list[Snapshot] = [
        {KEY: file_entry(data)} if data is not None else {} for data in (before, serena, mls)
    ]
    context = intended.OpContext(op, OK, OK, *trees)
    return intended.explain(context, "file", KEY)


def _edit() -> dict[str, Any]:
    return {
        "tool": "edit_memory",
        "memory_name": "notes",
        "needle": "a",
        "repl": "b",
        "mode": "literal",
    }


def test_an_updated_at_line_is_excused() -> None:
    """An edit that also moves updated_at is the frontmatter-updated-at difference."""
    old = b"---\nkey: v\nupdated_at: 2020-01-01T00:00:00Z\n---\na\n"
    serena = b"---\nkey: v\nupdated_at: 2020-01-01T00:00:00Z\n---\nb\n"
    mls = b"---\nkey: v\nupdated_at: 2026-11-23T10:00:00Z\n---\nb\n"
    assert _explain(_edit(), old, serena, mls) == "frontmatter-updated-at"


def test_a_dropped_comment_or_added_created_at_is_not_excused() -> None:
    """Timestamps aside, the frontmatter must stay byte for byte (comments, no created_at)."""
    old = b"---\n# why\nkey: v\n---\na\n"
    serena = b"---\n# why\nkey: v\n---\nb\n"
    stamp = b"updated_at: 2026-11-23T10:00:00Z\n"
    assert _explain(_edit(), old, serena, b"---\nkey: v\n" + stamp + b"---\nb\n") is None
    created = b"created_at: 2026-11-23T10:00:00Z\n"
    assert (
        _explain(_edit(), old, serena, b"---\n# why\nkey: v\n" + created + stamp + b"---\nb\n")
        is None
    )


def test_a_save_over_frontmatter_keeps_its_keys() -> None:
    """Saving plain content over a memory with frontmatter keeps the keys (SPEC 2.5)."""
    op = {"tool": "write_memory", "memory_name": "notes", "content": "new\n"}
    keys = b"---\nowner: me\ncreated_at: 2020-01-01T00:00:00Z\n"
    old = keys + b"---\nold\n"
    mls = keys + b"updated_at: 2026-11-23T10:00:00Z\n---\nnew\n"
    assert _explain(op, old, b"new\n", mls) == "save-merges-frontmatter"
    assert _explain(op, old, b"new\n", mls.replace(b"new\n", b"NEW\n")) is None
    assert _explain(op, old, b"new\n", mls.replace(b"owner: me", b"owner: you")) is None


def test_name_rules_excuse_creating_a_name_but_not_using_a_file_on_disk() -> None:
    """Renaming to `CON` may be refused; editing, saving or renaming an existing `CON` not."""
    refused = {"kind": "invalid-name"}
    on_disk = {"project/.serena/memories/CON.md": file_entry(b"x\n")}
    rename_to = {"tool": "rename_memory", "old_name": "notes", "new_name": "CON"}
    context = intended.OpContext(rename_to, OK, refused, on_disk, {}, {})
    assert intended.explain(context, "kind", "") == "names-windows-device"
    for op in (
        {"tool": "write_memory", "memory_name": "CON", "content": "y\n"},
        {"tool": "rename_memory", "old_name": "CON", "new_name": "valid"},
        {"tool": "delete_memory", "memory_name": "CON"},
        _edit() | {"memory_name": "CON"},
    ):
        context = intended.OpContext(op, OK, refused, on_disk, {}, {})
        assert intended.explain(context, "kind", "") is None, op
    new = {"tool": "write_memory", "memory_name": "CON", "content": "y\n"}
    assert intended.explain(intended.OpContext(new, OK, refused, {}, {}, {}), "kind", "") == (
        "names-windows-device"
    )


def test_surrounding_spaces_are_excused_only_where_the_trimmed_name_is_meant() -> None:
    """` x` with only the file ` x.md` on disk must act on it; with `x.md` too, `x` wins."""
    read = {"tool": "read_memory", "memory_name": " x"}
    exact = {"project/.serena/memories/ x.md": file_entry(b"exact\n")}
    trimmed = {"project/.serena/memories/x.md": file_entry(b"trimmed\n")}
    missing = {"kind": "not-found"}
    assert (
        intended.explain(intended.OpContext(read, OK, missing, exact, {}, {}), "kind", "") is None
    )
    both = exact | trimmed
    context = intended.OpContext(read, OK, OK, both, {}, {})
    assert intended.explain(context, "value", "") == "names-trimmed"
    write = {"tool": "write_memory", "memory_name": " y", "content": "z"}
    context = intended.OpContext(write, OK, OK, {}, {}, {})
    assert intended.explain(context, "file", "project/.serena/memories/y.md") == "names-trimmed"


def test_name_rules_excuse_refused_writes_but_not_reads_of_files_on_disk() -> None:
    """A `wi:n` write may be refused; reading an existing `wi:n` must still work."""
    refused = {"kind": "invalid-name"}
    write = {"tool": "write_memory", "memory_name": "wi:n", "content": "x"}
    context = intended.OpContext(write, OK, refused, {}, {}, {})
    assert intended.explain(context, "kind", "") == "names-windows-chars"
    read = {"tool": "read_memory", "memory_name": "wi:n"}
    found = {"kind": "ok", "value": "x"}
    context = intended.OpContext(read, found, refused, {}, {}, {})
    assert intended.explain(context, "kind", "") is None
