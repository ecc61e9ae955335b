#!/usr/bin/env python3
"""Benchmark what journaling the changes seen on disk costs (core/services/journal/).

    python3 bench/journal_seen.py                  # 10,000 memories
    python3 bench/journal_seen.py --sizes 1000 100000

On bench/run.py's store: the first sync that reads every memory into the journal's
baseline (what a server does once, in the background, after its first indexing), the
sync at a later start when nothing changed (a stamp comparison), the journal's size
after the first sync, one change written from outside and journaled (`observe_paths`, as
a watcher's batch does), and a Store save with and without the journal. Prints medians.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from run import ADDITIONAL, generate  # bench/run.py's store

from memory_ls.config import FolderSetting, Settings
from memory_ls.core.services.journal import Journal, observe_paths
from memory_ls.core.storage.folders import resolve_store_config
from memory_ls.core.store import Store

CHANGES = 200


class NoJournal(Journal):
    """A journal that keeps nothing (the save without it)."""

    def record(self, **_kwargs: object) -> int | None:  # type: ignore[override]
        return None


def memory_files(config: object) -> dict[str, tuple[str, int, int]]:
    """Every memory as `sync_baseline` takes them (path: name, mtime_ns, size)."""
    files: dict[str, tuple[str, int, int]] = {}
    for folder in config.folders:  # type: ignore[attr-defined]
        for path in Path(folder.path).rglob("*.md"):
            name = config.qualified_name_of(str(path))  # type: ignore[attr-defined]
            if name is not None:
                info = path.stat()
                files[str(path)] = (name, info.st_mtime_ns, info.st_size)
    return files


def ms(seconds: list[float]) -> float:
    return round(statistics.median(seconds) * 1000, 3)


def measure(size: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="memory-ls-journal-bench-") as scratch:
        root = Path(scratch)
        store_info = generate(root / "store", size)
        settings = Settings(
            additional_folders=tuple(FolderSetting(path=f"shared/{n}") for n in ADDITIONAL),
            global_folder=str(root / "store" / "global"),
        )
        config = resolve_store_config(settings, str(store_info["root"]), environ={})
        journal = Journal(str(root / "cache" / "journal.sqlite3"))
        files = memory_files(config)
        started = time.perf_counter()
        journal.sync_baseline(files)
        first_sync = time.perf_counter() - started
        journal._connect().execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size_bytes = os.path.getsize(journal.path)
        unchanged = memory_files(config)  # a server has the stamps from its index
        started = time.perf_counter()
        journal.sync_baseline(unchanged)
        resync = time.perf_counter() - started

        rng = random.Random(3)
        paths = sorted(files)
        seen = []
        for number in range(CHANGES):
            path = rng.choice(paths)
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(f"A line an agent appended ({number}).\n")
            started = time.perf_counter()
            made = observe_paths(journal, config, [path])
            seen.append(time.perf_counter() - started)
            assert len(made) == 1

        saves: dict[str, list[float]] = {"with": [], "without": []}
        for number in range(CHANGES):
            for kind, kept in (("with", journal), ("without", NoJournal(journal.path))):
                store = Store(config, journal=kept, source="bench")
                started = time.perf_counter()
                store.save(f"bench_{kind}_{number % 20}", f"# Save {number}\n\nText {kind}.\n")
                saves[kind].append(time.perf_counter() - started)
        return {
            "memories": len(files),
            "first_sync_s": round(first_sync, 2),
            "journal_mb_after_first_sync": round(size_bytes / 2**20, 2),
            "store_mb": round(sum(f[2] for f in files.values()) / 2**20, 2),
            "resync_unchanged_ms": round(resync * 1000, 1),
            "external_change_ms": ms(seen),
            "save_with_journal_ms": ms(saves["with"]),
            "save_without_journal_ms": ms(saves["without"]),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000])
    args = parser.parse_args()
    for size in args.sizes:
        load = Path("/proc/loadavg").read_text().split()[0]
        print(measure(size), f"load {load}")


if __name__ == "__main__":
    main()
