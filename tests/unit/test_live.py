"""core/operations/live.py: a store's indexes kept live by a watch (the MCP server's),
on real files."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator

import pytest
from store_helpers import Workspace

from memory_ls.core.operations.live import WARM_STEP_FILES, LiveStore
from memory_ls.core.services.backlinks import serena_key
from memory_ls.core.storage.memory import Resolved
from memory_ls.core.store import Store

DEADLINE_SECONDS = 10.0


def eventually(condition: Callable[[], bool], what: str) -> None:
    """Wait until a condition holds (the watch reports within a fraction of a second)."""
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.02)


def shown(items: list[Resolved]) -> list[tuple[str, str, tuple[str, ...]]]:
    """A resolved listing as (name, path, shadowed paths)."""
    return [(r.memory.qualified, r.memory.path, tuple(m.path for m in r.shadows)) for r in items]


@pytest.fixture
def live(ws: Workspace) -> Iterator[tuple[LiveStore, Store]]:
    """A watched store (primary, an additional folder, global) and a Store reading the disk."""
    disk = ws.store(["shared/feature"])
    feature = ws.root / "shared" / "feature"
    ws.write(ws.primary / "alpha.md", "# Alpha\n")
    ws.write(ws.primary / "same.md", "# Same, project\n")
    ws.write(feature / "same.md", "# Same, shadowed\n")
    ws.write(feature / "FEATURE_x.md", "# X\n")
    ws.write(ws.primary / "topic" / "deep.md", "# Deep\n")
    ws.write(ws.primary / "what?.md", "# A name memory-ls would not create\n")
    ws.write(ws.global_dir / "same.md", "# Same, global\n")
    started = LiveStore(disk.config)
    started.start()
    started.wait_ready()
    yield started, disk
    started.stop()


def test_the_live_listing_is_the_disk_s_as_changes_come_and_go(
    live: tuple[LiveStore, Store], ws: Workspace
) -> None:
    watched, disk = live

    def agree() -> bool:
        store = watched.store(disk.config)
        return all(
            shown(store.resolve(scope)) == shown(disk.resolve(scope))
            for scope in (None, "project", "global")
        )

    assert agree()
    feature = ws.root / "shared" / "feature"
    # Behind the store's back: the shadowing file goes, another name comes, a topic moves.
    (ws.primary / "same.md").unlink()
    ws.write(feature / "FEATURE_new.md", "# New\n")
    os.rename(ws.primary / "topic", ws.primary / "moved")
    ws.write(ws.global_dir / "alpha.md", "# Alpha, global\n")
    eventually(agree, "the live listing matches the disk after changes made outside")
    # Through the store: at once, no waiting for the watch.
    store = watched.store(disk.config)
    store.save("beta", "# Beta\n")
    store.delete("FEATURE_x")
    assert shown(watched.store(disk.config).resolve(None)) == shown(disk.resolve(None))


def test_renames_find_referrers_before_every_file_s_links_are_known(ws: Workspace) -> None:
    disk = ws.store()
    for number in range(3 * WARM_STEP_FILES):
        ws.write(ws.primary / f"other_{number:02d}.md", f"# Other {number}\n")
    ws.write(ws.primary / "alpha.md", "# Alpha\n")
    ws.write(ws.primary / "referrer.md", "See [[alpha]] and mem:alpha.\n")
    watched = LiveStore(disk.config)
    with watched.answering():  # learning every file's links waits while a call runs
        watched.start()
        watched.wait_ready()
        eventually(lambda: watched.index.facts.warming, "learning the links began, and waits")
        assert not watched.index.learn_links()
        sources = watched.reference_sources(["alpha", serena_key("alpha")])
        assert sources is not None  # the full-text index names them meanwhile
        assert str(ws.primary / "referrer.md") in sources
        assert str(ws.primary / "other_00.md") not in sources
        moved = watched.store(disk.config).move("alpha", "gamma")
    watched.stop()
    assert moved["updatedReferences"] == 2
    assert (ws.primary / "referrer.md").read_text() == "See [[gamma]] and mem:gamma.\n"


def test_a_folder_made_in_a_folder_that_held_none_is_watched_whole(
    live: tuple[LiveStore, Store], ws: Workspace
) -> None:
    """The additional folder holds no folder, so it is watched flat (core/storage/watching.py); a
    topic folder made there is read, and files written in it afterwards are seen too."""
    watched, disk = live
    feature = ws.root / "shared" / "feature"

    def names() -> set[str]:
        return {r.memory.qualified for r in watched.store(disk.config).resolve(None)}

    ws.write(feature / "topic" / "first.md", "# First\n")  # the folder and a file at once
    eventually(lambda: "topic/first" in names(), "a file in a folder made in a flat one")
    ws.write(feature / "topic" / "second.md", "# Second\n")  # only a recursive watch sees it
    eventually(lambda: "topic/second" in names(), "a later file in that folder")


def test_names_answer_while_a_never_indexed_store_is_being_indexed(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 35: bringing the full-text index in line reads every file of a store never
    # indexed (26 s at 100,000 memories); a listing, a read and a write must not wait.
    import threading

    from memory_ls.core.services.search import SearchIndex

    disk = ws.store()
    ws.write(ws.primary / "alpha.md", "# Alpha\n")
    ws.write(ws.primary / "beta.md", "# Beta\n")
    release = threading.Event()
    syncing = threading.Event()
    synced = threading.Event()
    real_sync = SearchIndex.sync

    def slow_sync(self: SearchIndex, *args: object, **kwargs: object) -> object:
        syncing.set()
        release.wait(DEADLINE_SECONDS)  # released by the test, or the test failed
        try:
            return real_sync(self, *args, **kwargs)
        finally:
            synced.set()

    monkeypatch.setattr(SearchIndex, "sync", slow_sync)
    watched = LiveStore(disk.config)
    watched.start()
    try:
        assert syncing.wait(DEADLINE_SECONDS)
        store = watched.store(disk.config)
        listed = store.list_memories()
        assert [m["name"] for m in listed["memories"]] == ["alpha", "beta"]
        assert store.read("beta")["content"] == "# Beta\n"
        store.save("gamma", "# Gamma\n")
        assert [m["name"] for m in store.list_memories()["memories"]] == [
            "alpha",
            "beta",
            "gamma",
        ]
        assert not synced.is_set()  # all of it answered while the index was not in line
    finally:
        release.set()
        watched.stop()


def test_a_search_while_a_store_is_first_indexed_answers_at_once_and_says_it_is_partial(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 35: the first call on a store never indexed answers within the budget, from
    # the files it could read, and says so (the count approximate, a match maybe missing).
    import threading

    import memory_ls.core.operations.live as live_module
    import memory_ls.core.store_parts.searching as searching
    from memory_ls.core.services.search.worker import Turns

    disk = ws.store()
    for number in range(6):
        ws.write(ws.primary / f"deploy_{number}.md", f"# Deploy {number}\nkubectl rollout\n")
    release = threading.Event()
    real_pauser = Turns.pauser

    def held_pauser(self: Turns, *args: float) -> Callable[[], None]:
        pause = real_pauser(self, *args)

        def held() -> None:
            release.wait(DEADLINE_SECONDS)  # before the first batch: nothing indexed yet
            pause()

        return held

    monkeypatch.setattr(Turns, "pauser", held_pauser)
    monkeypatch.setattr(live_module, "LONG_SYNC_FILES", 1)  # "thousands", for six files
    monkeypatch.setattr(searching, "ROUGH_FILES", 2)
    watched = LiveStore(disk.config)
    watched.start()
    try:
        started = time.monotonic()
        watched.wait_ready()
        assert time.monotonic() - started < 1.0  # the sync's end is not waited for
        # Where the answer cannot say it is partial (the editor's), every file is read.
        found = watched.store(disk.config).search_memories("kubectl", per_memory=True)
        assert len(found.hits) == 6
        # Where it can (MCP's): the budget is kept, and it says so.
        store = watched.store(disk.config)
        store.unindexed_read_seconds = 0.0
        found = store.search_memories("kubectl", per_memory=True)
        assert len(found.hits) == 2  # the first slice read, then the budget was spent
        assert found.notes == (
            "Partial: the search index is still being built; of the 6 memories not in it "
            "yet, 2 were read for this search and 4 not, so a match may be missing and the "
            "count is approximate. Search again shortly for the whole answer.",
        )
        store.unindexed_read_seconds = 60.0
        found = store.search_memories("kubectl", per_memory=True)
        assert len(found.hits) == 6
        assert found.notes == (
            "The search index is still being built: the 6 memories not in it yet were read "
            "for this search, so the count of matches is approximate.",
        )
    finally:
        release.set()
        watched.stop()
    # Once in line, nothing more is said.
    indexed = LiveStore(disk.config)
    indexed.start()
    try:
        indexed.wait_ready()
        eventually(lambda: indexed._search_ready.is_set(), "the index in line")
        found = indexed.store(disk.config).search_memories("kubectl", per_memory=True)
        assert len(found.hits) == 6 and found.notes == ()
    finally:
        indexed.stop()
