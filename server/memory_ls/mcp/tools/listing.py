"""list_memories: a page of Serena's listing, or titles, or counts by group; never the lot."""

from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.types import CallToolResult
from pydantic import Field, Strict

from memory_ls.core.store import Store
from memory_ls.mcp.answers import answer
from memory_ls.mcp.results import ListResult
from memory_ls.mcp.tools.context import ListScope, TagFilter, ToolContext
from memory_ls.mcp.wording import (
    DEFAULT_LIST_LIMIT,
    MAX_LIST_LIMIT,
    ListRequest,
    listing_text,
    serena_listing,
    titles_text,
    topics_text,
)

View = Literal["names", "titles", "topics"]


def list_memories(ctx: ToolContext) -> Callable[..., Any]:
    """The list_memories tool: Serena's JSON of a page first, then how many more and where."""

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
        view: Annotated[
            View,
            Field(description='"names" (default), "titles" or "topics".'),
        ] = "names",
        limit: Annotated[
            int | None,
            Strict(),
            Field(
                ge=1,
                le=MAX_LIST_LIMIT,
                description=f"Memories per page (default {DEFAULT_LIST_LIMIT}).",
            ),
        ] = None,
        cursor: Annotated[
            str | None,
            Field(description="The previous answer's next_cursor: the next page."),
        ] = None,
    ) -> Annotated[CallToolResult, ListResult]:
        request = ListRequest(topic, scope, tags, prefix, view, limit, cursor)

        def act(store: Store) -> CallToolResult:
            if view == "topics":
                counts = store.list_groups(scope, tags, prefix, topic=topic)
                return answer(topics_text(counts, request, store.config, ctx.names), counts)
            page = store.list_memories(
                scope,
                tags,
                prefix,
                topic=topic,
                limit=limit or DEFAULT_LIST_LIMIT,
                cursor=cursor,
            )
            result = dict(page)
            if "nextCursor" in result:
                result["next_cursor"] = result.pop("nextCursor")
            # Where to narrow a long listing: its name groups, on the first page only (later
            # pages are asked for by someone already paging), and not where tags would read
            # every memory to count them.
            groups: dict[str, Any] | None = None
            if cursor is None and not tags and "next_cursor" in result:
                groups = store.list_groups(scope, None, prefix, topic=topic)
            # The whole store's size, to say what an empty answer under filters means.
            every = None
            if not page["memories"] and cursor is None and (topic or tags or prefix or scope):
                every = store.list_memories(limit=1)["total"]
            if view == "titles":
                text = titles_text(result, request, store.config, ctx.names, groups, every)
                return answer(text, result)
            memories = result["memories"]
            more = listing_text(result, request, store.config, ctx.names, groups, every)
            return answer(serena_listing(memories), result, more)

        return ctx.stores.run(act)

    return list_memories
