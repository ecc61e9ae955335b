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
