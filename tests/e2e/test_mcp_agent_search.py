"""search_memories through `memory-ls mcp` (the SDK's stdio client, which validates the
structured content against the tool's output schema) shows the repository's agent files
after the memories; `memory-ls search` does too, run as a process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from test_mcp import mcp_process, ok, until


def _repository(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A git repository with a CLAUDE.md, an AGENTS.md, a rule and a memory; HOME apart,
    with a user CLAUDE.md that no search shows."""
    root = tmp_path / "repo"
    (root / ".claude" / "rules").mkdir(parents=True)
    (root / ".serena" / "memories").mkdir(parents=True)
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / "CLAUDE.md").write_text(
        "# Project\n\nBuild with make.\nMoney is integer cents, never floats.\n", encoding="utf-8"
    )
    (root / "AGENTS.md").write_text("# Agents\n\nMoney: see the ledger.\n", encoding="utf-8")
    (root / ".claude" / "rules" / "api.md").write_text("Log every refund.\n", encoding="utf-8")
    (root / ".serena" / "memories" / "payments.md").write_text(
        "# Payments\n\nMoney goes through Stripe.\n", encoding="utf-8"
    )
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "CLAUDE.md").write_text("My money habits.\n", encoding="utf-8")
    env = {"HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    return root, env


async def test_search_memories_shows_agent_files_apart(tmp_path: Path) -> None:
    root, env = _repository(tmp_path)
    async with mcp_process(["--no-global"], env, root) as session:
        text, result = await ok(session, "search_memories", query="money")
        assert [m["name"] for m in result["memories"]] == ["payments"]
        assert result["total"] == 1
        rows = {row["path"]: row for row in result["agentFiles"]}
        assert set(rows) == {"CLAUDE.md", "AGENTS.md"}, "the user's CLAUDE.md is left out"
        assert rows["CLAUDE.md"] == {
            "path": "CLAUDE.md",
            "line": 4,
            "text": "Money is integer cents, never floats.",
            "agent": "claude",
            "kind": "instructions",
        }
        assert rows["AGENTS.md"]["agent"] == "codex"
        assert result["moreAgentFiles"] == 0
        lines = text.split("\n")
        memories = next(n for n, line in enumerate(lines) if "payments" in line)
        also = next(n for n, line in enumerate(lines) if line.startswith("Also in agents'"))
        assert memories < also, "after the memories"
        assert 'CLAUDE.md:4 "Money is integer cents, never floats."' in lines[also]

        # No memory matches: the agents' files still answer.
        text, result = await ok(session, "search_memories", query="refund")
        assert result["memories"] == []
        assert [r["path"] for r in result["agentFiles"]] == [".claude/rules/api.md"]
        assert text.startswith("No memory matched")
        assert '.claude/rules/api.md:1 "Log every refund."' in text

        # A file created since: the next search has it (unless listing takes longer than
        # a search waits for it, on a busy machine: then a later one).
        (root / ".claude" / "rules" / "web.md").write_text("Refund in cents.\n", encoding="utf-8")
        await until(
            session,
            "search_memories",
            lambda found: (
                {r["path"] for r in found["agentFiles"]}
                == {".claude/rules/api.md", ".claude/rules/web.md"}
            ),
            query="refund",
        )

        # Nothing of the kind: no key at all; nor with tags or on the next page.
        _, result = await ok(session, "search_memories", query="stripe")
        assert "agentFiles" not in result
        _, result = await ok(session, "search_memories", query="money", tags=["x"])
        assert "agentFiles" not in result


def test_cli_search_shows_agent_files(tmp_path: Path) -> None:
    root, env = _repository(tmp_path)
    run_env = {**os.environ, **env}
    run_env.pop("CLAUDE_CONFIG_DIR", None)

    def search(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "memory_ls.cli", "search", "money", "--no-global", *args],
            cwd=root,
            env=run_env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    result = json.loads(search("--json"))
    assert [r["name"] for r in result["results"]] == ["payments"]
    assert {r["path"] for r in result["agentFiles"]} == {"CLAUDE.md", "AGENTS.md"}
    assert result["moreAgentFiles"] == 0
    lines = search().splitlines()
    assert lines[0].startswith("payments:3:")
    assert lines[1] == "Also in agents' files (2; ranked apart from the memories):"
    assert "CLAUDE.md:4: Money is integer cents, never floats." in lines[2:]
