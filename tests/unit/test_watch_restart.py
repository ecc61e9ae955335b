"""The server's own watch starts again when watchfiles reports an error."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from memory_ls.core.storage import watching


class FakeNotifier:
    """Stands in for watchfiles' watcher: fails once, or waits until stopped."""

    def __init__(self, fail: bool) -> None:
        self.fail = fail
        self.closed = False

    def watch(self, debounce: int, step: int, timeout: int, stop: Any) -> str:
        if self.fail:
            # What watchfiles raises, for good, once the watcher under it had an error.
            raise RuntimeError("error in underlying watcher: No such file or directory")
        stop.wait(10)
        return "stop"

    def close(self) -> None:
        self.closed = True


def test_a_failed_watch_watches_again_and_has_its_folders_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[tuple[tuple[str, ...], bool]] = []

    def notifier(paths: tuple[str, ...], recursive: bool) -> FakeNotifier:
        made.append((paths, recursive))
        return FakeNotifier(fail=False)

    monkeypatch.setattr(watching, "notifier", notifier)
    failing = FakeNotifier(fail=True)
    paths = (str(tmp_path),)
    watch = watching.FolderWatch(paths, True, failing)
    read_again: list[Any] = []
    thread = threading.Thread(target=watch._run, args=(read_again.append,), daemon=True)
    thread.start()
    deadline = time.monotonic() + 5
    while not read_again and time.monotonic() < deadline:
        time.sleep(0.01)
    watch.stop()
    thread.join(5)
    assert failing.closed
    assert made == [(paths, True)]
    assert read_again == [paths]  # what went by while it failed is found by reading
    assert not thread.is_alive()


def test_a_replaced_watch_hands_over_what_it_saw_before_it_ends(tmp_path: Path) -> None:
    # A real watch: a file written just before the watch is replaced is still reported
    # (a plain stop dropped the group watchfiles was collecting, and the event was lost).
    seen: list[str] = []
    reported = threading.Event()

    def enqueue(paths: Any) -> None:
        seen.extend(paths)
        reported.set()

    watch = watching.FolderWatch.start((str(tmp_path),), True, enqueue)
    assert watch is not None
    (tmp_path / "late.md").write_text("written as the watch is replaced\n")
    watch.retire()
    assert reported.wait(10), "the write before the watch was retired was never reported"
    assert str(tmp_path / "late.md") in seen
    # And it does end: later writes are not reported.
    time.sleep(watching.RETIRE_SECONDS + 0.3)
    reported.clear()
    (tmp_path / "after.md").write_text("after the watch ended\n")
    assert not reported.wait(1.0)
