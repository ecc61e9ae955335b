"""Journaling changes on disk: the paths a watch reports, and a catch-up in a process of its own."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from collections.abc import Callable, Iterable

from memory_ls.core.services.journal.core import Journal
from memory_ls.core.services.journal.seen import Seen, seen_file, seen_source
from memory_ls.core.storage.folders import StoreConfig
from memory_ls.core.storage.memory import scan_config

# The catch-up with the disk (`sync_baseline_elsewhere`) runs at this niceness (POSIX).
BASELINE_NICENESS = 10
# What the catch-up's process runs: this process's import path first (an editor's bundled
# libraries), then the job.
BASELINE_CODE = (
    "import pickle, sys; sys.path[:0] = pickle.load(sys.stdin.buffer); "
    "from memory_ls.core.services.journal import baseline_main; baseline_main()"
)


def observe_paths(
    journal: Journal,
    config: StoreConfig,
    paths: Iterable[str],
    source_of: Callable[[str, int], str] | None = None,
) -> list[int]:
    """Journal the memory files among `paths` as they are now (changed, created or gone);
    `source_of(path, mtime_ns)` says who changed one (default: `seen_source`)."""
    seen: list[Seen] = []
    for path in paths:
        name = config.qualified_name_of(path)
        if name is None:
            continue
        item = seen_file(path, name)
        if item is not None:
            source = (source_of or seen_source)(path, item.mtime_ns)
            seen.append(Seen(item.path, name, item.data, item.mtime_ns, source))
    return journal.observe(seen) if seen else []


def sync_baseline_elsewhere(config: StoreConfig) -> int:
    """`Journal.sync_baseline` of every memory of the store, in a process of its own at
    low priority: the first catch-up reads and compresses every memory (4.5 s of CPU at
    100,000 memories), which a server's searches and keystrokes should neither wait for
    nor share a GIL with, and the list of files (tens of MB) is made there too. How many
    entries it made; done here when no process can be started."""
    try:
        process = subprocess.Popen(
            [sys.executable, "-c", BASELINE_CODE],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            close_fds=True,
        )
    except OSError:
        return _sync_baseline(config)
    out, err = process.communicate(pickle.dumps(sys.path) + pickle.dumps(config))
    if process.returncode != 0:
        raise RuntimeError(
            f"the change journal's catch-up stopped ({process.returncode}): "
            + err.decode("utf-8", errors="replace").strip()[-2000:]
        )
    return int(out.strip() or 0)


def baseline_main() -> None:
    """The catch-up process (`sync_baseline_elsewhere`): the store's configuration on
    stdin, the count of entries made on stdout."""
    config = pickle.load(sys.stdin.buffer)
    if hasattr(os, "nice"):  # background work: the server and the user go first
        os.nice(BASELINE_NICENESS)
    sys.stdout.write(str(_sync_baseline(config)))


def _sync_baseline(config: StoreConfig) -> int:
    files: dict[str, tuple[str, int, int]] = {}
    for memory in scan_config(config):
        try:
            info = os.stat(memory.path)
        except OSError:
            continue  # gone since: the next catch-up sees it gone
        files[memory.path] = (memory.qualified, info.st_mtime_ns, info.st_size)
    journal = Journal.for_store(config)
    try:
        return len(journal.sync_baseline(files))
    finally:
        journal.close()
