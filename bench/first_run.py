#!/usr/bin/env python3
"""Benchmark the first minute on a store never indexed, searched from the first second.

    python3 bench/first_run.py                       # 1,000 and 10,000 memories
    python3 bench/first_run.py --sizes 100000        # the case of issue 22
    python3 tasks.py bench first_run --sizes 10000   # the same, from the project's venv

bench/run.py's store with a rare word planted in exactly PLANTED memories, a fresh cache
directory (XDG_CACHE_HOME: no index, no facts cache), and the real server over stdio with
the smallest client. From the moment `initialize` is answered, `memory.search` requests go
one after another with no pause (a rotation of bench/run.py's queries and the rare word),
while another thread types completions as a person does (one every TYPING_PAUSE). It runs
until the full-text index is complete (its progress ends), a few searches after, and as
many again once the facts' indexing has ended too (the steady figure), or until --timeout.
Reports: the time to the first search's answer, the slowest search while indexing, when
the index was complete (and a search after it index-fast, and steady), peak RSS (VmHWM),
completion p99 while indexing, and how many answers for the rare word missed one of its
memories (each must return all of them). Writes JSON to bench/results/.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import sizes
from run import (
    SEARCH_PROGRESS_TITLE,
    SEARCH_QUERIES,
    Client,
    Editor,
    calibrate,
    completion_items,
    generate,
    pct,
    search_names,
    start,
    typed_prefixes,
)

# A word no generated memory holds, planted in this many of them.
RARE = "quokkafirstrun"
PLANTED = 50
# Searches still sent once the index is complete (they show it index-fast).
AFTER_INDEXED = 10
# Searches sent after those, once the facts' indexing has ended too: the steady figure
# (two rounds of the queries).
STEADY = 2 * (len(SEARCH_QUERIES) + 1)
# A person types a character about this often.
TYPING_PAUSE = 0.05
QUERIES = [RARE, *SEARCH_QUERIES]

assert SEARCH_PROGRESS_TITLE  # the client tells the search index's progress by it


def plant(store: dict[str, Any]) -> set[str]:
    """Append the rare word to PLANTED memories spread over every folder; their names."""
    root: Path = store["root"]
    global_folder = Path(store["flags"][-1])
    files = sorted(
        (path, "global/" if folder == global_folder else "")
        for folder in (root, global_folder)
        for path in folder.rglob("*.md")
        if path != store["big"] and "storm" not in path.parts
    )
    step = max(1, len(files) // PLANTED)
    chosen = files[::step][:PLANTED]
    if len(chosen) < PLANTED:
        raise RuntimeError(f"a store of {len(files)} files cannot hold {PLANTED} planted words")
    for path, _prefix in chosen:
        with path.open("a") as handle:
            handle.write(f"\nOnce seen: {RARE} in the wild.\n")
    return {prefix + path.stem for path, prefix in chosen}


class Searcher:
    """Searches back to back from start until the index is complete (and a few after)."""

    def __init__(self, client: Client, planted: set[str], timeout: float) -> None:
        self.client = client
        self.planted = planted
        self.timeout = timeout
        # (sent, seconds, query, sent while indexing) per search, sent relative to start.
        self.samples: list[tuple[float, float, str, bool]] = []
        # Seconds of the searches sent once both indexings had ended (nothing else running).
        self.steady: list[float] = []
        self.missed: list[dict[str, Any]] = []
        self.errors: list[str] = []

    def run(self) -> None:
        client = self.client
        after = 0
        number = 0
        # Until the facts' progress is over too (both indexings run at once), and then
        # STEADY searches more: the steady figure, with no indexing left to share the time.
        while len(self.steady) < STEADY:
            if time.perf_counter() - client.started > self.timeout:
                return
            query = QUERIES[number % len(QUERIES)]
            number += 1
            indexing = not client.search_indexed.is_set()
            steady = after >= AFTER_INDEXED and client.indexed.is_set()
            sent = time.perf_counter() - client.started
            arguments: dict[str, Any] = {"query": query}
            if query == RARE:
                arguments["limit"] = 10 * PLANTED
            took, response = client.request(
                "workspace/executeCommand", {"command": "memory.search", "arguments": [arguments]}
            )
            self.samples.append((sent, took, query, indexing))
            if steady:
                self.steady.append(took)
            try:
                names = search_names(response)
            except RuntimeError as exc:
                self.errors.append(str(exc))
                continue
            if query == RARE and names != self.planted:
                self.missed.append(
                    {
                        "sent_s": sent,
                        "missing": sorted(self.planted - names)[:10],
                        "missing_count": len(self.planted - names),
                        "extra": sorted(names - self.planted)[:10],
                    }
                )
            if not indexing:
                after += 1


class Typist:
    """Completions while the index builds, one per TYPING_PAUSE."""

    def __init__(self, editor: Editor, names: list[str]) -> None:
        self.editor = editor
        self.plan = typed_prefixes(names, 200, seed=5)
        self.samples: list[float] = []
        # (sent, seconds) of each, sent relative to start: when the slow ones came.
        self.timed: list[tuple[float, float]] = []
        self.stop = threading.Event()

    def run(self) -> None:
        client = self.editor.client
        while not self.stop.is_set() and not client.search_indexed.is_set():
            _name, typed = self.plan[len(self.samples) % len(self.plan)]
            sent = time.perf_counter() - client.started
            took, response = self.editor.complete("[[" + typed)
            completion_items(response)  # an error fails the run
            self.samples.append(took)
            self.timed.append((round(sent, 3), round(took, 4)))
            self.stop.wait(TYPING_PAUSE)


def measure(size: int, workdir: Path, timeout: float) -> dict[str, Any]:
    """Every figure for one store size."""
    store = generate(workdir, size)
    planted = plant(store)
    root: Path = store["root"]
    env = {**os.environ, "XDG_CACHE_HOME": str(workdir / "cache")}
    command = [sys.executable, "-m", "memory_ls", *store["flags"]]
    figures: dict[str, Any] = {
        "memories": size,
        "planted": len(planted),
        "load_before": os.getloadavg()[0],
        "loadavg_before": Path("/proc/loadavg").read_text().split()[:3],
        "cpu_calibration_ms": calibrate(),
    }
    client, figures["initialize_s"] = start(command, root, env)
    try:
        searcher = Searcher(client, planted, timeout)
        typist = Typist(Editor(client, root), store["names"])
        threads = [threading.Thread(target=t.run, daemon=True) for t in (searcher, typist)]
        for thread in threads:
            thread.start()
        threads[0].join()
        typist.stop.set()
        threads[1].join()
        figures["rss_mb"], figures["peak_rss_mb"] = client.memory_mb()
    finally:
        client.close()
    samples = searcher.samples
    during = [took for _sent, took, _q, indexing in samples if indexing]
    after = [took for _sent, took, _q, indexing in samples if not indexing]
    complete = client.search_indexed.is_set()
    figures.update(
        {
            "first_search_s": samples[0][0] + samples[0][1] if samples else float("nan"),
            "searches_indexing": len(during),
            "search_indexing_max_s": max(during, default=float("nan")),
            "search_indexing_p50_s": pct(during, 50) / 1000,
            "names_indexed_s": client.indexed_at - client.started,
            "search_indexed_s": client.search_indexed_at - client.started
            if complete
            else float("nan"),
            "search_after_p50_ms": pct(after, 50),
            "search_steady_p50_ms": pct(searcher.steady, 50),
            "search_steady_p99_ms": pct(searcher.steady, 99),
            "completion_indexing_p99_ms": pct(typist.samples, 99),
            "completion_indexing_samples": len(typist.samples),
            "completions_slowest": sorted(typist.timed, key=lambda pair: -pair[1])[:5],
            "rare_searches": sum(1 for s in samples if s[2] == RARE),
            "missed_answers": len(searcher.missed),
            "missed": searcher.missed[:5],
            "errors": searcher.errors[:5],
            "timeout_s": timeout,
            "searches": [
                [round(sent, 3), round(took, 4), query, indexing]
                for sent, took, query, indexing in samples
            ],
            "load_after": os.getloadavg()[0],
            "loadavg_after": Path("/proc/loadavg").read_text().split()[:3],
        }
    )
    if not complete:
        print(f"the index was not complete within {timeout:.0f} s", file=sys.stderr)
    return figures


COLUMNS = [
    ("memories", "memories", "{:,}"),
    ("first search s", "first_search_s", "{:.2f}"),
    ("slowest while indexing s", "search_indexing_max_s", "{:.2f}"),
    ("searches while indexing", "searches_indexing", "{}"),
    ("names indexed s", "names_indexed_s", "{:.1f}"),
    ("index complete s", "search_indexed_s", "{:.1f}"),
    ("search after p50 ms", "search_after_p50_ms", "{:.1f}"),
    ("search steady p50 ms", "search_steady_p50_ms", "{:.1f}"),
    ("compl p99 indexing ms", "completion_indexing_p99_ms", "{:.1f}"),
    ("peak RSS MiB", "peak_rss_mb", "{:.0f}"),
    ("missed answers", "missed_answers", "{}"),
    ("load", "load_before", "{:.1f}"),
    ("cpu ms", "cpu_calibration_ms", "{:.0f}"),
]


def table(rows: list[dict[str, Any]]) -> str:
    """The figures as a Markdown table."""
    return sizes.column_table(rows, COLUMNS)


def main() -> None:
    """Run the scenario for each size, print the table, write JSON."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument(
        "--timeout", type=float, default=300.0, help="seconds after start to give up waiting"
    )
    parser.add_argument("--label", default="", help="a word for the JSON file's name")
    parser.add_argument("--output", default=str(sizes.RESULTS))
    args = parser.parse_args()
    sizes.run_sizes(
        "first-run",
        args.sizes,
        lambda size, workdir: measure(size, workdir, args.timeout),
        table,
        args.output,
        label=args.label,
    )


if __name__ == "__main__":
    main()
