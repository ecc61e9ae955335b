"""Cursor's rules: `.cursor/rules/*.mdc` with `description`, `globs` and `alwaysApply`.

From Cursor's documentation (https://cursor.com/docs/context/rules): project rules live
in `.cursor/rules` (nested folders' `.cursor/rules` apply to their subtree), one `.mdc`
file each, with frontmatter `description`, `globs` and `alwaysApply`. A rule is always
applied (`alwaysApply: true`), applied to files matching `globs`, chosen by the agent from
its `description`, or attached by hand with `@rule`. The legacy `.cursorrules` file in the
root is still read.
"""

from __future__ import annotations

import os

from memory_ls.core.layouts.base import AgentFile, AgentLayout, Repository

NAME = "cursor"
AGENT = "Cursor"
LEGACY_FILE = ".cursorrules"


def agent_files(repository: Repository) -> list[AgentFile]:
    """Every `.mdc` rule under a `.cursor/rules` folder, and the legacy `.cursorrules`."""
    found: list[AgentFile] = []
    for relative in repository.files:
        path = os.path.join(repository.root, *relative.split("/"))
        if relative.endswith(".mdc") and (
            relative.startswith(".cursor/rules/") or "/.cursor/rules/" in relative
        ):
            found.append(AgentFile(path, NAME, "rule"))
        elif relative == LEGACY_FILE:
            found.append(AgentFile(path, NAME, "instructions"))
    return found


def rule_base(path: str) -> str:
    """The folder a rule's globs are relative to: the one holding its `.cursor` folder."""
    marker = os.sep + os.path.join(".cursor", "rules") + os.sep
    return path.split(marker, 1)[0] if marker in path else os.path.dirname(path)


CURSOR = AgentLayout(name=NAME, agent=AGENT, agent_files=agent_files)
