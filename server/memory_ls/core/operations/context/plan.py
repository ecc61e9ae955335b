"""The plan of one answer: what is loaded so far, and the helpers every agent uses."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memory_ls.core.operations.context.result import (
    Cut,
    LoadedFile,
    Skipped,
)
from memory_ls.core.rules.agent_syntax import (
    estimate_tokens,
    glob_regex,
    lenient_frontmatter,
    line_count,
    load_cut,
)
from memory_ls.core.rules.document import parse_document

DEFAULT_BUDGET = 20_000
# Claude Code's managed policy file ("Managed policy: /Library/Application Support/
# ClaudeCode/CLAUDE.md on macOS, /etc/claude-code/CLAUDE.md on Linux and WSL",
# https://code.claude.com/docs/en/memory#determine-memory-type).
MANAGED_POLICY = (
    "/Library/Application Support/ClaudeCode/CLAUDE.md"
    if sys.platform == "darwin"
    else "/etc/claude-code/CLAUDE.md"
)
# A file this large is no instruction file: not read (Claude Code skips memory files
# over 4 MiB; the others never meet one).
MAX_READ_BYTES = 4 * 1024 * 1024
# Patterns that apply to every file: the only ones in force before any file is touched.
_EVERY_FILE = frozenset({"**", "**/*", "/**", "./**"})

Reader = Callable[[str], "str | None"]


def read_text(path: str) -> str | None:
    """A file's text as an agent reads it (UTF-8, bad bytes replaced); None when it is
    missing, a folder, unreadable or far too large."""
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > MAX_READ_BYTES:
            return None
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None
    return data.decode("utf-8", "replace")


@dataclass
class _Plan:
    """One answer being built: what is loaded so far, in order."""

    root: str
    file: str | None  # relative to the root
    environ: Mapping[str, str]
    read: Reader
    loaded: list[LoadedFile] = field(default_factory=list)
    optional: list[LoadedFile] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)  # real paths loaded

    @property
    def home(self) -> str:
        return self.environ.get("HOME") or os.path.expanduser("~")

    def shown(self, path: str) -> str:
        """A path for people: relative to the root inside it, `~/...` in the home."""
        relative = os.path.relpath(path, self.root)
        if not relative.startswith(".."):
            return relative.replace(os.sep, "/")
        home = self.home.rstrip(os.sep)
        if home and path.startswith(home + os.sep):
            return "~/" + path[len(home) + 1 :].replace(os.sep, "/")
        return path

    def file_folders(self) -> list[str]:
        """The folders from the root (excluded) down to FILE's folder (included)."""
        if self.file is None:
            return []
        parts = self.file.split("/")[:-1]
        return [os.path.join(self.root, *parts[: end + 1]) for end in range(len(parts))]

    def whole(self, path: str, text: str, kind: str, why: str, **extra: Any) -> LoadedFile:
        """A file loaded whole."""
        size = len(text.encode("utf-8", "surrogatepass"))
        item = LoadedFile(
            path,
            self.shown(path),
            kind,
            why,
            estimate_tokens(text),
            size,
            size,
            **extra,
        )
        self.loaded.append(item)
        self.seen.add(os.path.realpath(path))
        return item

    def skip(self, path: str, reason: str, detail: str, imported_by: str | None = None) -> None:
        self.skipped.append(Skipped(path, self.shown(path), reason, detail, imported_by))


def _matches(patterns: Sequence[str], relative: str | None) -> str | None:
    """The first pattern matching the file (relative, `/`-separated), if one does.

    Before any file is touched, only the patterns that match every file apply.
    """
    for pattern in patterns:
        if relative is None:
            if pattern.strip() in _EVERY_FILE:
                return pattern
        elif glob_regex(pattern).match(relative):
            return pattern
    return None


def _frontmatter(text: str) -> Mapping[str, Any]:
    """Frontmatter keys: YAML where it parses, else read leniently (as Cursor writes it)."""
    front = lenient_frontmatter(text)
    if front is None:
        return {}
    doc = parse_document(text)
    if doc.problem is None and doc.metadata:
        return doc.metadata
    return front[0]


def _walk(folder: str, suffix: str) -> list[str]:
    """Files under a folder ending in `suffix`, sorted, symlinked folders followed once."""
    found: list[str] = []
    visited: set[str] = set()
    for directory, dirs, files in os.walk(folder, followlinks=True):
        real = os.path.realpath(directory)
        if real in visited:
            dirs[:] = []
            continue
        visited.add(real)
        dirs.sort()
        found.extend(
            os.path.join(directory, name) for name in sorted(files) if name.endswith(suffix)
        )
    return found


def _under(folder: str, relative: str | None) -> str | None:
    """FILE relative to a folder inside the root ("" for the root itself), or None when
    FILE is not under it."""
    if relative is None or not folder:
        return relative
    if relative.startswith(folder + "/"):
        return relative[len(folder) + 1 :]
    return None


def _loaded_part(plan: _Plan, path: str, loaded: str, cut: Cut, kind: str, why: str) -> None:
    """A file loaded up to a cut: tokens of the loaded part only."""
    plan.loaded.append(
        LoadedFile(
            path,
            plan.shown(path),
            kind,
            why,
            estimate_tokens(loaded),
            cut.loaded_bytes,
            cut.total_bytes,
            cut=cut,
        )
    )
    plan.seen.add(os.path.realpath(path))


def _line_cut(text: str, max_lines: int, max_bytes: int) -> tuple[str, Cut] | None:
    """The part of a text loaded up to `max_lines` lines or `max_bytes` bytes, and the cut."""
    found = load_cut(text, max_lines, max_bytes)
    if found is None:
        return None
    lines = text.split("\n")
    offset = sum(len(line) + 1 for line in lines[: found.line]) + found.col
    loaded = text[:offset]
    size = len(loaded.encode("utf-8", "surrogatepass"))
    cut = Cut(
        found.by,
        found.line,
        found.col,
        found.loaded_lines,
        found.total_lines,
        size,
        found.total_bytes,
    )
    return loaded, cut


def _byte_cut(text: str, max_bytes: int, by: str) -> tuple[str, Cut] | None:
    """The part of a text loaded up to `max_bytes` bytes (a character cut in half is not
    loaded), and the cut."""
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_bytes:
        return None
    loaded = data[:max_bytes].decode("utf-8", "ignore")
    line = loaded.count("\n")
    col = len(loaded) - (loaded.rfind("\n") + 1)
    size = len(loaded.encode("utf-8", "surrogatepass"))
    return loaded, Cut(by, line, col, line, line_count(text), size, len(data))
