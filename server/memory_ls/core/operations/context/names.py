"""Serena (the memories' names, read on demand) and AI Coder (autoload.md, cut at its limit)."""

from __future__ import annotations

import json
import os

from memory_ls.core.layouts import aicoder as aicoder_layout
from memory_ls.core.operations.context.plan import (
    _byte_cut,
    _loaded_part,
    _Plan,
)
from memory_ls.core.operations.context.result import (
    Headroom,
    LoadedFile,
)
from memory_ls.core.rules.agent_syntax import (
    estimate_tokens,
    line_count,
)
from memory_ls.core.rules.context_limits import effective_limit
from memory_ls.core.store import Store

# ----- Serena ----------------------------------------------------------------------------
#
# Serena loads no memory's content on its own: activating a project answers with
# "Available project memories: [names...] Use the `read_memory` tool to read these
# memories later if they are relevant to the task" (oraios/serena, src/serena/project.py,
# Project.get_activation_message), and its system prompt says "You infer whether memories
# are relevant based on their names" and lists the global memories' names
# (src/serena/resources/config/prompt_templates/system_prompt.yml). What is loaded is the
# list of names; each memory is read on demand.


def _serena(plan: _Plan, store: Store) -> None:
    config = store.config
    project = _names(store, "project")
    if project:
        message = (
            f"Available project memories: {json.dumps(project)}\n"
            "Use the `read_memory` tool to read these memories later if they are relevant "
            "to the task."
        )
        _names_entry(plan, config.primary.path, project, message, "project memories' names")
    if config.global_folder is not None:
        shared = _names(store, "global")
        if shared:
            message = (
                "The following global (not project-specific) memories are available to you: "
                + ", ".join(shared)
            )
            _names_entry(
                plan,
                config.global_folder.path,
                shared,
                message,
                "global memories' names",
            )
    plan.notes.append(
        "Serena loads the memories' names only; the agent reads a memory (read_memory) "
        "when its name seems relevant, so those tokens are spent on demand."
    )


def _names(store: Store, scope: str) -> list[str]:
    listed = store.list_memories(scope=scope)
    return [str(memory["name"]) for memory in listed["memories"]]


def _names_entry(plan: _Plan, folder: str, names: list[str], message: str, what: str) -> None:
    size = len(message.encode("utf-8", "surrogatepass"))
    count = len(names)
    plan.loaded.append(
        LoadedFile(
            folder,
            f"{plan.shown(folder)} ({count} name{'s' if count != 1 else ''})",
            "memory-names",
            f"{what}, listed when the project is activated",
            estimate_tokens(message),
            size,
            size,
            names=tuple(names),
        )
    )


# ----- AI Coder --------------------------------------------------------------------------
#
# AI Coder loads `.aicoder/memory/autoload.md` into every prompt and truncates it past
# its limit (2,048 bytes, `AICODER_MEMORY_AUTOLOAD_LIMIT`): the layout's ContextLimit.


def _aicoder(plan: _Plan) -> None:
    for limit in aicoder_layout.AICODER.context_limits:
        path = os.path.join(plan.root, *limit.pattern.split("/"))
        if not os.path.isfile(path):
            plan.notes.append(f"No {limit.pattern} yet: AI Coder loads nothing at start.")
            continue
        text = plan.read(path)
        if text is None:
            plan.skip(path, "unreadable", "not readable as text (or over 4 MiB)")
            continue
        limit_bytes, setting = effective_limit(limit, plan.environ)
        why = f"{limit.use}, up to {limit_bytes:,} bytes ({setting})"
        found = _byte_cut(text, limit_bytes, "bytes")
        if found is None:
            size = len(text.encode("utf-8", "surrogatepass"))
            headroom = Headroom(line_count(text), None, size, limit_bytes)
            plan.whole(path, text, "autoload", why, headroom=headroom)
        else:
            _loaded_part(plan, path, *found, "autoload", why)
