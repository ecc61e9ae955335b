"""Export then import gives back the same memories; import skips, overwrites, or writes nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from store_helpers import Workspace

from memory_ls.core import MemoryStoreError, Store

AUTHORED = """---
title: Kept
tags: [kept]
created_at: 2021-05-06T07:08:09Z
updated_at: 2022-01-01T00:00:00Z
extra: {nested: [1, two]}
---
# Authored

body
"""


def _source(ws: Workspace) -> Store:
    store = ws.store(["team/feature", "docs/spec"])
    store.save("plain", "# Plain\n\nno frontmatter\n")
    store.save("tagged", "tagged body\n", tags=["a", "b"])
    store.save("FEATURE_auth", "feature body [[plain]]\n", tags=["auth"])
    store.save("topic/deep/note", "deep\n")
    store.save("global/personal", "mine\n", tags=["me"])
    ws.write(ws.root / "docs" / "spec" / "SPEC_doc.md", AUTHORED)
    return store


def _fresh(ws: Workspace) -> Store:
    root = ws.tmp / "ws2"
    return ws.store(["team/feature", "docs/spec"], root=root, global_folder=str(ws.tmp / "global2"))


def _by_name(records: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(r["scope"], r["name"]): r for r in records}


def test_export_record_shape(ws: Workspace) -> None:
    records = _by_name(_source(ws).export())
    assert set(records) == {
        ("project", "plain"),
        ("project", "tagged"),
        ("project", "FEATURE_auth"),
        ("project", "topic/deep/note"),
        ("global", "global/personal"),  # a global memory's name is global/NAME
        ("project", "SPEC_doc"),
    }
    plain = records[("project", "plain")]
    assert plain == {
        "name": "plain",
        "content": "# Plain\n\nno frontmatter\n",
        "tags": [],
        "created_at": None,
        "updated_at": None,
        "scope": "project",
    }
    authored = records[("project", "SPEC_doc")]
    assert authored["created_at"] == "2021-05-06T07:08:09Z"
    assert authored["updated_at"] == "2022-01-01T00:00:00Z"
    assert authored["tags"] == ["kept"]
    assert authored["content"] == "# Authored\n\nbody\n"
    assert json.loads(json.dumps(authored)) == authored, "records are plain JSON"


def test_export_then_import_gives_back_the_same_memories(ws: Workspace) -> None:
    source = _source(ws)
    exported = json.loads(json.dumps(source.export()))  # as written to and read from a file
    target = _fresh(ws)
    result = target.import_records(exported)
    assert len(result["imported"]) == len(exported)
    assert result["skipped"] == []

    assert _by_name(target.export()) == _by_name(exported)
    for record in exported:
        original = source.read(record["name"])
        copy = target.read(record["name"])
        for key in ("name", "scope", "content", "tags", "createdAt", "updatedAt", "readOnly"):
            assert copy[key] == original[key], (record["name"], key)
    # Routing applies on import: each memory lands in the matching folder of the new root.
    root2 = ws.tmp / "ws2"
    assert target.read("FEATURE_auth")["path"] == str(root2 / "team/feature/FEATURE_auth.md")
    assert target.read("SPEC_doc")["path"] == str(root2 / "docs/spec/SPEC_doc.md")
    assert target.read("topic/deep/note")["path"] == str(
        root2 / ".serena/memories/topic/deep/note.md"
    )
    assert target.read("global/personal")["path"] == str(ws.tmp / "global2" / "personal.md")
    # Plain memories stay plain; other frontmatter keys survive the trip.
    assert (root2 / ".serena/memories/plain.md").read_text() == "# Plain\n\nno frontmatter\n"
    spec = (root2 / "docs/spec/SPEC_doc.md").read_text()
    assert "title: Kept" in spec
    assert "extra:" in spec and "nested:" in spec and "two" in spec


def test_export_keeps_a_global_memory_shadowed_by_a_project_one(ws: Workspace) -> None:
    store = ws.store()
    store.save("notes", "project notes")
    store.save("global/notes", "global notes")
    records = _by_name(store.export())
    assert records[("project", "notes")]["content"] == "project notes"
    assert records[("global", "global/notes")]["content"] == "global notes"
    assert len(store.export()) == 2
    assert [r["scope"] for r in store.export(scope="global")] == ["global"]
    fresh = _fresh(ws)
    fresh.import_records(store.export())
    assert fresh.read("notes")["content"] == "project notes"
    assert fresh.read("global/notes")["content"] == "global notes"


def test_import_takes_a_global_record_with_or_without_its_global_prefix(ws: Workspace) -> None:
    store = ws.store()
    result = store.import_records(
        [
            {"name": "old_style", "content": "a\n", "scope": "global"},  # before global/NAME
            {"name": "global/new_style", "content": "b\n", "scope": "global"},
            {"name": "global/unscoped", "content": "c\n"},
        ]
    )
    assert [r["name"] for r in result["imported"]] == [
        "global/old_style",
        "global/new_style",
        "global/unscoped",
    ]
    assert sorted(p.name for p in ws.global_dir.iterdir()) == [
        "new_style.md",
        "old_style.md",
        "unscoped.md",
    ]
    assert not ws.primary.exists()


def test_import_skips_existing_unless_overwrite(ws: Workspace) -> None:
    store = ws.store()
    path = ws.write(ws.primary / "exists.md", "original\n")
    records = [
        {"name": "exists", "content": "imported\n"},
        {"name": "new_one", "content": "new\n", "tags": ["t"]},
    ]
    result = store.import_records(records)
    assert result["skipped"] == ["exists"]
    assert [r["name"] for r in result["imported"]] == ["new_one"]
    assert path.read_text() == "original\n"
    assert store.read("new_one")["tags"] == ["t"]

    again = store.import_records(records)
    assert again["skipped"] == ["exists", "new_one"]
    assert again["imported"] == []

    overwritten = store.import_records(records, overwrite=True)
    assert overwritten["skipped"] == []
    assert [r["created"] for r in overwritten["imported"]] == [False, False]
    assert path.read_text() == "imported\n"


@pytest.mark.parametrize(
    "bad",
    [
        {"name": "../escape", "content": "x"},
        {"name": "ok_name", "content": 5},
        {"content": "no name"},
        {"name": "ok_name", "content": "x", "tags": "not-a-list"},
        {"name": "ok_name", "content": "x", "scope": "elsewhere"},
        {"name": "ok_name", "content": "x", "updated_at": "not a date"},
        {"name": "ok_name", "content": "x" * 5000},
        {"name": "SPEC_ro", "content": "x"},
        {"name": "ok_name", "content": "lone \ud800 surrogate"},
        {"name": "\ud800", "content": "x"},
        "not a record",
    ],
    ids=repr,
)
def test_a_bad_record_makes_import_write_nothing(ws: Workspace, bad: object) -> None:
    store = ws.store([("vendor/spec", True)], max_memory_bytes=1000)
    ws.write(ws.primary / "existing.md", "existing\n")
    good = [
        {"name": "first", "content": "written first?\n"},
        {"name": "existing", "content": "overwritten?\n"},
        {"name": "global/second", "content": "second\n", "scope": "global"},
    ]
    before = ws.snapshot()
    with pytest.raises(MemoryStoreError) as info:
        store.import_records([*good, bad, {"name": "last", "content": "last\n"}], overwrite=True)
    assert info.value.code in {
        "invalid-name",
        "invalid-arguments",
        "too-large",
        "read-only",
    }, info.value
    assert ws.snapshot() == before
