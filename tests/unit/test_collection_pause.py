"""Cyclic garbage collection paused by the start and by each facts indexing (lsp/startup.py):
off until the last pause ends, then what lives is frozen and collection is as before."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from memory_ls.lsp import startup


@pytest.fixture(autouse=True)
def _collection_restored() -> Iterator[None]:
    enabled = gc.isenabled()
    yield
    gc.unfreeze()
    if enabled:
        gc.enable()
    else:
        gc.disable()


def test_overlapping_pauses_collect_again_only_after_the_last() -> None:
    gc.enable()
    startup.pause_collection()  # the start
    with startup.collection_paused():  # an indexing, on another thread in the server
        assert not gc.isenabled()
        startup.resume_collection()  # the start ends while the indexing runs
        assert not gc.isenabled()
        kept = [[] for _ in range(100)]
    assert gc.isenabled()
    # What lived at the end is frozen: collections no longer walk it.
    assert gc.get_freeze_count() >= len(kept)
    startup.resume_collection()  # one too many: nothing changes
    assert gc.isenabled()


def test_collection_left_off_stays_off() -> None:
    gc.disable()
    with startup.collection_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()
