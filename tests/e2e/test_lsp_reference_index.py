"""The link index behind references, rename and hover's backlinks (issue 14): right after
other processes create, edit, rename and delete memories, and from the first message of a
session, while the store is still being indexed."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from e2e_support import SERVER_COMMAND, SERVER_ENV, Session, make_workspace, session, write_file
from lsprotocol import types

pytestmark = pytest.mark.asyncio

# Enough memories that the first indexing (every file read) is still running when the
# requests sent with `initialized` are answered: they wait only for the names.
BIG_STORE = 6000
ANSWER_TIMEOUT = 20.0
LINK = "[[FEATURE_checkout]]"


async def references_to_checkout(server: Session) -> list[tuple[str, int]]:
    """(path relative to the test base, line) of each reference to FEATURE_checkout, from a
    reference in an open note."""
    uri = server.open("notes/asker.md", f"Ask {LINK}.\n")
    try:
        result = await server.client.text_document_references_async(
            types.ReferenceParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(line=0, character=8),
                context=types.ReferenceContext(include_declaration=False),
            )
        )
    finally:
        server.close(uri)
    base = server.workspace.base.as_uri() + "/"
    found = sorted((loc.uri.removeprefix(base), loc.range.start.line) for loc in result or [])
    return [item for item in found if not item[0].endswith("asker.md")]


async def expect_references(server: Session, expected: list[tuple[str, int]]) -> None:
    """Wait until references to FEATURE_checkout are exactly `expected`."""
    seen: list[tuple[str, int]] = []

    async def check() -> bool:
        seen[:] = await references_to_checkout(server)
        return seen == expected

    try:
        await server.eventually(check, f"references {expected}")
    except AssertionError:
        raise AssertionError(f"references are {seen}, expected {expected}") from None


async def test_references_follow_files_changed_by_another_process(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    linker = ws.primary / "linker.md"
    write_file(linker, f"# Linker\n{LINK}\n")
    async with session(ws) as server:
        await expect_references(server, [("project/.serena/memories/linker.md", 1)])

        created = write_file(ws.outside / "team_linker.md", f"Team: {LINK} and `mem:x`.\n")
        await expect_references(
            server, [("project/.serena/memories/linker.md", 1), ("team/team_linker.md", 0)]
        )

        write_file(linker, f"# Linker\n\n\nMoved: {LINK}\nNone here: FEATURE_checkout\n")
        await expect_references(
            server, [("project/.serena/memories/linker.md", 3), ("team/team_linker.md", 0)]
        )

        os.rename(created, ws.outside / "renamed_linker.md")
        await expect_references(
            server, [("project/.serena/memories/linker.md", 3), ("team/renamed_linker.md", 0)]
        )

        write_file(linker, "# Linker\n\nNo link any more.\n")
        (ws.outside / "renamed_linker.md").unlink()
        await expect_references(server, [])

        # The rename of a memory rewrites what is on disk now, Serena's mentions included.
        write_file(ws.global_folder / "late.md", "```\nmem:FEATURE_checkout\n```\n")
        await expect_references(server, [])  # a mention in code is no reference...
        uri = server.open("notes/asker.md", f"Ask {LINK}.\n")
        edit = None

        async def renames_the_late_mention() -> bool:
            nonlocal edit
            edit = await server.client.text_document_rename_async(
                types.RenameParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    position=types.Position(line=0, character=8),
                    new_name="FEATURE_payment",
                )
            )
            return edit is not None and any(
                isinstance(change, types.TextDocumentEdit)
                and change.text_document.uri.endswith("/global/late.md")
                for change in edit.document_changes or ()
            )

        # ...but Serena's rename rewrites it, and so does ours.
        await server.eventually(renames_the_late_mention, "the rename rewrites late.md")
        server.close(uri)


async def test_hover_counts_the_memories_that_link_here(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    for number in range(3):
        write_file(ws.primary / f"linker_{number}.md", f"{LINK} {LINK}\n")
    async with session(ws) as server:
        uri = server.open("notes/hover.md", f"{LINK}\n")

        async def hover_text() -> str:
            result = await server.client.text_document_hover_async(
                types.HoverParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    position=types.Position(line=0, character=4),
                )
            )
            assert result is not None and isinstance(result.contents, types.MarkupContent)
            return result.contents.value

        assert "linked from 3 memories" in await hover_text()
        (ws.primary / "linker_0.md").unlink()

        async def two() -> bool:
            return "linked from 2 memories" in await hover_text()

        await server.eventually(two, "hover counts two memories")


class _RawSession:
    """A client that writes framed messages itself, so that several go in one write."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.next_id = 0
        self.answers: dict[int, Any] = {}
        # The requests answered when the first indexing ended (None: it had not ended).
        self.answered_when_indexed: set[int] | None = None

    def frame(self, method: str, params: Any, request: bool = True) -> tuple[bytes, int]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if request:
            self.next_id += 1
            message["id"] = self.next_id
        body = json.dumps(message).encode()
        return b"Content-Length: %d\r\n\r\n" % len(body) + body, self.next_id

    async def write(self, *frames: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"".join(frames))
        await self.process.stdin.drain()

    async def read_until(self, wanted: set[int]) -> None:
        """Read messages until every wanted request is answered; answer server requests."""
        assert self.process.stdout is not None
        reader = self.process.stdout
        while not wanted <= self.answers.keys():
            length = 0
            while (line := await reader.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            assert length, "the server closed its output"
            message = json.loads(await reader.readexactly(length))
            if "method" in message and "id" in message:
                reply = {"jsonrpc": "2.0", "id": message["id"], "result": None}
                body = json.dumps(reply).encode()
                await self.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            elif "id" in message:
                self.answers[message["id"]] = message.get("result", message.get("error"))
            elif (
                message.get("method") == "$/progress"
                and message["params"]["value"].get("kind") == "end"
            ):
                self.answered_when_indexed = set(self.answers)


async def test_requests_sent_with_initialized_see_every_name(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    text = "---\ntags: [bulk]\n---\n# Bulk\n\n" + "Words and more words. " * 30 + "\n"
    for number in range(BIG_STORE):
        write_file(ws.primary / "bulk" / f"note_{number:05d}.md", text)
    # Linked from two memories of the last folders the scan reads.
    write_file(ws.outside / "team_linker.md", f"{LINK}\n")
    write_file(ws.global_folder / "personal_linker.md", f"Mine: {LINK}\n")
    note = ws.path("notes/first.md")
    write_file(note, f"See {LINK}.\n")
    at = {"textDocument": {"uri": note.as_uri()}, "position": {"line": 0, "character": 8}}

    process = await asyncio.create_subprocess_exec(
        *SERVER_COMMAND,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=SERVER_ENV,
    )
    client = _RawSession(process)
    try:
        initialize, init_id = client.frame(
            "initialize",
            {
                "processId": None,
                "rootUri": ws.root.as_uri(),
                "capabilities": {"window": {"workDoneProgress": True}},
                "initializationOptions": ws.init_options(),
            },
        )
        await client.write(initialize)
        await asyncio.wait_for(client.read_until({init_id}), ANSWER_TIMEOUT)
        # Everything below goes in one write, right behind `initialized`.
        opened = {
            "textDocument": {
                "uri": note.as_uri(),
                "languageId": "markdown",
                "version": 1,
                "text": note.read_text(),
            }
        }
        frames = [
            client.frame("initialized", {}, request=False)[0],
            client.frame("textDocument/didOpen", opened, request=False)[0],
        ]
        ids = {}
        for method, params in (
            ("textDocument/hover", at),
            ("textDocument/definition", at),
            ("textDocument/references", {**at, "context": {"includeDeclaration": False}}),
            ("workspace/symbol", {"query": "FEATURE_checkout"}),
        ):
            frame, ids[method] = client.frame(method, params)
            frames.append(frame)
        await client.write(*frames)
        await asyncio.wait_for(client.read_until(set(ids.values())), ANSWER_TIMEOUT)
        # The first indexing was still reading the files when hover, definition and
        # workspace symbols were answered (references may read the files not indexed yet
        # and so finish after it: it is checked for being right, not for being early).
        early = {ids[m] for m in ("textDocument/hover", "textDocument/definition")}
        early.add(ids["workspace/symbol"])
        ended = client.answered_when_indexed
        assert ended is None or early <= ended, (ended, ids)

        answers = {method: client.answers[number] for method, number in ids.items()}
        hover = answers["textDocument/hover"]["contents"]["value"]
        assert hover.startswith("**`FEATURE_checkout`**"), hover
        checkout = ws.path("shared/feature/FEATURE_checkout.md").as_uri()
        (definition,) = answers["textDocument/definition"]
        assert checkout in (definition.get("uri"), definition.get("targetUri"))
        references = sorted(
            (loc["uri"], loc["range"]["start"]["line"])
            for loc in answers["textDocument/references"]
        )
        assert references == sorted(
            [
                (note.as_uri(), 0),
                ((ws.outside / "team_linker.md").as_uri(), 0),
                ((ws.global_folder / "personal_linker.md").as_uri(), 0),
            ]
        )
        symbols = answers["workspace/symbol"]
        assert symbols[0]["name"] == "FEATURE_checkout"
        assert symbols[0]["location"]["uri"] == checkout
    finally:
        if process.returncode is None:
            assert process.stdin is not None
            process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), 5)
            except TimeoutError:
                process.kill()
                await process.wait()
