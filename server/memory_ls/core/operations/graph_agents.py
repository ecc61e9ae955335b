"""Other agents' files in the memory graph: which of them are nodes, and what they link to.

The agents' files as last listed (`KnownAgentFiles`: CLAUDE.md, AGENTS.md, rules, Claude
Code's auto memory...) and the files CLAUDE.md files import are nodes; their edges are
Claude Code's `@path` imports (to files that exist), MEMORY.md's links to its topic files
(that exist), and the `[[name]]` / `` `mem:name` `` references written in them (resolved
by the graph against the memory index, broken ones to missing names). The part is built
from a few files read through `AgentTexts` (their texts kept while their modification time
and size stay the same) and reused while none of them changes (`AgentGraphCache`), so a
graph request costs a few `stat` calls for it.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from memory_ls.core.layouts import AGENT_LAYOUTS
from memory_ls.core.layouts import claude as claude_layout
from memory_ls.core.operations.agent_files import (
    MAX_READ_BYTES,
    KnownAgentFiles,
    Reader,
    import_pointers,
    index_pointers,
)
from memory_ls.core.operations.agent_navigation import shown
from memory_ls.core.rules.references import find_references
from memory_ls.core.services.agent_checks import reader

# The kind of a file that no agent lists but a CLAUDE.md imports (directly or not).
IMPORTED = "imported"

Stamp = tuple[int, int] | None  # (modification time in ns, size); None: no such file

_SERIALS = itertools.count(1)


def stamp(path: str) -> Stamp:
    """What tells a file's version apart cheaply: its modification time and size."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (status.st_mtime_ns, status.st_size)


class AgentTexts:
    """Files' texts kept while their modification time and size stay the same."""

    def __init__(self, max_bytes: int = MAX_READ_BYTES) -> None:
        self._read = reader(max_bytes)
        self._texts: dict[str, tuple[Stamp, str | None]] = {}
        self._lock = threading.Lock()

    def read(self, path: str) -> str | None:
        """A file's text as on disk now (None: missing, unreadable or too large)."""
        now = stamp(path)
        with self._lock:
            known = self._texts.get(path)
        if known is not None and known[0] == now and now is not None:
            return known[1]
        text = self._read(path) if now is not None else None
        with self._lock:
            self._texts[path] = (now, text)
        return text

    def forget_except(self, paths: Iterable[str]) -> None:
        """Drop the texts of files no longer asked for."""
        keep = set(paths)
        with self._lock:
            for path in [p for p in self._texts if p not in keep]:
                del self._texts[path]


@dataclass(frozen=True)
class AgentNode:
    """An agent's file (or a file a CLAUDE.md imports) as a graph node."""

    path: str
    name: str  # relative to the root, `~/...` under the home, else absolute
    layout: str  # the layout that knows it ("claude" for imported files)
    kind: str  # the agent file's kind, or IMPORTED
    scope: str  # "project" or "user"


@dataclass(frozen=True)
class AgentPart:
    """The agents' files' nodes and edges, by path; reference names still to resolve."""

    serial: int  # tells one build from another (graph caches are keyed by it)
    root: str
    home: str
    nodes: tuple[AgentNode, ...]
    layouts: tuple[str, ...]  # the layouts the nodes belong to, in the registry's order
    # (source, target): imports and index links between existing files.
    file_edges: tuple[tuple[str, str], ...]
    # (source, reference names as written, `global/` kept): for each file's references.
    name_edges: tuple[tuple[str, tuple[str, ...]], ...]
    stamps: Mapping[str, Stamp]  # every file read or looked at, as it was

    def agent(self, layout: str) -> str:
        """The agent's name of a layout, for people."""
        found = AGENT_LAYOUTS.get(layout)
        return found.agent if found is not None else layout


def build_agent_part(known: KnownAgentFiles, read: Reader) -> AgentPart:
    """The agents' files as nodes and edges (every file's references: the graph leaves
    out those of files that are memories, whose links the link index has)."""
    repository = known.repository
    root, home = repository.root, repository.home
    looked: dict[str, Stamp] = {}

    def reading(path: str) -> str | None:
        looked[path] = stamp(path)
        return read(path)

    def is_file(path: str) -> bool:
        found = stamp(path)
        looked[path] = found
        return found is not None and os.path.isfile(path)

    nodes: dict[str, AgentNode] = {}
    for agent_file in known.files:
        nodes[agent_file.path] = AgentNode(
            agent_file.path,
            shown(agent_file.path, root, home),
            agent_file.layout,
            agent_file.kind,
            agent_file.scope,
        )
    file_edges: dict[tuple[str, str], None] = {}
    for pointer in [*import_pointers(known, reading), *index_pointers(known, reading)]:
        if pointer.source == pointer.target or not is_file(pointer.target):
            continue
        if pointer.target not in nodes:
            nodes[pointer.target] = AgentNode(
                pointer.target,
                shown(pointer.target, root, home),
                claude_layout.NAME,
                IMPORTED,
                "project" if pointer.target.startswith(root.rstrip(os.sep) + os.sep) else "user",
            )
        file_edges[(pointer.source, pointer.target)] = None
    name_edges: list[tuple[str, tuple[str, ...]]] = []
    for path in nodes:
        text = reading(path)
        if text is None or ("[[" not in text and "mem:" not in text):
            continue
        names = tuple(dict.fromkeys(ref.target for ref in find_references(text)))
        if names:
            name_edges.append((path, names))
    present = {node.layout for node in nodes.values()}
    layouts = tuple(name for name in AGENT_LAYOUTS if name in present)
    layouts += tuple(sorted(present - set(layouts)))
    return AgentPart(
        next(_SERIALS),
        root,
        home,
        tuple(nodes.values()),
        layouts,
        tuple(file_edges),
        tuple(name_edges),
        looked,
    )


class AgentGraphCache:
    """The last agents' part built, reused while the listing is the same and none of the
    files it read or looked at has changed (a `stat` each); texts kept by version."""

    def __init__(self) -> None:
        self.texts = AgentTexts()
        self._known: KnownAgentFiles | None = None
        self._part: AgentPart | None = None
        self._lock = threading.Lock()

    def part(self, known: KnownAgentFiles) -> AgentPart:
        """The agents' part for this listing, as the files are now."""
        with self._lock:
            last, last_known = self._part, self._known
        if (
            last is not None
            and last_known is known
            and all(stamp(path) == was for path, was in last.stamps.items())
        ):
            return last
        part = build_agent_part(known, self.texts.read)
        self.texts.forget_except(part.stamps)
        with self._lock:
            self._part, self._known = part, known
        return part
