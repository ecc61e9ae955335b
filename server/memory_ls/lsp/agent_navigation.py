"""Definition, hover and references for Claude Code's `@path` imports and MEMORY.md's links.

The features' handlers (definition.py, hover.py, references.py) ask here when the cursor
is on no memory reference: this module translates between the protocol and
core/operations/agent_navigation.py, over the agents' files last listed (agents.py) and
the editor's open texts (the disk's for the other files).
"""

from __future__ import annotations

import os

from lsprotocol import types
from pygls.uris import to_fs_path

from memory_ls.core.operations.agent_files import MAX_READ_BYTES, KnownAgentFiles, Pointer, Reader
from memory_ls.core.operations.agent_navigation import hover_text, pointer_at, pointers_to
from memory_ls.core.services.agent_checks import reader
from memory_ls.lsp import agents
from memory_ls.lsp.server import MemoryServer
from memory_ls.lsp.targets import document_text, file_start, file_uri
from memory_ls.lsp.text import client_range


def open_reader(ls: MemoryServer) -> Reader:
    """Read files as the editor has them open, else from disk (made on the event loop)."""
    texts: dict[str, str] = {}
    for document in list(ls.workspace.text_documents.values()):
        path = to_fs_path(document.uri)
        if path:
            texts[os.path.normpath(path)] = document.source
    disk = reader(MAX_READ_BYTES)
    return lambda path: texts[path] if path in texts else disk(path)


async def _pointer(
    ls: MemoryServer, uri: str, position: types.Position
) -> tuple[KnownAgentFiles, Pointer, list[str], Reader] | None:
    """The import or link under the cursor, with what answering about it needs."""
    path = to_fs_path(uri)
    text, _version = document_text(ls, uri)
    if not path or ("@" not in text and "](" not in text):
        return None
    known = await agents.of(ls).wait()
    if known is None:
        return None
    lines = text.split("\n")
    at = ls.workspace.position_codec.position_from_client_units(lines, position)
    read = open_reader(ls)
    found = await ls.in_store_thread(
        pointer_at, known, os.path.normpath(path), text, at.line, at.character, read
    )
    return (known, found, lines, read) if found is not None else None


def _origin(ls: MemoryServer, pointer: Pointer, lines: list[str]) -> types.Range:
    """The import (with its `@`) or the link target as written."""
    span = pointer.span
    start = span.start - 1 if pointer.kind == "import" else span.start
    return client_range(ls, lines, span.line, start, span.line, span.end)


async def definition(
    ls: MemoryServer, uri: str, position: types.Position, links: bool
) -> list[types.Location] | list[types.LocationLink] | None:
    """The file an import or an index link names (None where it does not exist)."""
    found = await _pointer(ls, uri, position)
    if found is None:
        return None
    _known, pointer, lines, _read = found
    if not os.path.isfile(pointer.target):
        return None
    target = file_uri(pointer.target)
    if not links:
        return [types.Location(uri=target, range=file_start())]
    return [
        types.LocationLink(
            target_uri=target,
            target_range=file_start(),
            target_selection_range=file_start(),
            origin_selection_range=_origin(ls, pointer, lines),
        )
    ]


async def hover(ls: MemoryServer, uri: str, position: types.Position) -> types.Hover | None:
    """Where the named file is, whether it exists, about how many tokens it costs."""
    found = await _pointer(ls, uri, position)
    if found is None:
        return None
    known, pointer, lines, read = found
    text = await ls.in_store_thread(hover_text, known, pointer, "\n".join(lines), read)
    if text is None:
        return None
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
        range=_origin(ls, pointer, lines),
    )


async def references(
    ls: MemoryServer, uri: str, position: types.Position, include_declaration: bool
) -> list[types.Location] | None:
    """The imports and index links that name this file, or the file named under the
    cursor (None when nothing names it)."""
    path = to_fs_path(uri)
    known = await agents.of(ls).wait()
    if not path or known is None:
        return None
    found = await _pointer(ls, uri, position)
    target = found[1].target if found is not None else os.path.normpath(path)
    read = open_reader(ls)
    pointing = await ls.in_store_thread(pointers_to, known, target, read)
    if not pointing:
        return None
    locations: list[types.Location] = []
    if include_declaration:
        locations.append(types.Location(uri=file_uri(target), range=file_start()))
    for pointer in pointing:
        text = read(pointer.source) or ""
        locations.append(
            types.Location(
                uri=file_uri(pointer.source), range=_origin(ls, pointer, text.split("\n"))
            )
        )
    return locations
