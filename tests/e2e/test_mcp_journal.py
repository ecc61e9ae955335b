"""`memory-ls mcp` alone (no editor) journals the changes it sees on disk, and its own
writes under the name of the client that made them (core/operations/live.py, mcp/server.py)."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import Implementation

pytestmark = pytest.mark.asyncio

TIMEOUT = 15.0


def rows(cache: Path, query: str) -> list[tuple[Any, ...]]:
    """What the journal holds (nothing before it exists)."""
    found = list((cache / "memory-ls" / "journal").glob("*.sqlite3"))
    if not found:
        return []
    with sqlite3.connect(found[0]) as db:
        try:
            return db.execute(query).fetchall()
        except sqlite3.OperationalError:  # the tables are being made
            return []


async def until(check: Callable[[], bool], what: str) -> None:
    """Wait until the journal file shows what is wanted (the server works in background)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while not check():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


async def test_mcp_alone_journals_changes_on_disk_and_names_its_client(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    memories = root / ".serena" / "memories"
    memories.mkdir(parents=True)
    notes = memories / "notes.md"
    notes.write_bytes(b"# Notes\r\nas they were\r\n")
    cache = tmp_path / "cache"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memory_ls.cli", "--root", str(root), "mcp"],
        env={
            **os.environ,
            "HOME": str(tmp_path / "home"),
            "XDG_CACHE_HOME": str(cache),
            "PYTHONPATH": os.pathsep.join(sys.path),
        },
        cwd=str(root),
    )
    agent = Implementation(name="journal-test-agent", version="2.0")
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, client_info=agent) as session,
    ):
        await session.initialize()
        await until(
            lambda: bool(rows(cache, "SELECT 1 FROM meta WHERE key = 'baseline-complete'")),
            "the first reading of the store",
        )
        notes.write_bytes(b"# Notes\nrewritten by a tool\n")
        await until(lambda: bool(rows(cache, "SELECT 1 FROM entries")), "the tool's change")
        result = await session.call_tool(
            "write_memory", {"memory_name": "notes", "content": "# Notes\nby the agent\n"}
        )
        assert not result.is_error
        await until(lambda: len(rows(cache, "SELECT 1 FROM entries")) >= 2, "the agent's change")
    entries = rows(cache, "SELECT name, source, action, before FROM entries ORDER BY id")
    assert [(*entry[:3], zlib.decompress(entry[3])) for entry in entries] == [
        ("notes", "external", "save", b"# Notes\r\nas they were\r\n"),
        ("notes", "mcp:journal-test-agent", "save", b"# Notes\nrewritten by a tool\n"),
    ]
