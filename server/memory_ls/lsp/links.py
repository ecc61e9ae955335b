"""Document links (SPEC 3.4): every reference that resolves links to its memory's file (at
the heading a `[[note#Heading]]` names)."""

from __future__ import annotations

from lsprotocol import types

from memory_ls.core.rules.headings import find_heading
from memory_ls.core.rules.references import find_references
from memory_ls.core.services.diagnostics.heading_links import HEADINGS
from memory_ls.lsp.server import MemoryServer
from memory_ls.lsp.targets import document_text, file_uri, resolve, shown_path, wait_for_names
from memory_ls.lsp.text import client_range


def register(server: MemoryServer) -> None:
    """Register the document link provider."""

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_LINK)
    async def document_link(
        ls: MemoryServer, params: types.DocumentLinkParams
    ) -> list[types.DocumentLink]:
        await wait_for_names(ls)
        text, _version = document_text(ls, params.text_document.uri)
        return await ls.in_store_thread(links_in, ls, text, _tooltips(ls))


def _tooltips(ls: MemoryServer) -> bool:
    document = ls.client_capabilities.text_document
    capability = document.document_link if document else None
    return bool(capability and capability.tooltip_support)


def links_in(ls: MemoryServer, text: str, tooltips: bool) -> list[types.DocumentLink]:
    """A link for each resolving reference of a text; broken ones get none (diagnostics say why)."""
    lines = text.split("\n")
    links = []
    for ref in find_references(text):
        entry = resolve(ls, ref)
        if entry is None:
            continue
        memory = entry.memory
        target = file_uri(memory.path)
        found = HEADINGS.of(memory.path) if ref.fragment else None
        heading = find_heading(found, ref.fragment or "") if found else None
        if heading is not None:
            # `[[note#Heading]]`: the line, as editors read a file link's `#L12` fragment.
            target += f"#L{heading.line + 1}"
        links.append(
            types.DocumentLink(
                range=client_range(ls, lines, ref.line, ref.start, ref.line, ref.end),
                target=target,
                tooltip=(
                    f"Open {memory.scope} memory {shown_path(ls, memory.path)}"
                    if tooltips
                    else None
                ),
            )
        )
    return links
