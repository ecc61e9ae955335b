"""The memory graph: memories as nodes, their links as edges, from the indexes alone.

Built from what the name index and the link index already hold (each file's tags and
link keys, the shadowing, the folders) and the on-disk problem codes the caller passes
(path -> codes): nothing is read on the request path. Nodes are every indexed file
(shadowed ones too, flagged), plus one node per name that links point to but no memory
has (flagged MISSING): broken links are edges to those. Supersede relations and Serena's
bare `mem:` mentions are no edges (only `[[x]]`, `[[x|label]]` and `` `mem:x` ``).

Other agents' files (core/operations/graph_agents.py, given as an `AgentPart`) are nodes
too, flagged AGENT, each in a "folder" of its agent's own, after the memory folders
(`kind` "agent"): CLAUDE.md and the files it imports, AGENTS.md, rules, MEMORY.md and its
topic files...; their edges are imports, index links and their `[[references]]`. A file
that is a memory (Claude Code's topic files in a "claude" store) stays one node, the
memory's.

Large stores stay responsive by sending at most `limit` nodes: the most linked first
(`truncated` and `total` say what was left out), and by the neighbourhood mode (a
centre memory and the memories within `depth` links of it, either direction).

The payload is arrays rather than objects (see `NODE_FIELDS`), edges a flat list of node
positions: at 10,000 memories about 40 bytes a node.
"""

from __future__ import annotations

import threading
from array import array
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memory_ls.core.operations.graph_agents import AgentPart
from memory_ls.core.rules.errors import InvalidArguments, NotFound
from memory_ls.core.rules.supersede import SUPERSEDED_BY_KEY, SUPERSEDES_KEY
from memory_ls.core.services.backlinks import SERENA_MARK
from memory_ls.core.services.index import MemoryIndex
from memory_ls.core.storage.folders import Folder
from memory_ls.core.storage.memory import MemoryFile
from memory_ls.core.store import Store

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
AGENT = 128  # another agent's file (CLAUDE.md, AGENTS.md, MEMORY.md...) or one it imports
FLAG_NAMES = {
    "readOnly": READ_ONLY,
    "shadowed": SHADOWED,
    "orphan": ORPHAN,
    "stale": STALE,
    "missing": MISSING,
    "invalidName": INVALID_NAME,
    "unread": UNREAD,
    "agent": AGENT,
}
# The `kind` of an agent's "folder" in the payload.
AGENT_FOLDER = "agent"
DEFAULT_LIMIT = 2000
MAX_DEPTH = 10
# Link keys that are not references: Serena's mentions and supersede relations.
_NOT_REFERENCES = (SERENA_MARK, SUPERSEDES_KEY, SUPERSEDED_BY_KEY)


@dataclass(frozen=True)
class GraphQuery:
    """Which part of the graph to send."""

    folder: str | None = None  # a folder's path or its label (directory name; an agent's layout)
    tag: str | None = None
    name: str | None = None  # a substring of the name, any case
    center: str | None = None  # a memory's name (`global/x` for a global one) or an agent node's
    depth: int = 1
    limit: int = DEFAULT_LIMIT


@dataclass(slots=True)
class _Node:
    name: str
    folder: int  # position in the folder list; -1 for a missing name
    flags: int
    path: str | None  # None for a missing name
    tags: tuple[str, ...]
    links_in: int = 0
    links_out: int = 0


@dataclass
class _Whole:
    """The whole graph of one state of an index: built once, then filtered per request."""

    key: tuple[object, ...]
    folders: list[Folder]
    # The agents' "folders" after the memory folders (payload objects), one per layout.
    agent_folders: list[dict[str, Any]]
    nodes: list[_Node]
    # Each link's source and target node, side by side (arrays: 8 bytes a link, not 64).
    sources: array[int]
    targets: array[int]
    position_of: dict[str, int]  # path -> node
    agent_names: dict[str, int]  # an agent node's name -> node
    pending: int
    # Missing name's node -> the nodes that link to it.
    missing: dict[int, list[int]]
    # Node -> the nodes it links to or from, made on the first neighbourhood request.
    around: dict[int, list[int]] | None = None
    # Every node, the most linked first, made on the first request that needs a limit.
    by_links: list[int] | None = None

    def pairs(self) -> Iterator[tuple[int, int]]:
        """Each link as (source, target)."""
        return zip(self.sources, self.targets, strict=True)


class GraphCache:
    """The last whole graph built, reused while the index is unchanged (a server keeps
    one: at 100,000 memories a build takes about a second). Problems are not part of it:
    they are looked up per node sent."""

    def __init__(self) -> None:
        self._whole: _Whole | None = None
        self._lock = threading.Lock()

    def whole(self, index: MemoryIndex, agents: AgentPart | None = None) -> _Whole:
        """The whole graph for the index as it is now (and the agents' part given)."""
        key = (
            id(index),
            index.config,
            index.generation,
            index.facts_generation,
            agents.serial if agents is not None else None,
        )
        with self._lock:
            known = self._whole
            if known is not None and known.key == key:
                return known
        whole = _build(index, key, agents)
        with self._lock:
            self._whole = whole
        return whole


def memory_graph(
    index: MemoryIndex,
    problems: Mapping[str, Sequence[str]],
    query: GraphQuery = GraphQuery(),
    cache: GraphCache | None = None,
    agents: AgentPart | None = None,
) -> dict[str, Any]:
    """The graph payload (docs/guides/language-server.md, "memory.graph") for an index
    (and the agents' files, when given); `problems` maps a file's path to the codes of its
    on-disk diagnostics."""
    if query.limit < 1:
        raise InvalidArguments("memory.graph: limit must be at least 1.")
    if not 0 <= query.depth <= MAX_DEPTH:
        raise InvalidArguments(f"memory.graph: depth must be from 0 to {MAX_DEPTH}.")
    whole = (cache or GraphCache()).whole(index, agents)
    folders, nodes = whole.folders, whole.nodes
    center = _center_position(index, whole, query)
    chosen = _choose(whole, center, query)
    total_nodes = len(chosen)
    shown = _most_linked(whole, chosen, query.limit, center)
    renumber = {old: new for new, old in enumerate(shown)}
    shown_edges = [
        (renumber[s], renumber[t]) for s, t in whole.pairs() if s in renumber and t in renumber
    ]
    if len(chosen) == len(nodes):
        total_edges = len(whole.sources)
    else:
        chosen_set = set(chosen)
        total_edges = sum(1 for s, t in whole.pairs() if s in chosen_set and t in chosen_set)
    pending = whole.pending
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
        ]
        + whole.agent_folders,
        "tags": tag_names,
        "nodes": [_row(nodes[position], tag_at, problems) for position in shown],
        "edges": [end for edge in shown_edges for end in edge],
        "center": renumber.get(center) if center is not None else None,
        "total": {"nodes": total_nodes, "edges": total_edges},
        "truncated": len(shown) < total_nodes,
        "pending": pending,
        "generation": index.generation,
    }


def _build(index: MemoryIndex, key: tuple[object, ...], agents: AgentPart | None) -> _Whole:
    """Every file as a node, every resolved link as an edge, broken ones to missing names;
    the agents' files after the memories."""
    folders = list(index.config.folders)
    folder_at = {folder.path: position for position, folder in enumerate(folders)}
    table = sorted(
        index.link_table(), key=lambda row: (folder_at.get(row[0].folder.path, 0), row[0].name)
    )
    shadowed = index.shadowed_by()
    nodes: list[_Node] = []
    position_of: dict[str, int] = {}
    for memory, tags, keys in table:
        position_of[memory.path] = len(nodes)
        nodes.append(_node(memory, tags, keys, shadowed, folder_at))
    named: list[tuple[int, Sequence[str] | None]] = [
        (position_of[memory.path], keys) for memory, _tags, keys in table
    ]
    agent_folders: list[dict[str, Any]] = []
    agent_names: dict[str, int] = {}
    file_edges: list[tuple[int, int]] = []
    if agents is not None:
        agent_folders = _add_agents(agents, len(folders), nodes, position_of, agent_names, named)
        file_edges = [
            (position_of[source], position_of[target])
            for source, target in agents.file_edges
            if source in position_of and target in position_of
        ]
    edges = _edges(index, named, nodes, file_edges)
    for source, target in edges:
        nodes[source].links_out += 1
        nodes[target].links_in += 1
    for node in nodes:
        if node.links_in == 0 and node.links_out == 0 and not node.flags & MISSING:
            node.flags |= ORPHAN
    pending = sum(1 for _m, _t, keys in table if keys is None)
    missing: dict[int, list[int]] = {}
    for source, target in edges:
        if nodes[target].flags & MISSING:
            missing.setdefault(target, []).append(source)
    sources = array("i", (source for source, _ in edges))
    targets = array("i", (target for _, target in edges))
    return _Whole(
        key,
        folders,
        agent_folders,
        nodes,
        sources,
        targets,
        position_of,
        agent_names,
        pending,
        missing,
    )


def _add_agents(
    agents: AgentPart,
    first_folder: int,
    nodes: list[_Node],
    position_of: dict[str, int],
    agent_names: dict[str, int],
    named: list[tuple[int, Sequence[str] | None]],
) -> list[dict[str, Any]]:
    """The agents' files as nodes (a file that is a memory keeps its memory's node, and
    its links as the link index has them), their references among `named`; the agents'
    "folders" of the payload."""
    folder_of = {layout: first_folder + at for at, layout in enumerate(agents.layouts)}
    for node in agents.nodes:
        if node.path in position_of:
            continue
        position = position_of[node.path] = len(nodes)
        agent_names[node.name] = position
        nodes.append(_Node(node.name, folder_of[node.layout], AGENT, node.path, ()))
    memories = len(nodes) - len(agent_names)
    named.extend(
        (position_of[path], names)
        for path, names in agents.name_edges
        if position_of.get(path, -1) >= memories
    )
    return [
        {
            "path": agents.root,
            "label": layout,
            "scope": AGENT_FOLDER,
            "kind": AGENT_FOLDER,
            "readOnly": False,
            "agent": agents.agent(layout),
            "home": agents.home,
        }
        for layout in agents.layouts
    ]


def _node(
    memory: MemoryFile,
    tags: tuple[str, ...],
    keys: tuple[str, ...] | None,
    shadowed: Collection[str],
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
    return _Node(memory.qualified, folder_at.get(memory.folder.path, 0), flags, memory.path, tags)


def _edges(
    index: MemoryIndex,
    named: Sequence[tuple[int, Sequence[str] | None]],
    nodes: list[_Node],
    file_edges: Sequence[tuple[int, int]] = (),
) -> list[tuple[int, int]]:
    """Each node's distinct links (self-links left out): the names it links to resolved,
    a target no memory has a MISSING node (appended to `nodes`), and `file_edges` (an
    agent's file to a file it imports or indexes)."""
    memory_nodes = dict(_memory_paths(nodes))
    targets: dict[str, None] = {}
    for _source, keys in named:
        for key in keys or ():
            if key and not key.startswith(_NOT_REFERENCES):
                targets[key] = None
    names = list(targets)
    resolved: dict[str, int] = {}
    for name, found in zip(names, index.winners(names), strict=True):
        if found is not None and found[0].path in memory_nodes:
            resolved[name] = memory_nodes[found[0].path]
        else:
            resolved[name] = len(nodes)
            nodes.append(_Node(name, -1, MISSING, None, ()))
    edges: list[tuple[int, int]] = []
    seen: dict[int, set[int]] = {}
    for source, target in file_edges:
        if target != source and target not in seen.setdefault(source, set()):
            seen[source].add(target)
            edges.append((source, target))
    for source, keys in named:
        linked = seen.setdefault(source, set())
        for key in keys or ():
            named_target = resolved.get(key)
            if named_target is not None and named_target != source and named_target not in linked:
                linked.add(named_target)
                edges.append((source, named_target))
    return edges


def _memory_paths(nodes: Sequence[_Node]) -> Iterator[tuple[str, int]]:
    """The memories' files (no agent's file, no missing name) and their nodes."""
    for position, node in enumerate(nodes):
        if node.path is not None and not node.flags & AGENT:
            yield node.path, position


def _center_position(index: MemoryIndex, whole: _Whole, query: GraphQuery) -> int | None:
    if query.center is None:
        return None
    position_of = whole.position_of
    entry = index.lookup(query.center)
    if entry is None and query.center in whole.agent_names:
        return whole.agent_names[query.center]
    if entry is None or entry.memory.path not in position_of:
        close = index.complete_names(query.center, limit=5)[0]
        raise NotFound(f"No memory named {query.center} to centre the graph on.", close)
    return position_of[entry.memory.path]


def _choose(whole: _Whole, center: int | None, query: GraphQuery) -> list[int]:
    """The nodes the query selects: the neighbourhood (if a centre is given), then the
    filters; a missing name passes where a selected memory links to it."""
    nodes = whole.nodes
    if center is not None:
        if whole.around is None:
            whole.around = _adjacency(whole.pairs())
        candidates: Iterable[int] = sorted(_within(center, whole.around, query.depth))
    else:
        candidates = range(len(nodes))
    folder = _folder_position(query.folder, whole.folders, whole.agent_folders)
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
    if len(selected) + len(whole.missing) == len(nodes):
        return selected + sorted(whole.missing)  # everything
    kept = set(selected)
    allowed = set(candidates) if center is not None else None
    missing = [
        target
        for target, sources in whole.missing.items()
        if (allowed is None or target in allowed) and any(s in kept for s in sources)
    ]
    return selected + sorted(missing)


def _folder_position(
    wanted: str | None, folders: Sequence[Folder], agent_folders: Sequence[Mapping[str, Any]]
) -> int | None:
    if wanted is None:
        return None
    for position, folder in enumerate(folders):
        if wanted in (folder.path, folder.label):
            return position
    for position, agent in enumerate(agent_folders, start=len(folders)):
        if wanted == agent["label"]:
            return position
    labels = ", ".join([folder.label for folder in folders] + [a["label"] for a in agent_folders])
    raise InvalidArguments(f"memory.graph: no folder {wanted} (folders: {labels}).")


def _adjacency(edges: Iterable[tuple[int, int]]) -> dict[int, list[int]]:
    """Node -> the nodes it links to or from."""
    around: dict[int, list[int]] = {}
    for s, t in edges:
        around.setdefault(s, []).append(t)
        around.setdefault(t, []).append(s)
    return around


def _within(center: int, around: Mapping[int, list[int]], depth: int) -> set[int]:
    """The nodes at most `depth` links from `center`, following links both ways."""
    reached = {center}
    frontier = [center]
    for _ in range(depth):
        frontier = [n for p in frontier for n in around.get(p, ()) if n not in reached]
        reached.update(frontier)
        if not frontier:
            break
    return reached


def _most_linked(whole: _Whole, chosen: Sequence[int], limit: int, center: int | None) -> list[int]:
    """At most `limit` of the chosen nodes, the most linked first kept (the centre always),
    in their original order."""
    if len(chosen) <= limit:
        return list(chosen)
    if whole.by_links is None:
        nodes = whole.nodes
        whole.by_links = sorted(
            range(len(nodes)), key=lambda p: (-(nodes[p].links_in + nodes[p].links_out), p)
        )
    everything = len(chosen) == len(whole.nodes)
    wanted = None if everything else set(chosen)
    keep = [center] if center is not None else []
    for position in whole.by_links:
        if len(keep) >= limit:
            break
        if position != center and (wanted is None or position in wanted):
            keep.append(position)
    return sorted(keep)


def _row(
    node: _Node, tag_at: Mapping[str, int], problems: Mapping[str, Sequence[str]]
) -> list[Any]:
    codes = problems.get(node.path, ()) if node.path is not None else ()
    flags = node.flags | STALE if "stale-path" in codes else node.flags
    return [
        node.name,
        node.folder,
        node.links_in,
        node.links_out,
        flags,
        len(codes),
        [tag_at[tag] for tag in node.tags],
    ]


def store_graph(
    store: Store, query: GraphQuery = GraphQuery(), environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The graph of a store with nothing indexed yet (the CLI): every file read once, the
    agents' files listed and read, and the problems `memory-ls check` reports."""
    from memory_ls.core.operations.agent_files import load_agent_files
    from memory_ls.core.operations.check import check_store
    from memory_ls.core.operations.graph_agents import AgentGraphCache

    index = MemoryIndex(store.config)
    index.scan()
    index.warm()
    problems: dict[str, list[str]] = {}
    for diagnostic in check_store(store):
        problems.setdefault(diagnostic.path, []).append(diagnostic.code)
    known = load_agent_files(store.config.root, environ)
    agents = AgentGraphCache().part(known)
    return memory_graph(index, problems, query, agents=agents)


def graph_summary(payload: Mapping[str, Any]) -> str:
    """A graph payload in words: counts of memories, links, broken links and the flags."""
    flags = [row[4] for row in payload["nodes"]]
    agents = sum(1 for flag in flags if flag & AGENT)
    memories = sum(1 for flag in flags if not flag & (MISSING | AGENT))
    missing = len(flags) - memories - agents
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
    if agents:
        line += f"; {agents} agents' files"
    total = payload["total"]
    if payload["truncated"]:
        line += f"; the {len(flags)} most linked of {total['nodes']} nodes shown (--limit)"
    return line
