"""Go to definition from any reference form (SPEC 3.4): the memory's file, at the heading
a `[[note#Heading]]` names."""

from __future__ import annotations

from lsprotocol import types

from memory_ls.core.rules.headings import find_heading, headings
from memory_ls.lsp import agent_navigation
from memory_ls.lsp.server import MemoryServer
from memory_ls.lsp.targets import (
    cursor_at,
    document_text,
    file_start,
    file_uri,
    resolve,
    wait_for_names,
)
from memory_ls.lsp.text import client_range


def register(server: MemoryServer) -> None:
    """Register the definition provider."""

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    async def definition(
        ls: MemoryServer, params: types.DefinitionParams
    ) -> list[types.Location] | list[types.LocationLink] | None:
        cursor = cursor_at(ls, params.text_document.uri, params.position)
        ref = cursor.reference
        if ref is None:
            # Claude Code's `@path` imports and MEMORY.md's links: the file they name.
            return await agent_navigation.definition(
                ls, params.text_document.uri, params.position, _links_supported(ls)
            )
        await wait_for_names(ls)
        entry = resolve(ls, ref)
        if entry is None:
            return None
        uri = file_uri(entry.memory.path)
        # `[[note#Heading]]`: the heading's line (rules/headings.py), else the top.
        target = (
            await ls.in_store_thread(_heading_range, ls, uri, ref.fragment)
            if ref.fragment
            else None
        ) or file_start()
        if not _links_supported(ls):
            return [types.Location(uri=uri, range=target)]
        # The whole `[[...]]` or `mem:...` is what the editor underlines as the link.
        origin = client_range(ls, cursor.lines, ref.line, ref.full_start, ref.line, ref.full_end)
        return [
            types.LocationLink(
                target_uri=uri,
                target_range=target,
                target_selection_range=target,
                origin_selection_range=origin,
            )
        ]


def _heading_range(ls: MemoryServer, uri: str, fragment: str) -> types.Range | None:
    """The heading a fragment names in a memory (its open text, else its file's)."""
    text, _version = document_text(ls, uri)
    heading = find_heading(headings(text), fragment)
    if heading is None:
        return None
    lines = text.split("\n")
    title_end = len(lines[heading.line].rstrip("\r"))
    return client_range(ls, lines, heading.line, 0, heading.line, title_end)


def _links_supported(ls: MemoryServer) -> bool:
    document = ls.client_capabilities.text_document
    capability = document.definition if document else None
    return bool(capability and capability.link_support)
