"""Find references (SPEC 3.4) from a reference or from inside a memory file: every reference
in every memory of every folder, and in the open Markdown documents of the workspace.

The link index (core/services/backlinks.py, kept by the memory index) names the memory files that
link to the name; only those are read again, so the answer is what is on disk."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from lsprotocol import types

from memory_ls.core.operations.navigation import points_to
from memory_ls.core.rules.references import Reference
from memory_ls.lsp import agent_navigation
from memory_ls.lsp.server import MemoryServer
from memory_ls.lsp.targets import (
    OpenText,
    cursor_at,
    file_start,
    file_uri,
    open_markdown,
    search,
    subject,
    wait_for_names,
    winner,
)
from memory_ls.lsp.text import client_range


def register(server: MemoryServer) -> None:
    """Register the references provider."""

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    async def references(
        ls: MemoryServer, params: types.ReferenceParams
    ) -> list[types.Location] | None:
        await wait_for_names(ls)
        cursor = cursor_at(ls, params.text_document.uri, params.position)
        memory = subject(ls, cursor)
        declaration: list[types.Location] = []
        matches: Callable[[Reference], bool]
        if memory is not None:
            matches, needle = points_to(memory, winner(ls, memory)), memory.name
            target = memory.qualified
            if params.context.include_declaration:
                declaration.append(types.Location(uri=file_uri(memory.path), range=file_start()))
        elif cursor.reference is not None:
            # A broken link: the other places that name the same missing memory.
            target = cursor.reference.target
            matches, needle = (lambda ref: ref.target == target), cursor.reference.name
        else:
            # No memory here: the `@` imports and MEMORY.md links that name this file (or
            # the file an import or link under the cursor names).
            return await agent_navigation.references(
                ls,
                params.text_document.uri,
                params.position,
                params.context.include_declaration,
            )
        found = await ls.in_store_thread(locations, ls, open_markdown(ls), matches, needle, target)
        return declaration + found


def locations(
    ls: MemoryServer,
    open_texts: Mapping[str, OpenText],
    matches: Callable[[Reference], bool],
    needle: str,
    target: str,
) -> list[types.Location]:
    """Where the matching references to `target` are (blocking: reads the files that the
    link index names)."""
    found: list[types.Location] = []
    for item in search(ls, open_texts, matches, needle, [target]):
        lines = item.lines
        found.extend(
            types.Location(
                uri=item.uri, range=client_range(ls, lines, ref.line, ref.start, ref.line, ref.end)
            )
            for ref in item.refs
        )
    return found
