"""delete_memory and rename_memory."""

from collections.abc import Callable
from typing import Annotated, Any

from mcp.types import CallToolResult
from pydantic import Field

from memory_ls.core.operations.report import broken_links_note, index_note, rewritten_note
from memory_ls.core.store import Store
from memory_ls.mcp.answers import answer
from memory_ls.mcp.results import DeleteResult, MoveResult
from memory_ls.mcp.tools.context import ExpectedVersion, Name, ToolContext
from memory_ls.mcp.tools.writing import checked_answer
from memory_ls.mcp.wording import placement_reason


def delete_memory(ctx: ToolContext) -> Callable[..., Any]:
    """The delete_memory tool."""

    def delete_memory(
        memory_name: Name, expected_version: ExpectedVersion = None
    ) -> Annotated[CallToolResult, DeleteResult]:
        def act(store: Store) -> CallToolResult:
            result = ctx.versions.guarded(
                store,
                memory_name,
                None,
                expected_version,
                lambda version: store.delete(memory_name, expected_version=version),
            )
            notes = (broken_links_note(result), index_note(result))
            head = f"Deleted {result['name']} ({result['path']})."
            return answer(" ".join([head, *(n for n in notes if n)]), result)

        return ctx.stores.run(act)

    return delete_memory


def rename_memory(ctx: ToolContext) -> Callable[..., Any]:
    """The rename_memory tool: re-routed, references rewritten."""

    def rename_memory(
        old_name: Annotated[str, Field(description="The current name of the memory.")],
        new_name: Annotated[str, Field(description="The new name; routed like a new memory.")],
        expected_version: ExpectedVersion = None,
    ) -> Annotated[CallToolResult, MoveResult]:
        def act(store: Store) -> CallToolResult:
            result = ctx.versions.guarded(
                store,
                old_name,
                None,
                expected_version,
                lambda version: store.move(old_name, new_name, expected_version=version),
                follow_journal=True,  # the references it rewrites in memories the session read
            )
            count = result["updatedReferences"]
            head = (
                f"Renamed {result['name']} to {result['newName']} at {result['path']} "
                f"({placement_reason(result['newName'], result['path'], store.config)}); "
                f"{count} reference{'' if count == 1 else 's'} in other memories updated."
            )
            notes = (rewritten_note(result), index_note(result))
            head = " ".join([head, *(n for n in notes if n)])
            return checked_answer(store, result, head)

        return ctx.stores.run(act)

    return rename_memory
