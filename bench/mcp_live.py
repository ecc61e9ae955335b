#!/usr/bin/env python3
"""Benchmark `memory-ls mcp` on a store already indexed (the official MCP client over stdio).

    python3 bench/mcp_live.py --sizes 10000,100000 --stores /tmp/mcp-stores
    PYTHONPATH=<other checkout>/server python3 bench/mcp_live.py ...   # before/after

Each size gets bench/run.py's store (primary, four additional folders, global), kept in
`--stores` (made and indexed once with `memory-ls search`, as an editor or an earlier
process leaves it; a store of 100,000 memories takes a few minutes to make) and reused by
later runs. Measured, each in a new server process:

- first call after start: from the process's start to the first `search_memories`
  answer, and that call alone (the handshake done);
- `list_memories` first page and `search_memories` (bench/run.py's query mix), medians,
  `--settle` seconds after the first call (the server learns every file's facts in the
  background after its start: from the facts cache an editor left, a few seconds at
  100,000 memories);
- an external write -> visible: a memory written by another process with a word no other
  holds, then `search_memories` for it called back to back until it is found, and
  `list_memories` with its name as prefix likewise: the time from the write to the first
  answer that has it (median of `--rounds`).

Prints a table and writes JSON to bench/results/.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

sys.path.insert(0, str(Path(__file__).parent))
import sizes
from run import SEARCH_QUERIES, generate

# How long an external write may take to show before the benchmark gives up.
VISIBLE_DEADLINE_SECONDS = 30.0


def prepared(size: int, stores: Path) -> dict[str, Any]:
    """The store of this size under `stores`, made and indexed the first time."""
    root = stores / str(size)
    made = root / "store.json"
    if not made.exists():
        print(f"making a store of {size:,} memories in {root} ...", file=sys.stderr, flush=True)
        store = generate(root, size)
        env = {**os.environ, "XDG_CACHE_HOME": str(root / "cache")}
        # Indexed as an earlier process leaves it (the search index and its manifest).
        subprocess.run(
            [sys.executable, "-m", "memory_ls.cli", *store["flags"], "search", "indexed"],
            cwd=store["root"],
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        record = {"root": str(store["root"]), "flags": store["flags"]}
        record["external"] = str(store["external"])
        made.write_text(json.dumps(record))
    record = json.loads(made.read_text())
    record["cache"] = str(root / "cache")
    return dict(record)


async def call(session: ClientSession, tool: str, arguments: dict[str, Any]) -> Any:
    """One tool call; a failed call stops the benchmark."""
    result = await session.call_tool(tool, arguments)
    if result.is_error:
        raise RuntimeError(f"{tool} {arguments} failed: {result.content}")
    return result.structured_content or {}


async def timed(session: ClientSession, tool: str, arguments: dict[str, Any]) -> float:
    """Milliseconds one call takes."""
    started = time.perf_counter()
    await call(session, tool, arguments)
    return (time.perf_counter() - started) * 1000


async def visible_after(
    session: ClientSession, tool: str, arguments: dict[str, Any], wanted: str, written: float
) -> float:
    """Milliseconds from `written` until a call's answer names `wanted` (called back to back)."""
    while True:
        answer = await call(session, tool, arguments)
        if wanted in [m["name"] for m in answer.get("memories", [])]:
            return (time.perf_counter() - written) * 1000
        if time.perf_counter() - written > VISIBLE_DEADLINE_SECONDS:
            raise RuntimeError(f"{wanted} not visible through {tool} after the deadline")


# Searches timed for the percentiles: a 99th needs a hundred at least.
SEARCH_SAMPLES = 200


async def measure_server(store: dict[str, Any], rounds: int, settle: float) -> dict[str, Any]:
    """Every figure of one server process on one store."""
    env = {**os.environ, "XDG_CACHE_HOME": store["cache"]}
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memory_ls.cli", "mcp", *store["flags"]],
        cwd=store["root"],
        env=env,
    )
    figures: dict[str, Any] = {}
    started = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        first = await timed(session, "search_memories", {"query": SEARCH_QUERIES[0]})
        figures["start_to_first_answer_ms"] = (time.perf_counter() - started) * 1000
        figures["first_call_ms"] = first
        # Steady figures: once the server's background work after its start (learning
        # every file's facts, from the facts cache where it holds) has ended.
        await asyncio.sleep(settle)
        listing = [await timed(session, "list_memories", {}) for _ in range(rounds)]
        figures["list_first_page_p50_ms"] = statistics.median(listing)
        # Enough rounds of the query mix for a 99th percentile (SEARCH_SAMPLES at least).
        searches = [
            await timed(session, "search_memories", {"query": query})
            for _ in range(max(1, rounds // 4, -(-SEARCH_SAMPLES // len(SEARCH_QUERIES))))
            for query in SEARCH_QUERIES
        ]
        figures["search_samples"] = len(searches)
        figures["search_p50_ms"] = statistics.median(searches)
        figures["search_p90_ms"] = statistics.quantiles(searches, n=10)[-1]
        figures["search_p99_ms"] = statistics.quantiles(searches, n=100)[-1]
        found, listed = [], []
        external = Path(store["external"])
        stamp = time.strftime("%H%M%S")
        for number in range(rounds):
            word = f"xyzzy{stamp}n{number}q"
            name = f"PLAN_written_outside_{stamp}_{number}"
            path = external / f"{name}.md"
            written = time.perf_counter()
            path.write_text(f"# Written outside\n\nThe {word} memory.\n")
            found.append(
                await visible_after(session, "search_memories", {"query": word}, name, written)
            )
            written = time.perf_counter()
            (external / f"{name}_b.md").write_text("# Also outside\n")
            listed.append(
                await visible_after(
                    session, "list_memories", {"prefix": f"{name}_b"}, f"{name}_b", written
                )
            )
        figures["external_write_search_p50_ms"] = statistics.median(found)
        figures["external_write_search_max_ms"] = max(found)
        figures["external_write_list_p50_ms"] = statistics.median(listed)
        for number in range(rounds):  # the store as it was, for the next run
            name = f"PLAN_written_outside_{stamp}_{number}"
            for suffix in ("", "_b"):
                (external / f"{name}{suffix}.md").unlink()
    return figures


def run_server(store: dict[str, Any], rounds: int, settle: float) -> dict[str, Any]:
    """`measure_server` run to its end."""
    return asyncio.run(measure_server(store, rounds, settle))


COLUMNS: list[sizes.Column] = [
    ("memories", "memories", "{:,}"),
    ("start → first answer ms", "start_to_first_answer_ms", "{:.0f}"),
    ("first call ms", "first_call_ms", "{:.0f}"),
    ("list first page p50 ms", "list_first_page_p50_ms", "{:.1f}"),
    ("search p50 ms", "search_p50_ms", "{:.1f}"),
    ("search p90 ms", "search_p90_ms", "{:.1f}"),
    ("search p99 ms", "search_p99_ms", "{:.1f}"),
    ("external write → search ms", "external_write_search_p50_ms", "{:.0f}"),
    ("(max)", "external_write_search_max_ms", "{:.0f}"),
    ("external write → list ms", "external_write_list_p50_ms", "{:.0f}"),
    ("load", "load_before", "{:.2f}"),
]


def main() -> None:
    """Measure each size, print the table, write JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000", help="store sizes, comma-separated")
    parser.add_argument("--stores", default="/tmp/memory-ls-mcp-stores", help="kept stores")
    parser.add_argument("--rounds", type=int, default=8, help="calls timed per figure")
    parser.add_argument("--label", default="", help="a suffix for the JSON file's name")
    parser.add_argument(
        "--settle", type=float, default=10.0, help="seconds after the first call before the rest"
    )
    args = parser.parse_args()
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        store = prepared(size, Path(args.stores))
        print(f"measuring {size:,} memories ...", file=sys.stderr, flush=True)
        measured = functools.partial(run_server, store, args.rounds, args.settle)
        rows.append(sizes.around(size, measured))
    print(sizes.column_table(rows, COLUMNS))
    sizes.RESULTS.mkdir(parents=True, exist_ok=True)
    suffix = f"-{args.label}" if args.label else ""
    out = sizes.RESULTS / f"mcp_live{suffix}-{time.strftime('%Y%m%dT%H%M%S')}.json"
    out.write_text(json.dumps({"results": rows}, indent=2))
    print(f"\nwritten to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
