"""Claude Code's files: CLAUDE.md and its imports, `.claude/rules`, and auto memory.

From Claude Code's memory documentation (https://code.claude.com/docs/en/memory):
- CLAUDE.md files: `./CLAUDE.md` or `./.claude/CLAUDE.md`, `./CLAUDE.local.md` (personal),
  `~/.claude/CLAUDE.md`; those in parent folders load at launch, those in subfolders when
  Claude reads files there. `@path` imports, relative to the importing file, `~` allowed,
  at most five hops, not inside code.
- `.claude/rules/**/*.md`, each with an optional `paths:` list of globs in frontmatter:
  a rule with `paths` applies only while Claude works on matching files.
- Auto memory in `~/.claude/projects/<slug>/memory/`: `MEMORY.md` is the index, of which
  the first 200 lines or 25 KB (whichever comes first) are loaded at the start of every
  conversation; the topic files beside it are read on demand, found through the index.
  The slug is the repository's canonical git root with every character outside
  `A-Za-z0-9` replaced by `-` (so all worktrees share one folder);
  `autoMemoryDirectory` in the user's or the local settings moves it, and
  `autoMemoryEnabled: false` or `CLAUDE_CODE_DISABLE_AUTO_MEMORY=1` turns it off.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

from memory_ls.core.layouts.base import (
    AgentFile,
    AgentLayout,
    IndexChange,
    IndexRules,
    Layout,
    Repository,
)
from memory_ls.core.rules.agent_syntax import index_links, line_count, load_cut
from memory_ls.core.rules.document import parse_document

NAME = "claude"
AGENT = "Claude Code"
INDEX = "MEMORY.md"
INDEX_MAX_LINES = 200
# "25KB": the smaller reading (25,000 bytes), so that the warning never comes too late.
INDEX_MAX_BYTES = 25_000
MAX_IMPORT_HOPS = 5
INSTRUCTION_NAMES = ("CLAUDE.md", "CLAUDE.local.md")
RULES_FOLDER = ".claude/rules/"


def claude_home(repository: Repository) -> str:
    """Claude Code's configuration folder: `CLAUDE_CONFIG_DIR`, else `~/.claude`."""
    configured = repository.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    return (
        os.path.abspath(os.path.expanduser(configured))
        if configured
        else (os.path.join(repository.home, ".claude"))
    )


def project_slug(path: str) -> str:
    """The folder name Claude Code gives a project: every character outside A-Za-z0-9 a `-`."""
    return re.sub(r"[^A-Za-z0-9]", "-", path)


def _settings(path: str) -> Mapping[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def auto_memory_folder(repository: Repository) -> str | None:
    """The project's auto memory folder, or None when auto memory is turned off."""
    if repository.environ.get("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "").strip() in ("1", "true"):
        return None
    home = claude_home(repository)
    # The local settings win over the user's; project settings may not move it (a cloned
    # repository must not redirect someone's memory).
    user = _settings(os.path.join(home, "settings.json"))
    local = _settings(os.path.join(repository.root, ".claude", "settings.local.json"))
    merged = {**user, **local}
    if merged.get("autoMemoryEnabled") is False:
        return None
    moved = merged.get("autoMemoryDirectory")
    if isinstance(moved, str) and moved.strip():
        return os.path.abspath(os.path.expanduser(moved.strip()))
    return os.path.join(home, "projects", project_slug(repository.top), "memory")


def canonical_top(root: str) -> str:
    """The main worktree's top for a folder (every worktree shares it), read from `.git`
    without running git; the folder itself outside git."""
    current = os.path.abspath(root)
    while True:
        marker = os.path.join(current, ".git")
        if os.path.isdir(marker):
            return current
        if os.path.isfile(marker):
            return _main_worktree(current, marker) or current
        parent = os.path.dirname(current)
        if parent == current:
            return os.path.abspath(root)
        current = parent


def _main_worktree(top: str, marker: str) -> str | None:
    """A linked worktree's `.git` file names its git dir, whose `commondir` is the main one."""
    try:
        with open(marker, encoding="utf-8") as handle:
            line = handle.readline().strip()
        if not line.startswith("gitdir:"):
            return None
        gitdir = os.path.normpath(os.path.join(top, line[len("gitdir:") :].strip()))
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as handle:
            common = os.path.normpath(os.path.join(gitdir, handle.readline().strip()))
    except OSError:
        return None
    return os.path.dirname(common) if os.path.basename(common) == ".git" else None


def _markdown_under(folder: str) -> list[str]:
    found: list[str] = []
    for directory, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(os.path.join(directory, f) for f in sorted(files) if f.endswith(".md"))
    return found


def agent_files(repository: Repository) -> list[AgentFile]:
    """CLAUDE.md files and rules in the repository, auto memory, and the user's files."""
    root = repository.root
    found: list[AgentFile] = []
    listed = set(repository.files)
    # CLAUDE.local.md is git-ignored by convention: looked for, not listed.
    extra = [name for name in INSTRUCTION_NAMES if os.path.isfile(os.path.join(root, name))]
    for relative in sorted(listed.union(extra)):
        base = relative.rsplit("/", 1)[-1]
        path = os.path.join(root, *relative.split("/"))
        if base in INSTRUCTION_NAMES:
            found.append(AgentFile(path, NAME, "instructions"))
        elif relative.startswith(RULES_FOLDER) and base.endswith(".md"):
            found.append(AgentFile(path, NAME, "rule"))
    memory = auto_memory_folder(repository)
    if memory is not None and os.path.isdir(memory):
        for path in _markdown_under(memory):
            kind = "memory-index" if path == os.path.join(memory, INDEX) else "topic"
            found.append(AgentFile(path, NAME, kind))
    home = claude_home(repository)
    user_file = os.path.join(home, "CLAUDE.md")
    if os.path.isfile(user_file):
        found.append(AgentFile(user_file, NAME, "instructions", "user"))
    found.extend(
        AgentFile(path, NAME, "rule", "user")
        for path in _markdown_under(os.path.join(home, "rules"))
    )
    return found


CLAUDE = AgentLayout(name=NAME, agent=AGENT, agent_files=agent_files)


# ----- auto memory as a store: topic files, and MEMORY.md kept as Claude Code keeps it ------
#
# Claude Code's auto memory writes a topic file with frontmatter (`name`, `description`,
# `type`) and one line for it in MEMORY.md: `- [Title](file.md) — one-line hook`. A
# store with layout "claude" does the same on every save of a new memory, takes the line
# out when the memory is deleted and rewrites it when the memory is renamed.

ENTRY_HOOK_CHARS = 150


def _title_and_hook(file_name: str, text: str) -> tuple[str, str]:
    """An entry's title and hook: the frontmatter's name and description (Claude Code's
    own), else the file's name and its first line of prose."""
    doc = parse_document(text)
    meta = doc.metadata if doc.problem is None else {}
    title = str(meta.get("name") or "").strip() or file_name.removesuffix(".md")
    hook = str(meta.get("description") or "").strip()
    if not hook:
        for line in doc.body.split("\n"):
            stripped = line.strip().lstrip("#").strip()
            if stripped and stripped != title:
                hook = stripped
                break
    hook = " ".join(hook.split())
    if len(hook) > ENTRY_HOOK_CHARS:
        hook = hook[: ENTRY_HOOK_CHARS - 1].rstrip() + "…"
    return title.replace("]", ")").replace("[", "("), hook


def _entry_lines(index_text: str, file_name: str) -> list[int]:
    return sorted({span.line for span in index_links(index_text) if span.written == file_name})


def add_entry(index_text: str | None, file_name: str, text: str) -> str | None:
    """MEMORY.md with a line for a new topic file; None when one already names it."""
    current = index_text if index_text is not None else "# Memory\n"
    if _entry_lines(current, file_name):
        return None
    title, hook = _title_and_hook(file_name, text)
    line = f"- [{title}]({file_name})" + (f" — {hook}" if hook else "")
    newline = "\r\n" if "\r\n" in current else "\n"
    body = current if current.endswith(("\n", "\r")) or not current else current + newline
    return body + line + newline


def remove_entry(index_text: str, file_name: str) -> str | None:
    """MEMORY.md without the lines that link to a topic file; None when none does."""
    lines = _entry_lines(index_text, file_name)
    if not lines:
        return None
    kept = [line for number, line in enumerate(index_text.split("\n")) if number not in lines]
    return "\n".join(kept)


def rename_entry(index_text: str, old_file: str, new_file: str) -> str | None:
    """MEMORY.md with the links to a renamed topic file pointing to its new name."""
    spans = [span for span in index_links(index_text) if span.written == old_file]
    if not spans:
        return None
    lines = index_text.split("\n")
    for span in sorted(spans, key=lambda s: (s.line, -s.start)):
        line = lines[span.line]
        lines[span.line] = line[: span.start] + new_file + line[span.end :]
    return "\n".join(lines)


def describe_index(path: str, index_text: str, file_name: str | None, change: str) -> IndexChange:
    """How much of MEMORY.md Claude Code loads, and where a topic file's entry is."""
    cut = load_cut(index_text, INDEX_MAX_LINES, INDEX_MAX_BYTES)
    total_lines = line_count(index_text)
    total_bytes = len(index_text.encode("utf-8", "surrogatepass"))
    loaded = total_lines if cut is None else cut.loaded_lines
    lines = index_text.split("\n")
    loaded_bytes = len("\n".join(lines[:loaded]).encode("utf-8", "surrogatepass"))
    entries = _entry_lines(index_text, file_name) if file_name else []
    return IndexChange(
        path=path,
        change=change,
        line=entries[0] if entries else None,
        loaded_lines=loaded,
        total_lines=total_lines,
        limit_lines=INDEX_MAX_LINES,
        loaded_bytes=min(loaded_bytes, total_bytes),
        total_bytes=total_bytes,
        limit_bytes=INDEX_MAX_BYTES,
    )


def _auto_memory_for_root(root: str, environ: Mapping[str, str]) -> str:
    """The store's primary folder: this root's auto memory folder, moved or not."""
    home = environ.get("HOME") or os.path.expanduser("~")
    repository = Repository(root, canonical_top(root), (), home, environ)
    found = auto_memory_folder(repository)
    if found is not None:
        return found
    # Turned off: the folder Claude Code would use, so memory-ls still has a store.
    return os.path.join(claude_home(repository), "projects", project_slug(repository.top), "memory")


def _no_global(environ: Mapping[str, str]) -> str:
    return ""


CLAUDE_STORE = Layout(
    name=NAME,
    agent=AGENT,
    primary_folder="",
    global_folder=_no_global,
    primary_at=_auto_memory_for_root,
    has_global=False,
    index=IndexRules(
        file_name=INDEX,
        add=add_entry,
        remove=remove_entry,
        rename=rename_entry,
        describe=describe_index,
    ),
)
