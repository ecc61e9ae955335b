"""The flat inotify watch (core/storage/inotify.py): the changes watchfiles reports, no reads."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from memory_ls.core.storage import inotify, watching

pytestmark = pytest.mark.skipif(not inotify.available(), reason="Linux inotify only")

ADDED, MODIFIED, DELETED = inotify.ADDED, inotify.MODIFIED, inotify.DELETED


def _until(watch: inotify.FlatInotify, wanted: set[tuple[int, str]]) -> set[tuple[int, str]]:
    """Every change reported until those wanted are among them (10 s at most)."""
    seen: set[tuple[int, str]] = set()
    stop = threading.Event()
    for _group in range(100):
        changes = watch.watch(200, 50, 100, stop)
        if isinstance(changes, set):
            seen |= changes
        if wanted <= seen:
            return seen
    raise AssertionError(f"never reported: {sorted(wanted - seen)}; seen {sorted(seen)}")


def _mask(descriptor: int) -> int:
    """The event mask inotify holds for the watch on this descriptor (/proc fdinfo)."""
    info = Path(f"/proc/self/fdinfo/{descriptor}").read_text()
    line = next(line for line in info.splitlines() if line.startswith("inotify wd:"))
    field = next(part for part in line.split() if part.startswith("mask:"))
    return int(field.removeprefix("mask:"), 16)


def test_it_reports_what_watchfiles_reports_for_a_flat_folder(tmp_path: Path) -> None:
    kept = tmp_path / "kept.md"
    kept.write_text("before\n")
    watch = inotify.FlatInotify([str(tmp_path)])
    try:
        new = tmp_path / "new.md"
        new.write_text("a new memory\n")
        assert _until(watch, {(ADDED, str(new))}) >= {(ADDED, str(new))}
        with kept.open("a") as handle:
            handle.write("more\n")
        assert (MODIFIED, str(kept)) in _until(watch, {(MODIFIED, str(kept))})
        moved = tmp_path / "moved.md"
        os.replace(new, moved)
        both = {(DELETED, str(new)), (ADDED, str(moved))}
        assert both <= _until(watch, both)
        moved.unlink()
        assert (DELETED, str(moved)) in _until(watch, {(DELETED, str(moved))})
        (tmp_path / "topic").mkdir()  # a folder appears: the owner watches it whole then
        assert (ADDED, str(tmp_path / "topic")) in _until(watch, {(ADDED, str(tmp_path / "topic"))})
    finally:
        watch.close()
        watch.close()  # twice does nothing


def test_it_asks_for_no_events_when_files_are_only_read(tmp_path: Path) -> None:
    """The point of it: watchfiles' watch asks inotify for IN_OPEN, so every read of a
    memory by anyone wakes the server; this one does not ask for any read event."""
    (tmp_path / "a.md").write_text("text\n")
    watch = inotify.FlatInotify([str(tmp_path)])
    try:
        mask = _mask(watch._descriptor)
        reads = 0x00000001 | 0x00000010 | 0x00000020  # IN_ACCESS, IN_CLOSE_NOWRITE, IN_OPEN
        assert mask & reads == 0
        assert mask & inotify.IN_CLOSE_WRITE and mask & inotify.IN_CREATE
        for _time in range(50):
            (tmp_path / "a.md").read_text()
        marker = tmp_path / "marker.md"
        marker.write_text("x")
        # Only the marker's events were queued: nothing for the 50 reads before it.
        assert {path for _change, path in _until(watch, {(ADDED, str(marker))})} == {str(marker)}
    finally:
        watch.close()


def test_a_removed_folder_is_reported_and_a_missing_one_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "memories"
    folder.mkdir()
    watch = inotify.FlatInotify([str(folder)])
    try:
        folder.rmdir()
        assert (DELETED, str(folder)) in _until(watch, {(DELETED, str(folder))})
    finally:
        watch.close()
    with pytest.raises(OSError):
        inotify.FlatInotify([str(tmp_path / "missing")])


def test_a_stop_ends_the_watch_and_a_quiet_folder_times_out(tmp_path: Path) -> None:
    watch = inotify.FlatInotify([str(tmp_path)])
    try:
        assert watch.watch(200, 20, 60, threading.Event()) == "timeout"
        stop = threading.Event()
        stop.set()
        assert watch.watch(200, 20, 0, stop) == "stop"
    finally:
        watch.close()


def test_the_servers_flat_watches_are_these(tmp_path: Path) -> None:
    assert isinstance(watching.notifier((str(tmp_path),), False), inotify.FlatInotify)
    deep = watching.notifier((str(tmp_path),), True)
    try:
        assert not isinstance(deep, inotify.FlatInotify)
    finally:
        deep.close()
