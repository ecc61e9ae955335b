#!/usr/bin/env python3
"""Benchmark `memory.links` (the editor's Memory Links view) through the language server.

    python3 bench/links_view.py                  # 1,000 and 10,000 memories
    python3 bench/links_view.py --sizes 100000 --rounds 5

Each size gets bench/run.py's store plus a hub memory that HUB_REFERRERS memories link to
(twice each). Once the server has indexed, `memory.links` is asked ROUNDS times for: the
hub ("hub": every referrer read again), a generated memory ("typical": a few links each
way), and the 1,000-reference big note ("big note": its outgoing links resolved). The
answers are checked (the hub's backlinks are exactly its referrers). Prints medians in ms
and the answers' sizes, and writes JSON to bench/results/.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import sizes
from run import generate, start
from sizes import column_table

HUB = "zz_bench_links_hub"
HUB_REFERRERS = 500


def prepare(workdir: Path, size: int) -> dict[str, Any]:
    """bench/run.py's store, plus the hub and its referrers."""
    store = generate(workdir, size)
    primary = store["root"] / ".serena" / "memories"
    (primary / f"{HUB}.md").write_text("# The hub\n")
    for number in range(HUB_REFERRERS):
        (primary / f"zz_bench_hub_referrer_{number}.md").write_text(
            f"# Referrer {number}\n\nSee [[{HUB}]].\n\nAnd again: `mem:{HUB}`.\n"
        )
    return store


def measure(size: int, workdir: Path, rounds: int) -> dict[str, Any]:
    """`memory.links` latencies and answer sizes for one store size."""
    store = prepare(workdir, size)
    root: Path = store["root"]
    primary = root / ".serena" / "memories"
    env = {**os.environ, "XDG_CACHE_HOME": str(workdir / "cache")}
    client, _ = start([sys.executable, "-m", "memory_ls", *store["flags"]], root, env)
    if not client.indexed.wait(timeout=600):
        raise RuntimeError("indexing never ended")
    typical = next(name for name in store["names"] if not name.startswith(("global/", "PLAN")))
    cases = {
        "hub": (primary / f"{HUB}.md", HUB_REFERRERS),
        "typical": (primary / f"{typical}.md", None),
        "big": (store["big"], None),
    }
    figures: dict[str, Any] = {"memories": size, "load_before": os.getloadavg()[0]}
    try:
        for case, (path, referrers) in cases.items():
            times = []
            answer: dict[str, Any] = {}
            for _ in range(rounds):
                took, response = client.request(
                    "workspace/executeCommand",
                    {"command": "memory.links", "arguments": [{"uri": path.as_uri()}]},
                )
                if "result" not in response:
                    raise RuntimeError(f"memory.links of {path}: {response}")
                answer = response["result"]
                times.append(took * 1000)
            if referrers is not None and len(answer["linkedFrom"]) != referrers:
                raise RuntimeError(
                    f"{case}: {len(answer['linkedFrom'])} backlinks, expected {referrers}"
                )
            figures[f"{case}_p50_ms"] = statistics.median(times)
            figures[f"{case}_from"] = len(answer["linkedFrom"])
            figures[f"{case}_to"] = len(answer["linksTo"])
            figures[f"{case}_kb"] = len(json.dumps(answer)) / 1024
    finally:
        client.close()
    figures["load_after"] = os.getloadavg()[0]
    return figures


COLUMNS = [
    ("memories", "memories", "{:,}"),
    ("hub p50 ms", "hub_p50_ms", "{:.1f}"),
    ("hub linked from", "hub_from", "{}"),
    ("hub answer KiB", "hub_kb", "{:.0f}"),
    ("typical p50 ms", "typical_p50_ms", "{:.1f}"),
    ("big note p50 ms", "big_p50_ms", "{:.1f}"),
    ("big note links to", "big_to", "{}"),
    ("big note answer KiB", "big_kb", "{:.0f}"),
    ("load", "load_before", "{:.1f}"),
]


def table(rows: list[dict[str, Any]]) -> str:
    """The figures as a Markdown table."""
    return column_table(rows, COLUMNS)


def main() -> None:
    """Run the benchmark for each size, print the table, write JSON."""
    sizes.main("links_view", __doc__, measure, table, rounds=20, rounds_help="requests per case")


if __name__ == "__main__":
    main()
