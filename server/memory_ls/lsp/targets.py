"""What navigation works on: the reference or memory under the cursor, and the texts that
may refer to a memory (every memory file, plus the open Markdown documents of the
workspace, whose open text wins over the disk)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import quote

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from memory_ls.core.operations.navigation import (
    LargeFileReferences,
    reference_at,
    texts_with_references,
)
from memory_ls.core.rules.references import Reference, find_references
from memory_ls.core.services.index import Entry
from memory_ls.core.storage.memory import MemoryFile
from memory_ls.lsp.diagnostics import is_markdown
from memory_ls.lsp.server import MemoryServer
from memory_ls.lsp.text import client_range

# Requests that arrive while the first scan runs wait for the names this long at most
# (a slow disk must not hang the editor); the scan of 100,000 files takes about a second.
SCAN_WAIT_SECONDS = 2.0
# While waiting, the server's index is looked at again this often: the configuration
# the client sends with `initialized` may replace it with one for other folders.
_SCAN_WAIT_SLICE_SECONDS = 0.05
# Long notes that link to many memories, parsed once while they stay as they are.
_LARGE = LargeFileReferences()


@dataclass(frozen=True)
class Cursor:
    """A position in a document: its text, the reference there, and the document's memory."""

    uri: str
    lines: list[str]
    line: int
    column: int  # code points
    reference: Reference | None
    own: MemoryFile | None  # the memory this document is, if it is one

    def reference_range(self, ls: MemoryServer) -> types.Range | None:
        """The referenced name as written, in the client's units."""
        ref = self.reference
        if ref is None:
            return None
        return client_range(ls, self.lines, ref.line, ref.start, ref.line, ref.end)


@dataclass(frozen=True)
class OpenText:
    """An open Markdown document as the editor has it."""

    uri: str
    path: str
    text: str
    version: int | None


@dataclass(frozen=True)
class FileRefs:
    """The references of one file that matched a search."""

    uri: str
    path: str
    text: str
    version: int | None  # the open document's version; None for a file read from disk
    refs: list[Reference]
    memory: MemoryFile | None
    split_lines: list[str] | None = None  # the text's lines, where already split

    @property
    def lines(self) -> list[str]:
        """The file's lines, for converting columns."""
        return self.split_lines if self.split_lines is not None else self.text.split("\n")


def document_text(ls: MemoryServer, uri: str) -> tuple[str, int | None]:
    """A document's text and version: the open text, else the file's; empty if unreadable."""
    document = ls.workspace.get_text_document(uri)
    try:
        return document.source, document.version
    except (OSError, ValueError):  # not open, and gone or not UTF-8 on disk
        return "", None


def cursor_at(ls: MemoryServer, uri: str, position: types.Position) -> Cursor:
    """What is at a client position of a document."""
    text, _version = document_text(ls, uri)
    # Lines split as the core splits them (on "\n" only), so line numbers agree.
    lines = text.split("\n")
    at = ls.workspace.position_codec.position_from_client_units(lines, position)
    path = to_fs_path(uri)
    own = ls.index.memory_for(path) if path else None
    found = reference_at(text, at.line, at.character)
    return Cursor(uri, lines, at.line, at.character, found, own)


async def wait_for_names(ls: MemoryServer, timeout: float = SCAN_WAIT_SECONDS) -> bool:
    """Wait until the current index knows every name (its first scan is over), at most
    `timeout` seconds; return whether it does (SPEC 3.3: answers come from the whole list
    of names, never from a scan half done)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        index = ls.index
        if index.scanned:
            return True
        remaining = deadline - loop.time()
        if remaining <= 0:
            return False
        await loop.run_in_executor(
            None, index.wait_scanned, min(remaining, _SCAN_WAIT_SLICE_SECONDS)
        )


def resolve(ls: MemoryServer, ref: Reference) -> Entry | None:
    """The memory a reference resolves to (lookup order, SPEC 2.3)."""
    if not ref.valid:
        return None
    return ls.index.lookup(ref.target)


def subject(ls: MemoryServer, cursor: Cursor) -> MemoryFile | None:
    """The memory navigation is about: the referenced one, else the document's own."""
    if cursor.reference is not None:
        entry = resolve(ls, cursor.reference)
        return entry.memory if entry is not None else None
    own = cursor.own
    if own is None or not own.valid:
        return None
    return own


def winner(ls: MemoryServer, memory: MemoryFile) -> MemoryFile | None:
    """What the memory's bare name resolves to (itself unless another file hides it)."""
    entry = ls.index.lookup(memory.qualified)
    return entry.memory if entry is not None else None


def open_markdown(ls: MemoryServer) -> dict[str, OpenText]:
    """The open Markdown documents of the workspace and of the memory folders, by path."""
    found: dict[str, OpenText] = {}
    inside = ls.root.rstrip(os.sep) + os.sep
    for document in list(ls.workspace.text_documents.values()):
        uri = document.uri
        path = to_fs_path(uri)
        if not path or not is_markdown(uri, document.language_id):
            continue
        path = os.path.normpath(path)
        if path.startswith(inside) or ls.config.owner_of(path) is not None:
            found[path] = OpenText(uri, path, document.source, document.version)
    return found


def search(
    ls: MemoryServer,
    open_texts: Mapping[str, OpenText],
    matches: Callable[[Reference], bool],
    needle: str,
    keys: Sequence[str],
    refs_in: Callable[[str], list[Reference]] | None = None,
) -> list[FileRefs]:
    """Matching references in the memory files that the link index names for `keys` (read
    again from disk: the index only narrows the search) and in every open document
    (blocking: a store thread); `refs_in`, where given, finds a text's references instead
    of its links."""
    index = ls.index
    by_path: dict[str, MemoryFile | None]
    sources = ls.reference_sources(keys)
    if sources is not None:
        by_path = {path: index.memory_for(path) for path in sources}
    else:  # the names are not known yet (a very slow disk): read every file
        by_path = {memory.path: memory for memory in ls.store.scan()}
    found: list[FileRefs] = []
    for doc in open_texts.values():
        if needle not in doc.text:
            continue
        if refs_in is not None:
            refs = refs_in(doc.text)
        else:
            refs = [ref for ref in find_references(doc.text, needle) if matches(ref)]
        if refs:
            memory = by_path.get(doc.path) or index.memory_for(doc.path)
            found.append(FileRefs(doc.uri, doc.path, doc.text, doc.version, refs, memory))
    on_disk = [path for path in by_path if path not in open_texts]
    for path, text, refs in texts_with_references(on_disk, matches, needle, refs_in, _LARGE):
        lines = _LARGE.lines_of(path, text)
        found.append(FileRefs(file_uri(path), path, text, None, refs, by_path[path], lines))
    found.sort(key=lambda item: item.path)
    return found


def file_uri(path: str) -> str:
    """The file URI of a path."""
    if os.name == "posix" and path.startswith("/") and not path.startswith("//"):
        # What from_fs_path makes of such a path, without its generic steps (a hundred
        # workspace symbols are a hundred URIs).
        return "file://" + quote(path)
    return from_fs_path(path) or path


def shown_path(ls: MemoryServer, path: str) -> str:
    """A path for people: relative to the workspace, else under `~`, else absolute."""
    relative = os.path.relpath(path, ls.root)
    if not relative.startswith(".."):
        return relative.replace(os.sep, "/")
    home = os.path.expanduser("~")
    return "~" + path[len(home) :] if path.startswith(home + os.sep) else path


def file_start() -> types.Range:
    """The start of a file, where a memory as a whole is located."""
    start = types.Position(line=0, character=0)
    return types.Range(start=start, end=start)
