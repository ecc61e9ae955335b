"""Cline's (and Roo Code's) memory bank and rules.

From Cline's documentation (https://docs.cline.bot/prompting/cline-memory-bank): the
memory bank is `memory-bank/` in the project, with the core files `projectbrief.md`,
`productContext.md`, `activeContext.md`, `systemPatterns.md`, `techContext.md` and
`progress.md`, which the agent reads at the start of every task; rules are a
`.clinerules` file or the Markdown files of a `.clinerules/` folder.
"""

from __future__ import annotations

import os

from memory_ls.core.layouts.base import AgentFile, AgentLayout, Repository

NAME = "cline"
AGENT = "Cline"
MEMORY_BANK = "memory-bank/"
CORE_FILES = (
    "projectbrief.md",
    "productContext.md",
    "activeContext.md",
    "systemPatterns.md",
    "techContext.md",
    "progress.md",
)
RULES = ".clinerules"


def agent_files(repository: Repository) -> list[AgentFile]:
    """The memory bank's Markdown files and the rules, in the repository's root."""
    found: list[AgentFile] = []
    for relative in repository.files:
        path = os.path.join(repository.root, *relative.split("/"))
        if relative.startswith(MEMORY_BANK) and relative.endswith(".md"):
            found.append(AgentFile(path, NAME, "memory-bank"))
        elif relative == RULES or (relative.startswith(RULES + "/") and relative.endswith(".md")):
            found.append(AgentFile(path, NAME, "rule"))
    return found


CLINE = AgentLayout(name=NAME, agent=AGENT, agent_files=agent_files)
