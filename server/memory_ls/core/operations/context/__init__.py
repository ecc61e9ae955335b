"""`memory-ls context`: the files an agent loads when it works on a file, in load order.

For one agent (Claude Code, Codex, Cursor, GitHub Copilot, Serena, AI Coder) and one file
of the repository (or none: a session started at the store's root that has not touched a
file yet), which instruction and memory files reach the agent's context, in the order
the agent reads them, each with its estimated token count (`estimate_tokens`: four
characters a token), where an agent stops reading a file it cuts, and the total against
a budget. Each agent's rules cite its documentation below; what a layout knows (folders,
file names, limits) stays in `memory_ls.core.layouts`.

The budget: 20,000 tokens by default (`DEFAULT_BUDGET`), a tenth of the 200,000-token
context window of the models these agents run on by default, so that nine tenths stay
for the code and the conversation. It is twice the ~10,000 tokens (40,000 characters) at
which Claude Code long warned "Large CLAUDE.md will impact performance" (the threshold
has moved since: anthropics/claude-code#56406, #92980), and above Codex's own 32 KiB
cap on AGENTS.md files (about 8,200 tokens), so a Codex chain that fits its cap never
fails the budget. `--budget` sets another.

Pure where it can be: the planning takes a `read` function; the disk is read at the
edge (`read_text`, the walks and the existence checks).

Modules: `result` (the answer and its text), `plan` (what is loaded so far; shared
helpers), one module per agent family (`claude`, `codex`, `rules` for Cursor and
Copilot, `names` for Serena and AI Coder); `agent_context` here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from memory_ls.core.operations.context.claude import _claude
from memory_ls.core.operations.context.codex import _codex
from memory_ls.core.operations.context.names import _aicoder, _serena
from memory_ls.core.operations.context.plan import (
    DEFAULT_BUDGET,
    MANAGED_POLICY,
    Reader,
    _Plan,
    read_text,
)
from memory_ls.core.operations.context.result import (
    AGENTS,
    AgentContext,
    Cut,
    Headroom,
    LoadedFile,
    Skipped,
    render_text,
)
from memory_ls.core.operations.context.rules import _copilot, _cursor
from memory_ls.core.rules.errors import InvalidArguments
from memory_ls.core.store import Store

__all__ = [
    "AGENTS",
    "DEFAULT_BUDGET",
    "MANAGED_POLICY",
    "AgentContext",
    "Cut",
    "Headroom",
    "LoadedFile",
    "Skipped",
    "agent_context",
    "read_text",
    "relative_file",
    "render_text",
]

# ----- the entry point -----------------------------------------------------------------


def relative_file(root: str, file: str) -> str:
    """FILE relative to the root (`/`-separated); refused when it lies outside the root."""
    root = os.path.abspath(root)
    absolute = os.path.normpath(file if os.path.isabs(file) else os.path.join(root, file))
    relative = os.path.relpath(absolute, root)
    if relative == "." or relative.startswith(".." + os.sep) or relative == "..":
        raise InvalidArguments(
            f"{file} is not a file of the repository rooted at {root}; give a path inside it"
        )
    return relative.replace(os.sep, "/")


def agent_context(
    agent: str,
    root: str,
    file: str | None = None,
    *,
    budget: int = DEFAULT_BUDGET,
    environ: Mapping[str, str] | None = None,
    store: Store | None = None,
    managed_policy: str = MANAGED_POLICY,
    read: Reader = read_text,
) -> AgentContext:
    """The files `agent` loads working on `file` (absolute, or relative to the root), or
    at the start of a session at the root when `file` is None.

    Serena's answer needs the store (its memories' names); the others read the disk.
    """
    if agent not in AGENTS:
        raise InvalidArguments(f"unknown agent {agent!r}; one of {', '.join(AGENTS)}")
    if isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0:
        raise InvalidArguments(f"the budget must be a positive number of tokens, not {budget!r}")
    env = os.environ if environ is None else environ
    root = os.path.abspath(root)
    relative = relative_file(root, file) if file is not None else None
    plan = _Plan(root, relative, env, read)
    if agent == "claude":
        _claude(plan, managed_policy)
    elif agent == "codex":
        _codex(plan)
    elif agent == "cursor":
        _cursor(plan)
    elif agent == "copilot":
        _copilot(plan)
    elif agent == "serena":
        if store is None:
            raise InvalidArguments("Serena's context needs the store to list its memories")
        _serena(plan, store)
    else:
        _aicoder(plan)
    return AgentContext(
        agent=agent,
        root=root,
        file=relative,
        budget=budget,
        loaded=tuple(plan.loaded),
        optional=tuple(plan.optional),
        skipped=tuple(plan.skipped),
        notes=tuple(plan.notes),
    )
