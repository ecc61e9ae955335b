"""The memory graph: memories as nodes, their links as edges, from the indexes alone.

Built from what the name index and the link index already hold (each file's tags and
link keys, the shadowing, the folders) and the on-disk problem codes the caller passes
(path -> codes): nothing is read on the request path. Nodes are every indexed file
(shadowed ones too, flagged), plus one node per name that links point to but no memory
has (flagged MISSING): broken links are edges to those. Supersede relations and Serena's
bare `mem:` mentions are no edges (only `[[x]]`, `[[x|label]]` and `` `mem:x` ``).

Large stores stay responsive by sending at most `limit` nodes: the most linked first
(`truncated` and `total` say what was left out), and by the neighbourhood mode (a
centre memory and the memories within `depth` links of it, either direction).

The payload is arrays rather than objects (see `NODE_FIELDS`), edges a flat list of node
positions: at 10,000 memories about 40 bytes a node.
"""

from __future__ import annotations

import heapq
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memory_ls.core.backlinks import SERENA_MARK
from memory_ls.core.errors import InvalidArguments, NotFound
from memory_ls.core.folders import Folder
from memory_ls.core.index import LinkRow, MemoryIndex
from memory_ls.core.store import MemoryFile, Store
from memory_ls.core.supersede import SUPERSEDED_BY_KEY, SUPERSEDES_KEY

GRAPH_FORMAT = 1
# What each node array holds, in order (sent with every answer).
NODE_FIELDS = ("name", "folder", "linksIn", "linksOut", "flags", "problems", "tags")
# Node flags (a bit set).
READ_ONLY = 1
SHADOWED = 2  # another file of the same name wins lookup
ORPHAN = 4  # no link in or out (broken links count as out)
STALE = 8  # mentions a repository path that is gone (a `stale-path` problem)
MISSING = 16  # no memory has this name: broken links point here
INVALID_NAME = 32  # a name memory-ls would not create; links cannot reach it
UNREAD = 64  # its links are not known yet (changed since the indexing read it)
FLAG_NAMES = {
    "readOnly": READ_ONLY,
    "shadowed": SHADOWED,
    "orphan": ORPHAN,
    "stale": STALE,
    "missing": MISSING,
    "invalidName": INVALID_NAME,
    "unread": UNREAD,
}
DEFAULT_LIMIT = 2000
MAX_DEPTH = 10
# Link keys that are not references: Serena's mentions and supersede relations.
_NOT_REFERENCES = (SERENA_MARK, SUPERSEDES_KEY, SUPERSEDED_BY_KEY)


@dataclass(frozen=True)
class GraphQuery:
    """Which part of the graph to send."""

    folder: str | None = None  # a folder's path or its label (directory name)
    tag: str | None = None
    name: str | None = None  # a substring of the name, any case
    center: str | None = None  # a memory's name (`global/x` for a global one)
    depth: int = 1
    limit: int = DEFAULT_LIMIT


@dataclass
class _Node:
    name: str
    folder: int  # position in the folder list; -1 for a missing name
    flags: int
    problems: int
    tags: tuple[str, ...]
    links_in: int = 0
    links_out: int = 0


def memory_graph(
    index: MemoryIndex,
    problems: Mapping[str, Sequence[str]],
    query: GraphQuery = GraphQuery(),
) -> dict[str, Any]:
    """The graph payload (README: "memory.graph") for an index; `problems` maps a file's
    path to the codes of its on-disk diagnostics."""
    if query.limit < 1:
        raise InvalidArguments("memory.graph: limit must be at least 1.")
    if not 0 <= query.depth <= MAX_DEPTH:
        raise InvalidArguments(f"memory.graph: depth must be from 0 to {MAX_DEPTH}.")
    folders = list(index.config.folders)
    folder_at = {folder.path: position for position, folder in enumerate(folders)}
    table = sorted(
        index.link_table(), key=lambda row: (folder_at.get(row[0].folder.path, 0), row[0].name)
    )
    shadowed = index.shadowed_by()
    nodes: list[_Node] = []
    position_of: dict[str, int] = {}  # path -> node
    for memory, tags, keys in table:
        position_of[memory.path] = len(nodes)
        nodes.append(_node(memory, tags, keys, shadowed, problems.get(memory.path, ()), folder_at))
    edges = _edges(index, table, position_of, nodes)
    for source, target in edges:
        nodes[source].links_out += 1
        nodes[target].links_in += 1
    for node in nodes:
        if node.links_in == 0 and node.links_out == 0 and not node.flags & MISSING:
            node.flags |= ORPHAN
    pending = sum(1 for _m, _t, keys in table if keys is None)

    center = _center_position(index, position_of, query)
    chosen = _choose(nodes, edges, center, query, folders)
    total_nodes = len(chosen)
    shown = _most_linked(chosen, nodes, query.limit, center)
    renumber = {old: new for new, old in enumerate(shown)}
    shown_edges = [(renumber[s], renumber[t]) for s, t in edges if s in renumber and t in renumber]
    chosen_set = set(chosen)
    total_edges = sum(1 for s, t in edges if s in chosen_set and t in chosen_set)
    tag_names = sorted({tag for position in shown for tag in nodes[position].tags})
    tag_at = {tag: position for position, tag in enumerate(tag_names)}
    return {
        "format": GRAPH_FORMAT,
        "fields": list(NODE_FIELDS),
        "flags": dict(FLAG_NAMES),
        "folders": [
            {
                "path": folder.path,
                "label": folder.label,
                "scope": folder.scope,
                "kind": folder.kind,
                "readOnly": folder.read_only,
            }
            for folder in folders
        ],
        "tags": tag_names,
        "nodes": [_row(nodes[position], tag_at) for position in shown],
        "edges": [end for edge in shown_edges for end in edge],
        "center": renumber.get(center) if center is not None else None,
        "total": {"nodes": total_nodes, "edges": total_edges},
        "truncated": len(shown) < total_nodes,
        "pending": pending,
        "generation": index.generation,
    }


def _node(
    memory: MemoryFile,
    tags: tuple[str, ...],
    keys: tuple[str, ...] | None,
    shadowed: Collection[str],
    codes: Sequence[str],
    folder_at: Mapping[str, int],
) -> _Node:
    flags = 0
    if memory.read_only:
        flags |= READ_ONLY
    if memory.path in shadowed:
        flags |= SHADOWED
    if not memory.valid:
        flags |= INVALID_NAME
    if keys is None:
        flags |= UNREAD
    if "stale-path" in codes:
        flags |= STALE
    return _Node(memory.qualified, folder_at.get(memory.folder.path, 0), flags, len(codes), tags)


def _edges(
    index: MemoryIndex,
    table: Sequence[LinkRow],
    position_of: dict[str, int],
    nodes: list[_Node],
) -> list[tuple[int, int]]:
    """Each file's distinct resolved links (self-links left out); a target no memory has
    becomes a MISSING node (appended to `nodes`)."""
    targets: dict[str, None] = {}
    for _memory, _tags, keys in table:
        for key in keys or ():
            if key and not key.startswith(_NOT_REFERENCES):
                targets[key] = None
    names = list(targets)
    resolved: dict[str, int] = {}
    for name, found in zip(names, index.winners(names), strict=True):
        if found is not None and found[0].path in position_of:
            resolved[name] = position_of[found[0].path]
        else:
            resolved[name] = len(nodes)
            nodes.append(_Node(name, -1, MISSING, 0, ()))
    edges: list[tuple[int, int]] = []
    for memory, _tags, keys in table:
        source = position_of[memory.path]
        seen: set[int] = set()
        for key in keys or ():
            target = resolved.get(key)
            if target is not None and target != source and target not in seen:
                seen.add(target)
                edges.append((source, target))
    return edges


def _center_position(
    index: MemoryIndex, position_of: Mapping[str, int], query: GraphQuery
) -> int | None:
    if query.center is None:
        return None
    entry = index.lookup(query.center)
    if entry is None or entry.memory.path not in position_of:
        close = index.complete_names(query.center, limit=5)[0]
        raise NotFound(f"No memory named {query.center} to centre the graph on.", close)
    return position_of[entry.memory.path]


def _choose(
    nodes: Sequence[_Node],
    edges: Sequence[tuple[int, int]],
    center: int | None,
    query: GraphQuery,
    folders: Sequence[Folder],
) -> list[int]:
    """The nodes the query selects: the neighbourhood (if a centre is given), then the
    filters; a missing name passes where a selected memory links to it."""
    if center is not None:
        candidates: Iterable[int] = sorted(_within(center, edges, query.depth))
    else:
        candidates = range(len(nodes))
    folder = _folder_position(query.folder, folders)
    needle = query.name.casefold() if query.name else None
    selected: list[int] = []
    for position in candidates:
        node = nodes[position]
        if node.flags & MISSING:
            continue
        if position != center and (
            (folder is not None and node.folder != folder)
            or (query.tag is not None and query.tag not in node.tags)
            or (needle is not None and needle not in node.name.casefold())
        ):
            continue
        selected.append(position)
    kept = set(selected)
    allowed = set(candidates) if center is not None else None
    missing = {
        t
        for s, t in edges
        if s in kept and nodes[t].flags & MISSING and (allowed is None or t in allowed)
    }
    return selected + sorted(missing)


def _folder_position(wanted: str | None, folders: Sequence[Folder]) -> int | None:
    if wanted is None:
        return None
    for position, folder in enumerate(folders):
        if wanted in (folder.path, folder.label):
            return position
    labels = ", ".join(folder.label for folder in folders)
    raise InvalidArguments(f"memory.graph: no folder {wanted} (folders: {labels}).")


def _within(center: int, edges: Sequence[tuple[int, int]], depth: int) -> set[int]:
    """The nodes at most `depth` links from `center`, following links both ways."""
    around: dict[int, list[int]] = {}
    for s, t in edges:
        around.setdefault(s, []).append(t)
        around.setdefault(t, []).append(s)
    reached = {center}
    frontier = [center]
    for _ in range(depth):
        frontier = [n for p in frontier for n in around.get(p, ()) if n not in reached]
        reached.update(frontier)
        if not frontier:
            break
    return reached


def _most_linked(
    chosen: Sequence[int], nodes: Sequence[_Node], limit: int, center: int | None
) -> list[int]:
    """At most `limit` of the chosen nodes, the most linked first kept (the centre always),
    in their original order."""
    if len(chosen) <= limit:
        return list(chosen)
    keep = heapq.nsmallest(
        limit,
        chosen,
        key=lambda p: (p != center, -(nodes[p].links_in + nodes[p].links_out), p),
    )
    return sorted(keep)


def _row(node: _Node, tag_at: Mapping[str, int]) -> list[Any]:
    return [
        node.name,
        node.folder,
        node.links_in,
        node.links_out,
        node.flags,
        node.problems,
        [tag_at[tag] for tag in node.tags],
    ]


def store_graph(store: Store, query: GraphQuery = GraphQuery()) -> dict[str, Any]:
    """The graph of a store with nothing indexed yet (the CLI): every file read once, and
    the problems `memory-ls check` reports."""
    from memory_ls.core.diagnostics import check_store

    index = MemoryIndex(store.config)
    index.scan()
    index.warm()
    problems: dict[str, list[str]] = {}
    for diagnostic in check_store(store):
        problems.setdefault(diagnostic.path, []).append(diagnostic.code)
    return memory_graph(index, problems, query)


def graph_summary(payload: Mapping[str, Any]) -> str:
    """A graph payload in words: counts of memories, links, broken links and the flags."""
    flags = [row[4] for row in payload["nodes"]]
    memories = sum(1 for flag in flags if not flag & MISSING)
    missing = len(flags) - memories
    edges = len(payload["edges"]) // 2
    counted = [
        f"{sum(1 for flag in flags if flag & bit)} {word}"
        for word, bit in (
            ("orphaned", ORPHAN),
            ("read-only", READ_ONLY),
            ("shadowed", SHADOWED),
            ("stale", STALE),
        )
    ]
    line = f"{memories} memories, {edges} links ({missing} missing names), " + ", ".join(counted)
    total = payload["total"]
    if payload["truncated"]:
        line += f"; the {len(flags)} most linked of {total['nodes']} nodes shown (--limit)"
    return line
