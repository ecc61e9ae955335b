"""What the benchmarks that measure one store size at a time share: the loop over sizes
(a fresh folder each), the Markdown table, and the JSON written to bench/results/."""

from __future__ import annotations

import json
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).parent / "results"
# (title, key, format) of each column of a table.
Column = tuple[str, str, str]


def column_table(rows: Sequence[dict[str, Any]], columns: Sequence[Column]) -> str:
    """The rows as a Markdown table, one column per (title, key, format)."""
    head = "| " + " | ".join(title for title, _, _ in columns) + " |"
    rule = "|" + " --- |" * len(columns)
    body = [
        "| " + " | ".join(form.format(row[key]) for _, key, form in columns) + " |" for row in rows
    ]
    return "\n".join([head, rule, *body])


def run_sizes(
    name: str,
    sizes: str,
    measure: Callable[[int, Path], dict[str, Any]],
    table: Callable[[list[dict[str, Any]]], str],
    output: str | Path = RESULTS,
    label: str = "",
) -> list[dict[str, Any]]:
    """Measure each size ("1000,10000") in a folder of its own, print the table, write JSON."""
    rows = []
    for size in (int(s) for s in sizes.split(",")):
        workdir = Path(tempfile.mkdtemp(prefix=f"memory-ls-{name}-{size}-"))
        try:
            print(f"measuring {size:,} memories ...", file=sys.stderr, flush=True)
            rows.append(measure(size, workdir))
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    print(table(rows))
    out = Path(output)
    out.mkdir(parents=True, exist_ok=True)
    machine = {"platform": platform.platform(), "cpus": os.cpu_count(), "python": sys.version}
    suffix = f"-{label}" if label else ""
    path = out / f"{name}{suffix}-{time.strftime('%Y%m%dT%H%M%S')}.json"
    path.write_text(json.dumps({"machine": machine, "results": rows}, indent=2))
    print(f"\nwritten to {path}", file=sys.stderr)
    return rows


def around(size: int, measure: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """One size's figures with the machine's state around them (load, a fixed loop's time)."""
    from run import calibrate  # bench/run.py: the same yardstick in every table

    figures: dict[str, Any] = {
        "memories": size,
        "load_before": os.getloadavg()[0],
        "cpu_calibration_ms": calibrate(),
    }
    figures.update(measure())
    figures["load_after"] = os.getloadavg()[0]
    return figures


def main(
    name: str,
    doc: str | None,
    measure: Callable[[int, Path, int], dict[str, Any]],
    table: Callable[[list[dict[str, Any]]], str],
    *,
    rounds: int,
    rounds_help: str,
    label: bool = False,
) -> None:
    """The command line every per-size benchmark takes: --sizes, --rounds, --output."""
    import argparse

    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--rounds", type=int, default=rounds, help=rounds_help)
    if label:
        parser.add_argument("--label", default="", help="a word for the JSON file's name")
    parser.add_argument("--output", default=str(RESULTS))
    args = parser.parse_args()
    run_sizes(
        name,
        args.sizes,
        lambda size, workdir: measure(size, workdir, args.rounds),
        table,
        args.output,
        label=getattr(args, "label", ""),
    )
