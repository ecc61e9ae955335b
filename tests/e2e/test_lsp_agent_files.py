"""Other agents' files in the editor: CLAUDE.md and its imports, Claude Code's auto memory
(MEMORY.md and its topic files) in a temporary HOME, a real git repository, the real server."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from e2e_support import Session, Workspace, session, write_file
from lsprotocol import types

from memory_ls.core.layouts.claude import project_slug

pytestmark = pytest.mark.asyncio(loop_scope="function")

CLAUDE_MD = "# Project\n\nSee @docs/setup.md and @docs/missing.md.\nAsk @alice.\n"
SETUP = "# Setup\n\nAlso @more.md and @../CLAUDE.md.\n"
INDEX = "# Memory\n\n- [Build](build.md) — how to build\n"


@dataclass
class Repo:
    """A git repository (the workspace) and a HOME with Claude Code's auto memory."""

    workspace: Workspace
    home: Path

    @property
    def root(self) -> Path:
        return self.workspace.root

    @property
    def memory(self) -> Path:
        """The auto memory folder Claude Code keeps for this repository."""
        slug = project_slug(str(self.root))
        return self.home / ".claude" / "projects" / slug / "memory"

    def env(self) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "CLAUDE_CONFIG_DIR": "",
            "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "",
        }


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=True, timeout=60)


def make_repo(base: Path) -> Repo:
    workspace = Workspace(base)
    workspace.write("CLAUDE.md", CLAUDE_MD)
    workspace.write("docs/setup.md", SETUP)
    workspace.write("docs/guide/intro.md", "# Intro\n")
    workspace.write("src/app.py", "print('hi')\n")
    workspace.write(".serena/memories/project_overview.md", "# Overview\n")
    git(workspace.root, "init", "-q", "-b", "main")
    repo = Repo(workspace, base / "home")
    write_file(repo.memory / "MEMORY.md", INDEX)
    write_file(repo.memory / "build.md", "# Build\n\nRun make.\n")
    write_file(repo.memory / "orphan.md", "# Orphan\n\nNever indexed.\n")
    return repo


@asynccontextmanager
async def started(repo: Repo) -> AsyncIterator[Session]:
    async with session(repo.workspace, init_options={}, env=repo.env()) as server:
        yield server


def open_file(server: Session, path: Path, text: str | None = None) -> str:
    """Open any file (in the workspace or not) as Markdown; return its URI."""
    return server.open(str(path), text)


def messages(server: Session, uri: str, code: str) -> list[str]:
    return [d.message for d in server.client.diagnostics.get(uri, ()) if d.code == code]


# ----- live diagnostics -------------------------------------------------------------------


async def test_claude_md_and_its_imports_are_checked_as_typed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    async with started(repo) as server:
        uri = open_file(server, repo.root / "CLAUDE.md")
        await server.wait_for_codes(uri, lambda codes: "broken-import" in codes)
        (message,) = messages(server, uri, "broken-import")
        assert message.startswith("@docs/missing.md imports")
        broken = next(d for d in server.client.diagnostics[uri] if d.code == "broken-import")
        line = CLAUDE_MD.split("\n")[2]
        assert broken.range.start == types.Position(line=2, character=line.index("@docs/m"))
        assert broken.source == "memory-ls"

        # The editor's text, not the disk's: fixed as typed, back as typed.
        server.replace_text(uri, "# Project\n\nSee @docs/setup.md.\n", 2)
        await server.wait_for_codes(uri, lambda codes: "broken-import" not in codes)
        server.replace_text(uri, "# Project\n\n@docs/gone.md\n", 3)
        await server.wait_for_codes(uri, lambda codes: "broken-import" in codes)
        (message,) = messages(server, uri, "broken-import")
        assert message.startswith("@docs/gone.md imports")

        # A file CLAUDE.md imports gets its own imports checked (its cycle back too).
        setup = open_file(server, repo.root / "docs" / "setup.md")
        await server.wait_for_codes(setup, lambda codes: "broken-import" in codes)
        assert "@more.md" in messages(server, setup, "broken-import")[0]
        server.replace_text(setup, "# Setup\n\nNothing imported.\n", 2)
        await server.wait_for_codes(setup, lambda codes: codes == [])


async def test_auto_memory_index_and_topics_in_the_editor(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    async with started(repo) as server:
        orphan = open_file(server, repo.memory / "orphan.md")
        await server.wait_for_codes(orphan, lambda codes: codes == ["unindexed-memory"])
        assert messages(server, orphan, "unindexed-memory")[0].startswith("orphan.md is never")
        build = open_file(server, repo.memory / "build.md")
        index = open_file(server, repo.memory / "MEMORY.md")
        # As `memory-ls check` reports it: MEMORY.md's links are also path mentions,
        # looked for in the repository (`stale-path`); the index's own codes besides.
        await server.wait_for_codes(index, lambda codes: codes == ["stale-path"])

        server.replace_text(index, INDEX + "- [Gone](gone.md) — missing\n", 2)
        await server.wait_for_codes(index, lambda codes: "broken-link" in codes)
        assert messages(server, index, "broken-link")[0].startswith("gone.md does not exist")
        server.replace_text(index, "# Memory\n" + "- line\n" * 210 + "- [Build](build.md)\n", 3)
        await server.wait_for_codes(index, lambda codes: "context-budget" in codes)
        server.replace_text(index, INDEX, 4)
        await server.wait_for_codes(index, lambda codes: codes == ["stale-path"])

        # Other files as on disk: the index saved with the orphan's entry, a file event.
        (repo.memory / "MEMORY.md").write_text(INDEX + "- [Orphan](orphan.md)\n")
        server.notify_files((repo.memory / "MEMORY.md", types.FileChangeType.Changed))
        await server.wait_for_codes(orphan, lambda codes: codes == [])
        assert server.codes(build) == []


async def test_new_agent_files_and_memories_keep_their_diagnostics(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    async with started(repo) as server:
        # A memory's diagnostics are what they were (no agent checks on it).
        memory = server.open(".serena/memories/network.md", "# Net\n\n@docs/nope.md [[nope]]\n")
        assert await server.wait_for_codes(memory, bool) == ["broken-link"]
        # A plain Markdown file no CLAUDE.md imports gets none.
        plain = server.open("notes/plain.md", "@docs/nope.md\n[[nope]]\n")
        assert await server.wait_for_codes(plain, bool) == ["broken-link"]

        # A CLAUDE.md created in a subfolder: listed again after the file event.
        repo.workspace.write("src/CLAUDE.md", "@missing.md\n")
        sub = server.open("src/CLAUDE.md")
        server.notify_files((repo.root / "src" / "CLAUDE.md", types.FileChangeType.Created))
        await server.wait_for_codes(sub, lambda codes: codes == ["broken-import"])
        # The missing file appears: the import is no longer broken.
        repo.workspace.write("src/missing.md", "# Here\n")
        server.notify_files((repo.root / "src" / "missing.md", types.FileChangeType.Created))
        await server.wait_for_codes(sub, lambda codes: codes == [])
