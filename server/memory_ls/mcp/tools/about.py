"""find_memories_about: the memories that mention a file, folder or symbol."""

from collections.abc import Callable
from typing import Annotated, Any

from mcp.types import CallToolResult
from pydantic import Field, Strict

from memory_ls.core.operations.mentions import DEFAULT_LIMIT, memories_about
from memory_ls.core.store import Store
from memory_ls.mcp.answers import answer
from memory_ls.mcp.results import AboutResult
from memory_ls.mcp.tools.context import ToolContext

ABOUT_DESCRIPTION = f"""Find the memories that mention a file, folder or symbol. Call it
before changing a file (and before relying on how it works): they may hold decisions,
pitfalls or plans about that code; read them with {{read_memory}}. target: a path
(`src/shop/cart.py`, `src/shop/`), file name, partial path (`shop/cart`) or symbol
(`Cart.total`). Best first: the exact path, then inside the folder, then the same file name
elsewhere, then the symbol in inline code. One line per memory: name, title, the lines that
mention the target; superseded memories marked. At most `limit` (default {DEFAULT_LIMIT});
the answer says how many more."""

# Mentioning lines shown per memory in the text (all kept ones are in the structured result).
LINES_SHOWN = 3


def find_memories_about(ctx: ToolContext) -> Callable[..., Any]:
    """The find_memories_about tool: memories mentioning a path or symbol, best first."""

    def find_memories_about(
        target: Annotated[
            str,
            Field(description="A path (`src/shop/cart.py`), file name, or symbol (`Cart.total`)."),
        ],
        limit: Annotated[
            int | None,
            Strict(),
            Field(ge=1, description=f"At most this many memories (default {DEFAULT_LIMIT})."),
        ] = None,
    ) -> Annotated[CallToolResult, AboutResult]:
        def act(store: Store) -> CallToolResult:
            result = memories_about(store, target, limit)
            return answer(about_text(result), result)

        return ctx.stores.run(act)

    return find_memories_about


def about_text(result: dict[str, Any]) -> str:
    """One line per memory: name, title, the mentioning lines; then how many more."""
    memories = result["memories"]
    more = result["more"]
    if not memories:
        return f"No memory mentions {result['target']}."
    total = len(memories) + more
    head = f"{total} memor{'y' if total == 1 else 'ies'} mention {result['target']}"
    lines = [head + (f" (the best {len(memories)} here):" if more else ":")]
    for memory in memories:
        shown = memory["lines"][:LINES_SHOWN]
        hidden = len(memory["lines"]) - len(shown) + memory["moreLines"]
        mentions = " | ".join(f"{m['line']}: {m['text']}" for m in shown)
        title = f" ({memory['title']})" if memory["title"] else ""
        rest = f" | +{hidden} more line{'' if hidden == 1 else 's'}" if hidden else ""
        newer = memory["supersededBy"]
        mark = f" [SUPERSEDED by {', '.join(newer)}: read that instead]" if newer else ""
        if "merge-conflict" in memory.get("warnings", ()):
            mark += " [merge-conflict: unresolved conflict markers, both sides shown]"
        lines.append(f"- {memory['name']}{title}{mark}: {mentions}{rest}")
    if more:
        lines.append(f"{more} more memor{'y' if more == 1 else 'ies'}: pass a larger limit.")
    return "\n".join(lines)
