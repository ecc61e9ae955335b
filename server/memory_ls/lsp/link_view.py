"""`memory.links` over `workspace/executeCommand`: one memory's backlinks ("linked from",
each line that links) and outgoing links (each reference, resolved or broken), for an
editor's links view. From the link index and the open documents, as references are."""

from __future__ import annotations

import os
from typing import Any

from pygls.uris import to_fs_path

from memory_ls.core.operations.link_view import (
    Backlink,
    LinkLine,
    OutgoingLink,
    backlinks,
    index_resolver,
    outgoing_links,
)
from memory_ls.core.operations.navigation import LargeFileReferences
from memory_ls.core.rules.errors import InvalidArguments, MemoryStoreError, NotFound, OutsideStore
from memory_ls.core.rules.names import did_you_mean, normalize_input
from memory_ls.core.storage.fsio import read_utf8
from memory_ls.core.storage.memory import MemoryFile
from memory_ls.core.store import check_scope
from memory_ls.lsp.commands import STRING, Command, check_arguments, refusal
from memory_ls.lsp.server import MemoryServer
from memory_ls.lsp.targets import file_uri, open_markdown, wait_for_names
from memory_ls.lsp.text import client_column

COMMAND = "memory.links"
# Long notes that link to many memories, parsed once while they stay as they are.
_LARGE = LargeFileReferences()
# Only the keys are checked here; the call is this module's own (it needs the index).
_ARGUMENTS = Command({}, {"uri": STRING, "name": STRING, "scope": STRING}, lambda s, a: {})


def register(server: MemoryServer) -> None:
    """Register the `memory.links` command."""

    @server.command(COMMAND)
    async def memory_links(ls: MemoryServer, *arguments: object) -> dict[str, Any]:
        try:
            args = check_arguments(COMMAND, _ARGUMENTS, arguments)
            if ("uri" in args) == ("name" in args):
                raise InvalidArguments(
                    f"{COMMAND} takes either uri or name: {{uri?, name?, scope?}}."
                )
            complete = await wait_for_names(ls)
            documents = open_markdown(ls)
            texts = {path: doc.text for path, doc in documents.items()}
            uri_texts = {path: doc.uri for path, doc in documents.items()}
            if "uri" in args:
                uri = args["uri"]
                path, memory = _document(ls, uri, texts)
                text = texts.get(path, "")
            else:
                memory = _named(ls, args["name"], check_scope(args.get("scope")))
                path, uri = memory.path, file_uri(memory.path)
                text = texts.get(path, "")
            return await ls.in_store_thread(
                links_answer, ls, uri, path, memory, text, texts, uri_texts, complete
            )
        except MemoryStoreError as error:
            raise refusal(error) from error


def _document(ls: MemoryServer, uri: str, texts: dict[str, str]) -> tuple[str, MemoryFile | None]:
    """The path of an open Markdown document or an indexed memory file, and the memory it
    is; OutsideStore for anything else (no file outside the store is read)."""
    raw = to_fs_path(uri) if uri.startswith("file:") else None
    path = os.path.normpath(os.path.abspath(raw)) if raw else None
    if path is not None and path in texts:
        return path, ls.index.memory_for(path)
    known = ls.index.file(path) if path is not None else None
    if path is None or known is None:
        raise OutsideStore(
            f"{COMMAND} answers for memory files and open Markdown documents; {uri!r} is neither."
        )
    return path, known


def _named(ls: MemoryServer, raw: str, scope: str | None) -> MemoryFile:
    """The memory a name resolves to; NotFound with the closest names."""
    name, is_global = normalize_input(raw)
    target = ("global/" if is_global else "") + name
    entry = ls.index.lookup(target, scope)
    if entry is None:
        close = did_you_mean(target, ls.index.names(scope))
        raise NotFound(f"No memory named {target!r}.", close)
    return entry.memory


def links_answer(
    ls: MemoryServer,
    uri: str,
    path: str,
    memory: MemoryFile | None,
    text: str,
    texts: dict[str, str],
    uris: dict[str, str],
    complete: bool,
) -> dict[str, Any]:
    """The answer of `memory.links` (blocking: reads the files that link to the memory)."""
    if path not in texts:  # an indexed memory file, not open
        try:
            text = read_utf8(path) or ""
        except OSError:  # gone since it was indexed
            text = ""
    index = ls.index
    incoming: list[Backlink] = []
    if memory is not None and memory.valid:
        unsettled = index.memory_paths_at(sorted(ls.unsettled_paths()))
        incoming = backlinks(index, memory, texts, unsettled, _LARGE)
    outgoing = outgoing_links(text, index_resolver(index))
    return {
        "uri": uri,
        "path": path,
        "name": memory.qualified if memory is not None else None,
        "scope": memory.scope if memory is not None else None,
        "complete": complete,
        "linkedFrom": [_incoming(ls, link, uris) for link in incoming],
        "linksTo": [_outgoing(ls, link) for link in outgoing],
    }


def _range(ls: MemoryServer, where: LinkLine) -> dict[str, Any]:
    """The referenced name's range, in the client's units."""
    return {
        "start": {"line": where.line, "character": client_column(ls, where.text, where.start)},
        "end": {"line": where.line, "character": client_column(ls, where.text, where.end)},
    }


def _incoming(ls: MemoryServer, link: Backlink, uris: dict[str, str]) -> dict[str, Any]:
    memory = link.memory
    return {
        "uri": uris.get(link.path) or file_uri(link.path),
        "path": link.path,
        "name": memory.qualified if memory is not None else None,
        "scope": memory.scope if memory is not None else None,
        "links": [
            {"line": where.line, "range": _range(ls, where), "text": where.text}
            for where in link.lines
        ],
    }


def _outgoing(ls: MemoryServer, link: OutgoingLink) -> dict[str, Any]:
    ref, target = link.reference, link.memory
    return {
        "target": ref.target,
        "label": ref.label,
        "form": ref.form,
        "line": link.where.line,
        "range": _range(ls, link.where),
        "text": link.where.text,
        "broken": target is None,
        "name": target.qualified if target is not None else None,
        "uri": file_uri(target.path) if target is not None else None,
        "path": target.path if target is not None else None,
    }
