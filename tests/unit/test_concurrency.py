"""Locks and atomic writes: concurrent edits lose nothing; temp files never show (SPEC 2.6)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from store_helpers import Workspace

from memory_ls.core import check_store

EDITS = 50

# Each process appends its own numbered line before the END marker, one regex edit at a
# time: an edit lost to a race shows up as a missing line.
WORKER = r"""
import os, sys, time
from memory_ls.config import Settings
from memory_ls.core import Store, resolve_store_config

root, tag, go, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
store = Store(resolve_store_config(Settings(global_enabled=False), root, environ={}))
deadline = time.monotonic() + 30
while not os.path.exists(go):
    if time.monotonic() > deadline:
        sys.exit("never told to start")
    time.sleep(0.001)
for i in range(count):
    result = store.edit(
        "counter", needle=r"^END$", replacement=f"{tag} {i}\nEND", mode="regex"
    )
    assert result["replacements"] == 1, result
print("done", tag)
"""


def test_two_processes_editing_one_memory_lose_no_edit(ws: Workspace) -> None:
    store = ws.store(global_enabled=False)
    store.save("counter", "# Counter\nEND\n", tags=["busy"])
    go = ws.tmp / "go"
    env = {**os.environ, "HOME": str(ws.home), "XDG_CACHE_HOME": str(ws.cache)}
    workers = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(ws.root), tag, str(go), str(EDITS)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("A", "B")
    ]
    time.sleep(0.3)  # let both import and wait at the start line
    go.write_text("go")
    outputs = [w.communicate(timeout=120) for w in workers]
    for worker, (out, err) in zip(workers, outputs, strict=True):
        assert worker.returncode == 0, err
        assert out.startswith("done"), (out, err)

    body = store.read("counter")["content"]
    lines = body.split("\n")
    for tag in ("A", "B"):
        mine = [line for line in lines if line.startswith(f"{tag} ")]
        assert mine == [f"{tag} {i}" for i in range(EDITS)], f"lost or reordered edits of {tag}"
    assert lines[0] == "# Counter"
    assert lines[-2:] == ["END", ""]
    assert store.read("counter")["tags"] == ["busy"], "frontmatter survives the race"


TEMP_NAMES = [
    ".counter.md.x1y2z3.memory-ls-tmp",
    ".FEATURE_a.md.abc.memory-ls-tmp",
    ".weird.md.memory-ls-tmp.md",
]


def test_temp_files_of_interrupted_writes_are_never_listed(ws: Workspace) -> None:
    store = ws.store(["team/feature"])
    store.save("counter", "counter")
    store.save("FEATURE_a", "a")
    store.save("topic/t", "t")
    store.save("global/g", "g")
    for folder in (
        ws.primary,
        ws.primary / "topic",
        ws.root / "team" / "feature",
        ws.global_dir,
    ):
        for name in TEMP_NAMES:
            ws.write(folder / name, "half-written [[broken]] counter\n")

    assert [m["name"] for m in store.list_memories()["memories"]] == [
        "FEATURE_a",
        "counter",
        "global/g",
        "topic/t",
    ]
    assert {r["path"] for r in store.search("half-written")["results"]} == set()
    assert all(".memory-ls-tmp" not in d.path for d in check_store(store))
    assert sorted(r["name"] for r in store.export()) == [
        "FEATURE_a",
        "counter",
        "global/g",
        "topic/t",
    ]
    assert store.tags() == {"tags": []}


def test_a_failed_write_leaves_the_old_file_and_no_temp_file(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ws.store()
    store.save("safe", "original\n")
    before = ws.snapshot()

    def fail(src: str, dst: str) -> None:
        raise OSError("disk on fire")

    with monkeypatch.context() as patch:
        patch.setattr(os, "replace", fail)
        with pytest.raises(OSError, match="disk on fire"):
            store.save("safe", "new content\n")
        with pytest.raises(OSError, match="disk on fire"):
            store.edit("safe", needle="original", replacement="changed")
    assert ws.snapshot() == before
    assert (ws.primary / "safe.md").read_text() == "original\n"
    assert [p.name for p in Path(ws.primary).iterdir()] == ["safe.md"]
