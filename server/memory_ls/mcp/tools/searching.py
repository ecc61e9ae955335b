"""search_memories: relevance-ranked search, one row per memory, sized for a context window."""

import json
from collections.abc import Callable
from typing import Annotated, Any

from mcp.types import CallToolResult
from pydantic import Field, Strict

from memory_ls.core.operations.agent_search import NO_MATCHES, AgentMatches, agent_matches
from memory_ls.core.rules.errors import InvalidArguments
from memory_ls.core.services.relevance import ALL_WORDS, RELEVANCE, parse_query
from memory_ls.core.store import Store
from memory_ls.mcp.answers import answer
from memory_ls.mcp.results import SearchResult
from memory_ls.mcp.tools.context import ListScope, TagFilter, ToolContext

# Memories a search answers unless told otherwise: each row is a few hundred characters.
DEFAULT_MEMORIES = 10
# An answer (its text and its structured copy) stays under about 8,000 tokens at about 4
# characters a token: memories past this budget are left for the next page.
ANSWER_BUDGET_CHARS = 32_000
# Said under a hit from a memory holding git merge conflict markers (issue 34).
CONFLICT_NOTE = (
    "⚠ merge-conflict: this memory holds unresolved conflict markers; both sides are shown"
)


def search_memories(ctx: ToolContext) -> Callable[..., Any]:
    """The search_memories tool: relevance-ranked, one row per memory."""

    def search_memories(
        query: Annotated[
            str,
            Field(description="A task, a question or keywords; case- and accent-insensitive."),
        ],
        tags: TagFilter = None,
        scope: Annotated[
            ListScope | None, Field(description='"project", "global" or "all" (default).')
        ] = None,
        limit: Annotated[
            int | None,
            Strict(),
            Field(ge=1, description=f"At most this many memories (default {DEFAULT_MEMORIES})."),
        ] = None,
        all_words: Annotated[
            bool | None,
            Strict(),
            Field(description="Only memories holding every word as written (default false)."),
        ] = None,
        cursor: Annotated[
            str | None, Field(description="The next_cursor of a previous answer: the next ones.")
        ] = None,
    ) -> Annotated[CallToolResult, SearchResult]:
        def act(store: Store) -> CallToolResult:
            mode = ALL_WORDS if all_words else RELEVANCE
            offset = _offset(cursor)
            size = limit or DEFAULT_MEMORIES
            found = store.search_memories(
                query, tags, scope, size, mode, per_memory=True, offset=offset, count=True
            )
            parsed = parse_query(query, mode)
            words = ", ".join(part.label for part in parsed.terms)
            rows = [hit.summary() for hit in found.hits]
            # The successors listed beside the matches they supersede count on top (the
            # matches alone would read "8 of 7").
            total = found.total + found.added if found.total is not None else offset + len(rows)
            result: dict[str, Any] = {
                "query": query,
                "mode": mode,
                "memories": [],
                "total": total,
                "more": 0,
                "next_cursor": None,
                "ignoredWords": [part.label for part in parsed.ignored],
            }
            agents = _agent_files(ctx, store, query, mode, tags, scope, offset)
            result.update(agents.fields())
            also = agents.text()
            if found.notes:
                # Search by meaning not whole yet (or unavailable): said, never hidden.
                result["notes"] = list(found.notes)
                also = "\n".join([*found.notes, *([also] if also else [])])
            if not rows:
                if mode == RELEVANCE:
                    text = f"No memory matched any of these words ({words})."
                    # Never answered in place of the query (a "corrected" search finds
                    # `cart` for "helm chart"): the closest words are offered, not searched.
                    suggestion = _suggestion(store, query, tags, scope)
                    if suggestion is not None:
                        result["suggestion"] = suggestion
                        text += (
                            f' The closest words of memory names and tags: "{suggestion}" '
                            "(not searched; search it if that is what you meant)."
                        )
                    else:
                        text += " Try other or fewer words."
                else:
                    some = store.search_memories(
                        query, tags, scope, 1, RELEVANCE, per_memory=True, count=True
                    ).total
                    result["someWords"] = some or 0
                    text = (
                        f"No memory holds every one of these words ({words}); "
                        f"{some or 0} memor{'y' if some == 1 else 'ies'} match some of them "
                        "(search without all_words to see them ranked)."
                    )
                return answer("\n".join([text, also]) if also else text, result)
            shown: list[dict[str, Any]] = []
            blocks: list[str] = []
            spent = len(also) + len(json.dumps(agents.fields(), ensure_ascii=False))
            superseded: dict[str, list[str]] = {}
            for row in rows:
                for newer in row["supersededBy"]:
                    superseded.setdefault(newer, []).append(row["name"])
            for number, row in enumerate(rows, start=offset + 1):
                block = _block(number, row, superseded.get(row["name"], []))
                cost = len(block) + len(json.dumps(row, ensure_ascii=False))
                if shown and spent + cost > ANSWER_BUDGET_CHARS:
                    break  # the rest on the next page
                shown.append(row)
                blocks.append(block)
                spent += cost
            end = offset + len(shown)
            more = max(0, total - end)
            result.update(
                memories=shown, more=more, next_cursor=str(end) if more else None, total=total
            )
            head = (
                f"{len(shown)} of {total} memor{'y' if total == 1 else 'ies'}, best first "
                f"({'every word' if mode == ALL_WORDS else 'relevance'}: {words})"
            )
            if found.added:
                head += (
                    f"; {total - found.added} match, {found.added} "
                    f"supersede{'s' if found.added == 1 else ''} a match"
                )
            if result["ignoredWords"]:
                head += f"; not required: {', '.join(result['ignoredWords'])}"
            tail = (
                f'{more} more: call search_memories again with cursor="{end}".'
                if more
                else "No more memories match."
            )
            return answer("\n".join([head + ":", *blocks, tail, *([also] if also else [])]), result)

        return ctx.stores.run(act)

    return search_memories


def _agent_files(
    ctx: ToolContext,
    store: Store,
    query: str,
    mode: str,
    tags: list[str] | None,
    scope: str | None,
    offset: int,
) -> AgentMatches:
    """The agents' files that answer the query, on a first page searching the project
    without tags (agents' files have none) and no global scope."""
    if offset or tags or scope == "global":
        return NO_MATCHES
    cache = ctx.stores.agent_files(store.config)
    return agent_matches(store.config, parse_query(query, mode), cache.known(), cache.texts)


def _offset(cursor: str | None) -> int:
    """Where a page starts: the `next_cursor` of the page before."""
    if cursor is None:
        return 0
    if not cursor.isdigit():
        raise InvalidArguments(f"cursor {cursor!r} is not one a search answered (next_cursor).")
    return int(cursor)


def _suggestion(store: Store, query: str, tags: list[str] | None, scope: str | None) -> str | None:
    """The closest words of the memories' names and tags, when a search of them finds
    something (a word only a tag holds is no text to find)."""
    closest = store.closest_query(query, scope)
    if closest is None:
        return None
    found = store.search_memories(closest, tags, scope, 1, RELEVANCE, per_memory=True)
    return closest if found.hits else None


def _block(number: int, row: dict[str, Any], newer_than: list[str]) -> str:
    """One memory of the answer's text: name, title, why, best lines."""
    if row["matched"]:
        why = f"score {row['score']}; matched: {', '.join(row['matched'])}"
    elif newer_than:
        # Listed for the memory it supersedes, which the query found.
        why = f"supersedes {', '.join(newer_than)}, which matched"
    elif row.get("similarity") is not None:
        why = f"score {row['score']}; by meaning (similarity {row['similarity']})"
    else:
        why = f"score {row['score']}; matched: its name"
    if row["supersededBy"]:
        why += f"; SUPERSEDED by {', '.join(row['supersededBy'])}: read that instead"
    lines = [f"{number}. {row['name']} — {row['title']} ({why})"]
    if "merge-conflict" in row.get("warnings", ()):
        lines.append(f"   {CONFLICT_NOTE}")
    lines += [f"   {line['line']}: {line['text']}" for line in row["lines"]]
    return "\n".join(lines)
