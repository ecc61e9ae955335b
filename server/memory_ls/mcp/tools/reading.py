"""read_memory: the file's text as Serena answers it, with its version and any warning.

A memory holding an unresolved git merge conflict starts with a warning saying so; a
superseded memory's answer starts with a note naming the newer one; with `related`,
a block lists the memories one link away. The file's text is always a block of its own.
"""

from collections.abc import Callable
from typing import Annotated, Any

from mcp.types import CallToolResult
from pydantic import Field, Strict

from memory_ls.core.rules.conflicts import conflict_warning
from memory_ls.core.rules.errors import NotFound, OutsideStore
from memory_ls.core.services.related import related_text, supersede_note
from memory_ls.core.storage.fsio import is_within
from memory_ls.core.storage.gate import decode_for_read
from memory_ls.core.store import Store
from memory_ls.mcp.answers import answer
from memory_ls.mcp.results import ReadResult
from memory_ls.mcp.tools.context import Name, Scope, ToolContext
from memory_ls.mcp.wording import folder_at


def read_memory(ctx: ToolContext) -> Callable[..., Any]:
    """The read_memory tool: Serena's text first, unless the file is not UTF-8 text."""

    def read_memory(
        memory_name: Name,
        scope: Annotated[
            Scope | None, Field(description="Search only this scope; default: all scopes.")
        ] = None,
        include_version: Annotated[
            bool,
            Strict(),
            Field(description="Also give the version in the text (it is always in the result)."),
        ] = False,
        related: Annotated[
            bool,
            Strict(),
            Field(description="Also list the memories it links to and those linking to it."),
        ] = False,
    ) -> Annotated[CallToolResult, ReadResult]:
        def act(store: Store) -> CallToolResult:
            try:
                memory, data = store.read_file(memory_name, scope)
            except NotFound:
                # Read as missing: a write of the name creates it (mcp/session.py).
                ctx.versions.forget_name(store, memory_name, scope)
                raise
            folder = folder_at(store.config, memory.folder.path)
            # The store checked this on its read; a link swapped in since must not lead outside.
            if folder is None or not is_within(memory.path, folder.real):
                raise OutsideStore(f"{memory.path} leads outside its memory folder.")
            result, successors = store.read_answer(memory, data, related=related)
            # The file's text alone, as Serena answers: an agent that reads a memory and
            # writes it back changed must not find anything else in it.
            text, warning = decode_for_read(data, memory.qualified)
            blocks = [text]
            if successors:
                blocks.insert(0, supersede_note(memory.qualified, successors))
            if warning is not None:
                blocks.insert(0, warning)
            # Before anything else: the text holds two versions of some lines, neither settled.
            conflict = conflict_warning(memory.qualified, text)
            if conflict is not None:
                blocks.insert(0, conflict)
            if related:
                blocks.append(related_text(memory.qualified, result["related"]))
            if include_version:
                blocks.append(
                    f"Version: {result['version']} (give it as expected_version when you "
                    "write, edit, rename or delete this memory)."
                )
            # The version this session read: a later write without one is checked against it.
            ctx.versions.read(memory.path, memory.qualified, result["version"])
            return answer(blocks[0], result, *blocks[1:])

        return ctx.stores.run(act)

    return read_memory
