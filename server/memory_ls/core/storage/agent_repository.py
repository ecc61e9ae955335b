"""The repository as the agents' layouts are told about it: its git top and its files."""

from __future__ import annotations

import os
from collections.abc import Mapping

from memory_ls.core.layouts import AgentFile, Repository, find_agent_files
from memory_ls.core.storage.git import git_output, list_files, work_tree_top

# Outside git, the walk that stands in for `git ls-files` stops here: a home folder opened
# by mistake must not be walked whole.
WALK_LIMIT = 50_000
# Folders never walked outside git: dependencies and build output hold no agent's files.
_SKIPPED = frozenset({"node_modules", "__pycache__", ".git", ".venv", "venv", "dist", "build"})
# Hidden folders that do hold agents' files.
_AGENT_FOLDERS = frozenset({".claude", ".cursor", ".github", ".clinerules"})


def canonical_top(root: str) -> str | None:
    """The main worktree's top (every worktree of a repository shares it), None outside git."""
    output = git_output(root, ["rev-parse", "--path-format=absolute", "--git-common-dir"])
    if output:
        common = output.decode("utf-8", "surrogateescape").strip()
        if os.path.basename(common) == ".git":
            return os.path.dirname(common)
    return work_tree_top(root)


def _walk(root: str) -> list[str]:
    """Files under `root` relative to it, when git cannot list them."""
    found: list[str] = []
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(
            d for d in dirs if d not in _SKIPPED and (not d.startswith(".") or d in _AGENT_FOLDERS)
        )
        relative = os.path.relpath(directory, root)
        for name in sorted(files):
            found.append(name if relative == "." else f"{relative}/{name}".replace(os.sep, "/"))
            if len(found) >= WALK_LIMIT:
                return found
    return found


def repository_of(root: str, environ: Mapping[str, str] | None = None) -> Repository:
    """What the layouts need to find the agents' files of the store rooted at `root`."""
    env = os.environ if environ is None else environ
    root = os.path.abspath(root)
    files = list_files(root)
    home = env.get("HOME") or os.path.expanduser("~")
    return Repository(
        root=root,
        top=canonical_top(root) or root,
        files=tuple(files if files is not None else _walk(root)),
        home=home,
        environ=env,
    )


def agent_files_of(root: str, environ: Mapping[str, str] | None = None) -> list[AgentFile]:
    """Every agent's files for the store rooted at `root`."""
    return find_agent_files(repository_of(root, environ))
