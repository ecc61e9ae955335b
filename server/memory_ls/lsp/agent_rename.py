"""Claude Code's `@path` imports and MEMORY.md's links when the editor renames files.

`workspace/willRenameFiles` (rename.py) asks here for the rewrites of the imports and
index links that name the files and folders being renamed, and of a renamed importing
file's own relative imports: core/operations/agent_rename.py computes them over the
agents' files last listed (agents.py), the open documents' texts first and the disk's
for the rest; this module turns them into file edits. It also says which paths the
editor should ask about (the rename filters registered with the memory folders').
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pygls.uris import to_fs_path

from memory_ls.core.operations.agent_files import MAX_READ_BYTES, KnownAgentFiles
from memory_ls.core.operations.agent_rename import rename_changes
from memory_ls.core.services.agent_checks import reader
from memory_ls.lsp import agents
from memory_ls.lsp.edits import FileEdit
from memory_ls.lsp.server import MemoryServer
from memory_ls.lsp.targets import file_uri


@dataclass(frozen=True)
class _Open:
    uri: str
    text: str
    version: int | None


async def rename_file_edits(ls: MemoryServer, renamed: Sequence[tuple[str, str]]) -> list[FileEdit]:
    """The imports and index links to rewrite for these renames (old path, new path)."""
    if not renamed:
        return []
    known = await agents.of(ls).wait()
    if known is None:
        return []
    opened: dict[str, _Open] = {}
    for document in list(ls.workspace.text_documents.values()):
        path = to_fs_path(document.uri)
        if path:
            opened[os.path.normpath(path)] = _Open(document.uri, document.source, document.version)
    return await ls.in_store_thread(file_edits, known, renamed, opened)


def file_edits(
    known: KnownAgentFiles, renamed: Sequence[tuple[str, str]], opened: Mapping[str, _Open]
) -> list[FileEdit]:
    """The rewrites as file edits, each with the text it was computed on (blocking)."""
    disk = reader(MAX_READ_BYTES)
    texts: dict[str, str | None] = {}

    def read(path: str) -> str | None:
        if path in opened:
            return opened[path].text
        if path not in texts:
            texts[path] = disk(path)
        return texts[path]

    edits: list[FileEdit] = []
    for path, changes in rename_changes(known, renamed, read).items():
        document = opened.get(path)
        lines = (read(path) or "").split("\n")
        if document is None:
            edits.append(FileEdit(file_uri(path), None, lines, changes))
        else:
            edits.append(FileEdit(document.uri, document.version, lines, changes))
    return edits


def watched_paths(
    known: KnownAgentFiles,
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """What the editor should ask about before renaming: (files, folders, trees) — the
    CLAUDE.md files and what they import, the folders above them (up to the repository's
    root, or the home outside it) and imported folders, and the folders of the MEMORY.md
    indexes (everything in them). No disk access: fit for the event loop."""
    repository = known.repository
    root = repository.root.rstrip(os.sep)
    home = repository.home.rstrip(os.sep)
    files = sorted({*known.instructions(), *known.imported})
    folders = set(known.imported)  # an import may name a folder (which Claude Code skips)
    for path in files:
        top = root if path.startswith(root + os.sep) else home
        folder = os.path.dirname(path)
        while folder.startswith(top + os.sep):
            folders.add(folder)
            folder = os.path.dirname(folder)
    trees = sorted({os.path.dirname(index.path) for index in known.indexes()})
    return tuple(files), tuple(sorted(folders)), tuple(trees)
