"""Go to definition from any reference form (SPEC 3.4): the memory's file."""

from __future__ import annotations

from lsprotocol import types

from memory_ls.lsp import agent_navigation
from memory_ls.lsp.server import MemoryServer
from memory_ls.lsp.targets import cursor_at, file_start, file_uri, resolve, wait_for_names
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
        if not _links_supported(ls):
            return [types.Location(uri=uri, range=file_start())]
        # The whole `[[...]]` or `mem:...` is what the editor underlines as the link.
        origin = client_range(ls, cursor.lines, ref.line, ref.full_start, ref.line, ref.full_end)
        return [
            types.LocationLink(
                target_uri=uri,
                target_range=file_start(),
                target_selection_range=file_start(),
                origin_selection_range=origin,
            )
        ]


def _links_supported(ls: MemoryServer) -> bool:
    document = ls.client_capabilities.text_document
    capability = document.definition if document else None
    return bool(capability and capability.link_support)
