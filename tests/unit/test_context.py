"""`memory-ls context`: what each agent loads working on a file, in load order, with its
estimated tokens, its cuts and the budget. Real files in a real git repository and a
temporary HOME; the environment is passed explicitly, never the real one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from store_helpers import Workspace

from memory_ls.core.layouts.claude import project_slug
from memory_ls.core.operations.context import (
    DEFAULT_BUDGET,
    AgentContext,
    agent_context,
    relative_file,
    render_text,
)
from memory_ls.core.rules.agent_syntax import estimate_tokens
from memory_ls.core.rules.errors import InvalidArguments


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository (inside a folder of its own, to hold a parent's CLAUDE.md)."""
    root = tmp_path / "outer" / "repo"
    write(root / "src" / "api" / "server.ts", "export {}\n")
    git(root, "init", "-q")
    (tmp_path / "home").mkdir()
    return root


def home(repo: Path) -> Path:
    return repo.parent.parent / "home"


def context(
    agent: str,
    repo: Path,
    file: str | None = None,
    env: Mapping[str, str] | None = None,
    **options: Any,
) -> AgentContext:
    environ = {"HOME": str(home(repo)), **(env or {})}
    managed = repo.parent.parent / "managed" / "CLAUDE.md"
    return agent_context(
        agent, str(repo), file, environ=environ, managed_policy=str(managed), **options
    )


def shown(result: AgentContext) -> list[str]:
    return [item.shown for item in result.loaded]


def skipped(result: AgentContext) -> list[tuple[str, str]]:
    return [(item.shown, item.reason) for item in result.skipped]


def auto_memory(repo: Path) -> Path:
    folder = home(repo) / ".claude" / "projects" / project_slug(str(repo)) / "memory"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# ----- Claude Code ---------------------------------------------------------------------


def test_claude_loads_every_level_in_order_for_a_file(repo: Path) -> None:
    user = home(repo) / ".claude"
    write(repo.parent.parent / "managed" / "CLAUDE.md", "policy\n")
    write(user / "CLAUDE.md", "me\n@~/notes/style.md\n")
    write(home(repo) / "notes" / "style.md", "style\n")
    write(user / "rules" / "always.md", "always mine\n")
    write(user / "rules" / "py.md", "---\npaths: ['**/*.py']\n---\npython only\n")
    write(repo.parent / "CLAUDE.md", "the parent folder\n")
    write(repo / "CLAUDE.md", "# Project\n")
    write(repo / ".claude" / "CLAUDE.md", "# Also project\n")
    write(repo / "CLAUDE.local.md", "mine, here\n")
    write(repo / ".claude" / "rules" / "general.md", "every file\n")
    write(
        repo / ".claude" / "rules" / "api" / "ts.md",
        '---\npaths:\n  - "src/api/**/*.ts"\n---\nts\n',
    )
    write(repo / ".claude" / "rules" / "db.md", "---\npaths: migrations/**\n---\ndb\n")
    write(repo / "src" / "CLAUDE.md", "src\n")
    write(repo / "src" / "api" / "CLAUDE.md", "api\n")
    write(repo / "src" / "web" / "CLAUDE.md", "a sibling: never\n")
    write(auto_memory(repo) / "MEMORY.md", "- [a](a.md): a\n")

    result = context("claude", repo, "src/api/server.ts")

    managed = str(repo.parent.parent / "managed" / "CLAUDE.md")
    parent = str(repo.parent / "CLAUDE.md")
    memory = f"~/.claude/projects/{project_slug(str(repo))}/memory/MEMORY.md"
    assert shown(result) == [
        managed,
        "~/.claude/CLAUDE.md",
        "~/notes/style.md",
        "~/.claude/rules/always.md",
        parent,
        "CLAUDE.md",
        ".claude/CLAUDE.md",
        "CLAUDE.local.md",
        ".claude/rules/general.md",  # a folder's files before its subfolders'
        ".claude/rules/api/ts.md",
        "src/CLAUDE.md",
        "src/api/CLAUDE.md",
        memory,
    ]
    kinds = [item.kind for item in result.loaded]
    assert kinds == [
        "managed",
        "user",
        "import",
        "user-rule",
        "ancestor",
        "project",
        "project",
        "local",
        "rule",
        "rule",
        "subfolder",
        "subfolder",
        "memory-index",
    ]
    assert result.loaded[2].imported_by == "~/.claude/CLAUDE.md"
    assert result.loaded[2].depth == 1
    assert skipped(result) == [
        ("~/.claude/rules/py.md", "not-matched"),
        (".claude/rules/db.md", "not-matched"),
    ]
    assert result.total == sum(estimate_tokens(Path(i.path).read_text()) for i in result.loaded)
    assert not result.over_budget


def test_claude_at_the_start_of_a_session_loads_no_subfolder_and_no_scoped_rule(
    repo: Path,
) -> None:
    write(repo / "CLAUDE.md", "# Project\n")
    write(repo / ".claude" / "rules" / "ts.md", "---\npaths: src/**/*.ts\n---\nts\n")
    write(repo / ".claude" / "rules" / "all.md", "---\npaths: '**'\n---\nevery file\n")
    write(repo / "src" / "CLAUDE.md", "src\n")

    result = context("claude", repo)

    assert result.file is None
    assert shown(result) == ["CLAUDE.md", ".claude/rules/all.md"]
    assert skipped(result) == [(".claude/rules/ts.md", "not-matched")]
    assert "before any file is touched" in render_text(result)


def test_claude_config_dir_replaces_the_home_folder(repo: Path, tmp_path: Path) -> None:
    write(home(repo) / ".claude" / "CLAUDE.md", "not this one\n")
    config = tmp_path / "claude-config"
    write(config / "CLAUDE.md", "this one\n")
    write(config / "rules" / "r.md", "rule\n")

    result = context("claude", repo, env={"CLAUDE_CONFIG_DIR": str(config)})

    assert [item.path for item in result.loaded] == [
        str(config / "CLAUDE.md"),
        str(config / "rules" / "r.md"),
    ]


def test_claude_imports_depth_first_with_cycles_depth_and_missing_files_skipped(
    repo: Path,
) -> None:
    write(
        repo / "CLAUDE.md",
        "# Project\n@docs/a.md then @docs/missing.md, ask @alice.\n"
        "`@docs/in-code.md`\n```\n@docs/in-block.md\n```\n@chain/1.md\n@docs/b.md\n",
    )
    write(repo / "docs" / "a.md", "a imports @sub/c.md\n")
    write(repo / "docs" / "sub" / "c.md", "c imports @../../CLAUDE.md and @../b.md\n")
    write(repo / "docs" / "b.md", "b\n")
    write(repo / "docs" / "in-code.md", "never\n")
    write(repo / "docs" / "in-block.md", "never\n")
    for number in range(1, 7):
        write(repo / "chain" / f"{number}.md", f"link {number} @{number + 1}.md\n")
    write(repo / "chain" / "7.md", "end\n")

    result = context("claude", repo)

    assert [(item.shown, item.depth) for item in result.loaded] == [
        ("CLAUDE.md", 0),
        ("docs/a.md", 1),
        ("docs/sub/c.md", 2),
        ("docs/b.md", 3),  # imported by c.md first: depth first, right after its importer
        ("chain/1.md", 1),
        ("chain/2.md", 2),
        ("chain/3.md", 3),
        ("chain/4.md", 4),
        ("chain/5.md", 5),
    ]
    assert result.loaded[3].imported_by == "docs/sub/c.md"
    assert skipped(result) == [
        ("CLAUDE.md", "cycle"),
        ("docs/missing.md", "missing"),
        ("chain/6.md", "too-deep"),
        ("docs/b.md", "already-loaded"),
    ]
    text = render_text(result)
    assert "    docs/sub/c.md (imported by docs/a.md)" in text
    assert "@alice" not in text


def test_memory_md_is_counted_up_to_its_cut_at_200_lines(repo: Path) -> None:
    lines = [f"- [topic {n}](topic-{n}.md): about {n}" for n in range(1, 241)]
    write(auto_memory(repo) / "MEMORY.md", "\n".join(lines) + "\n")

    result = context("claude", repo)

    (index,) = result.loaded
    assert index.kind == "memory-index"
    assert index.tokens == estimate_tokens("\n".join(lines[:200]) + "\n")
    assert index.cut is not None
    assert (index.cut.by, index.cut.loaded_lines, index.cut.total_lines) == ("lines", 200, 240)
    assert index.cut.describe() == "lines 1–200 of 240 loaded; 40 lines not loaded"
    assert "(lines 1–200 of 240 loaded; 40 lines not loaded)" in render_text(result)
    assert index.to_json()["cut"]["line"] == 201


def test_memory_md_cut_by_bytes_and_its_headroom(repo: Path) -> None:
    folder = auto_memory(repo)
    long_lines = ["x" * 999 for _ in range(30)]  # 30,000 bytes in 30 lines
    write(folder / "MEMORY.md", "\n".join(long_lines) + "\n")

    cut = context("claude", repo).loaded[0]
    assert cut.cut is not None and cut.cut.by == "bytes"
    assert cut.loaded_bytes == 25_000
    assert cut.tokens == estimate_tokens(("x" * 999 + "\n") * 25)
    assert cut.cut.describe() == ("25,000 of 30,000 bytes loaded; lines 26–30 not loaded")

    write(folder / "MEMORY.md", "- [a](a.md): a\n" * 187)
    whole = context("claude", repo).loaded[0]
    assert whole.cut is None and whole.headroom is not None
    assert whole.headroom.describe() == "187 of 200 lines, 2,805 of 25,000 bytes: all loaded"


def test_auto_memory_turned_off_is_said(repo: Path) -> None:
    write(auto_memory(repo) / "MEMORY.md", "- [a](a.md)\n")
    result = context("claude", repo, env={"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"})
    assert result.loaded == ()
    assert any("Auto memory is turned off" in note for note in result.notes)


# ----- Codex ---------------------------------------------------------------------------


def test_codex_reads_the_home_file_then_each_folder_down_to_the_file(repo: Path) -> None:
    codex = home(repo) / ".codex"
    write(codex / "AGENTS.override.md", "")  # empty: skipped, AGENTS.md read instead
    write(codex / "AGENTS.md", "mine\n")
    write(repo / "AGENTS.md", "root\n")
    write(repo / "src" / "AGENTS.md", "src: overridden\n")
    write(repo / "src" / "AGENTS.override.md", "src override\n")
    write(repo / "src" / "api" / "AGENTS.md", "api\n")
    write(repo / "src" / "web" / "AGENTS.md", "a sibling\n")

    result = context("codex", repo, "src/api/server.ts")

    assert shown(result) == [
        "~/.codex/AGENTS.md",
        "AGENTS.md",
        "src/AGENTS.override.md",
        "src/api/AGENTS.md",
    ]
    assert skipped(result) == [("~/.codex/AGENTS.override.md", "empty")]
    assert shown(context("codex", repo)) == ["~/.codex/AGENTS.md", "AGENTS.md"]
    other = home(repo).parent / "codex-home"
    write(other / "AGENTS.override.md", "elsewhere\n")
    assert shown(context("codex", repo, env={"CODEX_HOME": str(other)}))[0] == str(
        other / "AGENTS.override.md"
    )


def test_codex_starts_at_the_git_top_above_the_stores_root(repo: Path) -> None:
    write(repo / "AGENTS.md", "top\n")
    write(repo / "src" / "AGENTS.md", "src\n")
    result = context("codex", repo / "src")
    assert shown(result) == [str(repo / "AGENTS.md"), "AGENTS.md"]


def test_codex_stops_at_32_kib_cutting_the_file_that_crosses_it(repo: Path) -> None:
    write(repo / "AGENTS.md", ("r" * 99 + "\n") * 300)  # 30,000 bytes
    write(repo / "src" / "AGENTS.md", ("s" * 99 + "\n") * 40)  # 4,000 bytes: crosses
    write(repo / "src" / "api" / "AGENTS.md", "never read\n")

    result = context("codex", repo, "src/api/server.ts")

    assert shown(result) == ["AGENTS.md", "src/AGENTS.md"]
    crossing = result.loaded[1]
    assert crossing.cut is not None and crossing.cut.by == "budget"
    assert crossing.loaded_bytes == 32 * 1024 - 30_000 == 2_768
    assert crossing.tokens == estimate_tokens(("s" * 99 + "\n") * 27 + "s" * 68)
    assert crossing.cut.describe() == (
        "2,768 of 4,000 bytes loaded, cut inside line 28; lines 29–40 not loaded"
    )
    assert skipped(result) == [("src/api/AGENTS.md", "over-budget")]
    assert any("32,768 of 32,768 bytes" in note for note in result.notes)


# ----- Cursor --------------------------------------------------------------------------


def test_cursor_always_applied_then_matching_globs_and_the_agents_choices(repo: Path) -> None:
    rules = repo / ".cursor" / "rules"
    write(rules / "always.mdc", "---\nalwaysApply: true\n---\nalways\n")
    write(rules / "ts.mdc", "---\nglobs: src/**/*.ts,*.tsx\nalwaysApply: false\n---\nts\n")
    write(rules / "py.mdc", "---\nglobs: **/*.py\n---\npython\n")
    write(rules / "chosen.mdc", "---\ndescription: Database conventions\n---\n" + "d" * 400)
    write(rules / "manual.mdc", "---\nalwaysApply: false\n---\nby hand\n")
    write(repo / "src" / "api" / ".cursor" / "rules" / "near.mdc", "---\nglobs: *.ts\n---\nn\n")
    write(repo / "src" / "web" / ".cursor" / "rules" / "far.mdc", "---\nalwaysApply: true\n---\n")
    write(repo / ".cursorrules", "legacy\n")

    result = context("cursor", repo, "src/api/server.ts")

    assert shown(result) == [
        ".cursor/rules/always.mdc",
        ".cursor/rules/ts.mdc",
        "src/api/.cursor/rules/near.mdc",  # globs relative to src/api
        ".cursorrules",
    ]
    assert [item.shown for item in result.optional] == [".cursor/rules/chosen.mdc"]
    assert result.total == sum(item.tokens for item in result.loaded)
    assert result.optional[0].tokens > 100  # shown, not counted
    assert skipped(result) == [
        (".cursor/rules/manual.mdc", "manual"),
        (".cursor/rules/py.mdc", "not-matched"),
    ]
    assert "May be chosen by the agent (not counted in the total):" in render_text(result)

    start = context("cursor", repo)
    assert shown(start) == [".cursor/rules/always.mdc", ".cursorrules"]


# ----- GitHub Copilot ------------------------------------------------------------------


def test_copilot_repository_wide_then_matching_instructions(repo: Path) -> None:
    github = repo / ".github"
    write(github / "copilot-instructions.md", "everywhere\n")
    write(
        github / "instructions" / "ts.instructions.md",
        '---\napplyTo: "**/*.ts,**/*.tsx"\n---\nts\n',
    )
    write(github / "instructions" / "all.instructions.md", "---\napplyTo: '**'\n---\nall\n")
    write(github / "instructions" / "py" / "py.instructions.md", "---\napplyTo: '**/*.py'\n---\n")
    write(github / "instructions" / "none.instructions.md", "no frontmatter\n")

    result = context("copilot", repo, "src/api/server.ts")

    assert shown(result) == [
        ".github/copilot-instructions.md",
        ".github/instructions/all.instructions.md",
        ".github/instructions/ts.instructions.md",
    ]
    assert skipped(result) == [
        (".github/instructions/none.instructions.md", "not-matched"),
        (".github/instructions/py/py.instructions.md", "not-matched"),
    ]
    assert shown(context("copilot", repo)) == [
        ".github/copilot-instructions.md",
        ".github/instructions/all.instructions.md",
    ]


# ----- Serena and AI Coder -------------------------------------------------------------


def test_serena_loads_the_memories_names_only(ws: Workspace) -> None:
    ws.write(ws.primary / "architecture.md", "# Architecture\n" + "long text " * 500)
    ws.write(ws.primary / "style" / "python.md", "# Python\n")
    ws.write(ws.global_dir / "me.md", "# Me\n")
    store = ws.store()

    result = agent_context("serena", str(ws.root), store=store, environ={"HOME": str(ws.home)})

    project, shared = result.loaded
    assert project.kind == "memory-names"
    assert project.names == ("architecture", "style/python")
    message = (
        'Available project memories: ["architecture", "style/python"]\n'
        "Use the `read_memory` tool to read these memories later if they are relevant to "
        "the task."
    )
    assert project.tokens == estimate_tokens(message)
    assert project.shown == ".serena/memories (2 names)"
    assert shared.names == ("global/me",)
    assert shared.shown == "~/.serena/memories/global (1 name)"
    assert result.total < 100  # the long memory is read on demand, not loaded
    assert any("on demand" in note for note in result.notes)
    assert project.to_json()["names"] == ["architecture", "style/python"]
    with pytest.raises(InvalidArguments):
        agent_context("serena", str(ws.root))


def test_aicoder_autoload_is_cut_at_its_limit(repo: Path) -> None:
    autoload = repo / ".aicoder" / "memory" / "autoload.md"
    write(autoload, ("a" * 63 + "\n") * 40)  # 2,560 bytes

    result = context("aicoder", repo)
    (item,) = result.loaded
    assert item.cut is not None and item.loaded_bytes == 2048
    assert item.tokens == 512
    assert item.cut.describe() == "2,048 of 2,560 bytes loaded; lines 33–40 not loaded"

    raised = context("aicoder", repo, env={"AICODER_MEMORY_AUTOLOAD_LIMIT": "4096"})
    (whole,) = raised.loaded
    assert whole.cut is None and whole.headroom is not None
    assert whole.headroom.describe() == "2,560 of 4,096 bytes: all loaded"
    assert "AICODER_MEMORY_AUTOLOAD_LIMIT=4096" in whole.why


# ----- budget, arguments, JSON ---------------------------------------------------------


def test_the_budget_and_the_text_total(repo: Path) -> None:
    write(repo / "CLAUDE.md", "x" * 4000)  # 1,000 tokens

    fits = context("claude", repo)
    assert fits.budget == DEFAULT_BUDGET == 20_000
    assert "Total: 1,000 of a 20,000-token budget (5%)." in render_text(fits)

    over = context("claude", repo, budget=800)
    assert over.over_budget
    assert "Total: 1,000 of a 800-token budget (125%): 200 over." in render_text(over)
    with pytest.raises(InvalidArguments):
        context("claude", repo, budget=0)


def test_a_file_outside_the_root_or_an_unknown_agent_is_refused(repo: Path) -> None:
    assert relative_file(str(repo), str(repo / "src" / "x.py")) == "src/x.py"
    assert relative_file(str(repo), "src/x.py") == "src/x.py"
    with pytest.raises(InvalidArguments):
        relative_file(str(repo), str(repo.parent / "elsewhere.py"))
    with pytest.raises(InvalidArguments):
        context("claude", repo, "../x.py")
    with pytest.raises(InvalidArguments):
        context("windsurf", repo)


def test_the_json_shape(repo: Path) -> None:
    write(repo / "CLAUDE.md", "@missing/file.md\n")
    write(auto_memory(repo) / "MEMORY.md", "- [a](a.md)\n" * 201)

    data = json.loads(json.dumps(context("claude", repo, "src/api/server.ts").to_json()))

    assert set(data) == {
        "agent",
        "agentName",
        "root",
        "file",
        "budget",
        "total",
        "overBudget",
        "tokensPerCharacter",
        "loaded",
        "optional",
        "skipped",
        "notes",
    }
    assert (data["agent"], data["agentName"], data["file"]) == (
        "claude",
        "Claude Code",
        "src/api/server.ts",
    )
    first, index = data["loaded"]
    assert set(first) == {
        "path",
        "shown",
        "kind",
        "why",
        "tokens",
        "loadedBytes",
        "totalBytes",
        "depth",
        "importedBy",
        "cut",
        "headroom",
    }
    assert index["cut"]["loadedLines"] == 200 and index["cut"]["totalLines"] == 201
    assert data["skipped"] == [
        {
            "path": str(repo / "missing" / "file.md"),
            "shown": "missing/file.md",
            "reason": "missing",
            "detail": "@missing/file.md does not exist",
            "importedBy": "CLAUDE.md",
        }
    ]
    assert data["total"] == first["tokens"] + index["tokens"]


# ----- the command line, run as a process ----------------------------------------------


def run_cli(repo: Path, *args: str, env: Mapping[str, str] | None = None) -> Any:
    environ = {
        key: value
        for key, value in os.environ.items()
        if key not in ("CLAUDE_CONFIG_DIR", "CLAUDE_CODE_DISABLE_AUTO_MEMORY", "CODEX_HOME")
    }
    environ.update({"HOME": str(home(repo)), "XDG_CACHE_HOME": str(home(repo) / ".cache")})
    environ.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "memory_ls.cli", "context", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        env=environ,
        timeout=60,
    )


def test_cli_prints_the_load_order_and_exits_1_over_the_budget(repo: Path) -> None:
    write(repo / "CLAUDE.md", "# Project\n@docs/setup.md\n" + "x" * 3975)  # 4,000 characters
    write(repo / "docs" / "setup.md", "setup\n")
    write(repo / "src" / "api" / "CLAUDE.md", "api\n")

    done = run_cli(repo, "src/api/server.ts", "--agent", "claude")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (
        "Claude Code loads, working on src/api/server.ts (estimated tokens, 4 characters each):"
    )
    assert lines[1].startswith("   1. CLAUDE.md ")
    assert lines[2].startswith("   2.   docs/setup.md (imported by CLAUDE.md) ")
    assert lines[3].startswith("   3. src/api/CLAUDE.md ")
    total = 1000 + 2 + 1
    assert f"Total: {total:,} of a 20,000-token budget (5%)." in done.stdout

    over = run_cli(repo, "--agent", "claude", "--budget", "500")
    assert over.returncode == 1, over.stderr
    assert "of a 500-token budget" in over.stdout


def test_cli_json_and_a_file_given_from_a_subfolder(repo: Path) -> None:
    write(repo / "AGENTS.md", "root\n")
    write(repo / "src" / "api" / "AGENTS.md", "api\n")
    environ = {k: v for k, v in os.environ.items() if k != "CODEX_HOME"}
    environ["HOME"] = str(home(repo))
    command = ["context", "server.ts", "--agent", "codex", "--json", "--root", str(repo)]
    done = subprocess.run(
        [sys.executable, "-m", "memory_ls.cli", *command],
        cwd=repo / "src" / "api",
        capture_output=True,
        text=True,
        env=environ,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["file"] == "src/api/server.ts"
    assert [item["shown"] for item in data["loaded"]] == ["AGENTS.md", "src/api/AGENTS.md"]
    assert data["overBudget"] is False and data["budget"] == 20_000


def test_cli_usage_errors_exit_2(repo: Path) -> None:
    outside = run_cli(repo, str(repo.parent / "elsewhere.py"), "--agent", "claude")
    assert outside.returncode == 2
    assert "not a file of the repository" in outside.stderr
    unknown = run_cli(repo, "--agent", "windsurf")
    assert unknown.returncode == 2
    assert "windsurf" in unknown.stderr
    missing = run_cli(repo, "src/api/server.ts")
    assert missing.returncode == 2
    bad = run_cli(repo, "--agent", "claude", "--budget", "0")
    assert bad.returncode == 2


def test_cli_serena_lists_the_stores_memory_names(repo: Path) -> None:
    write(repo / ".serena" / "memories" / "architecture.md", "# Architecture\n" + "x" * 4000)
    done = run_cli(repo, "--agent", "serena", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [item["names"] for item in data["loaded"]] == [["architecture"]]
    assert data["total"] < 50
