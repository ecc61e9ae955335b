#!/usr/bin/env python3
"""Benchmark what an agent's writes cost now that each is answered with the store's findings.

    python3 bench/agent_writes.py                   # 1,000 and 10,000 memories
    python3 bench/agent_writes.py --sizes 100000 --rounds 5

Through `memory-ls mcp` (the official MCP client over stdio) on bench/run.py's store: a
`write_memory` of a new memory with a good and a broken link and a path ("write new"), an
overwrite of it with its version as expected_version ("write versioned"), an `edit_memory`
that brings a broken link ("edit"), and `read_memory` with its version ("read"). Each
answer's findings are checked (the broken link is reported, with a "did you mean").
Prints medians in ms and writes JSON to bench/results/.
"""

from __future__ import annotations

import asyncio
import os
import statistics
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


def content(round_: int) -> str:
    """A new memory's text: a good link, a mistyped one, and a path."""
    return (
        f"# Agent note {round_}\n\nFollows [[{TARGET}]]; see also [[{TARGET}x]].\n"
        f"Code in `src/agent/note_{round_}.py`.\n"
    )


async def measure_mcp(store: dict[str, Any], env: dict[str, str], rounds: int) -> dict[str, Any]:
    """Each call's latency, per kind, with the answers checked."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memory_ls.cli", "mcp", *store["flags"]],
        cwd=str(store["root"]),
        env=env,
    )
    samples: dict[str, list[float]] = {
        "write_new": [],
        "write_versioned": [],
        "edit": [],
        "read": [],
    }
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()

        async def timed(kind: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
            started = time.perf_counter()
            result = await session.call_tool(tool, arguments)
            samples[kind].append((time.perf_counter() - started) * 1000)
            if result.is_error or result.structured_content is None:
                raise RuntimeError(f"{tool} failed: {result}")
            return result.structured_content

        for round_ in range(rounds + 1):
            name = f"agent_note_{round_}"
            saved = await timed(
                "write_new", "write_memory", {"memory_name": name, "content": content(round_)}
            )
            broken = [d for d in saved["diagnostics"] if d["code"] == "broken-link"]
            if len(broken) != 1 or TARGET not in broken[0].get("fix", ""):
                raise RuntimeError(f"the broken link was not reported: {saved['diagnostics']}")
            read = await timed("read", "read_memory", {"memory_name": name})
            await timed(
                "write_versioned",
                "write_memory",
                {
                    "memory_name": name,
                    "content": content(round_) + "More.\n",
                    "expected_version": read["version"],
                },
            )
            await timed(
                "edit",
                "edit_memory",
                {"memory_name": name, "needle": "More.", "repl": "[[nowhere]]", "mode": "literal"},
            )
    # The first round warms the process up (imports, the index's first sync).
    return {f"{kind}_p50_ms": statistics.median(values[1:]) for kind, values in samples.items()}


def measure(size: int, workdir: Path, rounds: int) -> dict[str, Any]:
    """Every figure for one store size."""
    store = generate(workdir, size)
    env = {**os.environ, "XDG_CACHE_HOME": str(workdir / "cache")}
    return sizes.around(size, lambda: asyncio.run(measure_mcp(store, env, rounds)))


COLUMNS = [
    ("memories", "memories", "{:,}"),
    ("write new p50 ms", "write_new_p50_ms", "{:.1f}"),
    ("write versioned p50 ms", "write_versioned_p50_ms", "{:.1f}"),
    ("edit p50 ms", "edit_p50_ms", "{:.1f}"),
    ("read p50 ms", "read_p50_ms", "{:.1f}"),
    ("load", "load_before", "{:.1f}"),
    ("cpu ms", "cpu_calibration_ms", "{:.0f}"),
]


def table(rows: list[dict[str, Any]]) -> str:
    """The figures as a Markdown table."""
    return column_table(rows, COLUMNS)


def main() -> None:
    """Run the benchmark for each size, print the table, write JSON."""
    sizes.main(
        "agent-writes",
        __doc__,
        measure,
        table,
        rounds=10,
        rounds_help="timed rounds of each call",
    )


if __name__ == "__main__":
    main()
