"""Changes the language server sees on disk are journaled (lsp/journal.py), and the
journal's requests answer the editor's "Recent changes" view: a diff's two sides, a
revert that restores the previous bytes exactly, marks that `memory-ls history` shows."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from e2e_support import SERVER_ENV, Session, make_workspace, session
from lsprotocol import types
from pygls.exceptions import JsonRpcException

pytestmark = pytest.mark.asyncio

DID_CHANGE = "memoryLs/journal/didChange"
TIMEOUT = 10.0


def plain(value: Any) -> Any:
    """A custom request's answer as JSON values (pygls gives named tuples)."""
    if hasattr(value, "_asdict"):
        return {key: plain(item) for key, item in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    return value


class Journaled:
    """A session with the journal's requests and the latest didChange it was sent."""

    def __init__(self, server: Session) -> None:
        self.server = server
        self.notified: list[dict[str, Any]] = []
        server.client.protocol.fm.features[DID_CHANGE] = lambda p: self.notified.append(plain(p))

    async def request(self, method: str, params: dict[str, Any]) -> Any:
        answer = await self.server.client.protocol.send_request_async(
            f"memoryLs/journal/{method}", params
        )
        return plain(answer)

    async def recent(self, limit: int = 50) -> list[dict[str, Any]]:
        answer = await self.request("recent", {"limit": limit})
        entries: list[dict[str, Any]] = answer["entries"]
        return entries

    async def until_entries(self, count: int) -> list[dict[str, Any]]:
        """Wait until the server caught up with the disk and holds `count` entries in all
        (their newest first)."""
        answer = await self.until(lambda a: a["ready"] and a["latest"] >= count)
        entries: list[dict[str, Any]] = answer["entries"]
        return entries

    async def until(self, wanted: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """The answer to `recent` once it is as wanted (asked again at each didChange)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + TIMEOUT
        while True:
            arrival = self.server.client.protocol.wait_for_notification_async(DID_CHANGE)
            answer = await self.request("recent", {})
            if wanted(answer):
                return dict(answer)
            try:
                await asyncio.wait_for(arrival, max(deadline - loop.time(), 0.001))
            except TimeoutError:
                raise AssertionError(f"timed out; the journal holds {answer}") from None


@asynccontextmanager
async def journaled(workspace: Any, cache: Path) -> AsyncIterator[Journaled]:
    async with session(workspace, env={"XDG_CACHE_HOME": str(cache)}) as server:
        yield Journaled(server)


def cli(cache: Path, root: Path, *args: str) -> str:
    """`memory-ls` with the session's cache and folders (its output)."""
    options = make_options(root)
    done = subprocess.run(
        [sys.executable, "-m", "memory_ls.cli", *options, *args],
        env={**SERVER_ENV, "XDG_CACHE_HOME": str(cache), "PYTHONPATH": os.pathsep.join(sys.path)},
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def make_options(root: Path) -> list[str]:
    base = root.parent
    return [
        "--root",
        str(root),
        "--additional-folders",
        "shared/feature,shared/feature_builder,shared/spec," + str(base / "team"),
        "--global-folder",
        str(base / "global"),
    ]


async def test_a_file_written_from_outside_is_journaled_with_its_exact_previous_bytes(
    tmp_path: Path,
) -> None:
    workspace = make_workspace(tmp_path / "w")
    cache = tmp_path / "c"
    memory = workspace.primary / "style_guide.md"
    # Bytes a text round trip may not keep: a BOM, CRLF, no final newline.
    previous = b"\xef\xbb\xbf# Style\r\nold line\r\nend"
    memory.write_bytes(previous)
    async with journaled(workspace, cache) as j:
        await j.until_entries(0)  # the baseline: every memory's bytes, no entry
        assert await j.recent() == []
        memory.write_bytes(b"# Style\nrewritten by an agent\n")
        (entry,) = await j.until_entries(1)
        assert entry["name"] == "style_guide"
        assert entry["source"] == "external"
        assert entry["kind"] == "modified"
        assert entry["uri"] == memory.as_uri()
        assert (entry["sizeBefore"], entry["sizeAfter"]) == (len(previous), 30)
        assert entry["reviewed"] is False
        shown = await j.request("entry", {"id": entry["id"]})
        assert shown["before"] == previous.decode()
        assert shown["after"] == "# Style\nrewritten by an agent\n"
        assert shown["afterFrom"] == "current"

        reverted = await j.request("revert", {"id": entry["id"]})
        assert reverted["revertedTo"] == entry["id"]
        assert memory.read_bytes() == previous
        newest, _ = await j.until_entries(2)
        # The revert is a change of its own (the editor's), so it can be undone in turn.
        assert (newest["action"], newest["source"]) == ("revert", "editor")
        first = await j.request("entry", {"id": entry["id"]})
        assert first["after"] == "# Style\nrewritten by an agent\n"
        assert first["afterFrom"] == "journal"

        marked = await j.request("markReviewed", {"ids": [entry["id"]]})
        assert marked == {"changed": 1, "unreviewed": 1}
        assert [e["reviewed"] for e in await j.recent()] == [False, True]
    history = json.loads(cli(cache, workspace.root, "history", "style_guide", "--json"))
    assert [e["reviewed"] for e in history["entries"]] == [False, True]


async def test_a_rewrite_that_changes_no_byte_and_the_server_s_own_writes_are_not_journaled_twice(
    tmp_path: Path,
) -> None:
    workspace = make_workspace(tmp_path / "w")
    cache = tmp_path / "c"
    async with journaled(workspace, cache) as j:
        await j.until_entries(0)
        await j.server.command("memory.save", {"name": "own", "content": "# Own\n"})
        same = workspace.primary / "style_guide.md"
        same.write_bytes(same.read_bytes())  # same bytes, new time: no change
        (workspace.primary / "marker.md").write_text("# Marker\n")
        # The marker's event comes after the others: once it is journaled, they were seen.
        entries = await j.until_entries(2)
        assert [(e["name"], e["source"], e["kind"]) for e in entries] == [
            ("marker", "external", "created"),
            ("own", "editor", "created"),
        ]


async def test_changes_made_while_no_server_ran_are_journaled_at_the_next_start(
    tmp_path: Path,
) -> None:
    workspace = make_workspace(tmp_path / "w")
    cache = tmp_path / "c"
    login = workspace.primary / "auth" / "login_flow.md"
    before = login.read_bytes()
    async with journaled(workspace, cache) as j:
        await j.until_entries(0)
        await j.server.command("memory.save", {"name": "kept", "content": "# Kept\n"})
        await j.until_entries(1)
    login.write_text("# Login flow, changed while the editor was closed\n")
    (workspace.primary / "style_guide.md").unlink()
    async with journaled(workspace, cache) as j:
        entries = await j.until_entries(3)
        assert {(e["name"], e["kind"], e["source"]) for e in entries} == {
            ("kept", "created", "editor"),
            ("auth/login_flow", "modified", "external"),
            ("style_guide", "deleted", "external"),
        }
        changed = next(e for e in entries if e["name"] == "auth/login_flow")
        assert (await j.request("entry", {"id": changed["id"]}))["before"] == before.decode()


async def test_a_memory_deleted_meanwhile_is_recreated_where_it_was(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "w")
    cache = tmp_path / "c"
    checkout = workspace.root / "shared" / "feature" / "FEATURE_checkout.md"
    original = checkout.read_bytes()
    async with journaled(workspace, cache) as j:
        await j.until_entries(0)
        checkout.write_bytes(original + b"\nAn agent's line.\n")
        (edited,) = await j.until_entries(1)
        checkout.unlink()
        deleted, _ = await j.until_entries(2)
        assert (deleted["kind"], deleted["sizeAfter"]) == ("deleted", None)
        await j.request("revert", {"id": edited["id"]})
        assert checkout.read_bytes() == original
        # The memory exists again: undoing the deletion would overwrite it (refused)
        # until the recreation is undone; then it gives back what the file held.
        with pytest.raises(JsonRpcException, match="created again"):
            await j.request("revert", {"id": deleted["id"]})
        recreated, _, _ = await j.until_entries(3)
        await j.request("revert", {"id": recreated["id"]})
        assert not checkout.exists()
        await j.request("revert", {"id": deleted["id"]})
        assert checkout.read_bytes() == original + b"\nAn agent's line.\n"


async def test_a_change_made_by_git_is_journaled_as_git_s(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "w")
    cache = tmp_path / "c"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(workspace.root)]
    memory = workspace.primary / "project_overview.md"
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "one"], check=True)
    first = memory.read_bytes()
    memory.write_text("# Project overview, second version\n")
    subprocess.run([*git, "commit", "-q", "-am", "two"], check=True)
    async with journaled(workspace, cache) as j:
        await j.until_entries(0)
        subprocess.run([*git, "checkout", "-q", "HEAD~1"], check=True)
        (entry,) = await j.until_entries(1)
        assert (entry["name"], entry["source"]) == ("project_overview", "git")
        assert memory.read_bytes() == first


async def test_the_editor_s_own_save_is_journaled_as_the_editor_s(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "w")
    cache = tmp_path / "c"
    memory = workspace.primary / "style_guide.md"
    async with journaled(workspace, cache) as j:
        await j.until_entries(0)
        uri = j.server.open(".serena/memories/style_guide.md")
        memory.write_text("# Style guide, saved by the editor\n")
        j.server.client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        # A watcher may see the file before the editor says it saved it: the entry is
        # then the editor's once it does.
        answer = await j.until(lambda a: [e["source"] for e in a["entries"]] == ["editor"])
        (entry,) = answer["entries"]
        assert entry["name"] == "style_guide"


async def test_the_editor_an_agent_over_mcp_and_a_tool_writing_files_are_all_recorded(
    tmp_path: Path,
) -> None:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.types import Implementation

    workspace = make_workspace(tmp_path / "w")
    cache = tmp_path / "c"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memory_ls.cli", *make_options(workspace.root), "mcp"],
        env={**SERVER_ENV, "XDG_CACHE_HOME": str(cache), "PYTHONPATH": os.pathsep.join(sys.path)},
        cwd=str(workspace.root),
    )
    agent = Implementation(name="test-agent", version="1.0")
    async with (
        journaled(workspace, cache) as j,
        stdio_client(params) as (read, write),
        ClientSession(read, write, client_info=agent) as mcp,
    ):
        await mcp.initialize()
        await j.until_entries(0)
        # All three at once: the agent's write, the editor's, and a file written directly.
        (workspace.primary / "style_guide.md").write_text("# Style, by a tool\n")
        wrote = await asyncio.gather(
            mcp.call_tool("write_memory", {"memory_name": "agent_notes", "content": "# A\n"}),
            j.server.command("memory.save", {"name": "editor_notes", "content": "# E\n"}),
        )
        assert not wrote[0].is_error
        await j.until(lambda a: a["latest"] >= 3)
        # Both servers watch the folders: a change each saw is still one entry. A last
        # write, seen after the others, bounds the wait for any second one.
        (workspace.primary / "marker.md").write_text("# Marker\n")
        answer = await j.until(lambda a: any(e["name"] == "marker" for e in a["entries"]))
        assert sorted((e["name"], e["source"]) for e in answer["entries"]) == [
            ("agent_notes", "mcp:test-agent"),
            ("editor_notes", "editor"),
            ("marker", "external"),
            ("style_guide", "external"),
        ]
