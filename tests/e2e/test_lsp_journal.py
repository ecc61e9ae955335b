"""The language server's writes are journaled (core/services/journal/) as the editor's."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from e2e_support import make_workspace, session

pytestmark = pytest.mark.asyncio


async def test_the_editor_s_writes_are_journaled_as_the_editor_s(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "w")
    cache = tmp_path / "c"
    async with session(workspace, env={"XDG_CACHE_HOME": str(cache)}) as server:
        await server.command("memory.save", {"name": "journaled", "content": "# One\n"})
        await server.command(
            "memory.edit",
            {"name": "journaled", "needle": "One", "replacement": "Two", "mode": "literal"},
        )
    (journal,) = (cache / "memory-ls" / "journal").glob("*.sqlite3")
    with sqlite3.connect(journal) as db:
        rows = db.execute("SELECT action, source, before_size FROM entries ORDER BY id").fetchall()
    assert rows == [("save", "editor", None), ("edit", "editor", len("# One\n"))]
