"""`memory.context`: what an agent loads working on a document, as the editor's "What the
Agent Loads" view asks for it, on the real server: a git repository with a CLAUDE.md that
imports a file, Claude Code's files in a temporary HOME, the same answer as the core's
(`memory-ls context --json`)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from e2e_support import SERVER_ENV, Workspace, session, write_file
from pygls.exceptions import JsonRpcException

from memory_ls.core.layouts.claude import project_slug
from memory_ls.core.operations.context import agent_context
from memory_ls.core.rules.agent_syntax import estimate_tokens

pytestmark = pytest.mark.asyncio

CLAUDE_MD = "# Project\n\nSee @docs/setup.md.\n" + "Keep the tests green.\n" * 20
SETUP = "# Setup\n\nRun `make`.\n"


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=True, timeout=60)


def plain(value: Any) -> Any:
    """A result as plain JSON data (the client hands back named tuples for objects)."""
    if hasattr(value, "_asdict"):
        return {key: plain(item) for key, item in value._asdict().items()}
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


def make_repo(base: Path) -> tuple[Workspace, dict[str, str]]:
    """The repository (the workspace) and the server's environment (its own HOME)."""
    workspace = Workspace(base)
    workspace.write("CLAUDE.md", CLAUDE_MD)
    workspace.write("docs/setup.md", SETUP)
    workspace.write("src/api/CLAUDE.md", "# API\n\nValidate every input.\n")
    workspace.write("src/api/server.py", "print('hi')\n")
    workspace.write("AGENTS.md", "# Agents\n\nUse ruff.\n")
    workspace.write(".serena/memories/project_overview.md", "# Overview\n")
    git(workspace.root, "init", "-q", "-b", "main")
    home = base / "home"
    write_file(home / ".claude" / "CLAUDE.md", "# Mine\n\nBe brief.\n")
    memory = home / ".claude" / "projects" / project_slug(str(workspace.root)) / "memory"
    write_file(memory / "MEMORY.md", "# Memory\n\n- [Build](build.md) — how to build\n")
    env = {
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": "",
        "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "",
        "CODEX_HOME": "",
    }
    return workspace, env


def expected(
    workspace: Workspace, env: dict[str, str], agent: str, file: str | None, **options: Any
) -> Any:
    """The core's answer in this process, with the server's environment."""
    environ = {key: value for key, value in {**SERVER_ENV, **env}.items() if value}
    return agent_context(agent, str(workspace.root), file, environ=environ, **options).to_json()


async def test_what_claude_code_loads_for_an_open_file(tmp_path: Path) -> None:
    workspace, env = make_repo(tmp_path)
    async with session(workspace, init_options={}, env=env) as server:
        assert server.initialized is not None
        provider = server.initialized.capabilities.execute_command_provider
        assert provider is not None and "memory.context" in provider.commands

        uri = server.open("src/api/server.py")
        answer = plain(await server.command("memory.context", {"uri": uri}))
        assert answer["agent"] == "claude" and answer["agentName"] == "Claude Code"
        assert answer["file"] == "src/api/server.py"
        assert answer["root"] == str(workspace.root)
        loaded = [(item["shown"], item["depth"], item["importedBy"]) for item in answer["loaded"]]
        assert loaded == [
            ("~/.claude/CLAUDE.md", 0, None),
            ("CLAUDE.md", 0, None),
            ("docs/setup.md", 1, "CLAUDE.md"),
            ("src/api/CLAUDE.md", 0, None),
            (f"~/.claude/projects/{project_slug(str(workspace.root))}/memory/MEMORY.md", 0, None),
        ]
        assert answer["loaded"][1]["tokens"] == estimate_tokens(CLAUDE_MD)
        assert answer["total"] == sum(item["tokens"] for item in answer["loaded"])
        assert answer["budget"] == 20_000 and answer["overBudget"] is False
        assert answer == expected(workspace, env, "claude", "src/api/server.py")

        # Another agent and budget; the file's path as the URI names it.
        codex = plain(
            await server.command(
                "memory.context",
                {"uri": workspace.uri("src/api/server.py"), "agent": "codex", "budget": 3},
            )
        )
        assert [item["shown"] for item in codex["loaded"]] == ["AGENTS.md"]
        assert codex["budget"] == 3 and codex["overBudget"] is True
        assert codex == expected(workspace, env, "codex", "src/api/server.py", budget=3)

        # Serena: the store's memory names. No URI: a session before any file is touched.
        serena = plain(await server.command("memory.context", {"agent": "serena"}))
        assert serena["file"] is None
        assert [item["names"] for item in serena["loaded"]] == [["project_overview"]]
        start = plain(await server.command("memory.context", {}))
        assert start["file"] is None
        assert "src/api/CLAUDE.md" not in [item["shown"] for item in start["loaded"]]

        # A saved change is in the next answer (the files are read from disk).
        workspace.write("docs/setup.md", SETUP + "Then `make test`.\n" * 40)
        again = plain(await server.command("memory.context", {"uri": uri}))
        assert again["loaded"][2]["tokens"] > answer["loaded"][2]["tokens"]


async def test_memory_context_refusals(tmp_path: Path) -> None:
    workspace, env = make_repo(tmp_path)
    outside = write_file(tmp_path / "elsewhere" / "notes.md", "# Elsewhere\n")
    async with session(workspace, init_options={}, env=env) as server:
        refused = [
            ({"uri": workspace.uri("CLAUDE.md"), "agent": "windsurf"}, "unknown agent 'windsurf'"),
            ({"uri": outside.as_uri()}, "is not a file of the repository"),
            ({"uri": "untitled:Untitled-1"}, "is no file: URI"),
            ({"budget": 0}, "the budget must be a positive number"),
            ({"budget": "many"}, "budget must be a whole number"),
            ({"file": "CLAUDE.md"}, "does not take file"),
        ]
        for arguments, message in refused:
            with pytest.raises(JsonRpcException) as info:
                await server.command("memory.context", arguments)
            assert info.value.data["code"] == "invalid-arguments", arguments
            assert message in info.value.message, info.value.message
        # The server lives on.
        answer = plain(await server.command("memory.context", {"agent": "aicoder"}))
        assert answer["loaded"] == [] and answer["total"] == 0
