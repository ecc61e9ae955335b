"""Other agents' files in the memory graph (core/operations/graph_agents.py, graph.py): a
git repository with CLAUDE.md importing a file, AGENTS.md linking a memory, memories, and
a temporary HOME with Claude Code's auto memory."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memory_ls.config import Settings
from memory_ls.core.layouts.claude import project_slug
from memory_ls.core.operations.agent_files import load_agent_files
from memory_ls.core.operations.graph import (
    AGENT,
    MISSING,
    ORPHAN,
    GraphCache,
    GraphQuery,
    graph_summary,
    memory_graph,
)
from memory_ls.core.operations.graph_agents import AgentGraphCache, AgentTexts
from memory_ls.core.services.index import MemoryIndex
from memory_ls.core.storage.folders import StoreConfig, resolve_store_config

CLAUDE_MD = "# Project\n\nSee @docs/setup.md and @docs/missing.md.\nRead [[project_overview]].\n"
SETUP = "# Setup\n\nAlso [[deploy_notes]] and [[nowhere]]; `mem:project_overview`.\n"
AGENTS_MD = "# Agents\n\nSee [[auth/login_flow]].\n"
INDEX = "# Memory\n\n- [Build](build.md) — how to build\n- [Gone](gone.md)\n"


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


class Repo:
    def __init__(self, base: Path) -> None:
        self.root = base / "repo"
        self.home = base / "home"
        self.memory = self.home / ".claude" / "projects" / project_slug(str(self.root)) / "memory"
        self.environ = {"HOME": str(self.home), "SERENA_HOME": str(base / "serena")}

    def config(self, layout: str | None = None) -> StoreConfig:
        settings = Settings(layout=layout) if layout else Settings()
        return resolve_store_config(settings, str(self.root), environ=self.environ)


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path)
    write(repo.root / "CLAUDE.md", CLAUDE_MD)
    write(repo.root / "docs" / "setup.md", SETUP)
    write(repo.root / "AGENTS.md", AGENTS_MD)
    memories = repo.root / ".serena" / "memories"
    write(memories / "project_overview.md", "# Overview\n\nSee [[auth/login_flow]].\n")
    write(memories / "auth" / "login_flow.md", "# Login\n")
    write(memories / "deploy_notes.md", "# Deploy\n")
    write(memories / "lonely.md", "# Lonely\n")
    subprocess.run(["git", "-C", str(repo.root), "init", "-q"], check=True, timeout=60)
    write(repo.memory / "MEMORY.md", INDEX)
    write(repo.memory / "build.md", "# Build\n\nSee `mem:deploy_notes`.\n")
    return repo


def indexed(config: StoreConfig) -> MemoryIndex:
    index = MemoryIndex(config)
    index.scan()
    index.warm()
    return index


def graph_of(
    repo: Repo, layout: str | None = None, query: GraphQuery | None = None
) -> dict[str, Any]:
    query = query or GraphQuery()
    config = repo.config(layout)
    known = load_agent_files(str(repo.root), repo.environ)
    return memory_graph(indexed(config), {}, query, agents=AgentGraphCache().part(known))


def rows(graph: dict[str, Any]) -> dict[str, list[Any]]:
    return {row[0]: row for row in graph["nodes"]}


def edge_names(graph: dict[str, Any]) -> set[tuple[str, str]]:
    names = [row[0] for row in graph["nodes"]]
    flat = graph["edges"]
    return {(names[flat[i]], names[flat[i + 1]]) for i in range(0, len(flat), 2)}


def test_agent_files_are_nodes_with_their_imports_index_links_and_references(
    repo: Repo,
) -> None:
    graph = graph_of(repo)
    assert graph["flags"]["agent"] == AGENT
    by_name = rows(graph)
    auto = "~/" + str(repo.memory.relative_to(repo.home)).replace(os.sep, "/")
    agents = {name for name, row in by_name.items() if row[4] & AGENT}
    assert agents == {
        "CLAUDE.md",
        "AGENTS.md",
        "docs/setup.md",  # imported: no agent lists it
        f"{auto}/MEMORY.md",
        f"{auto}/build.md",
    }
    assert edge_names(graph) == {
        ("project_overview", "auth/login_flow"),
        ("CLAUDE.md", "docs/setup.md"),
        ("CLAUDE.md", "project_overview"),
        ("docs/setup.md", "deploy_notes"),
        ("docs/setup.md", "nowhere"),
        ("docs/setup.md", "project_overview"),
        ("AGENTS.md", "auth/login_flow"),
        (f"{auto}/MEMORY.md", f"{auto}/build.md"),
        (f"{auto}/build.md", "deploy_notes"),
    }
    # A broken reference in an agent's file is an edge to a missing name, as for memories.
    assert by_name["nowhere"][1] == -1 and by_name["nowhere"][4] == MISSING
    # The agents' "folders" come after the memory folders: one per agent, existing ones kept.
    folders = graph["folders"]
    memory_folders = [f for f in folders if f["kind"] != "agent"]
    assert folders[: len(memory_folders)] == memory_folders
    agent_folders = {f["label"]: f for f in folders[len(memory_folders) :]}
    assert set(agent_folders) == {"claude", "codex"}
    assert agent_folders["claude"]["agent"] == "Claude Code"
    assert agent_folders["claude"]["path"] == str(repo.root)
    assert agent_folders["claude"]["home"] == str(repo.home)
    claude = folders.index(agent_folders["claude"])
    assert by_name["CLAUDE.md"][1] == claude and by_name["docs/setup.md"][1] == claude
    assert by_name["AGENTS.md"][1] == folders.index(agent_folders["codex"])
    # Links in and out count the agents' links; a memory only an agent links is no orphan.
    assert by_name["deploy_notes"][2] == 2 and not by_name["deploy_notes"][4] & ORPHAN
    assert by_name["lonely"][4] & ORPHAN
    assert by_name["CLAUDE.md"][3] == 2 and by_name["docs/setup.md"][2:4] == [1, 3]
    assert graph["total"]["nodes"] == len(graph["nodes"]) and not graph["truncated"]
    assert graph_summary(graph).endswith("; 5 agents' files")


def test_filters_centre_and_limit_with_agent_nodes(repo: Repo) -> None:
    claude_only = graph_of(repo, query=GraphQuery(folder="claude"))
    names = {row[0] for row in claude_only["nodes"]}
    assert "CLAUDE.md" in names and "AGENTS.md" not in names and "project_overview" not in names
    near = graph_of(repo, query=GraphQuery(center="CLAUDE.md", depth=1))
    assert {row[0] for row in near["nodes"]} == {"CLAUDE.md", "docs/setup.md", "project_overview"}
    assert near["nodes"][near["center"]][0] == "CLAUDE.md"
    limited = graph_of(repo, query=GraphQuery(limit=3))
    assert len(limited["nodes"]) == 3 and limited["truncated"]
    assert limited["total"]["nodes"] == len(graph_of(repo)["nodes"])
    # The most linked first: setup.md (4 links), project_overview (3), then the first of
    # those with 2 in node order (the memories first, by name).
    assert {row[0] for row in limited["nodes"]} == {
        "docs/setup.md",
        "project_overview",
        "auth/login_flow",
    }
    flat = limited["edges"]
    assert all(0 <= end < 3 for end in flat)


def test_in_a_claude_store_topic_files_are_memories_never_two_nodes(repo: Repo) -> None:
    graph = graph_of(repo, layout="claude")
    paths = [row[0] for row in graph["nodes"]]
    assert len(paths) == len(set(paths))
    by_name = rows(graph)
    # The auto memory folder is the store: MEMORY.md and build.md are memories.
    assert not by_name["build"][4] & AGENT and not by_name["MEMORY"][4] & AGENT
    assert not any("build.md" in name for name in by_name)
    assert ("MEMORY", "build") in edge_names(graph)
    # The repository's agent files are still there, linking to names the store lacks.
    assert by_name["CLAUDE.md"][4] & AGENT
    assert ("CLAUDE.md", "project_overview") in edge_names(graph)
    assert by_name["project_overview"][4] & MISSING


def test_the_agent_part_is_reused_until_a_file_changes(repo: Repo) -> None:
    config = repo.config()
    index = indexed(config)
    known = load_agent_files(str(repo.root), repo.environ)
    agents = AgentGraphCache()
    cache = GraphCache()
    first = agents.part(known)
    assert agents.part(known) is first
    memory_graph(index, {}, GraphQuery(), cache, first)
    whole = cache.whole(index, first)
    assert cache.whole(index, first) is whole
    write(repo.root / "AGENTS.md", "# Agents\n\nSee [[deploy_notes]] now, and more.\n")
    second = agents.part(known)
    assert second is not first
    graph = memory_graph(index, {}, GraphQuery(), cache, second)
    assert ("AGENTS.md", "deploy_notes") in edge_names(graph)
    assert ("AGENTS.md", "auth/login_flow") not in edge_names(graph)
    # A file an import names coming into being changes the part too.
    write(repo.root / "docs" / "missing.md", "# Now here\n")
    third = agents.part(known)
    assert ("CLAUDE.md", "docs/missing.md") in edge_names(memory_graph(index, {}, agents=third))


def test_texts_are_read_again_only_when_the_file_changes(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    write(path, "one")
    texts = AgentTexts()
    assert texts.read(str(path)) == "one"
    write(path, "two, longer")
    assert texts.read(str(path)) == "two, longer"
    path.unlink()
    assert texts.read(str(path)) is None


def test_without_agents_the_graph_is_as_before(repo: Repo) -> None:
    index = indexed(repo.config())
    plain = memory_graph(index, {}, GraphQuery())
    assert not any(row[4] & AGENT for row in plain["nodes"])
    assert all(f["kind"] != "agent" for f in plain["folders"])
    assert graph_summary(plain).endswith("stale")


def test_links_view_of_agents_files(repo: Repo) -> None:
    """core/operations/link_view.py: imports and index links out, "imported by" and
    "indexed by" in, and agents' files among a memory's backlinks."""
    from memory_ls.core.operations.link_view import (
        agent_backlinks,
        file_links_in,
        file_links_to,
    )

    known = load_agent_files(str(repo.root), repo.environ)
    read = AgentTexts().read
    claude_md = str(repo.root / "CLAUDE.md")
    setup = str(repo.root / "docs" / "setup.md")
    out = file_links_in(known, claude_md, CLAUDE_MD + "Ask @alice.\n", read)
    assert [(link.pointer.kind, link.pointer.target) for link in out] == [
        ("import", setup),
        ("import", str(repo.root / "docs" / "missing.md")),
    ]
    assert (out[0].where.line, out[0].where.start, out[0].where.end) == (2, 5, 18)
    index = str(repo.memory / "MEMORY.md")
    assert [link.pointer.target for link in file_links_in(known, index, INDEX, read)] == [
        str(repo.memory / "build.md"),
        str(repo.memory / "gone.md"),
    ]
    # A file that is no CLAUDE.md (nor imported) has no imports: `@x` is a mention there.
    assert file_links_in(known, str(repo.root / "AGENTS.md"), "Ask @docs/setup.md\n", read) == []
    (imported_by,) = file_links_to(known, setup, read)
    assert (imported_by.path, imported_by.kind) == (claude_md, "import")
    (indexed_by,) = file_links_to(known, str(repo.memory / "build.md"), read)
    assert (indexed_by.path, indexed_by.kind, indexed_by.lines[0].line) == (index, "index", 2)

    index_ = indexed(repo.config())
    deploy = index_.lookup("deploy_notes")
    assert deploy is not None
    found = agent_backlinks(index_, known, deploy.memory, read)
    assert {link.path for link in found} == {setup, str(repo.memory / "build.md")}
    assert agent_backlinks(index_, known, deploy.memory, read, [setup])[0].path.endswith("build.md")
