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

from memory_ls.core.layouts.base import AgentFile, AgentLayout, Repository

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
