"""What a reader of one memory should know of the others: what supersedes it, and the
memories one link away (its links and its backlinks), so an agent can follow a trail
without guessing names.

Both need other memories' files. Candidates come from the store's link index (the
language server's, or the full-text index's `reference_sources`); every candidate is read
and parsed to confirm it, so a stale or over-wide index costs a read, never a wrong
answer. Without an index every memory is read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from memory_ls.core.rules.document import parse_document
from memory_ls.core.rules.errors import MemoryStoreError
from memory_ls.core.rules.names import split_qualified
from memory_ls.core.rules.references import find_references
from memory_ls.core.rules.supersede import (
    KEY_WORD,
    SUPERSEDES_KEY,
    Declaration,
    Successor,
    SupersedeGraph,
    declaration_of_text,
)
from memory_ls.core.rules.titles import title_of as listing_title
from memory_ls.core.services.search import SearchIndex
from memory_ls.core.storage.folders import StoreConfig
from memory_ls.core.storage.fsio import read_bytes, utf8_or_none
from memory_ls.core.storage.memory import LISTING_READ_LIMIT, MemoryFile, Resolved

# Links and backlinks listed at most (the rest are counted).
RELATED_LIMIT = 20
TITLE_MAX_CHARS = 100
LINE_MAX_CHARS = 160
# A title is the first heading among this many lines of the body, else its first line.
TITLE_LINES = 20


class Memories(Protocol):
    """What a reader's trail needs of the store (the `Store` is one): its configuration,
    lookup in a scope, the resolved listing and the link indexes it was given."""

    @property
    def config(self) -> StoreConfig:
        """The store's configuration."""
        ...

    @property
    def search_index(self) -> SearchIndex | None:
        """The full-text index, when the store has one."""
        ...

    @property
    def reference_sources(self) -> Callable[[Sequence[str]], list[str] | None] | None:
        """The paths that may hold links with the given keys (None: unknown)."""
        ...

    def locate_all(self, name: str, scope: str | None) -> list[MemoryFile]:
        """Every file a name resolves to in a scope, the winner first."""
        ...

    def resolve(self, scope: str | None = None) -> list[Resolved]:
        """Memories as lookup sees them."""
        ...


def locate(store: Memories, qualified: str) -> MemoryFile | None:
    """The memory a qualified name resolves to (in its own scope, as links resolve)."""
    name, is_global = split_qualified(qualified)
    try:
        hits = store.locate_all(name, "global" if is_global else "project")
    except (MemoryStoreError, OSError, ValueError):
        return None
    return hits[0] if hits else None


def _read_text(store: Memories, path: str) -> str | None:
    """A memory file's UTF-8 text; None when unreadable, not UTF-8 or far too large."""
    try:
        if os.path.getsize(path) > LISTING_READ_LIMIT * store.config.max_memory_bytes:
            return None
        return utf8_or_none(read_bytes(path))
    except OSError:
        return None


def _candidates(
    store: Memories, keys: Sequence[str], memory: MemoryFile | None, *, hint: bool = False
) -> list[str]:
    """The paths of the memory files that may hold any of the link keys, `memory`'s (if
    given) left out: as the store's index names them, else (unless for a `hint` given with
    every read, which never reads the whole store) every memory's."""
    index = store.search_index
    if index is not None and not index.live:
        # Outside the language server: the index as this process last synced it (a read
        # is not worth a walk of the store; a rename is, and syncs).
        sources = index.reference_sources(keys, fresh=False)
    else:
        sources = store.reference_sources(keys) if store.reference_sources is not None else None
    if sources is None:
        if hint:
            return []
        sources = [item.memory.path for item in store.resolve() if item.memory.valid]
    return [path for path in dict.fromkeys(sources) if memory is None or path != memory.path]


def _resolved(store: Memories, path: str) -> MemoryFile | None:
    """The memory at a path when it is what its name resolves to (not a file another of
    the same name hides, nor a file that is no memory)."""
    owned = store.config.name_of(path)
    if owned is None:
        return None
    candidate = MemoryFile(owned[1], path, owned[0])
    if not candidate.valid:
        return None
    found = locate(store, candidate.qualified)
    return candidate if found is not None and found.path == path else None


def successors(store: Memories, memory: MemoryFile, text: str) -> list[Successor]:
    """The existing memories that supersede `memory` (its text: `text`), as its own
    frontmatter (`superseded_by`) or theirs (`supersedes`) says."""
    return declared_successors(store, memory, declaration_of_text(memory.qualified, text))


def declared_successors(
    store: Memories, memory: MemoryFile, own: Declaration | None
) -> list[Successor]:
    """`successors` of a memory whose own declaration (None: it declares nothing) is known."""
    return successors_of_many(store, [(memory, own)])[memory.qualified]


def successors_of_many(
    store: Memories, memories: Sequence[tuple[MemoryFile, Declaration | None]]
) -> dict[str, list[Successor]]:
    """`declared_successors` of each memory (a listing's page), by qualified name: the
    index asked once for the memories that may claim to supersede any of them."""
    names = {memory.qualified for memory, _own in memories}
    claims: dict[str, list[Declaration]] = {}
    if memories:
        keys = [SUPERSEDES_KEY + name for name in sorted(names)]
        for path in _candidates(store, keys, None, hint=True):
            other = _read_text(store, path)
            if other is None or KEY_WORD not in other:
                continue
            candidate = _resolved(store, path)
            found = declaration_of_text(candidate.qualified, other) if candidate else None
            if found is None:
                continue
            for older in found.relations.supersedes:
                # A memory's own file speaks through `own` (an editor's text, maybe newer).
                if older in names and older != found.name:
                    claims.setdefault(older, []).append(found)

    def exists(target: str) -> bool:
        return locate(store, target) is not None

    answer: dict[str, list[Successor]] = {}
    for memory, own in memories:
        name = memory.qualified
        declared = [*([] if own is None else [own]), *claims.get(name, ())]
        answer[name] = SupersedeGraph(declared, exists).successors(name, own)
    return answer


def supersede_note(name: str, found: Sequence[Successor]) -> str:
    """The line a reader of a superseded memory sees first."""
    newer = " and ".join(s.name for s in found)
    said = "; ".join(s.said_by(name) for s in found)
    which = "that one" if len(found) == 1 else "those"
    return (
        f"Note: this memory ({name}) is superseded by {newer} ({said}); read {which} for "
        "the current facts. What follows is kept for its history."
    )


def title_of(text: str) -> str:
    """A memory file's title, as a listing gives it."""
    return listing_title(parse_document(text).body) or ""


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def related_memories(
    store: Memories, memory: MemoryFile, text: str, limit: int = RELATED_LIMIT
) -> dict[str, Any]:
    """The memories one link away: what `memory` links to (names, titles, broken ones
    marked) and what links to it (with the linking line), at most `limit` of each."""
    name = memory.qualified
    links: list[dict[str, Any]] = []
    targets = list(dict.fromkeys(ref.target for ref in find_references(text)))
    for target in targets[:limit]:
        found = locate(store, target)
        if found is None:
            links.append({"name": target, "broken": True})
            continue
        linked = _read_text(store, found.path)
        links.append(
            {
                "name": target,
                "title": title_of(linked) if linked is not None else "",
                "broken": False,
            }
        )
    backlinks: list[dict[str, Any]] = []
    total = 0
    # The name written whole, not as the start of a longer one (`note_6` in `note_60`):
    # the index's candidates for a short name hold many longer ones.
    written = re.compile(re.escape(memory.name) + "(?![A-Za-z0-9_-])")
    for path in _candidates(store, [name], memory):
        other = _read_text(store, path)
        if other is None or written.search(other) is None:
            continue
        refs = find_references(other, memory.name)
        ref = next((r for r in refs if r.target == name), None)
        candidate = _resolved(store, path) if ref is not None else None
        if ref is None or candidate is None:
            continue
        total += 1
        if len(backlinks) < limit:
            line = other.split("\n")[ref.line].strip()
            backlinks.append(
                {
                    "name": candidate.qualified,
                    "line": ref.line + 1,
                    "text": _cut(line, LINE_MAX_CHARS),
                }
            )
    backlinks.sort(key=lambda row: str(row["name"]))
    return {
        "links": links,
        "moreLinks": max(0, len(targets) - limit),
        "backlinks": backlinks,
        "moreBacklinks": total - len(backlinks),
    }


def related_text(name: str, related: dict[str, Any]) -> str:
    """The related memories as a reader sees them."""
    lines = [f"Related memories of {name} (one link away; read any of them by name):"]
    links = related["links"]
    lines.append(f"Links from {name}:" if links else f"Links from {name}: none.")
    for link in links:
        if link["broken"]:
            lines.append(f"- {link['name']} (broken: no memory has this name)")
        else:
            lines.append(f"- {link['name']}" + (f" — {link['title']}" if link["title"] else ""))
    if related["moreLinks"]:
        lines.append(f"- ... and {related['moreLinks']} more")
    backlinks = related["backlinks"]
    lines.append(
        f"Backlinks (memories that link to {name}):"
        if backlinks
        else f"Backlinks: no memory links to {name}."
    )
    for backlink in backlinks:
        lines.append(f"- {backlink['name']}, line {backlink['line']}: {backlink['text']}")
    if related["moreBacklinks"]:
        lines.append(f"- ... and {related['moreBacklinks']} more")
    return "\n".join(lines)
