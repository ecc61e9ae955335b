"""Navigation rules as pure functions: the reference under a cursor, headings, references
to a memory, rename plans and edits, and "did you mean" (SPEC 3.4)."""

from __future__ import annotations

import collections
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace

from memory_ls.core.rules.document import split_frontmatter
from memory_ls.core.rules.errors import Exists, ReadOnly
from memory_ls.core.rules.headings import Heading, headings
from memory_ls.core.rules.names import (
    GLOBAL_PREFIX,
    MEM_PREFIX,
    caps_prefixes,
    did_you_mean,
    is_valid_name,
)
from memory_ls.core.rules.references import (
    Reference,
    find_references,
    iter_lines_outside_code,
    references_in_line,
    rename_references,
)
from memory_ls.core.storage.folders import Folder
from memory_ls.core.storage.fsio import read_utf8
from memory_ls.core.storage.memory import MemoryFile, MovePlan
from memory_ls.core.storage.routing import routing_prefixes
from memory_ls.core.store import Store


@dataclass(frozen=True)
class Located:
    """A reference found in a file."""

    path: str
    reference: Reference


def reference_at(text: str, line: int, column: int) -> Reference | None:
    """The reference whose brackets or backticks contain the cursor (code-point column)."""
    raw, body, body_line = split_frontmatter(text)
    if raw is None:
        body, body_line = text, 0
    # Only the cursor's line is parsed; the lines before it only say whether it is code.
    for number, content in iter_lines_outside_code(body, body_line):
        if number < line:
            continue
        if number > line:
            return None  # the cursor's line is in fenced code
        for ref in references_in_line(content, number):
            if ref.full_start <= column <= ref.full_end:
                return ref
        return None
    return None


def references_in_files(
    paths: Iterable[str], matches: Callable[[Reference], bool], needle: str
) -> list[Located]:
    """References for which `matches` holds, in the given files.

    `needle` (the bare name) is a cheap pre-filter: files that do not contain it are
    not parsed.
    """
    return [
        Located(path, ref)
        for path, _text, refs in texts_with_references(paths, matches, needle)
        for ref in refs
    ]


class LargeFileReferences:
    """The references of the large files searched lately, by name, while each file's size
    and modification time stay the same: a long note that links to many memories is not
    read and parsed again for each of them. Bounded by the text it keeps; thread-safe."""

    def __init__(self, min_bytes: int = 64 * 1024, max_chars: int = 4_000_000) -> None:
        self.min_bytes = min_bytes
        self.max_chars = max_chars
        self._lock = threading.Lock()
        # path -> ((mtime_ns, size), text, its lines, references by bare name), least
        # recent first
        self._files: collections.OrderedDict[
            str, tuple[tuple[int, int], str, list[str], dict[str, list[Reference]]]
        ] = collections.OrderedDict()
        self._chars = 0

    def lookup(self, path: str) -> tuple[str, dict[str, list[Reference]]] | None:
        """(text, references by name) of a large file as it is on disk; None for a small
        file (cheaper to read) or one that is gone or not UTF-8."""
        try:
            info = os.stat(path)
        except OSError:
            return None
        if info.st_size < self.min_bytes:
            return None
        stamp = (info.st_mtime_ns, info.st_size)
        with self._lock:
            known = self._files.get(path)
            if known is not None and known[0] == stamp:
                self._files.move_to_end(path)
                return known[1], known[3]
        text = read_utf8(path)
        if text is None:
            return None
        by_name: dict[str, list[Reference]] = {}
        for ref in find_references(text):
            by_name.setdefault(ref.name, []).append(ref)
        with self._lock:
            old = self._files.pop(path, None)
            if old is not None:
                self._chars -= len(old[1])
            self._files[path] = (stamp, text, text.split("\n"), by_name)
            self._chars += len(text)
            while self._chars > self.max_chars and len(self._files) > 1:
                _path, (_stamp, dropped, _lines, _refs) = self._files.popitem(last=False)
                self._chars -= len(dropped)
        return text, by_name

    def lines_of(self, path: str, text: str) -> list[str] | None:
        """The lines of a text this cache handed out for `path` (split once)."""
        with self._lock:
            known = self._files.get(path)
        return known[2] if known is not None and known[1] is text else None


def texts_with_references(
    paths: Iterable[str],
    matches: Callable[[Reference], bool],
    needle: str,
    refs_in: Callable[[str], list[Reference]] | None = None,
    large: LargeFileReferences | None = None,
) -> Iterator[tuple[str, str, list[Reference]]]:
    """(path, text, matching references) of each file with at least one match; `refs_in`
    finds a text's references where they are not the links of `find_references`. With
    `large` (and no `refs_in`), `needle` must be the bare name every match has."""
    for path in paths:
        try:
            known = large.lookup(path) if large is not None and refs_in is None else None
            if known is not None:
                refs = [ref for ref in known[1].get(needle, ()) if matches(ref)]
                if refs:
                    yield path, known[0], refs
                continue
            text = read_utf8(path)
        except OSError:
            continue
        if text is None or needle not in text:
            continue
        if refs_in is not None:
            refs = refs_in(text)
        else:
            refs = [ref for ref in find_references(text, needle) if matches(ref)]
        if refs:
            yield path, text, refs


def move_references(text: str, plans: Sequence[MovePlan]) -> list[Reference]:
    """What carrying out moves rewrites in a text: as `Store.move` rewrites (SPEC 2.6)."""
    found: dict[tuple[int, int], Reference] = {}
    for plan in plans:
        for ref in rename_references(text, plan.source.qualified, plan.points_here):
            found.setdefault((ref.line, ref.start), ref)
    return sorted(found.values(), key=lambda r: (r.line, r.start))


def points_to(memory: MemoryFile, winner: MemoryFile | None) -> Callable[[Reference], bool]:
    """Whether a reference resolves to `memory`; `winner` is what its name resolves to."""
    wins = winner is not None and winner.path == memory.path

    def matches(ref: Reference) -> bool:
        # A reference names its scope (`global/NAME` or a project NAME), never falling back.
        return wins and ref.target == memory.qualified

    return matches


def name_span(line: str, ref: Reference) -> tuple[int, int]:
    """Columns of the bare name inside a reference as written (no `mem:`, `global/`, `.md`)."""
    start, end = ref.start, ref.end
    written = line[start:end]
    # The same steps, in the same order, as name normalisation (SPEC 2.1).
    if written.startswith(MEM_PREFIX):
        start += len(MEM_PREFIX)
        written = written[len(MEM_PREFIX) :]
    if written.endswith(".md"):
        end -= len(".md")
        written = written[: -len(".md")]
    if written.startswith(GLOBAL_PREFIX):
        start += len(GLOBAL_PREFIX)
    return start, end


@dataclass(frozen=True)
class Replacement:
    """Text to put in place of a span of one line (0-based, code-point columns)."""

    line: int
    start: int
    end: int
    text: str


def reference_replacements(
    text: str, refs: Iterable[Reference], new_text: Callable[[Reference], str]
) -> list[Replacement]:
    """Edits that rewrite references as written, leaving out those that would not change."""
    lines = text.split("\n")
    edits = []
    for ref in refs:
        new = new_text(ref)
        if lines[ref.line][ref.start : ref.end] != new:
            edits.append(Replacement(ref.line, ref.start, ref.end, new))
    return edits


def plan_move_of(store: Store, source: MemoryFile, raw_new_name: object) -> MovePlan:
    """`Store.plan_move` for this very file, even when a file of the same name hides it."""
    plan = store.plan_move(source.qualified, raw_new_name, source.scope)
    if plan.source.path == source.path:
        return plan
    # Another folder earlier in lookup order has the same name: plan for the hidden file.
    if source.folder.read_only:
        raise ReadOnly(
            f"Memory {source.qualified!r} is in the read-only folder {source.folder.path}."
        )
    scope = "global" if plan.new_is_global else "project"
    taken = [m for m in store.locate_all(plan.new_name, scope) if m.path != source.path]
    if taken:
        raise Exists(f"A memory named {plan.new_qualified!r} already exists at {taken[0].path}.")
    return replace(plan, source=source, source_wins=False)


def plan_for_path(store: Store, source: MemoryFile, new_path: str) -> MovePlan | None:
    """The move an editor makes by renaming a memory's file to `new_path`; None when the new
    path is no memory (outside the folders, or an invalid name)."""
    owned = store.config.name_of(new_path)
    if owned is None or not is_valid_name(owned[1]):
        return None
    folder, name = owned
    first = store.locate_all(source.name, source.scope)
    return MovePlan(
        source=source,
        new_name=name,
        new_is_global=folder.scope == "global",
        folder=folder,
        target=new_path,
        source_wins=bool(first) and first[0].path == source.path,
    )


def moved_files(
    memories: Iterable[MemoryFile], old_path: str, new_path: str
) -> list[tuple[MemoryFile, str]]:
    """The memory files that renaming a file or a folder moves, with their new paths."""
    inside = old_path.rstrip(os.sep) + os.sep
    moved = []
    for memory in memories:
        if memory.path == old_path:
            moved.append((memory, new_path))
        elif memory.path.startswith(inside):
            moved.append((memory, os.path.join(new_path, memory.path[len(inside) :])))
    return moved


def prefix_suggestions(name: str, additional: Sequence[Folder], limit: int = 3) -> list[str]:
    """Names with a mistyped ALL-CAPS prefix corrected to the closest routing prefixes."""
    known = [prefix.rstrip("_") for prefix in routing_prefixes(additional)]
    found: list[str] = []
    # Longest prefix first: `FEATUER_BUILDER_x` is closest to `FEATURE_BUILDER`.
    for prefix in caps_prefixes(name):
        if prefix == name:
            continue
        for better in did_you_mean(prefix, known, limit):
            corrected = better + name[len(prefix) :]
            if corrected not in found:
                found.append(corrected)
    return found[:limit]


@dataclass(frozen=True)
class Section:
    """A heading and the lines it heads (through `end_line`), with its subsections."""

    heading: Heading
    end_line: int
    children: tuple[Section, ...] = ()


def outline(text: str) -> list[Section]:
    """The headings of a note as a tree of sections (SPEC 3.4 document symbols)."""
    found = headings(text)
    last_line = text.count("\n")
    return _sections(found, 0, len(found), last_line)


def _sections(found: list[Heading], first: int, stop: int, end_line: int) -> list[Section]:
    """Sections for headings[first:stop], which all end by `end_line`."""
    sections: list[Section] = []
    at = first
    while at < stop:
        heading = found[at]
        # A section runs until the next heading of the same or a higher level.
        after = next((i for i in range(at + 1, stop) if found[i].level <= heading.level), stop)
        end = found[after].line - 1 if after < stop else end_line
        children = _sections(found, at + 1, after, end)
        sections.append(Section(heading, end, tuple(children)))
        at = after
    return sections


def is_markdown(path: str) -> bool:
    """Whether a path names a Markdown file."""
    return os.path.splitext(path)[1].lower() in (".md", ".markdown")
