"""Start and end of a session: background indexing with progress, and exiting when the
client goes away (its process dies, or it closes our input); TCP as well as stdio."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from e2e_support import SERVER_COMMAND, SERVER_ENV, Workspace, make_workspace, session, write_file
from lsprotocol import types

pytestmark = pytest.mark.asyncio

BIG_STORE = 4000
EXIT_DEADLINE = 2.0


async def test_indexing_reports_progress_and_requests_are_answered_meanwhile(
    tmp_path: Path,
) -> None:
    ws = make_workspace(tmp_path)
    text = "---\ntags: [bulk, generated]\n---\n# Note\n\n" + "Some words. " * 40 + "\n"
    for number in range(BIG_STORE):
        write_file(ws.primary / "big" / f"note_{number:05d}.md", text)
    async with session(ws, wait_indexed=False) as server:
        route = await server.command("memory.route", {"name": "FEATURE_x"})
        answered_while_indexing = server.progress_ended() == 0
        assert route["routedBy"] == "prefix"
        await server.indexed()
        assert answered_while_indexing

        (reports,) = server.progresses()
        begin, *middle, end = reports
        assert isinstance(begin, types.WorkDoneProgressBegin)
        assert begin.title == "Indexing memories"
        assert begin.message == f"{BIG_STORE + 8} files"
        assert isinstance(end, types.WorkDoneProgressEnd)
        percentages = [r.percentage for r in middle if isinstance(r, types.WorkDoneProgressReport)]
        assert len(percentages) > 1
        assert percentages == sorted(percentages)
        assert percentages[-1] == 100

        tags = await server.complete_at("notes/tags.md", "---\ntags: [gen¦]\n---\n")
        assert tags is not None
        (generated,) = tags.items
        assert generated.label == "generated"
        assert generated.detail == f"tag used by {BIG_STORE} memories"


async def test_exits_when_the_client_process_dies(workspace: Workspace) -> None:
    editor = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        async with session(workspace, process_id=editor.pid) as server:
            process = server.client._server
            assert process is not None
            editor.kill()
            editor.wait()  # no zombie: the process is gone
            started = time.monotonic()
            await asyncio.wait_for(process.wait(), EXIT_DEADLINE + 1)
            assert time.monotonic() - started < EXIT_DEADLINE
    finally:
        editor.kill()
        editor.wait()


async def test_exits_when_its_input_closes(workspace: Workspace) -> None:
    async with session(workspace) as server:
        process = server.client._server
        assert process is not None and process.stdin is not None
        process.stdin.close()
        await asyncio.wait_for(process.wait(), EXIT_DEADLINE)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class _Connection:
    """A minimal JSON-RPC client over a stream, enough to talk to the server."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer, self.next_id = reader, writer, 0

    def send(self, method: str, params: Any, request: bool = True) -> int:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if request:
            self.next_id += 1
            message["id"] = self.next_id
        body = json.dumps(message).encode()
        self.writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        return self.next_id

    async def initialize(self, workspace: Workspace) -> Any:
        """Initialize a session on the workspace; the server's answer to `initialize`."""
        request = self.send(
            "initialize",
            {
                "processId": None,
                "rootUri": workspace.root.as_uri(),
                "capabilities": {},
                "initializationOptions": workspace.init_options(),
            },
        )
        result = await asyncio.wait_for(self.response(request), 10)
        self.send("initialized", {}, request=False)
        return result

    async def response(self, request_id: int) -> Any:
        return (await self.message(request_id))["result"]

    async def message(self, request_id: int) -> Any:
        while True:
            length = 0
            while (line := await self.reader.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message = json.loads(await self.reader.readexactly(length))
            if message.get("id") == request_id and "method" not in message:
                return message
            if "method" in message and "id" in message:  # a request to the client
                self.writer.write(_answer(message["id"]))


def _answer(request_id: Any) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": None}).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


@pytest.mark.parametrize("level", ["WARNING", "DEBUG"])
async def test_refusals_are_answered_without_a_traceback_in_the_log(
    workspace: Workspace, level: str
) -> None:
    server = await asyncio.create_subprocess_exec(
        *SERVER_COMMAND,
        env={**SERVER_ENV, "MEMORY_LS_LOG_LEVEL": level},
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert server.stdin is not None and server.stdout is not None
    connection = _Connection(server.stdout, server.stdin)
    await connection.initialize(workspace)
    read = connection.send(
        "workspace/executeCommand",
        {"command": "memory.read", "arguments": [{"name": "no_such_memory"}]},
    )
    refused = await asyncio.wait_for(connection.message(read), 10)
    assert refused["error"]["data"] == {"code": "not-found", "suggestions": []}
    connection.send("shutdown", None)
    connection.send("exit", None, request=False)
    _, log = await asyncio.wait_for(server.communicate(), 10)
    assert b"Traceback" not in log, log.decode(errors="replace")
    # Under DEBUG the refusal is still there, as one line.
    assert (b"refused [not-found]" in log) == (level == "DEBUG"), log.decode(errors="replace")


async def test_serves_over_tcp(workspace: Workspace) -> None:
    port = _free_port()
    server = await asyncio.create_subprocess_exec(
        *SERVER_COMMAND,
        "--tcp",
        f"127.0.0.1:{port}",
        env=SERVER_ENV,
        stdin=asyncio.subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                break
            except OSError:
                # The server is still importing; only the port coming up can be waited for.
                assert time.monotonic() < deadline, "the TCP server never listened"
                await asyncio.sleep(0.05)
        connection = _Connection(reader, writer)
        result = await connection.initialize(workspace)
        assert result["serverInfo"]["name"] == "memory-ls"
        assert "memory.save" in result["capabilities"]["executeCommandProvider"]["commands"]
        route = connection.send(
            "workspace/executeCommand",
            {"command": "memory.route", "arguments": [{"name": "SPEC_over_tcp"}]},
        )
        routed = await asyncio.wait_for(connection.response(route), 10)
        assert routed["folder"] == str(workspace.path("shared/spec"))
        shutdown = connection.send("shutdown", None)
        await asyncio.wait_for(connection.response(shutdown), 10)
        connection.send("exit", None, request=False)
        await writer.drain()
        writer.close()
        await asyncio.wait_for(server.wait(), 10)
    finally:
        if server.returncode is None:
            server.kill()
            await server.wait()
