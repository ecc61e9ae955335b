#!/usr/bin/env python3
"""Benchmark renames outside the language server: `rename_memory` through `memory-ls mcp`
(the official MCP client over stdio) and `memory-ls move` in a new process each time.

    python3 bench/rename.py                      # 1,000 and 10,000 memories
    python3 bench/rename.py --sizes 1000 --rounds 5

Each size gets bench/run.py's store and a fresh cache directory (XDG_CACHE_HOME). Two
memories are renamed back and forth: one nothing refers to ("unreferenced"), and one
that REFERRERS memories refer to, each by `[[NAME]]`, `[[NAME|label]]` and `mem:NAME`
("referenced": every rename rewrites them all, and the count is checked). The first
rename of a session is timed apart ("first"): it may build the full-text index. Prints
medians in ms and writes JSON to bench/results/.
"""

from __future__ import annotations

import asyncio
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
from run import TARGET, generate  # bench/run.py's store
from sizes import column_table

LINKED = "zz_bench_linked_memory"
REFERRERS = 10
REFERENCES_PER_REFERRER = 3
# (the memory renamed back and forth, the references each rename rewrites)
CASES = {"unreferenced": (TARGET, 0), "referenced": (LINKED, REFERRERS * REFERENCES_PER_REFERRER)}


def prepare(workdir: Path, size: int) -> dict[str, Any]:
    """bench/run.py's store, plus a memory that REFERRERS others refer to."""
    store = generate(workdir, size)
    primary = store["root"] / ".serena" / "memories"
    (primary / f"{LINKED}.md").write_text("# A memory others refer to\n")
    for number in range(REFERRERS):
        (primary / f"zz_bench_referrer_{number}.md").write_text(
            f"# Referrer {number}\n\nSee [[{LINKED}]], [[{LINKED}|the linked one]] "
            f"and `mem:{LINKED}`.\n"
        )
    return store


def renamed(name: str, step: int) -> tuple[str, str]:
    """The names of a back-and-forth rename's step: even steps away, odd ones back."""
    other = name + "_renamed"
    return (name, other) if step % 2 == 0 else (other, name)


async def measure_mcp(store: dict[str, Any], env: dict[str, str], rounds: int) -> dict[str, Any]:
    """`rename_memory` latencies through `memory-ls mcp`, per case."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memory_ls.cli", "mcp", *store["flags"]],
        cwd=str(store["root"]),
        env=env,
    )
    figures: dict[str, Any] = {}
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for case, (name, references) in CASES.items():
            samples = []
            for step in range(2 * rounds + 2):  # back where it started
                old, new = renamed(name, step)
                started = time.perf_counter()
                result = await session.call_tool(
                    "rename_memory", {"old_name": old, "new_name": new}
                )
                elapsed = (time.perf_counter() - started) * 1000
                content = result.structured_content or {}
                if result.is_error or content.get("updatedReferences") != references:
                    raise RuntimeError(f"rename_memory {old} -> {new} failed: {result}")
                samples.append(elapsed)
            figures[f"mcp_{case}_first_ms"] = samples[0]
            figures[f"mcp_{case}_p50_ms"] = statistics.median(samples[1:])
            figures[f"mcp_{case}_max_ms"] = max(samples[1:])
    return figures


def measure_cli(store: dict[str, Any], env: dict[str, str], rounds: int) -> dict[str, Any]:
    """`memory-ls move` in a new process each time (the index cache kept), per case."""
    figures: dict[str, Any] = {}
    for case, (name, references) in CASES.items():
        samples = []
        for step in range(2 * rounds + 2):  # back where it started
            old, new = renamed(name, step)
            started = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "memory_ls.cli", "move", old, new, "--json"]
                + store["flags"],
                cwd=store["root"],
                env=env,
                capture_output=True,
                text=True,
            )
            elapsed = (time.perf_counter() - started) * 1000
            if done.returncode or json.loads(done.stdout)["updatedReferences"] != references:
                raise RuntimeError(f"memory-ls move {old} {new} failed: {done}")
            samples.append(elapsed)
        figures[f"cli_{case}_first_ms"] = samples[0]
        figures[f"cli_{case}_p50_ms"] = statistics.median(samples[1:])
    # What any command costs: Python and the package starting, the configuration read.
    floor = []
    for _ in range(1 + 2 * rounds):
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "memory_ls.cli", "read", TARGET, "--json", *store["flags"]],
            cwd=store["root"],
            env=env,
            capture_output=True,
            check=True,
        )
        floor.append((time.perf_counter() - started) * 1000)
    figures["cli_read_floor_p50_ms"] = statistics.median(floor[1:])
    return figures


def measure(size: int, workdir: Path, rounds: int) -> dict[str, Any]:
    """Every figure for one store size: MCP first (its first rename builds the index)."""
    store = prepare(workdir, size)
    env = {**os.environ, "XDG_CACHE_HOME": str(workdir / "cache")}

    def both() -> dict[str, Any]:
        return {**asyncio.run(measure_mcp(store, env, rounds)), **measure_cli(store, env, rounds)}

    return sizes.around(size, both)


COLUMNS = [
    ("memories", "memories", "{:,}"),
    ("MCP unref. first ms", "mcp_unreferenced_first_ms", "{:.0f}"),
    ("MCP unref. p50 ms", "mcp_unreferenced_p50_ms", "{:.1f}"),
    ("MCP unref. max ms", "mcp_unreferenced_max_ms", "{:.1f}"),
    ("MCP ref. p50 ms", "mcp_referenced_p50_ms", "{:.1f}"),
    ("MCP ref. max ms", "mcp_referenced_max_ms", "{:.1f}"),
    ("CLI unref. first ms", "cli_unreferenced_first_ms", "{:.0f}"),
    ("CLI unref. p50 ms", "cli_unreferenced_p50_ms", "{:.0f}"),
    ("CLI ref. p50 ms", "cli_referenced_p50_ms", "{:.0f}"),
    ("CLI read (floor) ms", "cli_read_floor_p50_ms", "{:.0f}"),
    ("load", "load_before", "{:.1f}"),
    ("cpu ms", "cpu_calibration_ms", "{:.0f}"),
]


def table(rows: list[dict[str, Any]]) -> str:
    """The figures as a Markdown table."""
    return column_table(rows, COLUMNS)


def main() -> None:
    """Run the benchmark for each size, print the table, write JSON."""
    sizes.main(
        "rename",
        __doc__,
        measure,
        table,
        rounds=10,
        rounds_help="back-and-forth renames timed per case, times two",
    )


if __name__ == "__main__":
    main()
