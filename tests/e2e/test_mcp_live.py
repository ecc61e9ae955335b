"""`memory-ls mcp` keeps its indexes live with a watch over the memory folders
(core/operations/live.py).

Changes made by other processes show in the next call once the watch reported them (the
tests poll the tool until a deadline); the server's own writes show at once; without a
watch (MEMORY_LS_NO_SERVER_WATCH=1) each call compares the disk with the index, says so
in the log, and sees every change at once.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

from e2e_support import INDEXING_FOR_SEARCH, SERVER_ENV, make_workspace, session
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from test_mcp import Workspace, call, mcp_process, mcp_server, ok, text_of, until, ws

__all__ = ["ws"]


def names(result: dict[str, Any]) -> list[str]:
    """The memory names of a search or listing answer."""
    return [m["name"] for m in result["memories"]]


def searched(query: str) -> dict[str, Any]:
    """search_memories' arguments for a query."""
    return {"query": query, "limit": 50}


async def test_changes_made_by_another_process_show_after_the_watch_reported_them(
    ws: Workspace,
) -> None:
    (ws.primary).mkdir(parents=True)
    (ws.primary / "kept.md").write_text("# Kept\n\nNothing to see.\n")
    async with mcp_server(ws) as session:
        _, listed = await ok(session, "list_memories")
        assert names(listed) == ["kept"]

        # Written by another process: found by search and listed.
        (ws.primary / "outside_note.md").write_text("# Outside\n\nA zanzibar fact.\n")
        await until(
            session,
            "search_memories",
            lambda r: names(r) == ["outside_note"],
            **searched("zanzibar"),
        )
        _, listed = await until(session, "list_memories", lambda r: "outside_note" in names(r))
        assert names(listed) == ["kept", "outside_note"]

        # Renamed by another process: the old name is gone from both, the new one there.
        os.rename(ws.primary / "outside_note.md", ws.feature / "FEATURE_moved.md")
        await until(
            session,
            "search_memories",
            lambda r: names(r) == ["FEATURE_moved"],
            **searched("zanzibar"),
        )
        _, listed = await until(session, "list_memories", lambda r: "outside_note" not in names(r))
        assert names(listed) == ["FEATURE_moved", "kept"]

        # Edited in place by another process: the new words are found, the old ones not.
        (ws.feature / "FEATURE_moved.md").write_text("# Moved\n\nA quokka fact.\n")
        await until(
            session,
            "search_memories",
            lambda r: names(r) == ["FEATURE_moved"],
            **searched("quokka"),
        )
        _, found = await ok(session, "search_memories", **searched("zanzibar"))
        assert names(found) == []

        # Deleted by another process, a whole topic folder at once.
        topic = ws.primary / "auth"
        topic.mkdir()
        (topic / "tokens.md").write_text("Tokens rotate hourly.\n")
        await until(session, "list_memories", lambda r: "auth/tokens" in names(r))
        subprocess.run(["rm", "-r", str(topic)], check=True)
        await until(session, "list_memories", lambda r: "auth/tokens" not in names(r))
        _, found = await ok(session, "search_memories", **searched("rotate"))
        assert names(found) == []
        (ws.feature / "FEATURE_moved.md").unlink()
        _, listed = await until(session, "list_memories", lambda r: names(r) == ["kept"])
        assert listed["total"] == 1


async def test_the_server_s_own_writes_show_in_the_next_call_at_once(ws: Workspace) -> None:
    async with mcp_server(ws) as session:
        # No folder yet: the first write makes it, and the watch follows it there.
        for number in range(3):
            await ok(
                session,
                "write_memory",
                memory_name=f"own_{number}",
                content=f"# Own {number}\n\nA wombat note.\n",
            )
            _, found = await ok(session, "search_memories", **searched("wombat"))
            assert sorted(names(found)) == [f"own_{n}" for n in range(number + 1)]
            _, listed = await ok(session, "list_memories")
            assert names(listed) == [f"own_{n}" for n in range(number + 1)]
        await ok(
            session, "write_memory", memory_name="index", content="See [[own_0]] and mem:own_1.\n"
        )
        _, renamed = await ok(session, "rename_memory", old_name="own_0", new_name="FEATURE_own")
        assert renamed["updatedReferences"] == 1
        _, found = await ok(session, "search_memories", **searched("FEATURE_own"))
        assert "index" in names(found)  # the rewritten reference, indexed at once
        await ok(session, "delete_memory", memory_name="own_1")
        _, listed = await ok(session, "list_memories")
        assert names(listed) == ["FEATURE_own", "index", "own_2"]
        await ok(
            session,
            "edit_memory",
            memory_name="own_2",
            needle="wombat",
            repl="numbat",
            mode="literal",
        )
        _, found = await ok(session, "search_memories", **searched("numbat"))
        assert names(found) == ["own_2"]
        # A file written outside later still shows: the watch covers the new folder.
        (ws.primary / "later.md").write_text("An echidna.\n")
        await until(
            session, "search_memories", lambda r: names(r) == ["later"], **searched("echidna")
        )


@asynccontextmanager
async def unwatched_server(ws: Workspace, log: TextIO) -> AsyncIterator[ClientSession]:
    """`memory-ls mcp` with its watch turned off, its log written to `log`."""
    env = {
        "HOME": str(ws.tmp / "home"),
        "XDG_CACHE_HOME": str(ws.tmp / "cache"),
        "MEMORY_LS_NO_SERVER_WATCH": "1",
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memory_ls.cli", "mcp", *ws.flags()],
        env=env,
        cwd=str(ws.tmp),
    )
    async with (
        stdio_client(params, errlog=log) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def test_without_a_watch_each_call_compares_the_disk_and_the_log_says_so(
    ws: Workspace, tmp_path: Path
) -> None:
    ws.primary.mkdir(parents=True)
    log_path = tmp_path / "server.log"
    with open(log_path, "w", encoding="utf-8") as log:
        async with unwatched_server(ws, log) as session:
            _, listed = await ok(session, "list_memories")
            assert names(listed) == []
            # No waiting: the very next call compares the disk with the index.
            (ws.primary / "outside.md").write_text("A pangolin.\n")
            _, found = await ok(session, "search_memories", **searched("pangolin"))
            assert names(found) == ["outside"]
            _, listed = await ok(session, "list_memories")
            assert names(listed) == ["outside"]
            (ws.primary / "outside.md").unlink()
            _, found = await ok(session, "search_memories", **searched("pangolin"))
            assert names(found) == []
            await ok(session, "write_memory", memory_name="own", content="A tapir.\n")
            _, found = await ok(session, "search_memories", **searched("tapir"))
            assert names(found) == ["own"]
    logged = log_path.read_text(encoding="utf-8")
    assert "the memory folders are not watched" in logged
    assert "MEMORY_LS_NO_SERVER_WATCH=1" in logged


async def test_a_burst_of_outside_writes_is_all_seen(ws: Workspace) -> None:
    ws.primary.mkdir(parents=True)
    async with mcp_server(ws) as session:
        await ok(session, "list_memories")
        for number in range(300):
            (ws.primary / f"burst_{number:03d}.md").write_text(f"Burst {number} of a storm.\n")
        await until(session, "list_memories", lambda r: r["total"] == 300, limit=1)
        _, found = await until(
            session, "search_memories", lambda r: r["total"] == 300, **searched("storm")
        )
        assert found["total"] == 300


async def test_a_file_replaced_with_its_size_and_time_kept_is_read_again(ws: Workspace) -> None:
    # `cp -p`, `rsync -t`, a checkout that restores times, or two writes within one tick
    # of the file system's clock: the same size and modification time, other words. The
    # stamps cannot tell; the watch's event can, and the live indexes read the file again.
    ws.primary.mkdir(parents=True)
    note = ws.primary / "restored.md"
    note.write_text("# Restored\n\nThe alpaca plan.\n")
    async with mcp_server(ws) as session:
        await until(
            session, "search_memories", lambda r: names(r) == ["restored"], **searched("alpaca")
        )
        stamp = note.stat()
        replacement = ws.tmp / "replacement.md"
        replacement.write_text("# Restored\n\nThe vicuna plan.\n")  # the same size
        os.utime(replacement, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
        os.replace(replacement, note)
        assert (note.stat().st_size, note.stat().st_mtime_ns) == (stamp.st_size, stamp.st_mtime_ns)
        await until(
            session, "search_memories", lambda r: names(r) == ["restored"], **searched("vicuna")
        )
        _, found = await ok(session, "search_memories", **searched("alpaca"))
        assert names(found) == []


async def test_the_cli_mcp_and_the_language_server_writing_at_once_leave_one_truth(
    tmp_path: Path,
) -> None:
    # Three writers on one store and one index file: the CLI (a process per write, which
    # brings the index in line by its walk), the MCP server and the language server (both
    # live, from their watches). Afterwards both servers, a new CLI process and the index
    # file itself say what the disk says.
    workspace = make_workspace(tmp_path / "w")
    cache = tmp_path / "cache"
    flags = [
        "--root",
        str(workspace.root),
        "--additional-folders",
        ",".join(workspace.init_options()["additionalFolders"]),
        "--global-folder",
        str(workspace.global_folder),
    ]
    env = {**SERVER_ENV, "XDG_CACHE_HOME": str(cache), "PYTHONPATH": os.pathsep.join(sys.path)}
    rounds = 6

    async def cli(*arguments: str, stdin: str = "") -> str:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "memory_ls.cli",
            *flags,
            *arguments,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=env,
        )
        out, _ = await process.communicate(stdin.encode())
        assert process.returncode == 0, (arguments, out)
        return out.decode()

    async with (
        session(workspace, env={"XDG_CACHE_HOME": str(cache)}) as editor,
        mcp_process(flags, env, workspace.root) as agent,
    ):
        await editor.indexed(title=INDEXING_FOR_SEARCH)

        async def by_cli(number: int) -> None:
            await cli("save", f"cli_{number}", stdin=f"The cli{number}word note.\n")
            await cli("save", "shared_note", stdin=f"Last said by clisays{number}.\n")

        async def by_agent(number: int) -> None:
            await ok(
                agent,
                "write_memory",
                memory_name=f"agent_{number}",
                content=f"The agent{number}word note.\n",
            )
            # Its own earlier write counts as read: changed since by another writer, the
            # agent's blind write is refused and writes nothing (mcp/session.py).
            result = await call(
                agent,
                "write_memory",
                memory_name="shared_note",
                content=f"Last said by agentsays{number}.\n",
            )
            assert not result.is_error or text_of(result).startswith("[version-conflict] ")

        async def by_editor(number: int) -> None:
            await editor.command(
                "memory.save",
                {"name": f"editor_{number}", "content": f"The editor{number}word note.\n"},
            )
            await editor.command(
                "memory.save",
                {"name": "shared_note", "content": f"Last said by editorsays{number}.\n"},
            )

        await asyncio.gather(
            *(
                writer(number)
                for number in range(rounds)
                for writer in (by_cli, by_agent, by_editor)
            )
        )
        await cli("delete", "cli_0")
        await ok(agent, "delete_memory", memory_name="editor_0")

        # The truth: what the files say now.
        words = [f"{who}{n}word" for who in ("cli", "agent", "editor") for n in range(rounds)]
        words += [f"{who}says{n}" for who in ("cli", "agent", "editor") for n in range(rounds)]
        texts = {p.stem: p.read_text() for p in workspace.primary.glob("*.md")}
        truth = {word: sorted(n for n, t in texts.items() if word in t) for word in words}
        assert truth["cli0word"] == [] and truth["editor0word"] == []
        assert sum(1 for word in words if "says" in word and truth[word]) == 1

        async def agent_agrees() -> bool:
            for word in words:
                _, found = await ok(agent, "search_memories", query=word)
                if sorted(names(found)) != truth[word]:
                    return False
            return True

        async def editor_agrees() -> bool:
            for word in words:
                result = await editor.command("memory.search", {"query": word})
                if sorted({hit["name"] for hit in result["results"]}) != truth[word]:
                    return False
            return True

        await editor.eventually(agent_agrees, "the MCP server's searches match the disk", 20)
        await editor.eventually(editor_agrees, "the language server's searches match the disk", 20)
        _, listed = await ok(agent, "list_memories", limit=500)
        disk = {p.stem for p in workspace.primary.glob("*.md")}
        assert {n for n in names(listed) if "/" not in n} >= disk
        for word in ("cli3word", "agent3word", "editor3word"):
            out = await cli("--json", "search", word)
            assert sorted({row["name"] for row in json.loads(out)["results"]}) == truth[word]
    # The index file holds each memory as it is on disk.
    (database,) = (cache / "memory-ls" / "index").glob("*.search.sqlite3")
    with sqlite3.connect(database) as db:
        rows = dict(
            ((folder, name), (mtime, size))
            for folder, name, mtime, size in db.execute(
                "SELECT folder, name, mtime_ns, size FROM files WHERE folder = 0"
            )
        )
    on_disk = {
        (0, p.relative_to(workspace.primary).as_posix()[: -len(".md")]): (
            p.stat().st_mtime_ns,
            p.stat().st_size,
        )
        for p in workspace.primary.rglob("*.md")
    }
    assert rows == on_disk
