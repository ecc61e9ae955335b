"""The project file through the real servers (issue 31): the language server reads the
workspace's memory-ls.toml, follows its changes, keeps the last good one, says which
editor settings override it and writes it on request; `memory-ls mcp` started by an agent
with no flags, in a subdirectory, serves the same store and journals where `memory-ls
history` looks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from e2e_support import Session, Workspace, session
from lsprotocol import types
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from memory_ls.project_file import read_project_file

pytestmark = pytest.mark.asyncio
MEMORY_LS = str(Path(sys.executable).parent / "memory-ls")


async def routed(server: Session, name: str) -> str:
    """The folder a new memory of this name goes to, relative to the workspace root."""
    folder = Path((await server.command("memory.route", {"name": name}))["folder"])
    return os.path.relpath(folder, server.workspace.root)


async def test_the_language_server_reads_follows_and_keeps_the_project_file(
    workspace: Workspace,
) -> None:
    project_file = workspace.write(
        "memory-ls.toml", 'additional-folders = ["shared/feature"]\nmax-memory-bytes = 100\n'
    )
    async with session(workspace, init_options={}) as server:
        assert await routed(server, "FEATURE_x") == "shared/feature"
        assert await routed(server, "SPEC_x") == ".serena/memories"
        # The client watches the file's names (the workspace and its parents).
        watched = json.dumps(
            [
                r.register_options
                for r in server.registrations
                if r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
            ]
        )
        assert "memory-ls.toml" in watched

        project_file.write_text('additional-folders = ["shared/spec"]\n')
        server.notify_files((project_file, types.FileChangeType.Changed))

        async def spec_routed() -> bool:
            return await routed(server, "SPEC_x") == "shared/spec"

        await server.eventually(spec_routed, "the changed file is read again")

        project_file.write_text('additional-folders = ["shared/feature"]\nmax-bytes = 1\n')
        server.notify_files((project_file, types.FileChangeType.Changed))
        message = await server.wait_for_message("max-bytes")
        assert message.type == types.MessageType.Error
        assert str(project_file) in message.message and "previous settings" in message.message
        assert await routed(server, "SPEC_x") == "shared/spec"  # the last good one
        described = await server.command("memory.configuration")
        assert "max-bytes" in described["problem"]


async def test_editor_settings_override_the_file_and_can_be_written_into_it(
    workspace: Workspace,
) -> None:
    workspace.write("memory-ls.toml", "# ours\nmax-memory-bytes = 100\n")
    settings = {"maxMemoryBytes": 5000, "additionalFolders": ["shared/feature"]}
    async with session(workspace, init_options={}, configuration=settings) as server:
        described = await server.command("memory.configuration")
        assert described["projectFile"] == str(workspace.path("memory-ls.toml"))
        assert described["settings"]["max-memory-bytes"]["value"] == 5000
        assert described["overrides"] == [
            {"key": "maxMemoryBytes", "source": "workspace configuration (memoryLs)", "value": 5000}
        ]
        assert sorted(described["editorKeys"]) == ["additionalFolders", "maxMemoryBytes"]
        with pytest.raises(Exception, match="replace"):
            await server.command("memory.writeProjectFile", {})
        written = await server.command("memory.writeProjectFile", {"replace": True})
        assert written["replaced"] is True
        values = read_project_file(str(workspace.path("memory-ls.toml"))).layer.values
        assert values["max_memory_bytes"] == 5000
        assert [f.path for f in values["additional_folders"]] == [  # type: ignore[attr-defined]
            str(workspace.path("shared/feature"))
        ]
        assert (await server.command("memory.configuration"))["overrides"] == []


async def test_diagnostics_override_the_file_code_by_code(workspace: Workspace) -> None:
    workspace.write(
        "memory-ls.toml", '[diagnostics]\nunknown-prefix = "off"\nbroken-link = "hint"\n'
    )
    settings = {"diagnostics": {"broken-link": "error", "shadowed": "off"}, "globalFolder": None}
    async with session(workspace, init_options={}, configuration=settings) as server:
        described = await server.command("memory.configuration")
        assert described["overrides"] == [
            {
                "key": "diagnostics.broken-link",
                "source": "workspace configuration (memoryLs)",
                "value": "error",
            }
        ]
        assert described["editorKeys"] == ["diagnostics", "globalFolder"]
        assert described["settings"]["diagnostics.unknown-prefix"]["value"] == "off"
        assert described["settings"]["global"]["value"] is False


def agent_params(cwd: Path, home: Path) -> StdioServerParameters:
    """`memory-ls mcp` as an agent's MCP configuration starts it: no flags."""
    return StdioServerParameters(
        command=MEMORY_LS,
        args=["mcp"],
        env={**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / "cache")},
        cwd=str(cwd),
    )


async def test_an_agent_with_no_flags_serves_the_store_the_file_defines(tmp_path: Path) -> None:
    root, home = tmp_path / "repo", tmp_path / "home"
    for folder in (".serena/memories", "shared/feature", "src"):
        (root / folder).mkdir(parents=True)
    home.mkdir()
    project_file = root / "memory-ls.toml"
    project_file.write_text('additional-folders = ["shared/feature"]\nglobal = false\n')
    async with (
        stdio_client(agent_params(root / "src", home)) as (read, write),
        ClientSession(read, write) as agent,
    ):
        await agent.initialize()
        result = await agent.call_tool(
            "write_memory", {"memory_name": "FEATURE_auth", "content": "# Auth\n"}
        )
        assert not result.is_error, result.content
        assert (root / "shared/feature/FEATURE_auth.md").is_file()

        project_file.write_text("additional-folders = 3\n")
        listed = await agent.call_tool("list_memories", {})
        assert not listed.is_error
        texts = [block.text for block in listed.content if block.type == "text"]
        assert any(
            "[invalid-configuration]" in text and "additional-folders" in text for text in texts
        )
        again = await agent.call_tool(
            "write_memory", {"memory_name": "FEATURE_pay", "content": "# Pay\n"}
        )
        assert not again.is_error
        assert (root / "shared/feature/FEATURE_pay.md").is_file()  # the last good file

    def history() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [MEMORY_LS, "history", "FEATURE_auth", "--json"],
            cwd=root,
            env={**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / "cache")},
            capture_output=True,
            text=True,
            check=False,
        )

    # The command line refuses the broken file outright (exit 2) ...
    assert history().returncode == 2
    # ... and once it is fixed, a reviewer's history shows what the agent wrote.
    project_file.write_text('additional-folders = ["shared/feature"]\n')
    done = history()
    assert done.returncode == 0, done.stderr
    entries = json.loads(done.stdout)["entries"]
    assert [e["action"] for e in entries] == ["save"]
    assert entries[0]["source"].startswith("mcp")


async def test_the_servers_init_registers_start_as_each_agent_starts_them(tmp_path: Path) -> None:
    """After `memory-ls init`, each agent's MCP entry, started as that agent starts it (the
    command on PATH, its arguments, `${workspaceFolder}` expanded), serves the file's store."""
    root, home = tmp_path / "repo", tmp_path / "home"
    for folder in (".serena/memories", "shared/feature"):
        (root / folder).mkdir(parents=True)
    home.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / "cache"),
        # The agents find `memory-ls` on their PATH, where the user installed it.
        "PATH": os.pathsep.join([str(Path(MEMORY_LS).parent), os.environ.get("PATH", "")]),
    }
    done = subprocess.run(
        [MEMORY_LS, "--additional-folders", "shared/feature", "init"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for relative, table in ((".mcp.json", "mcpServers"), (".vscode/mcp.json", "servers")):
        entry = json.loads((root / relative).read_text())[table]["memory-ls"]
        args = [arg.replace("${workspaceFolder}", str(root)) for arg in entry["args"]]
        params = StdioServerParameters(command=entry["command"], args=args, env=env, cwd=str(root))
        name = f"FEATURE_{relative.strip('.').replace('/', '_').replace('.', '_')}"
        async with (
            stdio_client(params) as (read, write),
            ClientSession(read, write) as agent,
        ):
            await agent.initialize()
            tools = {tool.name for tool in (await agent.list_tools()).tools}
            assert {"write_memory", "search_memories"} <= tools
            result = await agent.call_tool(
                "write_memory", {"memory_name": name, "content": "# x\n"}
            )
            assert not result.is_error, result.content
        assert (root / "shared" / "feature" / f"{name}.md").is_file(), relative
