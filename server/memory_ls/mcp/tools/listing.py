"""list_memories: Serena's listing, then each memory's folder and tags."""

from collections.abc import Callable
from typing import Annotated, Any

from mcp.types import CallToolResult
from pydantic import Field

from memory_ls.core.store import Store
from memory_ls.mcp.answers import answer
from memory_ls.mcp.results import ListResult
from memory_ls.mcp.tools.context import ListScope, TagFilter, ToolContext
from memory_ls.mcp.wording import listing_text, serena_listing


def list_memories(ctx: ToolContext) -> Callable[..., Any]:
    """The list_memories tool: Serena's JSON first, then each memory's folder and tags."""

    def list_memories(
        topic: Annotated[
            str,
            Field(description='Only memories under this topic: "auth", "global", "global/x".'),
        ] = "",
        scope: Annotated[
            ListScope | None, Field(description='"project", "global" or "all" (default).')
        ] = None,
        tags: TagFilter = None,
        prefix: Annotated[
            str | None, Field(description="Only names starting with this, e.g. `FEATURE_`.")
        ] = None,
    ) -> Annotated[CallToolResult, ListResult]:
        def act(store: Store) -> CallToolResult:
            result = store.list_memories(scope, tags, prefix, topic=topic)
            memories = result["memories"]
            return answer(serena_listing(memories), result, listing_text(memories, store.config))

        return ctx.stores.run(act)

    return list_memories
