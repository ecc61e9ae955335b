"""Other agents' files in `memory.graph` and `memory.links`: a real git repository with
CLAUDE.md importing a file and AGENTS.md linking a memory, a temporary HOME with Claude
Code's auto memory, the real server, and `memory-ls graph --json` as a process."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from e2e_support import SERVER_ENV, Session, Workspace, session, write_file

from memory_ls.core.layouts.claude import project_slug

pytestmark = pytest.mark.asyncio(loop_scope="module")

CLAUDE_MD = "# Project\n\nSee @docs/setup.md.\nRead [[project_overview]] and [[nowhere]].\n"
SETUP = "# Setup\n\nAlso [[deploy_notes]].\n"
AGENTS_MD = "# Agents\n\nSee [[auth/login_flow]].\n"
INDEX = "# Memory\n\n- [Build](build.md) — how to build\n"


class Repo:
    """A git repository (the workspace) and a HOME with Claude Code's auto memory."""

    def __init__(self, base: Path) -> None:
        self.workspace = Workspace(base)
        self.root = self.workspace.root
        self.home = base / "home"
        self.memory = self.home / ".claude" / "projects" / project_slug(str(self.root)) / "memory"
        self.auto = "~/" + self.memory.relative_to(self.home).as_posix()

    def env(self) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "CLAUDE_CONFIG_DIR": "",
            "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "",
        }


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    repo = Repo(tmp_path_factory.mktemp("graph-agents"))
    ws = repo.workspace
    ws.write("CLAUDE.md", CLAUDE_MD)
    ws.write("docs/setup.md", SETUP)
    ws.write("AGENTS.md", AGENTS_MD)
    ws.write(".serena/memories/project_overview.md", "# Overview\n\nSee [[auth/login_flow]].\n")
    ws.write(".serena/memories/auth/login_flow.md", "# Login\n")
    ws.write(".serena/memories/deploy_notes.md", "# Deploy\n")
    subprocess.run(
        ["git", "-C", str(repo.root), "init", "-q", "-b", "main"], check=True, timeout=60
    )
    write_file(repo.memory / "MEMORY.md", INDEX)
    write_file(repo.memory / "build.md", "# Build\n\nSee `mem:deploy_notes`.\n")
    return repo


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(repo: Repo) -> AsyncIterator[Session]:
    async with session(repo.workspace, init_options={}, env=repo.env()) as started:
        yield started


def names_and_edges(graph: dict[str, Any]) -> tuple[list[str], set[tuple[str, str]]]:
    names = [row[0] for row in graph["nodes"]]
    flat = graph["edges"]
    return names, {(names[flat[i]], names[flat[i + 1]]) for i in range(0, len(flat), 2)}


def cli_graph(repo: Repo, *args: str) -> dict[str, Any]:
    """What `python -m memory_ls.cli graph --json` says, run in the repository."""
    done = subprocess.run(
        [sys.executable, "-m", "memory_ls.cli", "graph", "--json", *args],
        cwd=repo.root,
        env={**SERVER_ENV, **repo.env()},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def expected_edges(repo: Repo) -> set[tuple[str, str]]:
    return {
        ("project_overview", "auth/login_flow"),
        ("CLAUDE.md", "docs/setup.md"),
        ("CLAUDE.md", "project_overview"),
        ("CLAUDE.md", "nowhere"),
        ("docs/setup.md", "deploy_notes"),
        ("AGENTS.md", "auth/login_flow"),
        (f"{repo.auto}/MEMORY.md", f"{repo.auto}/build.md"),
        (f"{repo.auto}/build.md", "deploy_notes"),
    }


async def test_graph_has_the_agents_files_as_the_cli_says(server: Session, repo: Repo) -> None:
    async def listed() -> bool:
        graph = await server.command("memory.graph", {})
        return "AGENTS.md" in names_and_edges(graph)[0]

    await server.eventually(listed, "the agents' files in the graph")
    graph = await server.command("memory.graph", {})
    edges = names_and_edges(graph)[1]
    assert edges == expected_edges(repo)
    agent = graph["flags"]["agent"]
    rows = {row[0]: row for row in graph["nodes"]}
    assert {name for name, row in rows.items() if row[4] & agent} == {
        "CLAUDE.md",
        "docs/setup.md",
        "AGENTS.md",
        f"{repo.auto}/MEMORY.md",
        f"{repo.auto}/build.md",
    }
    folders = graph["folders"]
    assert folders[0]["kind"] == "primary"
    assert [f["label"] for f in folders if f["kind"] == "agent"] == ["claude", "codex"]
    assert folders[rows["CLAUDE.md"][1]]["label"] == "claude"
    assert rows["nowhere"][1] == -1 and rows["nowhere"][4] == graph["flags"]["missing"]
    assert graph["format"] == 1

    cli = cli_graph(repo)
    assert names_and_edges(cli)[1] == edges
    assert sorted(cli["folders"], key=str) == sorted(folders, key=str)
    assert cli["total"] == graph["total"]


async def test_centre_on_an_agent_file_and_limit(server: Session, repo: Repo) -> None:
    near = await server.command("memory.graph", {"center": "CLAUDE.md", "depth": 1})
    assert sorted(names_and_edges(near)[0]) == [
        "CLAUDE.md",
        "docs/setup.md",
        "nowhere",
        "project_overview",
    ]
    top = await server.command("memory.graph", {"limit": 2})
    assert len(top["nodes"]) == 2 and top["truncated"] is True
    assert "CLAUDE.md" in names_and_edges(top)[0]  # 3 links out: the most linked
    only = await server.command("memory.graph", {"folder": "codex"})
    assert names_and_edges(only)[0] == ["AGENTS.md"]
    near_cli = cli_graph(repo, "--center", "CLAUDE.md", "--depth", "1")
    assert sorted(names_and_edges(near_cli)[0]) == sorted(names_and_edges(near)[0])


async def test_an_agent_file_changed_on_disk_changes_the_graph(server: Session, repo: Repo) -> None:
    repo.workspace.write("AGENTS.md", "# Agents\n\nSee [[deploy_notes]] instead.\n")

    async def changed() -> bool:
        graph = await server.command("memory.graph", {})
        return ("AGENTS.md", "deploy_notes") in names_and_edges(graph)[1]

    await server.eventually(changed, "AGENTS.md's new link in the graph")
    graph = await server.command("memory.graph", {})
    assert ("AGENTS.md", "auth/login_flow") not in names_and_edges(graph)[1]
    repo.workspace.write("AGENTS.md", AGENTS_MD)


# ----- the links view (`memory.links`) -----------------------------------------------------


def sources(answer: dict[str, Any]) -> list[tuple[str, str, list[int]]]:
    """The answer's backlinks as (path, kind, lines)."""
    return [
        (source["path"], source["kind"], [link["line"] for link in source["links"]])
        for source in answer["linkedFrom"]
    ]


def targets(answer: dict[str, Any]) -> list[tuple[str, str, str, bool]]:
    """The answer's outgoing links as (form, target as written, name, broken)."""
    return [(t["form"], t["target"], t["name"], t["broken"]) for t in answer["linksTo"]]


async def test_links_of_an_open_claude_md(server: Session, repo: Repo) -> None:
    uri = server.open("CLAUDE.md")
    answer = await server.command("memory.links", {"uri": uri})
    assert answer["name"] is None
    assert answer["agent"] == {
        "layout": "claude",
        "kind": "instructions",
        "scope": "project",
        "shown": "CLAUDE.md",
    }
    assert targets(answer) == [
        ("import", "docs/setup.md", "docs/setup.md", False),
        ("wiki", "project_overview", "project_overview", False),
        ("wiki", "nowhere", None, True),
    ]
    imported = answer["linksTo"][0]
    assert imported["uri"] == repo.workspace.uri("docs/setup.md")
    assert imported["range"]["start"] == {"line": 2, "character": 5}  # after the `@`
    assert answer["linkedFrom"] == []


async def test_links_of_an_imported_file_and_of_auto_memory(server: Session, repo: Repo) -> None:
    setup = await server.command("memory.links", {"uri": repo.workspace.uri("docs/setup.md")})
    assert setup["agent"]["kind"] == "imported"
    assert sources(setup) == [(str(repo.root / "CLAUDE.md"), "import", [2])]
    assert targets(setup) == [("wiki", "deploy_notes", "deploy_notes", False)]

    build = (repo.memory / "build.md").as_uri()
    topic = await server.command("memory.links", {"uri": build})
    assert topic["agent"]["kind"] == "topic" and topic["agent"]["shown"] == f"{repo.auto}/build.md"
    assert sources(topic) == [(str(repo.memory / "MEMORY.md"), "index", [2])]
    assert targets(topic) == [("mem", "deploy_notes", "deploy_notes", False)]

    index = await server.command("memory.links", {"uri": (repo.memory / "MEMORY.md").as_uri()})
    assert index["agent"]["kind"] == "memory-index"
    assert targets(index) == [("index", "build.md", f"{repo.auto}/build.md", False)]
    assert index["linksTo"][0]["uri"] == build


async def test_a_memory_lists_the_agents_files_that_link_to_it(server: Session, repo: Repo) -> None:
    overview = await server.command("memory.links", {"name": "project_overview"})
    assert overview["agent"] is None
    assert sources(overview) == [(str(repo.root / "CLAUDE.md"), "reference", [3])]
    deploy = await server.command("memory.links", {"name": "deploy_notes"})
    assert sorted(sources(deploy)) == sorted(
        [
            (str(repo.root / "docs" / "setup.md"), "reference", [2]),
            (str(repo.memory / "build.md"), "reference", [2]),
        ]
    )
    login = await server.command("memory.links", {"name": "auth/login_flow"})
    assert sorted(sources(login)) == sorted(
        [
            (str(repo.root / "AGENTS.md"), "reference", [2]),
            (str(repo.root / ".serena" / "memories" / "project_overview.md"), "reference", [2]),
        ]
    )
    assert [s["name"] for s in login["linkedFrom"] if s["kind"] == "reference"].count(None) == 1
