"""Other agents' files in search answers: which files, what in them matches, and the list
of them kept current in a long-lived server.

A search shows, after the memories and apart from them, the lines of the repository's
agent files that answer it: CLAUDE.md files and what they import (inside the root), the
`.claude/rules`, AGENTS.md, Cursor's and Copilot's rules, Cline's memory bank, and
Claude Code's auto memory (MEMORY.md and its topic files) unless the store is that
folder (then they are memories already: a file a store folder holds is never shown
twice). The user's own files (~/.claude/CLAUDE.md, ~/.codex/AGENTS.md) are left out:
they are about the person, not the project. The files are ranked by `scan_search` among
themselves, their scores not comparable with the memories' full-text index: an answer
keeps them in a section of their own.

Listing the files costs a `git ls-files` (20 ms in a small repository, hundreds in one of
100,000 files): a command-line search lists once (`load_agent_files`), the MCP server
keeps the list per store root (`AgentFilesCache`) and reads the few files it names per
search (`AgentTexts`: a stat each, the text read again only when it changed).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memory_ls.core.layouts import Repository
from memory_ls.core.layouts.claude import auto_memory_folder, claude_home
from memory_ls.core.operations.agent_files import KnownAgentFiles, load_agent_files
from memory_ls.core.services.relevance import Query, Searchable, scan_search
from memory_ls.core.storage.folders import StoreConfig

log = logging.getLogger("memory_ls")

# The agents' files an answer shows at most (the rest counted): they add to every answer.
MAX_SHOWN = 5
# A file larger than this many times the store's max-memory-bytes is not read for search.
SIZE_FACTOR = 4
# The agents' files read for one search, in all (bytes): bounded work on any repository.
MAX_TOTAL_BYTES = 8 * 2**20
# The list is listed again in the background when older than this (seconds): what the
# stamp cannot see (a file created in a folder no agent's file is in yet) shows by then.
MAX_AGE_SECONDS = 10.0
# A search waits this long (seconds) for the list when the stamp says it changed.
STAMP_WAIT_SECONDS = 0.25
# Folders at the root where agents keep files (their mtimes change as files come and go).
AGENT_FOLDERS = (
    ".claude",
    ".claude/rules",
    ".cursor",
    ".cursor/rules",
    ".github",
    ".github/instructions",
    "memory-bank",
    ".clinerules",
)
# File times lag the clock by up to a tick: a change this close to a listing's start may
# have been missed by it.
MTIME_MARGIN_NS = 50_000_000
IMPORT = "import"  # the kind of a file a CLAUDE.md imports (and no agent lists itself)


@dataclass(frozen=True)
class SearchedFile:
    """An agent's file a search looks in, and how an answer names it."""

    path: str  # absolute
    agent: str  # the layout that knows it: "claude", "codex", ...
    kind: str  # AgentFile.kind, or "import"
    shown: str  # relative to the root inside it, `~/...` under the home, else absolute
    listed: str  # the structured answer's path: relative to the root inside it, else absolute


@dataclass(frozen=True)
class AgentMatches:
    """The agents' files that answer a query: the best ones and how many in all."""

    rows: list[dict[str, Any]]  # {path, line, text, agent, kind}, best first
    total: int
    shown: list[str]  # each row's path as the answer's text names it

    @property
    def more(self) -> int:
        """The matching files not shown."""
        return max(0, self.total - len(self.rows))

    def fields(self) -> dict[str, Any]:
        """The answer's keys (none when nothing matched): `agentFiles`, `moreAgentFiles`."""
        if not self.rows:
            return {}
        return {"agentFiles": self.rows, "moreAgentFiles": self.more}

    def text(self) -> str:
        """One line for an answer's text, '' when nothing matched."""
        if not self.rows:
            return ""
        entries = [
            f'{name}:{row["line"]} "{_short(row["text"])}"'
            for name, row in zip(self.shown, self.rows, strict=True)
        ]
        more = f", and {self.more} more" if self.more else ""
        return (
            f"Also in agents' files ({self.total}; ranked apart from the memories): "
            + ", ".join(entries)
            + more
        )


NO_MATCHES = AgentMatches([], 0, [])
_SHORT = 100


def _short(text: str) -> str:
    text = text.strip().replace('"', "'")
    return text if len(text) <= _SHORT else text[: _SHORT - 1].rstrip() + "…"


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def searched_files(config: StoreConfig, known: KnownAgentFiles) -> list[SearchedFile]:
    """The agents' files a search of this store looks in: the project's (and what its
    CLAUDE.md files import inside the root), none a store folder holds."""
    root = config.root
    home = known.repository.home
    candidates: list[tuple[str, str, str]] = [
        (f.path, f.layout, f.kind) for f in known.files if f.scope == "project"
    ]
    candidates += [
        (path, "claude", IMPORT)
        for path in sorted(known.imported)
        if path not in known.by_path and _inside(path, root) and os.path.isfile(path)
    ]
    found: list[SearchedFile] = []
    seen: set[str] = set()
    for path, agent, kind in candidates:
        if path in seen or config.owner_of(path) is not None:
            continue  # a memory already (a claude store's topic files), or listed twice
        seen.add(path)
        if _inside(path, root):
            relative = os.path.relpath(path, root).replace(os.sep, "/")
            shown = listed = relative
        else:
            listed = path
            shown = "~/" + os.path.relpath(path, home) if _inside(path, home) else path
        found.append(SearchedFile(path, agent, kind, shown, listed))
    return found


class AgentTexts:
    """The agents' files' texts for search: a stat per file, read again when it changed;
    files over the size cap (and past the total cap) left out."""

    def __init__(self) -> None:
        self._texts: dict[str, tuple[int, int, str]] = {}
        self._lock = threading.Lock()

    def read(self, paths: Sequence[str], max_file_bytes: int) -> dict[str, str]:
        """The texts of those files that can be read, by path."""
        texts: dict[str, str] = {}
        total = 0
        with self._lock:
            for path in paths:
                try:
                    stat = os.stat(path)
                except OSError:
                    self._texts.pop(path, None)
                    continue
                if stat.st_size > max_file_bytes or total + stat.st_size > MAX_TOTAL_BYTES:
                    continue
                kept = self._texts.get(path)
                if kept is not None and kept[:2] == (stat.st_mtime_ns, stat.st_size):
                    text = kept[2]
                else:
                    try:
                        with open(path, "rb") as handle:
                            data = handle.read(max_file_bytes + 1)
                    except OSError:
                        continue
                    text = data.decode("utf-8", errors="replace")
                    self._texts[path] = (stat.st_mtime_ns, stat.st_size, text)
                total += stat.st_size
                texts[path] = text
        return texts


def agent_matches(
    config: StoreConfig,
    query: Query,
    known: KnownAgentFiles,
    texts: AgentTexts | None = None,
    limit: int = MAX_SHOWN,
) -> AgentMatches:
    """The agents' files of the store's repository that answer the query, best first."""
    files = searched_files(config, known)
    if not files:
        return NO_MATCHES
    read = (texts or AgentTexts()).read(
        [f.path for f in files], SIZE_FACTOR * config.max_memory_bytes
    )
    by_path = {f.path: f for f in files}
    searchable = [
        Searchable(_ranked_name(f), f.path, read[f.path], 0) for f in files if f.path in read
    ]
    found = scan_search(query, searchable, limit, per_memory=True)
    rows: list[dict[str, Any]] = []
    shown: list[str] = []
    for hit in found.hits:
        searched = by_path[hit.path]
        line, text = hit.lines[0]
        rows.append(
            {
                "path": searched.listed,
                "line": line,
                "text": text,
                "agent": searched.agent,
                "kind": searched.kind,
            }
        )
        shown.append(searched.shown)
    return AgentMatches(rows, found.total or len(rows), shown)


def _ranked_name(searched: SearchedFile) -> str:
    """The name a file is ranked by (its words weigh as a memory's name's): its path in
    the root, else its file name (not the words of the home's `.claude/projects/...`)."""
    if searched.listed == searched.shown:
        return searched.shown
    return os.path.basename(searched.path)


# ----- the list kept in a long-lived server -------------------------------------------


class AgentFilesCache:
    """The agents' files of one store root, listed once and kept current cheaply.

    Listing (`load_agent_files`: `git ls-files`, every layout's files, CLAUDE.md imports
    followed) runs in a background thread, never twice at once. A search asks `known()`:

    - the first time, it waits for the first listing;
    - else it compares a stamp with the one taken when the list was made: the mtimes of
      the root folder, the folders agents keep files in (`.claude/rules`, `.cursor/rules`,
      `.github/instructions`, `memory-bank`, ...), the folder of each file listed and its
      parents up to the root, the auto memory folder and its parent, git's index (every
      `git add`, commit and checkout), Claude Code's settings (they move auto memory) and
      the files whose imports were followed (an import added). Some twenty `stat` calls:
      tens of microseconds. When it differs, a new listing starts and the search waits
      for it up to `wait` seconds (a CLAUDE.md just created is found at once, unless the
      repository is so large that listing takes longer: then the next search has it);
    - when the list is older than `max_age` seconds, a new listing starts and the search
      answers from the list it has: what no stamp sees (an untracked file created in a
      folder that held no agent's file yet) is found within `max_age`.

    A file created while a listing runs may be missed by it and still match the stamp
    taken after it (file times lag the clock by a tick): when anything in the stamp
    changed less than MTIME_MARGIN_NS before the listing began, the next search lists
    again as if the stamp had changed.
    """

    def __init__(
        self,
        root: str,
        environ: Mapping[str, str] | None = None,
        *,
        max_age: float = MAX_AGE_SECONDS,
        wait: float = STAMP_WAIT_SECONDS,
        load: Callable[[str, Mapping[str, str] | None], KnownAgentFiles] = load_agent_files,
        skip: Sequence[str] = (),
    ) -> None:
        self.root = os.path.abspath(root)
        # The store's folders: their files are memories, their changes no agent's file.
        self.skip = tuple(skip)
        self.environ = environ
        self.max_age = max_age
        self.wait = wait
        self._load = load
        self.texts = AgentTexts()
        self._changed = threading.Condition()
        self._known: KnownAgentFiles | None = None
        self._watched: tuple[str, ...] = ()
        self._stamp: tuple[int | None, ...] = ()
        self._listed_at = 0.0
        self._listing = False
        self._recent = False  # something in the stamp changed about when it was listed
        # How many listings ended (the tests wait on it).
        self.listings = 0

    def start(self) -> None:
        """List in the background now (a server's start), unless a listing runs."""
        with self._changed:
            self._start_listing()

    def known(self) -> KnownAgentFiles:
        """The files as last listed, listed again first when the stamp says so."""
        with self._changed:
            if self._known is None:
                self._start_listing()
                self._changed.wait_for(lambda: self._known is not None)
                assert self._known is not None
                return self._known
            if self._recent or _stamp(self._watched) != self._stamp:
                ended = self.listings
                self._start_listing()
                self._changed.wait_for(lambda: self.listings > ended, timeout=self.wait)
            elif time.monotonic() - self._listed_at > self.max_age:
                self._start_listing()
            return self._known

    def wait_listed(self, timeout: float) -> bool:
        """Wait for the listing that runs (if any) to end; False when it did not in time."""
        with self._changed:
            return self._changed.wait_for(lambda: not self._listing, timeout=timeout)

    def _start_listing(self) -> None:
        if self._listing:
            return
        self._listing = True
        threading.Thread(target=self._list, name="memory-ls agent files", daemon=True).start()

    def _list(self) -> None:
        started = time.time_ns()
        known: KnownAgentFiles | None = None
        watched: tuple[str, ...] = ()
        stamp: tuple[int | None, ...] = ()
        try:
            known = self._load(self.root, self.environ)
            watched = watched_paths(known, self.skip)
            stamp = _stamp(watched)
        except Exception:  # never stops searching: an empty list, and the log says why
            log.exception("memory-ls: listing the agents' files of %s failed", self.root)
        with self._changed:
            if known is not None:
                self._known, self._watched, self._stamp = known, watched, stamp
            elif self._known is None:
                self._known = _nothing(self.root, self.environ)
            # A change during the listing may be missed by it and leave the stamp as it is
            # (file times lag the clock): then the next search lists again, as for a change.
            self._recent = any(
                mtime is not None and mtime >= started - MTIME_MARGIN_NS for mtime in stamp
            )
            self._listed_at = time.monotonic()
            self._listing = False
            self.listings += 1
            self._changed.notify_all()


def _nothing(root: str, environ: Mapping[str, str] | None) -> KnownAgentFiles:
    env = os.environ if environ is None else environ
    home = env.get("HOME") or os.path.expanduser("~")
    return KnownAgentFiles(Repository(root, root, (), home, env), (), {}, frozenset())


def watched_paths(known: KnownAgentFiles, skip: Sequence[str] = ()) -> tuple[str, ...]:
    """What the stamp of a listing is made of (see `AgentFilesCache`), nothing inside the
    `skip` folders (a store's: its memories come and go on every write)."""
    repository = known.repository
    root = repository.root
    paths: dict[str, None] = {root: None}
    for folder in AGENT_FOLDERS:
        paths[os.path.join(root, *folder.split("/"))] = None
    for agent_file in known.files:
        if agent_file.scope != "project":
            continue
        folder = os.path.dirname(agent_file.path)
        while _inside(folder, root) and folder not in paths:
            paths[folder] = None
            folder = os.path.dirname(folder)
        if not _inside(folder, root):
            paths[folder] = None  # auto memory's folders
    memory = auto_memory_folder(repository)
    if memory is not None:
        paths[memory] = None
        paths[os.path.dirname(memory)] = None
    index = git_index(root)
    if index is not None:
        paths[index] = None
    paths[os.path.join(root, ".claude", "settings.local.json")] = None
    paths[os.path.join(claude_home(repository), "settings.json")] = None
    for path in known.instructions():
        paths[path] = None
    for path in sorted(known.imported):
        paths[path] = None
    return tuple(path for path in paths if not any(_inside(path, folder) for folder in skip))


def _stamp(paths: Sequence[str]) -> tuple[int | None, ...]:
    found: list[int | None] = []
    for path in paths:
        try:
            found.append(os.stat(path).st_mtime_ns)
        except OSError:
            found.append(None)
    return tuple(found)


def git_index(root: str) -> str | None:
    """The index file of the git work tree holding `root` (read from `.git`, no git run)."""
    current = os.path.abspath(root)
    while True:
        marker = os.path.join(current, ".git")
        if os.path.isdir(marker):
            return os.path.join(marker, "index")
        if os.path.isfile(marker):
            try:
                with open(marker, encoding="utf-8") as handle:
                    line = handle.readline().strip()
            except OSError:
                return None
            if not line.startswith("gitdir:"):
                return None
            return os.path.join(
                os.path.normpath(os.path.join(current, line[len("gitdir:") :].strip())), "index"
            )
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent
