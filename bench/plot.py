"""Draw latency against store size from the benchmark's results, as a PNG.

Left: memory-ls beside VS Code's own Markdown language server on the same stores in the
same run (`bench/markdown_ls.py`). Right: memory-ls's requests at each size
(`bench/run.py`, and `bench/first_run.py` for the first search of a store never indexed).
Each panel takes the newest results file of its kind in `bench/results/` unless files are
named; the docs' short table (docs/guides/performance.md) is printed from the same
files. Run: `.venv/bin/python bench/plot.py [--output bench/latency.png]`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).parent / "results"
DEFAULT_OUTPUT = Path(__file__).parent / "latency.png"
OURS = "memory-ls"
# (key in a markdown-ls result, label): measured for both servers.
PEER_SERIES = (
    ("references_p50_ms", "references p50"),
    ("symbols_p50_ms", "workspace symbols p50"),
)
# (key in a bench/run.py result, label): memory-ls alone.
OWN_SERIES = (
    ("completion_p50_ms", "completion p50"),
    ("references_p50_ms", "references p50"),
    ("search_p50_ms", "memory.search p50"),
    ("search_p99_ms", "memory.search p99"),
    ("mcp_search_p50_ms", "MCP search_memories p50"),
)
# (key in a bench/first_run.py result, label, factor to ms).
FIRST_RUN_SERIES = (("first_search_s", "first search, store never indexed", 1000.0),)


def newest(prefix: str, directory: Path = RESULTS) -> Path | None:
    """The newest results file whose name starts with `prefix`, if any."""
    # By time written: a label in the name (first-run-final-…) would sort before the stamp.
    files = sorted(directory.glob(f"{prefix}-*.json"), key=lambda p: (p.stat().st_mtime_ns, p.name))
    return files[-1] if files else None


def load(path: Path | None) -> list[dict[str, Any]]:
    """The result rows of a results file (none for no file)."""
    if path is None:
        return []
    rows = json.loads(path.read_text())["results"]
    return [row for row in rows if isinstance(row, dict)]


def series(
    rows: Sequence[dict[str, Any]], key: str, factor: float = 1.0
) -> tuple[list[int], list[float]]:
    """The (sizes, values) of one figure across the rows that have it, by size."""
    points = sorted(
        (int(row["memories"]), float(row[key]) * factor)
        for row in rows
        if isinstance(row.get(key), int | float)
    )
    return [size for size, _ in points], [value for _, value in points]


def draw(
    peers: Sequence[dict[str, Any]],
    own: Sequence[dict[str, Any]],
    first_run: Sequence[dict[str, Any]],
    output: Path,
) -> None:
    """Write the two panels to `output`."""
    import matplotlib

    matplotlib.use("Agg")  # no display: a file only
    import matplotlib.pyplot as plt

    figure, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8), constrained_layout=True)
    servers = sorted({str(row["server"]) for row in peers}, key=lambda name: name != OURS)
    for key, label in PEER_SERIES:
        for server in servers:
            xs, ys = series([row for row in peers if row["server"] == server], key)
            if xs:
                style = "-o" if server == OURS else "--s"
                left.plot(xs, ys, style, label=f"{server}: {label}")
    left.set_title("Beside VS Code's Markdown server (same stores, same run)")
    for key, label in OWN_SERIES:
        xs, ys = series(own, key)
        if xs:
            right.plot(xs, ys, "-o", label=label)
    for key, label, factor in FIRST_RUN_SERIES:
        xs, ys = series(first_run, key, factor)
        if xs:
            right.plot(xs, ys, ":^", label=label)
    right.set_title("memory-ls requests by store size")
    for axes in (left, right):
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.set_xlabel("memories in the store")
        axes.set_ylabel("milliseconds (log)")
        axes.grid(True, which="both", alpha=0.3)
        if axes.lines:
            axes.legend(fontsize="small")
    output.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(output, dpi=110)
    plt.close(figure)


# The docs' short table (docs/guides/performance.md): (title, source, key, format); source
# "own" is bench/run.py, "first" bench/first_run.py.
SHORT_TABLE = (
    ("first search s", "first", "first_search_s", "{:.1f}"),
    ("slowest search while indexing s", "first", "search_indexing_max_s", "{:.1f}"),
    ("index ready s", "first", "search_indexed_s", "{:.0f}"),
    ("peak RSS while indexing MiB", "first", "peak_rss_mb", "{:.0f}"),
    ("search p50 ms", "own", "search_p50_ms", "{:.1f}"),
    ("completion p50 / p99 ms", "own", ("completion_p50_ms", "completion_p99_ms"), "{:.1f}"),
    ("references p50 ms", "own", "references_p50_ms", "{:.1f}"),
    ("RSS MiB", "own", "rss_mb", "{:.0f}"),
)


def short_table(own: Sequence[dict[str, Any]], first_run: Sequence[dict[str, Any]]) -> str:
    """The docs' table of what a user notices, by store size, as Markdown."""
    sources = {"own": own, "first": first_run}
    sizes = sorted({int(row["memories"]) for rows in sources.values() for row in rows})
    lines = ["| memories | " + " | ".join(title for title, *_ in SHORT_TABLE) + " |"]
    lines.append("| --- " * (len(SHORT_TABLE) + 1) + "|")
    for size in sizes:
        cells = [f"{size:,}"]
        for _title, source, keys, fmt in SHORT_TABLE:
            row = next((r for r in sources[source] if int(r["memories"]) == size), {})
            wanted = keys if isinstance(keys, tuple) else (keys,)
            values = [row.get(key) for key in wanted]
            cells.append(
                " / ".join(fmt.format(v) for v in values if isinstance(v, int | float)) or "–"
            )
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Draw the newest (or the named) results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peers", type=Path, help="a markdown-ls-*.json (default: newest)")
    parser.add_argument("--own", type=Path, help="a bench-*.json (default: newest)")
    parser.add_argument("--first-run", type=Path, help="a first-run-*.json (default: newest)")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)
    peers = load(args.peers or newest("markdown-ls"))
    own = load(args.own or newest("bench"))
    first_run = load(args.first_run or newest("first-run"))
    if not (peers or own or first_run):
        print(f"no results in {RESULTS}: run bench/run.py or bench/markdown_ls.py first")
        return 1
    draw(peers, own, first_run, args.output)
    print(f"written to {args.output}")
    if own or first_run:
        print(short_table(own, first_run))
    return 0


if __name__ == "__main__":
    sys.exit(main())
