"""Symbols (SPEC 3.4): memories by name for the workspace (fuzzy), headings for a note."""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types

from memory_ls.core.operations.navigation import Section, outline
from memory_ls.lsp.protocol import RawJson
from memory_ls.lsp.server import MemoryServer
from memory_ls.lsp.targets import document_text, file_uri, shown_path, wait_for_names
from memory_ls.lsp.text import client_range

# Enough to scroll through, few enough to send at every keystroke of the query.
MAX_WORKSPACE_SYMBOLS = 100
# How editors show Markdown headings (VS Code's own Markdown support does the same).
HEADING_KIND = types.SymbolKind.String
_FILE_START = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}


def register(server: MemoryServer) -> None:
    """Register the workspace and document symbol providers."""

    @server.feature(types.WORKSPACE_SYMBOL)
    async def workspace_symbol(ls: MemoryServer, params: types.WorkspaceSymbolParams) -> RawJson:
        await wait_for_names(ls)
        # A few lookups in the sorted name index, bounded by the answer's size: cheaper
        # here than a hop to a store thread.
        return memory_symbols(ls, params.query)

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    async def document_symbol(
        ls: MemoryServer, params: types.DocumentSymbolParams
    ) -> list[types.DocumentSymbol] | list[types.SymbolInformation]:
        uri = params.text_document.uri
        text, _version = document_text(ls, uri)
        # A long note takes a while to outline: not on the event loop.
        return await ls.in_store_thread(heading_symbols, ls, uri, text)


def heading_symbols(
    ls: MemoryServer, uri: str, text: str
) -> list[types.DocumentSymbol] | list[types.SymbolInformation]:
    """The headings of a text, nested where the client shows a tree."""
    lines, sections = text.split("\n"), outline(text)
    if _hierarchical(ls):
        return [_tree(ls, lines, section) for section in sections]
    return _flat(ls, uri, lines, sections, None)


def memory_symbols(ls: MemoryServer, query: str) -> RawJson:
    """Memories whose names match a query, best first (a list of WorkspaceSymbol in JSON):
    names that start with it, then names that hold it, its letters in order, or a typo
    of it (MemoryIndex.complete_names, the ranking completion uses)."""
    index = ls.index
    names, _cut = index.complete_names(query.strip(), None, MAX_WORKSPACE_SYMBOLS)
    containers: dict[str, str] = {}  # one text per folder
    symbols = []
    kind = types.SymbolKind.File.value
    for found in index.winners(names):
        if found is None:  # deleted since the names were listed
            continue
        memory = found[0]
        folder = memory.folder.path
        container = containers.get(folder)
        if container is None:
            container = containers[folder] = f"{memory.scope} · {shown_path(ls, folder)}"
        symbols.append(
            {
                "name": memory.qualified,
                "kind": kind,
                "location": {"uri": file_uri(memory.path), "range": _FILE_START},
                "containerName": container,
            }
        )
    return RawJson(symbols)


def _hierarchical(ls: MemoryServer) -> bool:
    document = ls.client_capabilities.text_document
    capability = document.document_symbol if document else None
    return bool(capability and capability.hierarchical_document_symbol_support)


def _ranges(
    ls: MemoryServer, lines: list[str], section: Section
) -> tuple[types.Range, types.Range]:
    """(the whole section, the heading's title) in client units."""
    heading = section.heading
    line = lines[heading.line]
    start = max(line.find(heading.title), 0)
    title = client_range(ls, lines, heading.line, start, heading.line, start + len(heading.title))
    end = section.end_line
    whole = client_range(ls, lines, heading.line, 0, end, len(lines[end].rstrip("\r")))
    return whole, title


def _tree(ls: MemoryServer, lines: list[str], section: Section) -> types.DocumentSymbol:
    whole, title = _ranges(ls, lines, section)
    return types.DocumentSymbol(
        name=section.heading.title,
        kind=HEADING_KIND,
        range=whole,
        selection_range=title,
        children=[_tree(ls, lines, child) for child in section.children],
    )


def _flat(
    ls: MemoryServer,
    uri: str,
    lines: list[str],
    sections: Sequence[Section],
    parent: str | None,
) -> list[types.SymbolInformation]:
    symbols = []
    for section in sections:
        whole, _title = _ranges(ls, lines, section)
        symbols.append(
            types.SymbolInformation(
                name=section.heading.title,
                kind=HEADING_KIND,
                location=types.Location(uri=uri, range=whole),
                container_name=parent,
            )
        )
        symbols.extend(_flat(ls, uri, lines, section.children, section.heading.title))
    return symbols
