"""Hover on a reference (SPEC 3.4): where the memory lives, its tags, last update and a
preview; for a broken link, what is wrong and what would fix it."""

from __future__ import annotations

import datetime as dt
import os

from lsprotocol import types

from memory_ls.core.rules.document import iso
from memory_ls.core.rules.errors import MemoryStoreError
from memory_ls.core.rules.names import did_you_mean, name_problem
from memory_ls.core.rules.references import Reference
from memory_ls.core.services.index import Entry
from memory_ls.core.storage.memory import MemoryFile
from memory_ls.lsp import agent_navigation
from memory_ls.lsp.server import MemoryServer
from memory_ls.lsp.targets import cursor_at, resolve, shown_path, wait_for_names


def register(server: MemoryServer) -> None:
    """Register the hover provider."""

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: MemoryServer, params: types.HoverParams) -> types.Hover | None:
        cursor = cursor_at(ls, params.text_document.uri, params.position)
        if cursor.reference is None:
            # Claude Code's `@path` imports and MEMORY.md's links: the file they name.
            return await agent_navigation.hover(ls, params.text_document.uri, params.position)
        names_known = await wait_for_names(ls)
        text = await ls.in_store_thread(hover_text, ls, cursor.reference, names_known)
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
            range=cursor.reference_range(ls),
        )


def hover_text(ls: MemoryServer, ref: Reference, names_known: bool = True) -> str:
    """The Markdown shown for a reference (blocking: reads the memory's metadata)."""
    problem = name_problem(ref.name)
    if problem:
        return f"`{ref.target}` is not a valid memory name: {problem}."
    entry = resolve(ls, ref)
    if entry is None and not names_known:
        # Not a broken link until every name is known (SPEC 3.3).
        return f"`{ref.target}`: the memories are still being listed; hover again in a moment."
    if entry is None:
        return _broken(ls, ref)
    return _found(ls, entry)


def _found(ls: MemoryServer, entry: Entry) -> str:
    memory = entry.memory
    metadata = ls.index.metadata(memory)
    facts = [
        f"**`{memory.qualified}`** · {memory.scope} memory in "
        f"`{shown_path(ls, memory.folder.path)}`" + (" (read-only)" if memory.read_only else "")
    ]
    if metadata.tags:
        facts.append("tags: " + ", ".join(f"`{tag}`" for tag in metadata.tags))
    facts.append(f"updated {metadata.updated_at or _file_time(memory.path)}")
    if entry.shadows:
        facts.append("hides " + ", ".join(f"`{shown_path(ls, m.path)}`" for m in entry.shadows))
    linked = _backlinks(ls, memory)
    if linked is not None:
        facts.append(linked)
    text = "  \n".join(facts)
    if metadata.preview:
        text += "\n\n---\n\n" + metadata.preview
    return text


def _backlinks(ls: MemoryServer, memory: MemoryFile) -> str | None:
    """How many memories link here (None while the first indexing has not read them all)."""
    index = ls.index
    index.learn_links()
    count = index.backlink_count(memory.qualified)
    if count is None:
        return None
    return f"linked from {count} {'memory' if count == 1 else 'memories'}"


def _file_time(path: str) -> str:
    """The file's modification time, for memories without an `updated_at` (plain Markdown)."""
    try:
        stamp = dt.datetime.fromtimestamp(os.path.getmtime(path), dt.timezone.utc)
    except OSError:
        return "unknown"
    return f"{iso(stamp)} (file time)"


def _broken(ls: MemoryServer, ref: Reference) -> str:
    where = "in the global folder" if ref.is_global else "in the project's memory folders"
    lines = [f"**Broken link**: no memory named `{ref.target}` {where}."]
    names = ls.index.names("global" if ref.is_global else "project")
    close = did_you_mean(ref.target, names)
    if close:
        lines.append("Did you mean " + " or ".join(f"`{name}`" for name in close) + "?")
    try:
        route = ls.store.route(ref.target)
    except MemoryStoreError as error:
        lines.append(f"It cannot be created: {error.message}")
    else:
        lines.append(f"Saving it would create `{shown_path(ls, route['path'])}`.")
    return "\n\n".join(lines)
