"""The memory graph over `workspace/executeCommand`: `memory.graph` and `memory.preview`.

`memory.graph` answers from the name and link indexes and the workspace diagnostics'
last reports (core/operations/graph.py); the only files it reads are those changed since the
indexing read them, when they are few (`MemoryIndex.learn_links`); other agents' files
are nodes too, from the set last listed (lsp/agents.py) and their texts, read again only
when they change (core/operations/graph_agents.py). `memory.preview` is
one memory's first lines, for a hover in the graph (read once per file version).
Arguments are checked and refusals sent as the store commands' are (lsp/commands.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memory_ls.core.operations.graph import DEFAULT_LIMIT, GraphCache, GraphQuery, memory_graph
from memory_ls.core.operations.graph_agents import AgentGraphCache
from memory_ls.core.rules.errors import MemoryStoreError, NotFound
from memory_ls.lsp import agents
from memory_ls.lsp.commands import INTEGER, STRING, Command, check_arguments, refusal
from memory_ls.lsp.protocol import RawJson
from memory_ls.lsp.server import MemoryServer
from memory_ls.lsp.targets import wait_for_names

GRAPH = "memory.graph"
PREVIEW = "memory.preview"

_GRAPH_ARGUMENTS = Command(
    {},
    {
        "folder": STRING,
        "tag": STRING,
        "name": STRING,
        "center": STRING,
        "depth": INTEGER,
        "limit": INTEGER,
    },
    lambda store, args: {},
)
_PREVIEW_ARGUMENTS = Command({"name": STRING}, {}, lambda store, args: {})


def register(server: MemoryServer) -> None:
    """Register `memory.graph` and `memory.preview`."""
    cache = GraphCache()
    agent_cache = AgentGraphCache()
    server.command(GRAPH)(
        _answering(GRAPH, _GRAPH_ARGUMENTS, lambda ls, args: _graph(ls, args, cache, agent_cache))
    )
    server.command(PREVIEW)(_answering(PREVIEW, _PREVIEW_ARGUMENTS, _preview))


def _answering(
    name: str, command: Command, answer: Callable[[MemoryServer, dict[str, Any]], Any]
) -> Callable[..., Any]:
    async def run(ls: MemoryServer, *arguments: object) -> Any:
        try:
            args = check_arguments(name, command, arguments)
            await wait_for_names(ls)
            if name == GRAPH:
                await agents.of(ls).wait()  # the first listing of the agents' files
            return await ls.in_store_thread(answer, ls, args)
        except MemoryStoreError as error:
            raise refusal(error) from error

    run.__name__ = name.replace(".", "_")
    return run


def _graph(
    ls: MemoryServer, args: dict[str, Any], cache: GraphCache, agent_cache: AgentGraphCache
) -> RawJson:
    """The graph payload (blocking: a store thread)."""
    index = ls.index
    index.learn_links()
    query = GraphQuery(
        folder=args.get("folder"),
        tag=args.get("tag"),
        name=args.get("name"),
        center=args.get("center"),
        depth=args.get("depth", 1),
        limit=args.get("limit", DEFAULT_LIMIT),
    )
    known = agents.of(ls).current
    part = agent_cache.part(known) if known is not None else None
    # A plain dict would be copied item by item by the serializer (10,000 node rows).
    return RawJson(memory_graph(index, ls.disk_problems(), query, cache, part))


def _preview(ls: MemoryServer, args: dict[str, Any]) -> dict[str, Any]:
    """A memory's first lines, tags and update time (blocking: a store thread)."""
    entry = ls.index.lookup(args["name"])
    if entry is None:
        close = ls.index.complete_names(args["name"], limit=5)[0]
        raise NotFound(f"No memory named {args['name']}.", close)
    metadata = ls.index.metadata(entry.memory)
    return {
        "name": entry.name,
        "path": entry.memory.path,
        "preview": metadata.preview,
        "tags": list(metadata.tags),
        "updatedAt": metadata.updated_at,
    }
