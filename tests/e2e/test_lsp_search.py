"""`memory.search` through the full-text index (issue 14): it follows files changed on
disk by another process, and requests made while the first indexing runs miss nothing."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from e2e_support import (
    INDEXING_FOR_SEARCH,
    Session,
    make_workspace,
    session,
    write_file,
)
from lsprotocol import types

pytestmark = pytest.mark.asyncio

# SPEC 3.5 asks for one second (the benchmark measures it); the test allows for a
# heavily loaded machine.
LIVE_TIMEOUT = 10.0


async def _search(server: Session, query: str, **arguments: Any) -> set[str]:
    result = await server.command("memory.search", {"query": query, **arguments})
    return {hit["name"] for hit in result["results"]}


async def _until(server: Session, query: str, expected: set[str]) -> None:
    async def check() -> bool:
        return await _search(server, query) == expected

    await server.eventually(check, f"search {query!r} gives {expected}", timeout=LIVE_TIMEOUT)


def _index_names(cache: Path) -> set[str]:
    """The memories the index on disk holds, by name in their folder."""
    (database,) = (cache / "memory-ls" / "index").glob("*.search.sqlite3")
    with sqlite3.connect(database) as db:
        return {name for (name,) in db.execute("SELECT name FROM files")}


def _elsewhere(code: str) -> None:
    """Change the disk from another process, as an agent would."""
    subprocess.run([sys.executable, "-c", code], check=True)


async def test_search_follows_files_changed_by_another_process(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "w")
    cache = tmp_path / "cache"
    async with session(workspace, env={"XDG_CACHE_HOME": str(cache)}) as server:
        await server.indexed(title=INDEXING_FOR_SEARCH)
        # The index on disk holds every memory (the search answers from it).
        assert {"auth/login_flow", "FEATURE_checkout", "style_guide"} <= _index_names(cache)
        assert await _search(server, "checkout") == {"FEATURE_checkout"}
        # Relevance by default: some of the words are enough; allWords wants them all.
        result = await server.command("memory.search", {"query": "checkout zebu "})
        assert {hit["name"] for hit in result["results"]} == {"FEATURE_checkout"}
        assert {tuple(hit["matched"]) for hit in result["results"]} == {("checkout",)}
        assert await _search(server, "checkout zebu ", allWords=True) == set()
        assert await _search(server, "checkout ", allWords=True) == {"FEATURE_checkout"}

        notes = workspace.primary / "zebra_notes.md"
        renamed = workspace.primary / "topic" / "okapi_notes.md"
        _elsewhere(f"open({str(notes)!r}, 'w').write('# Crossing\\nthe zebra crossing\\n')")
        await _until(server, '"zebra crossing"', {"zebra_notes"})
        assert "zebra_notes" in _index_names(cache)

        _elsewhere(f"open({str(notes)!r}, 'w').write('# Crossing\\nthe okapi crossing\\n')")
        await _until(server, "okapi", {"zebra_notes"})
        assert await _search(server, '"zebra crossing"') == set()

        _elsewhere(
            f"import os; os.makedirs({str(renamed.parent)!r}); "
            f"os.rename({str(notes)!r}, {str(renamed)!r})"
        )
        await _until(server, "okapi", {"topic/okapi_notes"})

        _elsewhere(f"import os; os.remove({str(renamed)!r})")
        await _until(server, "okapi", set())
        assert not {"zebra_notes", "topic/okapi_notes"} & _index_names(cache)

        # Our own writes are searchable as soon as the command has answered.
        await server.command("memory.save", {"name": "FEATURE_llama", "content": "a llama\n"})
        await _until(server, "llama", {"FEATURE_llama"})


async def test_a_file_replaced_with_its_size_and_time_kept_is_read_again(
    tmp_path: Path,
) -> None:
    # `cp -p`, `rsync -t`, a checkout that restores times, or two writes within one tick
    # of the file system's clock: the same size and time, other words. The index on disk
    # must not keep the old words for the live server: its file event says to read again.
    workspace = make_workspace(tmp_path / "w")
    async with session(workspace, env={"XDG_CACHE_HOME": str(tmp_path / "cache")}) as server:
        await server.indexed(title=INDEXING_FOR_SEARCH)
        note = workspace.primary / "restored.md"
        _elsewhere(f"open({str(note)!r}, 'w').write('# Restored\\nthe alpaca plan\\n')")
        await _until(server, "alpaca", {"restored"})
        kept = note.stat()
        replacement = tmp_path / "replacement.md"
        replacement.write_text("# Restored\nthe vicuna plan\n")  # the same size
        os.utime(replacement, ns=(kept.st_atime_ns, kept.st_mtime_ns))
        os.replace(replacement, note)
        assert (note.stat().st_size, note.stat().st_mtime_ns) == (kept.st_size, kept.st_mtime_ns)
        await _until(server, "vicuna", {"restored"})
        assert await _search(server, "alpaca") == set()


async def test_search_while_the_first_indexing_runs_misses_nothing(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "w")
    for number in range(6000):
        write_file(workspace.primary / "bulk" / f"note_{number:05d}.md", f"# Note {number}\n")
    write_file(workspace.primary / "zz_last.md", "# The unicorn at the end\n")
    write_file(workspace.global_folder / "unicorn_tips.md", "# Unicorn tips\n")
    started = time.monotonic()
    async with session(
        workspace, env={"XDG_CACHE_HOME": str(tmp_path / "c")}, wait_indexed=False
    ) as server:
        found = await _search(server, "unicorn")
        assert server.progress_ended(INDEXING_FOR_SEARCH) == 0, "answered before the index was"
        assert found == {"zz_last", "global/unicorn_tips"}
        assert await _search(server, "note 5999", allWords=True) == {"bulk/note_05999"}
        await server.indexed()
        # Names and facts are known; the full-text index may still be catching up.
        assert await _search(server, "unicorn") == found
        await server.indexed(title=INDEXING_FOR_SEARCH)
        assert await _search(server, "unicorn") == found
        assert await _search(server, "note 5999", allWords=True) == {"bulk/note_05999"}
    assert time.monotonic() - started < 120
    assert os.path.isdir(tmp_path / "c" / "memory-ls" / "index")


async def test_search_with_no_match_searches_the_closest_words_of_names_and_tags(
    tmp_path: Path,
) -> None:
    workspace = make_workspace(tmp_path / "w")
    write_file(workspace.primary / "SPEC_payments_api.md", "---\ntags: [billing]\n---\n# API\n")
    async with session(workspace) as server:
        result = await server.command("memory.search", {"query": "paymnt"})
        assert result["closest"] == "payments"
        assert {hit["name"] for hit in result["results"]} == {"SPEC_payments_api"}
        # A tag's words count too; a word with no close one gives nothing, and says so.
        assert (await server.command("memory.search", {"query": "biling"}))["closest"] == "billing"
        nothing = await server.command("memory.search", {"query": "zqxwv"})
        assert nothing == {"results": []}
        # An exact match is not "corrected"; allWords means the words as typed.
        exact = await server.command("memory.search", {"query": "payments"})
        assert "closest" not in exact
        assert exact["results"]
        strict = await server.command("memory.search", {"query": "paymnt", "allWords": True})
        assert strict == {"results": []}


def _children(pid: int) -> list[int]:
    """The processes `pid` started (every thread's), from /proc."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            found += [int(child) for child in (task / "children").read_text().split()]
    return found


async def _indexing_worker(server: Session) -> int:
    """The pid of the server's indexing worker, once it has started (core/services/search/)."""
    process = server.client._server
    assert process is not None

    def worker() -> int | None:
        for child in _children(process.pid):
            with contextlib.suppress(OSError):
                if b"worker_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                    return child
        return None

    deadline = time.monotonic() + 60
    while (found := worker()) is None:
        assert time.monotonic() < deadline, "the indexing worker never started"
        await asyncio.sleep(0.01)
    return found


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc")
async def test_search_during_the_first_indexing_answers_from_both_halves(tmp_path: Path) -> None:
    """The first indexing of a big store runs in a worker process; held still halfway,
    searches answer from what it indexed plus the files it has not reached, and every
    memory holding a rare word is found, the progress counting the files meanwhile."""
    workspace = make_workspace(tmp_path / "w")
    planted = set()
    for number in range(3000):
        text = f"# Note {number}\n\nAbout the usual things.\n"
        if number % 100 == 7:
            text += "An okapi was seen.\n"
            planted.add(f"bulk/note_{number:05d}")
        write_file(workspace.primary / "bulk" / f"note_{number:05d}.md", text)
    write_file(workspace.global_folder / "okapi_tips.md", "---\ntags: [zoo]\n---\n# Tips\n")
    planted.add("global/okapi_tips")
    cache = tmp_path / "c"
    async with session(workspace, env={"XDG_CACHE_HOME": str(cache)}, wait_indexed=False) as server:
        worker = await _indexing_worker(server)
        os.kill(worker, signal.SIGSTOP)
        try:
            # However far it got, it is not done: it indexes a batch at a time.
            found = await _search(server, "okapi", limit=200)
            assert server.progress_ended(INDEXING_FOR_SEARCH) == 0, "answered after indexing"
            assert found == planted
            assert await _search(server, "note 2999", allWords=True) == {"bulk/note_02999"}
            assert await _search(server, "okapi", tags=["zoo"]) == {"global/okapi_tips"}
            # A memory written meanwhile is found too (indexed by its file event).
            late = write_file(workspace.primary / "okapi_late.md", "# Late\nokapi again\n")
            await _until(server, "okapi", {*planted, "okapi_late"})
            assert server.progress_ended(INDEXING_FOR_SEARCH) == 0
        finally:
            os.kill(worker, signal.SIGCONT)
        await server.indexed(title=INDEXING_FOR_SEARCH)
        assert await _search(server, "okapi", limit=200) == {*planted, "okapi_late"}
        late.unlink()
        await _until(server, "okapi", planted)
        # The progress counted the files as they were indexed, up to all of them.
        (reports,) = server.progresses(INDEXING_FOR_SEARCH)
        counts = [
            tuple(map(int, r.message.split()[0].split("/")))
            for r in reports
            if isinstance(r, types.WorkDoneProgressReport) and r.message
        ]
        assert counts == sorted(counts) and counts[-1][0] == counts[-1][1] > 3000
