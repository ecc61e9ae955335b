"""Other agents' files checked by `memory-ls check`: real files in a git repository and a
temporary HOME, the CLI run as a process (Claude Code, AGENTS.md, Cursor, Copilot, Cline)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memory_ls.core.layouts import find_agent_files
from memory_ls.core.layouts.claude import project_slug
from memory_ls.core.storage.agent_repository import repository_of


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git repository with a little code and a `.serena/memories` store."""
    root = tmp_path / "repo"
    (root / "src" / "api").mkdir(parents=True)
    (root / "src" / "api" / "server.ts").write_text("export {}\n", encoding="utf-8")
    (root / "docs").mkdir()
    (root / "docs" / "setup.md").write_text("# Setup\n", encoding="utf-8")
    (root / ".serena" / "memories").mkdir(parents=True)
    git(root, "init", "-q")
    return root


def home_of(project: Path) -> Path:
    home = project.parent / "home"
    home.mkdir(exist_ok=True)
    return home


def check(project: Path, *paths: str) -> dict[str, Any]:
    env = {**os.environ, "HOME": str(home_of(project))}
    env.pop("CLAUDE_CONFIG_DIR", None)
    env.pop("CLAUDE_CODE_DISABLE_AUTO_MEMORY", None)
    done = subprocess.run(
        [sys.executable, "-m", "memory_ls.cli", "check", "--format", "json", *paths],
        cwd=project,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode in (0, 1), done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def codes(report: dict[str, Any]) -> list[tuple[str, str, int]]:
    return sorted((d["path"], d["code"], d["line"]) for d in report["diagnostics"])


def auto_memory(project: Path) -> Path:
    folder = home_of(project) / ".claude" / "projects" / project_slug(str(project)) / "memory"
    folder.mkdir(parents=True)
    return folder


def test_claude_imports_broken_cyclic_too_deep_and_in_code(project: Path) -> None:
    (project / "CLAUDE.md").write_text(
        "# Project\nSee @docs/setup.md and @docs/missing.md.\nAsk @alice.\n"
        "`@not/an/import.md`\n```\n@also/not.md\n```\n@chain/1.md\n@loop/a.md\n",
        encoding="utf-8",
    )
    (project / "chain").mkdir()
    for number in range(1, 7):
        (project / "chain" / f"{number}.md").write_text(f"@{number + 1}.md\n", encoding="utf-8")
    (project / "chain" / "7.md").write_text("end\n", encoding="utf-8")
    (project / "loop").mkdir()
    (project / "loop" / "a.md").write_text("@b.md\n", encoding="utf-8")
    (project / "loop" / "b.md").write_text("@a.md\n", encoding="utf-8")
    report = check(project)
    found = [
        (d["path"], d["code"], d["line"], d["col"])
        for d in report["diagnostics"]
        if d["code"] in ("broken-import", "import-cycle", "import-depth")
    ]
    assert sorted(found) == [
        ("CLAUDE.md", "broken-import", 2, 24),
        ("chain/5.md", "import-depth", 1, 1),
        ("loop/b.md", "import-cycle", 1, 1),
    ]
    broken = next(d for d in report["diagnostics"] if d["code"] == "broken-import")
    assert "docs/missing.md" in broken["message"] and "skips it" in broken["message"]


def test_memory_md_cut_unindexed_topics_and_broken_entries(project: Path) -> None:
    memory = auto_memory(project)
    lines = ["# Memory", "- [Build](build.md): how to build", "- [Gone](gone.md): deleted"]
    lines += [f"- note {n}" for n in range(220)]
    lines += ["- [Late](late.md): past the cut"]
    (memory / "MEMORY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for name in ("build.md", "late.md", "orphan.md"):
        (memory / name).write_text(f"# {name}\n", encoding="utf-8")
    report = check(project)
    rows = {(Path(d["path"]).name, d["code"]): d for d in report["diagnostics"]}
    budget = rows[("MEMORY.md", "context-budget")]
    assert budget["line"] == 201
    assert "224 lines" in budget["message"] and "24 lines" in budget["message"]
    assert rows[("MEMORY.md", "broken-link")]["line"] == 3
    assert "not link" in rows[("orphan.md", "unindexed-memory")]["message"]
    assert "line 224" in rows[("late.md", "unindexed-memory")]["message"]
    assert ("build.md", "unindexed-memory") not in rows
    # Its links name topic files beside it, not repository paths.
    assert not any(code == "stale-path" for _, code in rows)


def test_rule_globs_that_match_nothing_and_a_cursor_rule_that_never_applies(
    project: Path,
) -> None:
    (project / ".claude" / "rules").mkdir(parents=True)
    (project / ".claude" / "rules" / "api.md").write_text(
        "---\npaths:\n  - src/api/**/*.ts\n  - src/legacy/**\n---\nUse the client.\n",
        encoding="utf-8",
    )
    (project / ".cursor" / "rules").mkdir(parents=True)
    (project / ".cursor" / "rules" / "ts.mdc").write_text(
        "---\ndescription:\nglobs: src/**/*.ts,*.go\nalwaysApply: false\n---\nTypes.\n",
        encoding="utf-8",
    )
    (project / ".cursor" / "rules" / "never.mdc").write_text(
        "---\ndescription:\nglobs:\nalwaysApply: false\n---\nOrphan rule.\n", encoding="utf-8"
    )
    (project / ".github" / "instructions").mkdir(parents=True)
    (project / ".github" / "instructions" / "py.instructions.md").write_text(
        '---\napplyTo: "**/*.py"\n---\nPython rules.\n', encoding="utf-8"
    )
    (project / ".gitignore").write_text("build/\n", encoding="utf-8")
    (project / "build").mkdir()
    (project / "build" / "gen.py").write_text("x = 1\n", encoding="utf-8")
    report = check(project)
    unmatched = sorted(
        (
            d["path"],
            d["line"],
            d["col"],
            d["message"].split("'")[1] if "'" in d["message"] else None,
        )
        for d in report["diagnostics"]
        if d["code"] == "unmatched-glob"
    )
    assert unmatched == [
        (".claude/rules/api.md", 4, 5, "src/legacy/**"),
        (".cursor/rules/never.mdc", 1, 1, None),
        (".cursor/rules/ts.mdc", 3, 20, "*.go"),
        # build/gen.py exists but git ignores it: the agent never works on it.
        (".github/instructions/py.instructions.md", 2, 11, "**/*.py"),
    ]


def test_existing_checks_apply_to_every_agents_files(project: Path) -> None:
    (project / "AGENTS.md").write_text(
        "Run `scripts/deploy.sh` to deploy.\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> branch\n",
        encoding="utf-8",
    )
    (project / "memory-bank").mkdir()
    (project / "memory-bank" / "techContext.md").write_text(
        "token = ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8" + "\n", encoding="utf-8"
    )
    (project / ".github").mkdir()
    (project / ".github" / "copilot-instructions.md").write_text(
        "---\napplyTo: [broken\n---\nBe brief.\n", encoding="utf-8"
    )
    found = codes(check(project))
    assert ("AGENTS.md", "stale-path", 1) in found
    assert ("AGENTS.md", "merge-conflict", 2) in found
    assert ("memory-bank/techContext.md", "possible-secret", 1) in found
    assert any(c[:2] == (".github/copilot-instructions.md", "invalid-frontmatter") for c in found)


def test_checking_given_paths_checks_only_those_agent_files(project: Path) -> None:
    (project / "CLAUDE.md").write_text("@missing/one.md\n", encoding="utf-8")
    (project / "AGENTS.md").write_text("See `gone/file.py`.\n", encoding="utf-8")
    assert {c[1] for c in codes(check(project, "AGENTS.md"))} == {"stale-path"}
    assert {c[1] for c in codes(check(project, "CLAUDE.md"))} == {"broken-import"}


def test_a_code_turned_off_in_the_project_file_is_not_reported(project: Path) -> None:
    (project / "CLAUDE.md").write_text("@missing/one.md\n", encoding="utf-8")
    (project / "memory-ls.toml").write_text(
        '[diagnostics]\n"broken-import" = "off"\n', encoding="utf-8"
    )
    assert "broken-import" not in {c[1] for c in codes(check(project))}


def test_every_agents_files_are_found_at_once(project: Path) -> None:
    files = {
        "CLAUDE.md": "claude",
        "src/CLAUDE.md": "claude",
        ".claude/rules/a.md": "claude",
        "AGENTS.md": "codex",
        "src/api/AGENTS.md": "codex",
        ".cursor/rules/a.mdc": "cursor",
        "web/.cursor/rules/b.mdc": "cursor",
        ".github/copilot-instructions.md": "copilot",
        ".github/instructions/x.instructions.md": "copilot",
        "memory-bank/progress.md": "cline",
    }
    for relative in files:
        path = project / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n", encoding="utf-8")
    # CLAUDE.local.md is git-ignored, as Claude Code sets it up, and still found.
    (project / ".gitignore").write_text("CLAUDE.local.md\n", encoding="utf-8")
    (project / "CLAUDE.local.md").write_text("mine\n", encoding="utf-8")
    home = home_of(project)
    (home / ".claude").mkdir(exist_ok=True)
    (home / ".claude" / "CLAUDE.md").write_text("me\n", encoding="utf-8")
    memory = auto_memory(project)
    (memory / "MEMORY.md").write_text("- [a](a.md)\n", encoding="utf-8")
    (memory / "a.md").write_text("a\n", encoding="utf-8")
    found = find_agent_files(repository_of(str(project), {"HOME": str(home)}))
    by_path = {f.path: (f.layout, f.kind, f.scope) for f in found}
    for relative, layout in files.items():
        assert by_path[str(project / relative)][0] == layout, relative
    assert by_path[str(project / "CLAUDE.local.md")] == ("claude", "instructions", "project")
    assert by_path[str(home / ".claude" / "CLAUDE.md")] == ("claude", "instructions", "user")
    assert by_path[str(memory / "MEMORY.md")] == ("claude", "memory-index", "project")
    assert by_path[str(memory / "a.md")] == ("claude", "topic", "project")


def test_the_auto_memory_folder_follows_claude_codes_settings(project: Path) -> None:
    home = home_of(project)
    env = {"HOME": str(home)}
    slug = project_slug(str(project))
    assert slug.startswith("-") and "/" not in slug and "_" not in slug
    moved = project.parent / "elsewhere"
    moved.mkdir()
    (moved / "MEMORY.md").write_text("- x\n", encoding="utf-8")
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.local.json").write_text(
        json.dumps({"autoMemoryDirectory": str(moved)}), encoding="utf-8"
    )
    found = find_agent_files(repository_of(str(project), env))
    assert str(moved / "MEMORY.md") in {f.path for f in found}
    off = {**env, "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}
    assert str(moved / "MEMORY.md") not in {
        f.path for f in find_agent_files(repository_of(str(project), off))
    }


def test_the_same_fact_in_claude_md_agents_md_auto_memory_and_a_memory(project: Path) -> None:
    fact = "Money is always stored as integer cents, never as floats."
    (project / "CLAUDE.md").write_text(f"# Rules\n\n- {fact}\n- Short line.\n", encoding="utf-8")
    (project / "AGENTS.md").write_text(
        "* **Money** is always stored as integer cents, never as floats\n", encoding="utf-8"
    )
    (project / ".serena" / "memories" / "money.md").write_text(
        f"# Money\n\n{fact}\n", encoding="utf-8"
    )
    memory = auto_memory(project)
    (memory / "MEMORY.md").write_text("- [Money](money.md)\n", encoding="utf-8")
    (memory / "money.md").write_text(f"{fact.upper()}\n", encoding="utf-8")
    report = check(project)
    duplicates = {
        (Path(d["path"]).name, d["line"]): d["message"]
        for d in report["diagnostics"]
        if d["code"] == "near-duplicate"
    }
    assert set(duplicates) >= {("CLAUDE.md", 3), ("AGENTS.md", 1), ("money.md", 1)}
    assert ".serena/memories/money.md line 3" in duplicates[("CLAUDE.md", 3)]
    assert "AGENTS.md line 1" in duplicates[("CLAUDE.md", 3)]
    # A short line repeated is no fact.
    assert not any("Short line" in m for m in duplicates.values())
