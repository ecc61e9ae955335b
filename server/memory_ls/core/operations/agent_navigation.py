"""Navigation in other agents' files: Claude Code's `@path` imports and MEMORY.md's links.

What is under the cursor (an import in a CLAUDE.md or a file it imports, a link in
MEMORY.md), what a hover says of the file it names (where it is, whether it exists, about
how many tokens it costs, whether MEMORY.md's entry is past what Claude Code loads), the
imports and links that point to a file (references), and path completion after `@` and
inside a MEMORY.md link. Texts come from a reader (the editor's open texts first).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from memory_ls.core.layouts import claude
from memory_ls.core.operations.agent_files import (
    MAX_READ_BYTES,
    KnownAgentFiles,
    Pointer,
    Reader,
    import_pointers,
    index_pointers,
)
from memory_ls.core.rules.agent_syntax import (
    estimate_tokens,
    find_imports,
    index_links,
    load_cut,
    looks_like_path,
)
from memory_ls.core.rules.references import in_fenced_code
from memory_ls.core.services.agent_checks import import_target

# Completion offers this many paths at most (the client filters further as typed).
MAX_CHOICES = 50
# A folder outside the repository is listed this far at most.
MAX_LISTED = 2_000

# An `@path` being typed: at the start of a line or after white space, up to the cursor.
_IMPORT_OPEN = re.compile(r"(?:(?<=\s)|^)@([^\s@`]*)$")
_IMPORT_REST = re.compile(r"[^\s@`/]*")
# A link target being typed: `[label](` and what follows, up to the cursor.
_LINK_OPEN = re.compile(r"(?<!!)\[[^\]\n]*\]\(\s*<?([^)\s>#]*)$")
_LINK_REST = re.compile(r"[^)\s>#]*")


def imports_in(known: KnownAgentFiles, path: str, read: Reader) -> bool:
    """Whether `@path` in this file is an import: a CLAUDE.md, or a file one imports."""
    own = known.by_path.get(path)
    if own is not None and own.layout == claude.NAME and own.kind == "instructions":
        return True
    if path in known.imported:
        return True
    return any(p.target == path for p in import_pointers(known, read))


def is_index(known: KnownAgentFiles, path: str) -> bool:
    """Whether the file is Claude Code's auto memory index (MEMORY.md)."""
    own = known.by_path.get(path)
    return own is not None and own.kind == "memory-index"


def pointer_at(
    known: KnownAgentFiles, path: str, text: str, line: int, column: int, read: Reader
) -> Pointer | None:
    """The import or index link at a position (code points) of a file's text."""
    if is_index(known, path) and "](" in text:
        folder = os.path.dirname(path)
        for span in index_links(text):
            if span.line == line and span.start <= column <= span.end:
                target = os.path.normpath(os.path.join(folder, span.written))
                return Pointer(path, span, target, "index")
    if "@" in text and imports_in(known, path, read):
        for span in find_imports(text):
            if span.line == line and span.start - 1 <= column <= span.end:
                target = import_target(span.written, path, known.repository.home)
                return Pointer(path, span, target, "import")
    return None


def pointers_to(known: KnownAgentFiles, target: str, read: Reader) -> list[Pointer]:
    """The imports and index links that name `target` ("imported by", "indexed by")."""
    everything = [*import_pointers(known, read), *index_pointers(known, read)]
    return [p for p in everything if p.target == target]


def shown(path: str, root: str, home: str) -> str:
    """A path for people: relative to the repository, else under `~`, else absolute."""
    relative = os.path.relpath(path, root)
    if not relative.startswith(".."):
        return relative.replace(os.sep, "/")
    if path.startswith(home.rstrip(os.sep) + os.sep):
        return "~" + path[len(home.rstrip(os.sep)) :]
    return path


def token_estimate(path: str, read: Reader) -> int | None:
    """About how many tokens a file costs an agent (None when it cannot be read)."""
    try:
        size = os.path.getsize(path)
    except OSError:
        return None
    text = read(path) if size <= MAX_READ_BYTES else None
    return estimate_tokens(text) if text is not None else (size + 3) // 4


def hover_text(known: KnownAgentFiles, pointer: Pointer, text: str, read: Reader) -> str | None:
    """What a hover says of the file an import or link names (None for `@word` mentions
    that name no file and do not look like a path)."""
    repository = known.repository
    where = shown(pointer.target, repository.root, repository.home)
    what = "import" if pointer.kind == "import" else "MEMORY.md entry"
    if os.path.isdir(pointer.target):
        facts = [f"**`{where}`** · folder ({what}): Claude Code imports no folder"]
    elif os.path.exists(pointer.target):
        tokens = token_estimate(pointer.target, read)
        cost = f" · about {tokens:,} tokens (estimated)" if tokens is not None else ""
        facts = [f"**`{where}`** · exists{cost}"]
    elif pointer.kind == "import" and not looks_like_path(pointer.span.written):
        return None
    else:
        skipped = (
            "Claude Code skips this import"
            if pointer.kind == "import"
            else "Claude Code would look for this topic and find nothing"
        )
        facts = [f"**`{where}`** · **does not exist**: {skipped}"]
    if pointer.kind == "index":
        cut = load_cut(text, claude.INDEX_MAX_LINES, claude.INDEX_MAX_BYTES)
        if cut is not None and pointer.span.line >= cut.line:
            facts.append(
                f"past what Claude Code loads of MEMORY.md (the first {cut.loaded_lines} "
                "lines): this entry is not loaded, so the topic file is never found"
            )
    return "  \n".join(facts)


# ----- completion ----------------------------------------------------------------------


@dataclass(frozen=True)
class PathChoice:
    """A file or folder offered for the segment being typed."""

    label: str  # the segment's new text (a folder's ends with `/`)
    folder: bool
    detail: str


@dataclass(frozen=True)
class PathCompletion:
    """Paths for the segment being typed, in code points of the cursor's line."""

    start: int  # where the segment starts
    end: int  # where it ends (the cursor, or the end of the segment after it)
    choices: list[PathChoice]
    cut: bool  # more would match
    closing: str = ""  # added after a file's name (a link's `)`)


def completion_at(
    known: KnownAgentFiles, path: str, lines: Sequence[str], line: int, column: int, read: Reader
) -> PathCompletion | None:
    """Paths after `@` in a CLAUDE.md (or a file it imports), topic files in a MEMORY.md
    link's target; None elsewhere."""
    if not 0 <= line < len(lines):
        return None
    before, after = lines[line][:column], lines[line][column:]
    if before.count("`") % 2 or in_fenced_code(lines, line):
        return None  # code: neither imports nor links
    link = _LINK_OPEN.search(before) if "](" in before else None
    if link is not None and is_index(known, path):
        return _topics(known, path, "\n".join(lines), link.group(1), column, after)
    typed_import = _IMPORT_OPEN.search(before) if "@" in before else None
    if typed_import is not None and imports_in(known, path, read):
        return _import_paths(known, path, typed_import.group(1), column, after)
    return None


def _import_paths(
    known: KnownAgentFiles, path: str, typed: str, column: int, after: str
) -> PathCompletion | None:
    folder_part, slash, segment = typed.rpartition("/")
    if not slash and typed.startswith("~"):
        return None  # `~` alone: the home's files come after `~/`
    base = import_target(folder_part + slash if slash else ".", path, known.repository.home)
    rest = _IMPORT_REST.match(after)
    end = column + (len(rest.group(0)) if rest else 0)
    entries = _children(known, base)
    folded = segment.casefold()
    hidden = segment.startswith(".")
    wanted = sorted(
        (name, folder)
        for name, folder in entries.items()
        if name.casefold().startswith(folded)
        and (hidden or not name.startswith("."))
        and os.path.join(base, name) != path
    )
    choices = [
        PathChoice(name + ("/" if folder else ""), folder, "folder" if folder else "file")
        for name, folder in wanted[:MAX_CHOICES]
    ]
    return PathCompletion(column - len(segment), end, choices, len(wanted) > MAX_CHOICES)


def _children(known: KnownAgentFiles, base: str) -> dict[str, bool]:
    """The files and folders in a folder (name -> is a folder): as git lists them inside
    the repository, from the disk outside it."""
    repository = known.repository
    root = repository.root
    relative = os.path.relpath(base, root)
    found: dict[str, bool] = {}
    if relative == "." or not relative.startswith(".."):
        prefix = "" if relative == "." else relative.replace(os.sep, "/") + "/"
        for listed in repository.files:
            if listed.startswith(prefix):
                name, slash, _ = listed[len(prefix) :].partition("/")
                if name:
                    found[name] = found.get(name, False) or bool(slash)
        return found
    try:
        with os.scandir(base) as entries:
            for count, entry in enumerate(entries):
                if count >= MAX_LISTED:
                    break
                found[entry.name] = entry.is_dir()
    except OSError:
        return {}
    return found


def _topics(
    known: KnownAgentFiles, index: str, text: str, typed: str, column: int, after: str
) -> PathCompletion:
    folder = os.path.dirname(index)
    linked = {os.path.normpath(os.path.join(folder, span.written)) for span in index_links(text)}
    rest = _LINK_REST.match(after)
    tail = rest.group(0) if rest else ""
    closed = after[len(tail) :].lstrip().startswith(")")
    folded = typed.casefold()
    topics = sorted(
        (topic.path in linked, os.path.relpath(topic.path, folder).replace(os.sep, "/"))
        for topic in known.topics(index)
    )
    wanted = [(done, name) for done, name in topics if name.casefold().startswith(folded)]
    choices = [
        PathChoice(
            name, False, "topic file, already in the index" if done else "topic file, not indexed"
        )
        for done, name in wanted[:MAX_CHOICES]
    ]
    return PathCompletion(
        column - len(typed),
        column + len(tail),
        choices,
        len(wanted) > MAX_CHOICES,
        "" if closed else ")",
    )
