"""AGENTS.md, as Codex reads it (and many agents after it).

From Codex's documentation (https://developers.openai.com/codex/guides/agents-md):
`AGENTS.md` files in the repository's root and its subfolders, plus the user's in
`$CODEX_HOME` (default `~/.codex`); in each folder from the root down to the working
folder, `AGENTS.override.md` is read instead of `AGENTS.md` when present; the files are
joined root first, so the nearest file to the work comes last and wins; Codex stops adding
files once they reach `project_doc_max_bytes` (32 KiB by default).
"""

from __future__ import annotations

import os

from memory_ls.core.layouts.base import AgentFile, AgentLayout, Repository

NAME = "codex"
AGENT = "Codex"
FILE_NAMES = ("AGENTS.override.md", "AGENTS.md")
MAX_BYTES = 32 * 1024


def codex_home(repository: Repository) -> str:
    """Codex's home folder: `CODEX_HOME`, else `~/.codex`."""
    configured = repository.environ.get("CODEX_HOME", "").strip()
    if configured:
        return os.path.abspath(os.path.expanduser(configured))
    return os.path.join(repository.home, ".codex")


def agent_files(repository: Repository) -> list[AgentFile]:
    """Every AGENTS.md (and override) in the repository, and the user's."""
    found = [
        AgentFile(os.path.join(repository.root, *relative.split("/")), NAME, "instructions")
        for relative in repository.files
        if relative.rsplit("/", 1)[-1] in FILE_NAMES
    ]
    home = codex_home(repository)
    for name in FILE_NAMES:
        path = os.path.join(home, name)
        if os.path.isfile(path):
            found.append(AgentFile(path, NAME, "instructions", "user"))
            break
    return found


CODEX = AgentLayout(name=NAME, agent=AGENT, agent_files=agent_files)
