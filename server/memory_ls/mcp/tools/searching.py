"""search_memories: full-text search, best first."""

from collections.abc import Callable
from typing import Annotated, Any

from mcp.types import CallToolResult
from pydantic import Field, Strict

from memory_ls.core.store import Store
from memory_ls.mcp.answers import answer
from memory_ls.mcp.results import SearchResult
from memory_ls.mcp.tools.context import ListScope, TagFilter, ToolContext


def search_memories(ctx: ToolContext) -> Callable[..., Any]:
    """The search_memories tool: full-text, best first."""

    def search_memories(
        query: Annotated[str, Field(description="Words or a phrase; case-insensitive.")],
        tags: TagFilter = None,
        scope: Annotated[
            ListScope | None, Field(description='"project", "global" or "all" (default).')
        ] = None,
        limit: Annotated[
            int | None, Strict(), Field(ge=1, description="At most this many lines (default 50).")
        ] = None,
    ) -> Annotated[CallToolResult, SearchResult]:
        def act(store: Store) -> CallToolResult:
            result = store.search(query, tags, scope, limit)
            hits = result["results"]
            if not hits:
                return answer(f"No memory matches {query!r}.", result)
            lines = [f"{len(hits)} matching line{'' if len(hits) == 1 else 's'}:"]
            lines += [f"{h['name']}:{h['line']}: {h['text']}" for h in hits]
            return answer("\n".join(lines), result)

        return ctx.stores.run(act)

    return search_memories
