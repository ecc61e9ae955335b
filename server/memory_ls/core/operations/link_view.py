"""One memory's links both ways, for a links view: who links to it (every line that does)
and what it links to (every reference, resolved or broken).

Backlinks come from the link index (core/services/backlinks.py): only the files it names, and those
not indexed yet, are read again, so the answer is what is on disk (or in the editor).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from memory_ls.core.operations.navigation import (
    LargeFileReferences,
    points_to,
    texts_with_references,
)
from memory_ls.core.rules.references import Reference, find_references
from memory_ls.core.services.index import MemoryIndex
from memory_ls.core.storage.memory import MemoryFile


@dataclass(frozen=True)
class LinkLine:
    """A reference on a line: the referenced name's columns (code points) and the line's text."""

    line: int
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Backlink:
    """A file that links to the memory (None for an open note that is no memory), and where."""

    path: str
    memory: MemoryFile | None
    lines: tuple[LinkLine, ...]


@dataclass(frozen=True)
class OutgoingLink:
    """A reference in the memory, and the memory it resolves to (None: broken)."""

    reference: Reference
    where: LinkLine
    memory: MemoryFile | None


def _line_of(lines: list[str], ref: Reference) -> LinkLine:
    text = lines[ref.line] if 0 <= ref.line < len(lines) else ""
    return LinkLine(ref.line, ref.start, ref.end, text)


def backlinks(
    index: MemoryIndex,
    memory: MemoryFile,
    open_texts: Mapping[str, str] | None = None,
    also: Iterable[str] = (),
    large: LargeFileReferences | None = None,
) -> list[Backlink]:
    """Every file whose references resolve to `memory`, sorted by path: the files the link
    index names (and `also`, paths changed but not indexed yet), the open texts in place
    of their files (blocking: reads the candidates)."""
    texts = dict(open_texts or {})
    entry = index.lookup(memory.qualified)
    matches = points_to(memory, entry.memory if entry is not None else None)
    needle = memory.name
    index.learn_links()
    candidates = dict.fromkeys(index.link_candidates_for(memory.qualified))
    candidates.update(dict.fromkeys(also))
    found: list[Backlink] = []
    for path, text in texts.items():
        if needle not in text:
            continue
        refs = [ref for ref in find_references(text, needle) if matches(ref)]
        if refs:
            found.append(_backlink(index, path, text, refs))
    on_disk = [path for path in candidates if path not in texts]
    for path, text, refs in texts_with_references(on_disk, matches, needle, None, large):
        found.append(_backlink(index, path, text, refs))
    found.sort(key=lambda link: link.path)
    return found


def _backlink(index: MemoryIndex, path: str, text: str, refs: list[Reference]) -> Backlink:
    lines = text.split("\n")
    return Backlink(path, index.memory_for(path), tuple(_line_of(lines, ref) for ref in refs))


def outgoing_links(
    text: str, resolve: Callable[[Reference], MemoryFile | None]
) -> list[OutgoingLink]:
    """Every reference of a Markdown text in order, with what `resolve` makes of it."""
    lines = text.split("\n")
    return [
        OutgoingLink(ref, _line_of(lines, ref), resolve(ref) if ref.valid else None)
        for ref in find_references(text)
    ]


def index_resolver(index: MemoryIndex) -> Callable[[Reference], MemoryFile | None]:
    """Resolution of references by the index's lookup order (SPEC 2.3)."""

    def resolve(ref: Reference) -> MemoryFile | None:
        entry = index.lookup(ref.target)
        return entry.memory if entry is not None else None

    return resolve
