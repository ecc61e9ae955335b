"""One memory's links both ways, for a links view: who links to it (every line that does)
and what it links to (every reference, resolved or broken).

Backlinks come from the link index (core/services/backlinks.py): only the files it names, and those
not indexed yet, are read again, so the answer is what is on disk (or in the editor).

Other agents' files (core/operations/agent_navigation.py) have links too: a CLAUDE.md's
`@path` imports and MEMORY.md's links to its topic files (`file_links_in`, "imported by" /
"indexed by" the other way: `file_links_to`), and the `[[name]]` references written in
them, which count among a memory's backlinks (`agent_backlinks`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from memory_ls.core.operations.agent_files import KnownAgentFiles, Pointer, Reader
from memory_ls.core.operations.agent_navigation import imports_in, is_index, pointers_to
from memory_ls.core.operations.navigation import (
    LargeFileReferences,
    points_to,
    texts_with_references,
)
from memory_ls.core.rules.agent_syntax import Span, find_imports, index_links, looks_like_path
from memory_ls.core.rules.references import Reference, find_references
from memory_ls.core.services.agent_checks import import_target
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
    kind: str = "reference"  # "reference", or an agent's file's "import" or "index" link


@dataclass(frozen=True)
class FileLink:
    """An import or a MEMORY.md link written in an agent's file, and the file it names."""

    pointer: Pointer
    where: LinkLine


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


def file_links_in(known: KnownAgentFiles, path: str, text: str, read: Reader) -> list[FileLink]:
    """The `@path` imports (in a CLAUDE.md or a file one imports) and MEMORY.md's links
    written in a text, in order; none in other files."""
    lines = text.split("\n")
    found: list[FileLink] = []
    if is_index(known, path) and "](" in text:
        folder = os.path.dirname(path)
        for span in index_links(text):
            target = os.path.normpath(os.path.join(folder, span.written))
            found.append(FileLink(Pointer(path, span, target, "index"), _span_line(lines, span)))
    if "@" in text and imports_in(known, path, read):
        home = known.repository.home
        for span in find_imports(text):
            target = import_target(span.written, path, home)
            if not looks_like_path(span.written) and not os.path.exists(target):
                continue  # `@alice`: a mention, not a lost import
            pointer = Pointer(path, span, target, "import")
            found.append(FileLink(pointer, _span_line(lines, span)))
    found.sort(key=lambda link: (link.where.line, link.where.start))
    return found


def _span_line(lines: list[str], span: Span) -> LinkLine:
    text = lines[span.line] if 0 <= span.line < len(lines) else ""
    return LinkLine(span.line, span.start, span.end, text)


def file_links_to(known: KnownAgentFiles, path: str, read: Reader) -> list[Backlink]:
    """The agents' files that import this file or index it (MEMORY.md), by path."""
    by_source: dict[tuple[str, str], list[LinkLine]] = {}
    for pointer in pointers_to(known, path, read):
        lines = (read(pointer.source) or "").split("\n")
        by_source.setdefault((pointer.source, pointer.kind), []).append(
            _span_line(lines, pointer.span)
        )
    return [
        Backlink(source, None, tuple(found), kind)
        for (source, kind), found in sorted(by_source.items())
    ]


def agent_backlinks(
    index: MemoryIndex,
    known: KnownAgentFiles,
    memory: MemoryFile,
    read: Reader,
    known_sources: Iterable[str] = (),
) -> list[Backlink]:
    """The agents' files (and the files CLAUDE.md imports) whose `[[references]]` resolve
    to `memory`, but for `known_sources` (found otherwise: memories, open documents)."""
    entry = index.lookup(memory.qualified)
    matches = points_to(memory, entry.memory if entry is not None else None)
    needle = memory.name
    skip = set(known_sources)
    found: list[Backlink] = []
    for path in sorted({*known.by_path, *known.imported} - skip):
        text = read(path)
        if text is None or needle not in text:
            continue
        refs = [ref for ref in find_references(text, needle) if matches(ref)]
        if refs:
            lines = text.split("\n")
            found.append(
                Backlink(path, index.memory_for(path), tuple(_line_of(lines, r) for r in refs))
            )
    return found
