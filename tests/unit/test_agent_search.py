"""Searches show the other agents' files apart from the memories (core/operations/
agent_search.py): which files, their best lines, the claude store's topics once, and the
list a server keeps, listed again when its stamp changes."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

from memory_ls.config import Settings
from memory_ls.core.layouts.claude import project_slug
from memory_ls.core.operations.agent_files import KnownAgentFiles, load_agent_files
from memory_ls.core.operations.agent_search import (
    AgentFilesCache,
    agent_matches,
    watched_paths,
)
from memory_ls.core.services.relevance import parse_query
from memory_ls.core.storage.folders import StoreConfig, resolve_store_config
from memory_ls.core.store import Store


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    return {"HOME": str(home), "PATH": os.environ.get("PATH", "")}


@pytest.fixture
def repo(tmp_path: Path, env: dict[str, str]) -> Path:
    """A git repository with every kind of agent file, memories and the user's own files."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    write(root / "CLAUDE.md", "# Project\n\nBuild with make.\nMoney is integer cents.\n")
    write(root / "AGENTS.md", "# Agents\n\nRun the tests first.\nMoney never in floats.\n")
    write(root / ".claude" / "rules" / "api.md", "---\npaths: src/**\n---\nLog every refund.\n")
    write(root / ".cursor" / "rules" / "style.mdc", "---\nalwaysApply: true\n---\nTabs.\n")
    write(root / ".serena" / "memories" / "payments.md", "# Payments\n\nMoney goes via Stripe.\n")
    write(root / ".serena" / "memories" / "deploy.md", "# Deploy\n\nShip on Fridays.\n")
    home = Path(env["HOME"])
    write(home / ".claude" / "CLAUDE.md", "My money is private.\n")
    write(home / ".codex" / "AGENTS.md", "Money: my own rule.\n")
    return root


def config_of(root: Path, env: Mapping[str, str], layout: str = "serena") -> StoreConfig:
    settings = Settings(layout=layout, global_enabled=False)  # type: ignore[arg-type]
    return resolve_store_config(settings, str(root), environ=env)


def auto_memory(root: Path, env: Mapping[str, str]) -> Path:
    return Path(env["HOME"]) / ".claude" / "projects" / project_slug(str(root)) / "memory"


def test_memories_and_agent_files_are_found_apart(repo: Path, env: dict[str, str]) -> None:
    config = config_of(repo, env)
    found = Store(config).search_memories("money", per_memory=True)
    assert [hit.name for hit in found.hits] == ["payments"]
    matches = agent_matches(config, parse_query("money"), load_agent_files(str(repo), env))
    rows = {row["path"]: row for row in matches.rows}
    assert set(rows) == {"CLAUDE.md", "AGENTS.md"}, "no memory, no user file"
    assert rows["CLAUDE.md"] == {
        "path": "CLAUDE.md",
        "line": 4,
        "text": "Money is integer cents.",
        "agent": "claude",
        "kind": "instructions",
    }
    assert (rows["AGENTS.md"]["agent"], rows["AGENTS.md"]["line"]) == ("codex", 4)
    assert matches.total == 2 and matches.more == 0
    assert matches.fields()["agentFiles"] == matches.rows
    text = matches.text()
    assert text.startswith("Also in agents' files (2; ranked apart from the memories): ")
    assert 'CLAUDE.md:4 "Money is integer cents."' in text

    rule = agent_matches(config, parse_query("refund"), load_agent_files(str(repo), env))
    assert [(r["path"], r["line"], r["kind"]) for r in rule.rows] == [
        (".claude/rules/api.md", 4, "rule")
    ]
    assert agent_matches(config, parse_query("stripe"), load_agent_files(str(repo), env)).rows == []


def test_imports_and_auto_memory_of_another_store(repo: Path, env: dict[str, str]) -> None:
    write(repo / "CLAUDE.md", "# Project\n\nSee @docs/ledger.md\n")
    write(repo / "docs" / "ledger.md", "# Ledger\n\nDouble entry for every payout.\n")
    memory = auto_memory(repo, env)
    topic = write(memory / "payouts.md", "---\nname: Payouts\n---\nPayout on Mondays.\n")
    write(memory / "MEMORY.md", "- [Payouts](payouts.md) — when\n")
    matches = agent_matches(
        config_of(repo, env), parse_query("payout"), load_agent_files(str(repo), env)
    )
    rows = {row["path"]: row for row in matches.rows}
    assert rows["docs/ledger.md"]["kind"] == "import"
    assert rows[str(topic)]["kind"] == "topic", "outside the root: absolute"
    assert f'~/{topic.relative_to(env["HOME"])}:2 "name: Payouts"' in matches.text()


def test_a_claude_store_shows_its_topics_once(repo: Path, env: dict[str, str]) -> None:
    memory = auto_memory(repo, env)
    write(memory / "money.md", "---\nname: Money\ndescription: cents\n---\nMoney in cents.\n")
    write(memory / "MEMORY.md", "- [Money](money.md) — cents\n")
    config = config_of(repo, env, "claude")
    assert config.primary.path == str(memory)
    found = Store(config).search_memories("money", per_memory=True)
    assert "money" in [hit.name for hit in found.hits]
    matches = agent_matches(config, parse_query("money"), load_agent_files(str(repo), env))
    assert {row["path"] for row in matches.rows} == {"CLAUDE.md", "AGENTS.md"}
    # Another store of the same repository shows them as the agent's files.
    other = agent_matches(
        config_of(repo, env), parse_query("money"), load_agent_files(str(repo), env)
    )
    assert str(memory / "money.md") in {row["path"] for row in other.rows}


def test_a_few_shown_the_rest_counted_large_files_skipped(repo: Path, env: dict[str, str]) -> None:
    for number in range(7):
        write(repo / ".claude" / "rules" / f"r{number}.md", f"Invoices rule {number}.\n")
    write(repo / ".claude" / "rules" / "huge.md", "invoices\n" + "x" * 3_000_000)
    config = config_of(repo, env)
    matches = agent_matches(config, parse_query("invoices"), load_agent_files(str(repo), env))
    assert len(matches.rows) == 5 and matches.total == 7 and matches.more == 2
    assert matches.text().endswith(", and 2 more")
    assert all("huge" not in row["path"] for row in matches.rows)


def _aged(known: KnownAgentFiles) -> None:
    """Every path of the stamp ten seconds old: no change is recent."""
    for path in watched_paths(known):
        if os.path.exists(path):
            stat = os.stat(path)
            os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns - 10**10))


def test_the_cache_lists_once_while_nothing_changes(repo: Path, env: dict[str, str]) -> None:
    calls: list[int] = []

    def load(root: str, environ: Mapping[str, str] | None) -> KnownAgentFiles:
        calls.append(1)
        return load_agent_files(root, environ)

    _aged(load_agent_files(str(repo), env))
    cache = AgentFilesCache(str(repo), env, max_age=3600, wait=30, load=load)
    first = cache.known()
    for _ in range(20):
        assert cache.known() is first
    assert len(calls) == 1


def test_the_cache_sees_a_new_claude_md(tmp_path: Path, env: dict[str, str]) -> None:
    root = tmp_path / "fresh"
    (root / "sub").mkdir(parents=True)
    git(root, "init", "-q")
    write(root / "AGENTS.md", "Money.\n")
    # Large: only the stamp (or an explicit wait) lists again, never the age.
    cache = AgentFilesCache(str(root), env, max_age=3600, wait=30)
    assert [os.path.basename(f.path) for f in cache.known().files] == ["AGENTS.md"]
    config = config_of(root, env)

    write(root / "CLAUDE.md", "Money is integer cents.\n")  # the root folder's mtime
    known = cache.known()
    assert str(root / "CLAUDE.md") in known.by_path
    assert "CLAUDE.md" in {
        r["path"] for r in agent_matches(config, parse_query("cents"), known).rows
    }

    write(root / ".claude" / "rules" / "a.md", "Cents.\n")  # a new agent folder
    assert str(root / ".claude" / "rules" / "a.md") in cache.known().by_path
    write(root / ".claude" / "rules" / "b.md", "Cents.\n")  # a folder the stamp holds
    assert str(root / ".claude" / "rules" / "b.md") in cache.known().by_path
    write(root / "CLAUDE.md", "Money is integer cents.\n@docs/x.md\n")  # an import added
    write(root / "docs" / "x.md", "Cents again.\n")
    assert str(root / "docs" / "x.md") in cache.known().imported


def test_the_cache_lists_again_when_old(tmp_path: Path, env: dict[str, str]) -> None:
    root = tmp_path / "aging"
    (root / "sub").mkdir(parents=True)
    git(root, "init", "-q")
    write(root / "AGENTS.md", "Money.\n")
    cache = AgentFilesCache(str(root), env, max_age=0, wait=30)
    cache.known()
    assert cache.wait_listed(30)
    _aged(cache.known())
    assert cache.wait_listed(30)
    nested = write(root / "sub" / "AGENTS.md", "Nested.\n")  # no stamp sees it
    cache.known()  # older than max_age: listed again in the background
    assert cache.wait_listed(30)
    assert str(nested) in cache.known().by_path
