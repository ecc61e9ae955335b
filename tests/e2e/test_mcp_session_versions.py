"""No lost update without a version (issue 34, point 1), through `memory-ls mcp` (the SDK's
stdio client): a memory this session read and someone else changed since is not written,
edited, renamed or deleted without `expected_version` ([version-conflict], naming what
changed); the session's own writes count as read; a memory it never read keeps Serena's
behaviour."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import Implementation
from test_mcp import Workspace, ok, outside, refused, snapshot
from test_mcp import ws as ws  # the fixture, shared with test_mcp

from memory_ls.core.storage.gate import version_of
from memory_ls.mcp.session import Known, SessionVersions

TIMEOUT = 15.0
NOTES = "# Notes\n\nStripe retries 3 times.\n"


# What the server's instructions tell every agent at the start of a session.
INSTRUCTED = (
    "A memory you read or wrote and someone else changed since is not overwritten "
    "([version-conflict]): read it again, then retry."
)


@asynccontextmanager
async def agent(ws: Workspace, name: str) -> AsyncIterator[ClientSession]:
    """One MCP session (its own `memory-ls mcp` process) on the workspace, as client `name`;
    the server's instructions say what a session's reads guard."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memory_ls.cli", "mcp", *ws.flags()],
        env={
            **os.environ,
            "HOME": str(ws.tmp / "home"),
            "XDG_CACHE_HOME": str(ws.tmp / "cache"),
            "PYTHONPATH": os.pathsep.join(sys.path),
        },
        cwd=str(ws.tmp),
    )
    client = Implementation(name=name, version="1.0")
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, client_info=client) as session,
    ):
        started = await session.initialize()
        assert INSTRUCTED in (started.instructions or "")
        yield session


def journal(ws: Workspace, query: str) -> list[tuple[Any, ...]]:
    """What the journal holds (nothing before it exists)."""
    found = list((ws.tmp / "cache" / "memory-ls" / "journal").glob("*.sqlite3"))
    if not found:
        return []
    with sqlite3.connect(found[0]) as db:
        try:
            return db.execute(query).fetchall()
        except sqlite3.OperationalError:  # the tables are being made
            return []


async def until(check: Callable[[], bool], what: str) -> None:
    """Wait until `check` holds (the server journals what it sees in the background)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + TIMEOUT
    while not check():
        assert loop.time() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


def files(ws: Workspace) -> dict[str, Any]:
    """Every file of the workspace but the cache (the journal and the indexes change)."""
    return outside("cache", snapshot(ws.tmp))


def notes(ws: Workspace, text: str = NOTES) -> Path:
    """The memory `notes` in the primary folder."""
    ws.primary.mkdir(parents=True, exist_ok=True)
    path = ws.primary / "notes.md"
    path.write_text(text)
    return path


async def test_a_change_on_disk_since_the_read_refuses_every_write_until_read_again(
    ws: Workspace,
) -> None:
    path = notes(ws)
    async with agent(ws, "agent-a") as session:
        await until(
            lambda: bool(journal(ws, "SELECT 1 FROM meta WHERE key = 'baseline-complete'")),
            "the first reading of the store",
        )
        _, read = await ok(session, "read_memory", memory_name="notes")
        first = read["version"]
        # A person edits the file behind the server's back.
        path.write_text("# Notes\n\nStripe retries 5 times (changed by a person).\n")
        second = version_of(path.read_bytes())
        await until(lambda: bool(journal(ws, "SELECT 1 FROM entries")), "the person's edit")
        before = files(ws)

        text = await refused(session, "write_memory", memory_name="notes", content="# Mine\n")
        assert text.startswith(
            f"[version-conflict] Memory 'notes' changed since this session read it: it was "
            f"version {first}, it is now version {second}; since then it was changed outside "
            "memory-ls (a person, an editor or another program) at "
        )
        assert text.endswith(
            "Nothing was changed. Read it again, apply your change to what is there now, and "
            "retry (a write without expected_version is checked against what you last read)."
        )
        edit = {"needle": "Stripe", "repl": "Adyen", "mode": "literal"}
        for tool, arguments in (
            ("edit_memory", {"memory_name": "notes", **edit}),
            ("rename_memory", {"old_name": "notes", "new_name": "payments/notes"}),
            ("delete_memory", {"memory_name": "notes"}),
        ):
            text = await refused(session, tool, **arguments)
            assert text.startswith("[version-conflict] Memory 'notes' changed since"), tool
            assert f"it is now version {second}" in text, tool
        assert files(ws) == before

        # Read again: the session's write is made on what is there now.
        await ok(session, "read_memory", memory_name="notes")
        text, saved = await ok(session, "write_memory", memory_name="notes", content="# A\n")
        assert saved["previousVersion"] == second
        # Its own write counts as read: the next one needs no read.
        await ok(session, "write_memory", memory_name="notes", content="# A\n\nmore\n")
        await ok(session, "edit_memory", memory_name="notes", **{**edit, "needle": "more"})
        assert path.read_text() == "# A\n\nAdyen\n"


async def test_a_second_session_s_change_is_named_and_each_session_keeps_its_own_reads(
    ws: Workspace,
) -> None:
    path = notes(ws)
    async with agent(ws, "agent-a") as a, agent(ws, "agent-b") as b:
        _, read = await ok(a, "read_memory", memory_name="notes")
        _, edited = await ok(
            b, "edit_memory", memory_name="notes", needle="3", repl="4", mode="literal"
        )
        before = files(ws)
        text = await refused(a, "write_memory", memory_name="notes", content="# A's notes\n")
        assert (
            f"it was version {read['version']}, it is now version {edited['version']}; since "
            "then it was edited by mcp:agent-b at " in text
        )
        assert files(ws) == before
        assert path.read_text() == "# Notes\n\nStripe retries 4 times.\n"

        # B wrote it, so B knows it: once A changes it (after reading), B is refused too.
        await ok(a, "read_memory", memory_name="notes")
        await ok(a, "write_memory", memory_name="notes", content="# A's notes\n")
        text = await refused(
            b, "edit_memory", memory_name="notes", needle="4", repl="5", mode="literal"
        )
        assert text.startswith(
            "[version-conflict] Memory 'notes' changed since this session wrote it"
        )
        assert "since then it was changed by mcp:agent-a at " in text
        assert path.read_text() == "# A's notes\n"

        # An explicit expected_version is the caller's word: it takes precedence.
        now = version_of(path.read_bytes())
        await ok(b, "write_memory", memory_name="notes", content="# B\n", expected_version=now)
        assert path.read_text() == "# B\n"


async def test_a_memory_never_read_keeps_serena_s_behaviour(ws: Workspace) -> None:
    path = notes(ws)
    async with agent(ws, "agent-a") as a, agent(ws, "agent-b") as b:
        # Another session changes it, and so does a person: this session never read it.
        await ok(b, "write_memory", memory_name="notes", content="# By B\n")
        path.write_text("# By a person\n")
        text, saved = await ok(a, "write_memory", memory_name="notes", content="# By A\n")
        assert text.startswith("Saved notes: replaced in place at ")
        assert saved["previousVersion"] == version_of(b"# By a person\n")
        other = ws.primary / "other.md"
        other.write_text("# Other\n")
        await ok(a, "edit_memory", memory_name="other", needle="Other", repl="O", mode="literal")
        (ws.primary / "gone.md").write_text("# Gone\n")
        await ok(a, "delete_memory", memory_name="gone")
        (ws.primary / "moved.md").write_text("# Moved\n")
        await ok(a, "rename_memory", old_name="moved", new_name="archive/moved")


async def test_a_memory_deleted_or_renamed_since_the_read_is_not_recreated_silently(
    ws: Workspace,
) -> None:
    path = notes(ws)
    (ws.primary / "plan.md").write_text("# Plan\n")
    async with agent(ws, "agent-a") as a, agent(ws, "agent-b") as b:
        await ok(a, "read_memory", memory_name="notes")
        await ok(a, "read_memory", memory_name="plan")
        await ok(b, "delete_memory", memory_name="notes")
        await ok(b, "rename_memory", old_name="plan", new_name="archive/plan")
        before = files(ws)

        text = await refused(a, "write_memory", memory_name="notes", content="# Back\n")
        assert text.startswith("[version-conflict] Memory 'notes' no longer exists; this session")
        assert "since then it was deleted by mcp:agent-b at " in text
        assert text.endswith(
            "Nothing was changed. If it should exist again, write it with create_only=true (or "
            "read it again: once read as missing, a write creates it)."
        )
        text = await refused(
            a, "edit_memory", memory_name="plan", needle="P", repl="p", mode="literal"
        )
        assert "since then it was renamed to 'archive/plan' by mcp:agent-b at " in text
        assert text.endswith("Read 'archive/plan' and make your change there, if it still applies.")
        assert "[version-conflict]" in await refused(a, "delete_memory", memory_name="plan")
        assert files(ws) == before

        # Written on purpose: create_only replaces nothing.
        await ok(a, "write_memory", memory_name="notes", content="# Back\n", create_only=True)
        assert path.read_text() == "# Back\n"
        # Read as missing: the name is free to write.
        assert (await refused(a, "read_memory", memory_name="plan")).startswith("[not-found]")
        await ok(a, "write_memory", memory_name="plan", content="# New plan\n")


async def test_the_session_s_own_rename_keeps_what_it_read(ws: Workspace) -> None:
    notes(ws)
    hub = ws.primary / "hub.md"
    hub.write_text("# Hub\n\nSee [[notes]].\n")
    async with agent(ws, "agent-a") as session:
        await ok(session, "read_memory", memory_name="notes")
        await ok(session, "read_memory", memory_name="hub")
        _, moved = await ok(session, "rename_memory", old_name="notes", new_name="payments/notes")
        assert moved["rewritten"] == ["hub"]
        assert hub.read_text() == "# Hub\n\nSee [[payments/notes]].\n"
        # The memory moved and the one whose link it rewrote are known as they are now.
        await ok(
            session, "write_memory", memory_name="hub", content="# Hub\n\n[[payments/notes]]\n"
        )
        await ok(session, "write_memory", memory_name="payments/notes", content="# Notes\n")
        # Someone else's change to the moved memory is still caught under its new name.
        (ws.primary / "payments" / "notes.md").write_text("# Notes by a person\n")
        text = await refused(session, "delete_memory", memory_name="payments/notes")
        assert text.startswith("[version-conflict] Memory 'payments/notes' changed since")


def test_what_a_session_remembers_is_bounded_least_recently_used_first() -> None:
    versions = SessionVersions(limit=2)
    versions.read("/m/a.md", "a", "0" * 16)
    versions.read("/m/b.md", "b", "1" * 16)
    versions.read("/m/a.md", "a", "2" * 16)  # seen again: kept over b
    versions.read("/m/c.md", "c", "3" * 16)
    assert versions.get("/m/b.md") is None  # forgotten: Serena's behaviour again
    assert versions.get("/m/a.md") == Known("/m/a.md", "a", "2" * 16)
    assert versions.get("/m/c.md") is not None
