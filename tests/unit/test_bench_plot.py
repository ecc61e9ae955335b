"""The benchmark's plot (bench/plot.py) draws the newest results of each kind."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

PLOT = Path(__file__).resolve().parents[2] / "bench" / "plot.py"


def load_plot() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_plot", PLOT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text(json.dumps({"machine": {}, "results": rows}))
    return path


def test_series_takes_sizes_in_order_and_skips_rows_without_the_figure() -> None:
    plot = load_plot()
    rows = [
        {"memories": 10000, "search_p50_ms": 4.0},
        {"memories": 1000, "search_p50_ms": 3.0},
        {"memories": 100000},
    ]
    assert plot.series(rows, "search_p50_ms") == ([1000, 10000], [3.0, 4.0])
    assert plot.series([{"memories": 5, "first_search_s": 0.5}], "first_search_s", 1000.0) == (
        [5],
        [500.0],
    )


def test_newest_results_file_of_a_kind(tmp_path: Path) -> None:
    plot = load_plot()
    write(tmp_path / "bench-20261101T000000.json", [])
    write(tmp_path / "bench-20261125T000000.json", [])
    write(tmp_path / "markdown-ls-20261130T000000.json", [])
    assert plot.newest("bench", tmp_path) == tmp_path / "bench-20261125T000000.json"
    assert plot.newest("first-run", tmp_path) is None


def test_draws_a_png_with_both_servers(tmp_path: Path) -> None:
    plot = load_plot()
    peers = write(
        tmp_path / "markdown-ls-1.json",
        [
            {"memories": n, "server": server, "references_p50_ms": ms, "symbols_p50_ms": ms}
            for n in (1000, 10000)
            for server, ms in (("memory-ls", 1.0), ("vscode-markdown-languageserver 0.5.0", 9.0))
        ],
    )
    own = write(tmp_path / "bench-1.json", [{"memories": 1000, "search_p50_ms": 4.0}])
    output = tmp_path / "out" / "latency.png"
    code = plot.main(
        [
            "--peers",
            str(peers),
            "--own",
            str(own),
            "--first-run",
            str(peers),
            "--output",
            str(output),
        ]
    )
    assert code == 0
    assert output.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert output.stat().st_size > 10_000  # axes, lines and legends, not an empty canvas


def test_no_results_is_an_error_not_an_empty_plot(tmp_path: Path) -> None:
    plot = load_plot()
    empty = write(tmp_path / "bench-1.json", [])
    output = tmp_path / "latency.png"
    code = plot.main(
        [
            "--peers",
            str(empty),
            "--own",
            str(empty),
            "--first-run",
            str(empty),
            "--output",
            str(output),
        ]
    )
    assert code == 1
    assert not output.exists()


def test_short_table_takes_each_column_from_its_scenario() -> None:
    plot = load_plot()
    own = [{"memories": 1000, "search_p50_ms": 4.04, "completion_p50_ms": 0.6}]
    first = [
        {"memories": 1000, "first_search_s": 0.31, "search_indexed_s": 1.2},
        {"memories": 100000, "first_search_s": 1.5, "peak_rss_mb": 240.4},
    ]
    table = plot.short_table(own, first).splitlines()
    assert table[0].startswith("| memories | first search s |")
    assert len(table) == 4  # head, rule, 1,000 and 100,000
    small = table[2].split(" | ")
    assert small[0] == "| 1,000" and small[1] == "0.3" and small[3] == "1"
    assert "4.0" in small and "0.6" in small  # completion p99 unknown: p50 alone
    large = table[3].split(" | ")
    assert large[1] == "1.5" and large[4] == "240" and large[5] == "–"
