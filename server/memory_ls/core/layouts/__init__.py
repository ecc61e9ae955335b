"""Each agent's memory conventions, one module per agent: the one place that knows agents.

What lives here: what a layout is (`base`: folders, global scope, patterns, context
limits), the stores memory-ls writes to: Serena's (`serena`: `.serena/memories`,
`SERENA_HOME`, the memory patterns of its YAML files), AI Coder's (`aicoder`:
`.aicoder/memory`, `autoload.md`'s limit, its older SQLite and JSON stores) and Claude
Code's auto memory (`claude`: its folder in `~/.claude/projects`, MEMORY.md kept); the agents
whose own files are found and checked beside the store: Claude Code (`claude`: CLAUDE.md,
rules, auto memory), Codex (`codex`: AGENTS.md), Cursor (`cursor`), GitHub Copilot
(`copilot`) and Cline (`cline`); and, here, the registries and the questions asked of all
of them at once (which layout a root has, the patterns and limits in force, every agent's
files). A new agent is one module and one entry in `LAYOUTS` or `AGENT_LAYOUTS`.

May import: `memory_ls.core.rules` and the standard library; the store above reads the
layouts, never the other way (an import-linter layers contract in pyproject.toml).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from memory_ls.core.layouts.aicoder import AICODER
from memory_ls.core.layouts.base import (
    NO_PATTERNS,
    AgentFile,
    AgentLayout,
    IndexChange,
    IndexRules,
    Layout,
    MemoryPatterns,
    Repository,
)
from memory_ls.core.layouts.claude import CLAUDE, CLAUDE_STORE
from memory_ls.core.layouts.cline import CLINE
from memory_ls.core.layouts.codex import CODEX
from memory_ls.core.layouts.copilot import COPILOT
from memory_ls.core.layouts.cursor import CURSOR
from memory_ls.core.layouts.serena import SERENA
from memory_ls.core.rules.context_limits import ContextLimit, Cut, find_cut_among

__all__ = [
    "AGENT_LAYOUTS",
    "CONTEXT_LIMITS",
    "LAYOUTS",
    "NO_PATTERNS",
    "AgentFile",
    "AgentLayout",
    "IndexChange",
    "IndexRules",
    "Layout",
    "MemoryPatterns",
    "Repository",
    "detect_layout",
    "find_agent_files",
    "find_cut",
    "layout_named",
    "store_patterns",
    "watched_files",
]

# Serena first: the layout of a workspace that has none configured and no agent's folder.
LAYOUTS: Mapping[str, Layout] = {layout.name: layout for layout in (SERENA, AICODER, CLAUDE_STORE)}

# The agents whose own files are found and checked beside the store, whatever its layout.
AGENT_LAYOUTS: Mapping[str, AgentLayout] = {
    layout.name: layout for layout in (CLAUDE, CODEX, CURSOR, COPILOT, CLINE)
}

CONTEXT_LIMITS: tuple[ContextLimit, ...] = tuple(
    limit for layout in LAYOUTS.values() for limit in layout.context_limits
)

_LAST_PARTS = [limit.pattern.rsplit("/", 1)[-1] for limit in CONTEXT_LIMITS]
_FILE_NAMES = frozenset(part for part in _LAST_PARTS if not set(part) & set("*?["))
_WILDCARD_NAMES = [part for part in _LAST_PARTS if set(part) & set("*?[")]


def layout_named(name: str) -> Layout:
    """The layout of a `layout` setting's value."""
    return LAYOUTS[name]


def detect_layout(root: str) -> str:
    """The layout of a workspace with none configured: aicoder only when only it exists."""
    has_aicoder = os.path.isdir(os.path.join(root, AICODER.primary_folder))
    has_serena = os.path.isdir(os.path.join(root, SERENA.primary_folder))
    return AICODER.name if has_aicoder and not has_serena else SERENA.name


def store_patterns(root: str, environ: Mapping[str, str]) -> MemoryPatterns:
    """The read-only and ignored patterns in force for a root, from every agent that has them.

    A repository several agents work in keeps each one's protections whatever the
    configured layout: a memory Serena's configuration makes read-only stays so when
    memory-ls serves the store as AI Coder's.
    """
    found = [layout.patterns(root, environ) for layout in LAYOUTS.values()]
    found = [patterns for patterns in found if patterns is not NO_PATTERNS]
    if len(found) <= 1:
        return found[0] if found else NO_PATTERNS
    return MemoryPatterns(
        read_only=tuple(p for patterns in found for p in patterns.read_only),
        ignored=tuple(p for patterns in found for p in patterns.ignored),
        sources=tuple(s for patterns in found for s in patterns.sources),
        problems=tuple(p for patterns in found for p in patterns.problems),
    )


def watched_files(root: str, environ: Mapping[str, str]) -> list[str]:
    """The files whose change changes the patterns in force."""
    return [path for layout in LAYOUTS.values() for path in layout.pattern_files(root, environ)]


def find_cut(
    text: str, path: str, root: str, environ: Mapping[str, str] | None = None
) -> Cut | None:
    """Where an agent stops reading this file, if it does not read all of it."""
    if os.path.basename(path) not in _FILE_NAMES and not _WILDCARD_NAMES:
        return None  # nearly every file: no agent limits it
    env = os.environ if environ is None else environ
    return find_cut_among(CONTEXT_LIMITS, text, path, root, env)


def find_agent_files(repository: Repository) -> list[AgentFile]:
    """Every agent's files in a repository (several agents at once), each file once."""
    seen: set[str] = set()
    found: list[AgentFile] = []
    for layout in AGENT_LAYOUTS.values():
        for agent_file in layout.agent_files(repository):
            if agent_file.path not in seen:
                seen.add(agent_file.path)
                found.append(agent_file)
    return found
