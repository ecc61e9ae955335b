#!/usr/bin/env python3
"""Benchmark `list_memories` through `memory-ls mcp` (the official MCP client over stdio).

    python3 bench/listing.py                      # 1,000 and 10,000 memories
    python3 bench/listing.py --sizes 1000 --rounds 5

Each size gets bench/run.py's store (primary, four additional folders, global) and a fresh
cache directory. Timed per call, once the server is up ("first" apart: it warms the
process): the default call; `topic="global"` (a tenth of the store); when the server
pages, the later pages (each call continues from the previous `next_cursor`), the
`view="topics"` and `view="titles"` answers; and the default call right after a memory was
written on disk behind the server's back ("after write": the primary folder, half the
store, is scanned again). For each, the median latency and the size of
the answer: the characters of its text blocks (what the model reads; a token is about four)
and of its structured content. Prints medians and writes JSON to bench/results/. Run it
against another checkout (PYTHONPATH=<checkout>/server) to compare before and after: a
server without paging is measured on the calls it has.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent

sys.path.insert(0, str(Path(__file__).parent))
import sizes
from run import generate  # bench/run.py's store

# Later pages walked per round (each a call with the previous answer's next_cursor).
PAGES_PER_ROUND = 5


def sizes_of(result: CallToolResult) -> tuple[int, int]:
    """(characters of the text blocks, characters of the structured content as JSON)."""
    text = sum(len(b.text) for b in result.content if isinstance(b, TextContent))
    structured = len(json.dumps(result.structured_content, ensure_ascii=False))
    return text, structured


async def timed(session: ClientSession, arguments: dict[str, Any]) -> tuple[float, CallToolResult]:
    """One list_memories call: (milliseconds, result); a failed call stops the benchmark."""
    started = time.perf_counter()
    result = await session.call_tool("list_memories", arguments)
    elapsed = (time.perf_counter() - started) * 1000
    if result.is_error:
        raise RuntimeError(f"list_memories {arguments} failed: {result.content}")
    return elapsed, result


async def measure_case(
    session: ClientSession, arguments: dict[str, Any], rounds: int
) -> dict[str, float]:
    """Median latency and answer size of one kind of call."""
    samples, answer = [], None
    for _ in range(rounds):
        elapsed, answer = await timed(session, arguments)
        samples.append(elapsed)
    assert answer is not None
    text, structured = sizes_of(answer)
    return {
        "p50_ms": statistics.median(samples),
        "text_chars": text,
        "structured_chars": structured,
    }


async def measure_pages(session: ClientSession, rounds: int) -> dict[str, float]:
    """Later pages: from the first page, follow next_cursor PAGES_PER_ROUND times."""
    samples, texts, structured_sizes = [], [], []
    for _ in range(rounds):
        _, answer = await timed(session, {})
        for _page in range(PAGES_PER_ROUND):
            cursor = (answer.structured_content or {}).get("next_cursor")
            if cursor is None:
                break
            elapsed, answer = await timed(session, {"cursor": cursor})
            samples.append(elapsed)
            text, structured = sizes_of(answer)
            texts.append(text)
            structured_sizes.append(structured)
    if not samples:
        return {}
    return {
        "p50_ms": statistics.median(samples),
        "text_chars": statistics.median(texts),
        "structured_chars": statistics.median(structured_sizes),
    }


async def measure_mcp(store: dict[str, Any], env: dict[str, str], rounds: int) -> dict[str, Any]:
    """Every list_memories figure of one store."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memory_ls.cli", "mcp", *store["flags"]],
        cwd=str(store["root"]),
        env=env,
    )
    figures: dict[str, Any] = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        accepted = set(tools["list_memories"].input_schema.get("properties", {}))
        elapsed, _ = await timed(session, {})
        figures["first_ms"] = elapsed
        cases: dict[str, dict[str, Any]] = {"default": {}, "topic_global": {"topic": "global"}}
        if "view" in accepted:
            cases["view_topics"] = {"view": "topics"}
            cases["view_titles"] = {"view": "titles"}
        for case, arguments in cases.items():
            for key, value in (await measure_case(session, arguments, rounds)).items():
                figures[f"{case}_{key}"] = value
        if "cursor" in accepted:
            for key, value in (await measure_pages(session, rounds)).items():
                figures[f"next_page_{key}"] = value
        primary = Path(store["root"]) / ".serena" / "memories"
        samples = []
        for number in range(rounds):
            (primary / f"zz_written_{number}.md").write_text("# Written meanwhile\n")
            elapsed, answer = await timed(session, {})
            samples.append(elapsed)
        text, structured = sizes_of(answer)
        figures["after_write_p50_ms"] = statistics.median(samples)
        figures["after_write_text_chars"] = text
        figures["after_write_structured_chars"] = structured
    return figures


def measure(size: int, workdir: Path, rounds: int) -> dict[str, Any]:
    """The figures of one store size."""
    store = generate(workdir, size)
    # A store as it is between writes: its folders last changed more than a few seconds ago
    # (a folder changed within 2 s is scanned again on every call, core/storage/listing.py).
    settled_ns = time.time_ns() - 60 * 10**9
    for directory, _, _ in os.walk(workdir):
        os.utime(directory, ns=(settled_ns, settled_ns))
    env = {**os.environ, "XDG_CACHE_HOME": str(workdir / "cache")}
    return sizes.around(size, lambda: asyncio.run(measure_mcp(store, env, rounds)))


def table(rows: list[dict[str, Any]]) -> str:
    """Median latency and answer size per kind of call, as a Markdown table."""
    head = "| memories | call | p50 ms | text chars | ~tokens | structured chars |"
    lines = [head, "| --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        lines.append(f"| {row['memories']:,} | first call | {row['first_ms']:.0f} | | | |")
        cases = ("default", "next_page", "topic_global", "view_topics", "view_titles")
        for case in (*cases, "after_write"):
            if f"{case}_p50_ms" not in row:
                continue
            text = row[f"{case}_text_chars"]
            lines.append(
                f"| {row['memories']:,} | {case} | {row[f'{case}_p50_ms']:.1f} | {text:,.0f} "
                f"| {text / 4:,.0f} | {row[f'{case}_structured_chars']:,.0f} |"
            )
    return "\n".join(lines)


def main() -> None:
    """Run the benchmark for each size, print the table, write JSON."""
    sizes.main(
        "listing",
        __doc__,
        measure,
        table,
        rounds=15,
        rounds_help="calls timed per kind of call",
        label=True,
    )


if __name__ == "__main__":
    main()
