"""Hardening rules found by the server-level tests (issue 7), held at the core level too."""

from __future__ import annotations

import os
import time
import tracemalloc
from pathlib import Path

import pytest
from store_helpers import Workspace

from memory_ls.core.services.diagnostics import NameIndex, editor_encoding_problem, text_diagnostics
from memory_ls.core.services.index import MemoryIndex

needs_symlinks = pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")


@needs_symlinks
@pytest.mark.parametrize("name", ["linkfile", "linkdir/new", "linkdir/a/b", "FEATURE_link"])
def test_route_refuses_what_save_refuses_a_link_leading_outside(ws: Workspace, name: str) -> None:
    store = ws.store(["team/feature"])
    outside = ws.tmp / "outside"
    ws.write(outside / "target.md", "outside\n")
    (outside / "dir").mkdir()
    ws.primary.mkdir(parents=True)
    os.symlink(outside / "target.md", ws.primary / "linkfile.md")
    os.symlink(outside / "dir", ws.primary / "linkdir")
    os.symlink(outside / "target.md", ws.root / "team" / "feature" / "FEATURE_link.md")
    # A dry run of save must not promise a path the save would refuse.
    with ws.refuses("outside-store"):
        store.route(name)
    with ws.refuses("outside-store"):
        store.save(name, "pwned")
    assert (outside / "target.md").read_text() == "outside\n"
    assert list((outside / "dir").iterdir()) == []


@needs_symlinks
def test_route_still_answers_for_a_link_that_stays_inside(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "real" / "note.md", "real\n")
    os.symlink(ws.primary / "real", ws.primary / "alias")
    routed = store.route("alias/new")
    assert routed["path"] == str(ws.primary / "alias" / "new.md")
    assert routed["exists"] is False
    assert Path(store.save("alias/new", "x")["path"]).read_text() == "x"


def test_the_index_lists_a_huge_file_without_reading_it(ws: Workspace) -> None:
    store = ws.store(max_memory_bytes=1000)
    ws.write(ws.primary / "small.md", "---\ntags: [kept]\n---\nsmall\n")
    with open(ws.primary / "huge.md", "wb") as handle:
        handle.write(b"---\ntags: [never]\n---\n" + b"x" * (20 * 1024 * 1024))
    index = MemoryIndex(store.config)
    index.scan()
    tracemalloc.start()
    try:
        index.warm()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 * 1024 * 1024, f"warming allocated {peak} bytes: the huge file was read"
    huge = index.lookup("huge")
    assert huge is not None
    assert index.metadata(huge.memory).tags == ()
    assert index.metadata(huge.memory).size > 20 * 1024 * 1024
    assert index.tag_counts() == {"kept": 1}


def test_a_huge_open_document_is_only_too_large(ws: Workspace) -> None:
    store = ws.store(max_memory_bytes=1000)
    ws.write(ws.primary / "pasted.md", "small on disk\n")
    (memory,) = store.scan()
    # What an editor holds: far over the limit, full of links and secrets to scan.
    text = "[[missing]] password = hunter2-long-enough AKIAIOSFODNN7EXAMPLE\n" * 100_000
    started = time.perf_counter()
    found = text_diagnostics(store.config, NameIndex(), memory.path, text, memory, {})
    assert time.perf_counter() - started < 1.0
    assert [d.code for d in found] == ["too-large"]
    # Under the read limit the same lines are all checked.
    found = text_diagnostics(store.config, NameIndex(), memory.path, text[:2000], memory, {})
    assert {"broken-link", "possible-secret", "too-large"} <= {d.code for d in found}


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"caf\xe9\n", "invalid UTF-8 at byte 3"),
        (b"PNG\x00\x01\x02", "binary data (NUL bytes)"),
        ("caf\N{REPLACEMENT CHARACTER} written on purpose\n".encode(), None),
    ],
)
def test_an_editor_text_with_replacement_characters_has_the_file_checked(
    ws: Workspace, data: bytes, problem: str | None
) -> None:
    path = ws.primary / "odd.md"
    path.parent.mkdir(parents=True)
    path.write_bytes(data)
    shown = data.decode("utf-8", "replace")  # what the editor sends
    assert editor_encoding_problem(str(path), shown, 524288) == problem
    # Text without replacement characters or NULs is never looked up on disk.
    assert editor_encoding_problem(str(ws.tmp / "missing.md"), "plain text", 524288) is None
