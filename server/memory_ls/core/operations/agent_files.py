"""Other agents' files in an editor: the set a language server keeps, and one file's problems.

The set (`KnownAgentFiles`) costs a `git ls-files`: an editor computes it once and again
when files come and go, never per keystroke. With it, the problems of one open file are
those `memory-ls check` reports for it (core/services/agent_checks.py), its text as the
editor has it and every other file as on disk: a CLAUDE.md's imports, the files it
imports (found through the CLAUDE.md files that import them), MEMORY.md and its topic
files (`unindexed-memory` needs the index beside them).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from memory_ls.core.layouts import AgentFile, Repository, find_agent_files
from memory_ls.core.rules.agent_syntax import Span, find_imports, index_links
from memory_ls.core.services.agent_checks import agent_diagnostics, import_target, reader
from memory_ls.core.services.diagnostics import Diagnostic, apply_severities
from memory_ls.core.storage.agent_repository import repository_of
from memory_ls.core.storage.folders import StoreConfig

Reader = Callable[[str], "str | None"]

# Files followed through imports at most (a chain of imports is short; a loop is cut).
MAX_IMPORTED_FILES = 1_000
CLAUDE = "claude"


@dataclass(frozen=True)
class KnownAgentFiles:
    """Every agent's files of a repository, as found when it was last listed."""

    repository: Repository
    files: tuple[AgentFile, ...]
    by_path: Mapping[str, AgentFile]
    # The files CLAUDE.md files import (directly or not), as on disk when listed.
    imported: frozenset[str]

    def related(self, path: str) -> bool:
        """Whether a file is an agent's file or imported by one (as last listed)."""
        return path in self.by_path or path in self.imported

    def instructions(self) -> list[str]:
        """Claude Code's instruction files (CLAUDE.md), where imports start."""
        return [f.path for f in self.files if f.layout == CLAUDE and f.kind == "instructions"]

    def indexes(self) -> list[AgentFile]:
        """Claude Code's auto memory indexes (MEMORY.md)."""
        return [f for f in self.files if f.kind == "memory-index"]

    def topics(self, index: str) -> list[AgentFile]:
        """The topic files beside (or under) a MEMORY.md."""
        folder = os.path.dirname(index) + os.sep
        return [f for f in self.files if f.kind == "topic" and f.path.startswith(folder)]


def load_agent_files(root: str, environ: Mapping[str, str] | None = None) -> KnownAgentFiles:
    """List every agent's files of the repository at `root` (blocking: runs git)."""
    repository = repository_of(root, environ)
    files = tuple(find_agent_files(repository))
    by_path = {f.path: f for f in files}
    known = KnownAgentFiles(repository, files, by_path, frozenset())
    read = reader(MAX_READ_BYTES)
    imported = frozenset(p.target for p in import_pointers(known, read) if p.exists)
    return KnownAgentFiles(repository, files, by_path, imported)


# Files larger than this are not read for their imports or links (nor their tokens counted).
MAX_READ_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class Pointer:
    """An `@path` import or a MEMORY.md link: where it is written and the file it names."""

    source: str  # the file it is written in
    span: Span  # the path as written (an import's `@` is just before it)
    target: str  # the file it names, absolute
    kind: str  # "import" or "index"

    @property
    def exists(self) -> bool:
        """Whether the named file (or folder) exists."""
        return os.path.exists(self.target)


def import_pointers(known: KnownAgentFiles, read: Reader) -> list[Pointer]:
    """Every `@path` import of the CLAUDE.md files and of the files they import, each
    importing file read once (loops cut), whether or not Claude Code's depth reaches it."""
    home = known.repository.home
    queue = known.instructions()
    seen: set[str] = set()
    found: list[Pointer] = []
    while queue and len(seen) < MAX_IMPORTED_FILES:
        path = queue.pop(0)
        if path in seen:
            continue
        seen.add(path)
        text = read(path)
        if text is None or "@" not in text:
            continue
        for span in find_imports(text):
            target = import_target(span.written, path, home)
            found.append(Pointer(path, span, target, "import"))
            if target not in seen and os.path.isfile(target):
                queue.append(target)
    return found


def index_pointers(known: KnownAgentFiles, read: Reader) -> list[Pointer]:
    """Every link of Claude Code's MEMORY.md indexes to a file."""
    found: list[Pointer] = []
    for index in known.indexes():
        text = read(index.path)
        if text is None:
            continue
        folder = os.path.dirname(index.path)
        found.extend(
            Pointer(index.path, span, os.path.normpath(os.path.join(folder, span.written)), "index")
            for span in index_links(text)
        )
    return found


def importers(known: KnownAgentFiles, path: str, read: Reader) -> list[str]:
    """The CLAUDE.md files whose imports reach `path` (directly or through other files)."""
    found: list[str] = []
    for root in known.instructions():
        single = KnownAgentFiles(
            known.repository, (known.by_path[root],), {root: known.by_path[root]}, frozenset()
        )
        if any(p.target == path for p in import_pointers(single, read)):
            found.append(root)
    return found


def with_text(path: str, text: str, read: Reader) -> Reader:
    """A reader that has `text` for `path` and reads every other file with `read`."""
    return lambda other: text if other == path else read(other)


def live_agent_diagnostics(
    config: StoreConfig, known: KnownAgentFiles, path: str, text: str
) -> list[Diagnostic] | None:
    """The agent checks' problems of one file with this text (other files as on disk);
    None when it is no agent's file and no CLAUDE.md imports it."""
    read = with_text(path, text, reader(config.max_memory_bytes))
    own = known.by_path.get(path)
    files: list[AgentFile] = [] if own is None else [own]
    if own is not None and own.kind == "topic":
        # `unindexed-memory` is found from the index beside the topic file.
        folder = os.path.dirname(path)
        files.extend(f for f in known.indexes() if os.path.dirname(f.path) == folder)
    sources = [p for p in importers(known, path, read) if p != path]
    files.extend(known.by_path[p] for p in sources)
    if not files:
        return None
    found = agent_diagnostics(config, known.repository, _unique(files), read)
    return [d for d in found if d.path == path]


def _unique(files: Sequence[AgentFile]) -> list[AgentFile]:
    return list({f.path: f for f in files}.values())


def disk_agent_diagnostics(
    config: StoreConfig, known: KnownAgentFiles
) -> dict[str, tuple[list[Diagnostic], str | None]]:
    """Every project agent file's problems as on disk, as `memory-ls check` reports them,
    by path (files without problems left out), each with the text it was read from."""
    files = [f for f in known.files if f.scope == "project"]
    if not files:
        return {}
    read = reader(config.max_memory_bytes)
    texts: dict[str, str | None] = {}

    def remembered(path: str) -> str | None:
        if path not in texts:
            texts[path] = read(path)
        return texts[path]

    found = apply_severities(
        agent_diagnostics(config, known.repository, files, remembered), config.severities
    )
    by_path: dict[str, list[Diagnostic]] = {}
    for diagnostic in found:
        by_path.setdefault(os.path.normpath(diagnostic.path), []).append(diagnostic)
    return {path: (problems, remembered(path)) for path, problems in by_path.items()}
