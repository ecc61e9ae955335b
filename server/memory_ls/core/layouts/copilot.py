"""GitHub Copilot's instructions: the repository-wide file and path-specific ones.

From GitHub's documentation on repository custom instructions
(https://docs.github.com/en/copilot/how-tos/configure-custom-instructions):
`.github/copilot-instructions.md` applies to
every request in the repository; `.github/instructions/**/*.instructions.md` apply to the
files matching the comma-separated globs of their `applyTo` frontmatter key.
"""

from __future__ import annotations

import os

from memory_ls.core.layouts.base import AgentFile, AgentLayout, Repository

NAME = "copilot"
AGENT = "GitHub Copilot"
REPOSITORY_FILE = ".github/copilot-instructions.md"
INSTRUCTIONS_FOLDER = ".github/instructions/"
SUFFIX = ".instructions.md"


def agent_files(repository: Repository) -> list[AgentFile]:
    """The repository-wide instructions and every path-specific instructions file."""
    found: list[AgentFile] = []
    for relative in repository.files:
        path = os.path.join(repository.root, *relative.split("/"))
        if relative == REPOSITORY_FILE:
            found.append(AgentFile(path, NAME, "instructions"))
        elif relative.startswith(INSTRUCTIONS_FOLDER) and relative.endswith(SUFFIX):
            found.append(AgentFile(path, NAME, "rule"))
    return found


COPILOT = AgentLayout(name=NAME, agent=AGENT, agent_files=agent_files)
