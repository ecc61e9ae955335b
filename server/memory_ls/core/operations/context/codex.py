"""Codex: AGENTS.md (and its overrides) from the git top down to the file, within 32 KiB."""

from __future__ import annotations

import os

from memory_ls.core.layouts import Repository
from memory_ls.core.layouts import codex as codex_layout
from memory_ls.core.operations.context.plan import (
    _byte_cut,
    _loaded_part,
    _Plan,
)
from memory_ls.core.storage.git import work_tree_top

# ----- Codex -----------------------------------------------------------------------------
#
# From https://developers.openai.com/codex/guides/agents-md: "In your Codex home
# directory (defaults to ~/.codex, unless you set CODEX_HOME), Codex reads
# AGENTS.override.md if it exists. Otherwise, Codex reads AGENTS.md. Codex uses only the
# first non-empty file at this level"; "starting at the project root (typically the Git
# root), Codex walks down to your current working directory ... In each directory along
# the path, it checks for AGENTS.override.md, then AGENTS.md ... at most one file per
# directory"; "Codex skips empty files and stops adding files once the combined size
# reaches the limit defined by project_doc_max_bytes (32 KiB by default)". The cap is
# one budget over the project chain, the file that crosses it cut to what is left
# (openai/codex#36371, codex-rs/core/src/agents_md.rs); the home file is not counted.
# Working on FILE, the chain runs down to FILE's folder (the nearest AGENTS.md to the
# edited file applies, https://agents.md).


def _codex(plan: _Plan) -> None:
    repository = Repository(plan.root, plan.root, (), plan.home, plan.environ)
    home = codex_layout.codex_home(repository)
    for name in codex_layout.FILE_NAMES:
        path = os.path.join(home, name)
        text = plan.read(path) if os.path.isfile(path) else None
        if text is None:
            continue
        if not text.strip():
            plan.skip(path, "empty", "empty: Codex skips it")
            continue
        plan.whole(path, text, "user", "your instructions: every project")
        break
    top = work_tree_top(plan.root)
    if top is None:
        # "If Codex cannot find a project root, it only checks the current directory."
        folders = [plan.root]
        plan.notes.append("No git repository: Codex checks only the folder it starts in.")
    else:
        folders = _folders_between(top, plan.root)
    folders += plan.file_folders()
    remaining = codex_layout.MAX_BYTES
    for folder in folders:
        for name in codex_layout.FILE_NAMES:
            path = os.path.join(folder, name)
            if not os.path.isfile(path):
                continue
            text = plan.read(path)
            if text is None:
                plan.skip(path, "unreadable", "not readable as text (or over 4 MiB)")
                break
            if not text.strip():
                plan.skip(path, "empty", "empty: Codex skips it and reads no other file here")
                break
            why = (
                "overrides AGENTS.md in its folder"
                if name == "AGENTS.override.md"
                else "the folder's instructions"
            )
            if remaining <= 0:
                plan.skip(
                    path,
                    "over-budget",
                    f"after the {codex_layout.MAX_BYTES:,}-byte cap (project_doc_max_bytes)",
                )
                break
            size = len(text.encode("utf-8", "surrogatepass"))
            found = _byte_cut(text, remaining, "budget")
            if found is None:
                plan.whole(path, text, "instructions", why)
            else:
                _loaded_part(plan, path, *found, "instructions", why)
            remaining -= size
            break
    used = codex_layout.MAX_BYTES - max(remaining, 0)
    plan.notes.append(
        f"Project AGENTS.md files: {used:,} of {codex_layout.MAX_BYTES:,} bytes "
        "(project_doc_max_bytes); your own file in CODEX_HOME is not counted against it."
    )


def _folders_between(top: str, root: str) -> list[str]:
    """The folders from `top` down to `root`, both included."""
    folders = [root]
    current = root
    while os.path.normpath(current) != os.path.normpath(top):
        parent = os.path.dirname(current)
        if parent == current:
            return [root]
        current = parent
        folders.append(current)
    return list(reversed(folders))
