#!/usr/bin/env python3
"""Time the language server's `memory.graph` (the editor's Show Graph) on generated stores.

    python3 tasks.py bench graph                       # 10,000 and 100,000 memories
    python3 tasks.py bench graph --sizes 1000          # the CI smoke run

The store is bench/run.py's (six folders, three links a memory, half with tags, a 1 MB
note with 1,000 links). The server is started over stdio as an editor starts it, and
once its indexing has ended each request is sent ROUNDS times (the server builds the
whole graph once per change of the store: the first request's time includes that build,
the median is from the graph kept): what Show Graph asks
first (the 2,000 most linked), the whole graph (no limit), one folder, and the
neighbourhood of a memory (two links deep). Printed and written to bench/results/: the
first, median and slowest answer time, the payload's size as JSON, and what it held.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from run import generate as generate_store  # bench/run.py, beside this
from run import start

ROUNDS = 7
EDITOR_LIMIT = 2000  # what client-vscode/src/graph.ts asks first


def queries(names: list[str]) -> dict[str, dict[str, Any]]:
    """The requests timed, by label."""
    return {
        "editor (2,000 most linked)": {"limit": EDITOR_LIMIT},
        "whole graph": {"limit": 10_000_000},
        "one folder (spec), 2,000": {"folder": "spec", "limit": EDITOR_LIMIT},
        "neighbourhood, depth 2": {"center": names[len(names) // 2], "depth": 2},
    }


def measure(size: int, workdir: Path) -> dict[str, Any]:
    """Generate a store of `size` memories, start a server on it, time the requests."""
    store = generate_store(workdir, size)
    env = {
        **os.environ,
        "XDG_CACHE_HOME": str(workdir / "cache"),
        "HOME": str(workdir / "home"),
    }
    command = [sys.executable, "-m", "memory_ls", *store["flags"]]
    client, _ = start(command, store["root"], env)
    try:
        if not client.indexed.wait(timeout=600):
            raise RuntimeError("the server never finished indexing")
        rows = []
        rss_before = client.memory_mb()[0]
        rss_editor = rss_before
        for label, params in queries(store["names"]).items():
            times: list[float] = []
            result: dict[str, Any] = {}
            for _ in range(ROUNDS):
                seconds, response = client.request(
                    "workspace/executeCommand", {"command": "memory.graph", "arguments": [params]}
                )
                if "error" in response:
                    raise RuntimeError(f"{label}: {response['error']}")
                result = response["result"]
                times.append(seconds * 1000)
            rows.append(
                {
                    "query": label,
                    "params": params,
                    "first_ms": round(times[0], 1),
                    "p50_ms": round(statistics.median(times), 1),
                    "max_ms": round(max(times), 1),
                    "bytes": len(json.dumps(result)),
                    "nodes": len(result["nodes"]),
                    "edges": len(result["edges"]) // 2,
                    "total": result["total"],
                    "pending": result["pending"],
                }
            )
            if params.get("limit") == EDITOR_LIMIT and "folder" not in params:
                rss_editor = client.memory_mb()[0]
        rss, peak = client.memory_mb()
    finally:
        client.close()
    return {
        "size": size,
        "rows": rows,
        # The server's RSS once indexed, after Show Graph's request, and after them all
        # (the whole graph's answer is the largest).
        "rss_indexed_mib": round(rss_before),
        "rss_after_editor_mib": round(rss_editor),
        "rss_mib": round(rss),
        "peak_rss_mib": round(peak),
    }


def main() -> None:
    """Measure every size, print a table, write the results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--output", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args()
    results = []
    for size in (int(part) for part in args.sizes.split(",")):
        # Its removal tolerates a file the server's last moments still wrote (the other
        # benches' stores are removed the same way: sizes.run_sizes).
        with tempfile.TemporaryDirectory(prefix="mls-graph-", ignore_cleanup_errors=True) as temp:
            measured = measure(size, Path(temp))
        results.append(measured)
        for row in measured["rows"]:
            print(
                f"{size:>7,}  {row['query']:<28} first {row['first_ms']:>7.1f} ms  "
                f"p50 {row['p50_ms']:>7.1f} ms  "
                f"max {row['max_ms']:>7.1f} ms  {row['bytes'] / 1024:>8.1f} KiB  "
                f"{row['nodes']:>6,} nodes {row['edges']:>7,} links "
                f"(of {row['total']['nodes']:,} / {row['total']['edges']:,})",
                flush=True,
            )
        print(
            f"{size:>7,}  RSS {measured['rss_indexed_mib']} MiB indexed, "
            f"{measured['rss_after_editor_mib']} after Show Graph's request, "
            f"{measured['rss_mib']} after all (peak {measured['peak_rss_mib']})"
        )
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else []
    print(f"load average {' '.join(load)}")
    output = Path(args.output)
    output.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S")
    document = {
        "scenario": "graph",
        "date": stamp,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "loadavg": load,
        "rounds": ROUNDS,
        "results": results,
    }
    path = output / f"graph-{stamp}.json"
    path.write_text(json.dumps(document, indent=2) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
