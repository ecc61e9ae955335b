"""Conflicts are not knowledge (issue 34.3), through the surfaces: a write holding git
merge conflict markers is refused with `[merge-conflict]` and nothing written (MCP SDK
stdio client, the CLI as a process), the fix is allowed, and markers in a fenced example
are no conflict for `memory-ls check`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from test_mcp import Workspace, mcp_server, ok, refused
from test_mcp import ws as ws  # the fixture, shared with test_mcp

CONFLICTED = (
    "# Deploy\n\n<<<<<<< HEAD\nShip weekly.\n||||||| base\nShip on Tuesdays.\n=======\n"
    "Ship daily.\n>>>>>>> feature\nWatch the dashboards.\n"
)
FENCED = (
    "# Resolving conflicts\n\nGit shows both sides:\n\n```text\n<<<<<<< HEAD\nours\n"
    "=======\ntheirs\n>>>>>>> feature\n```\n\nKeep one side and remove the markers.\n"
)


def files(folder: Path) -> dict[str, bytes]:
    """Every file under a folder with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


async def test_mcp_refuses_writing_conflict_markers_and_allows_the_fix(ws: Workspace) -> None:
    ws.primary.mkdir(parents=True)
    (ws.primary / "deploy.md").write_text(CONFLICTED)
    before = files(ws.primary)
    async with mcp_server(ws) as session:
        text = await refused(session, "write_memory", memory_name="notes", content=CONFLICTED)
        assert text.startswith("[merge-conflict] Refused to write 'notes'")
        assert "Resolve the conflict: keep one side" in text and "remove the markers" in text
        assert "Nothing was written." in text
        # Writing a conflicted memory back, or editing it elsewhere, keeps the markers.
        await refused(session, "write_memory", memory_name="deploy", content=CONFLICTED + "x\n")
        text = await refused(
            session,
            "edit_memory",
            memory_name="deploy",
            needle="Watch the dashboards.",
            repl="Watch the graphs.",
            mode="literal",
        )
        assert text.startswith("[merge-conflict] ")
        assert files(ws.primary) == before
        # An example in a fenced block is knowledge, and resolving the conflict is the fix.
        await ok(session, "write_memory", memory_name="resolving", content=FENCED)
        await ok(
            session,
            "edit_memory",
            memory_name="deploy",
            needle=r"<<<<<<< HEAD\n.*?\n\|\|\|\|\|\|\| base\n.*?>>>>>>> feature\n",
            repl="Ship weekly.\n",
            mode="regex",
        )
    assert (
        (ws.primary / "deploy.md")
        .read_text()
        .endswith("# Deploy\n\nShip weekly.\nWatch the dashboards.\n")
    )
    assert (ws.primary / "resolving.md").read_text().endswith(FENCED)


async def test_search_marks_a_hit_from_a_conflicted_memory(ws: Workspace) -> None:
    ws.primary.mkdir(parents=True)
    (ws.primary / "deploy.md").write_text(CONFLICTED)
    (ws.primary / "deploy_tips.md").write_text("# Deploy tips\n\nShip with care.\n")
    (ws.primary / "resolving.md").write_text(FENCED.replace("ours", "ship ours"))
    async with mcp_server(ws) as session:
        text, result = await ok(session, "search_memories", query="ship")
        rows = {row["name"]: row for row in result["memories"]}
        assert set(rows) == {"deploy", "deploy_tips", "resolving"}
        assert rows["deploy"]["warnings"] == ["merge-conflict"]
        assert "warnings" not in rows["deploy_tips"] and "warnings" not in rows["resolving"]
        note = (
            "⚠ merge-conflict: this memory holds unresolved conflict markers; both sides are shown"
        )
        assert text.count(note) == 1
        block = next(b for b in text.split("\n") if b.endswith(")") and " deploy — " in b)
        after = text.split(block + "\n", 1)[1]
        assert after.startswith("   " + note)


def cli(ws: Workspace, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """`memory-ls` as a process in the workspace root."""
    env = {**os.environ, "HOME": str(ws.tmp / "home"), "XDG_CACHE_HOME": str(ws.tmp / "cache")}
    return subprocess.run(
        [sys.executable, "-m", "memory_ls.cli", *args, "--root", str(ws.root), "--no-global"],
        cwd=ws.root,
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_the_cli_refuses_conflict_markers_and_checks_a_fenced_example_clean(
    ws: Workspace,
) -> None:
    result = cli(ws, "save", "deploy", stdin=CONFLICTED)
    assert result.returncode != 0
    assert "[merge-conflict]" in result.stderr and "Nothing was written." in result.stderr
    assert not (ws.primary / "deploy.md").exists()

    assert cli(ws, "save", "deploy", stdin="# Deploy\n\nShip weekly.\n").returncode == 0
    before = (ws.primary / "deploy.md").read_bytes()
    result = cli(ws, "edit", "deploy", stdin=CONFLICTED)
    assert result.returncode != 0 and "[merge-conflict]" in result.stderr
    result = cli(
        ws, "edit", "deploy", "--needle", "Ship weekly.", "--replacement", ">>>>>>> feature"
    )
    assert result.returncode != 0 and "[merge-conflict]" in result.stderr
    assert (ws.primary / "deploy.md").read_bytes() == before

    saved = cli(ws, "save", "resolving_conflicts", stdin=FENCED)
    assert saved.returncode == 0, saved.stderr
    checked = cli(ws, "check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "merge-conflict" not in checked.stdout
    (ws.primary / "deploy.md").write_text(CONFLICTED)  # a conflict git left is still an error
    found = cli(ws, "search", "ship")
    assert found.returncode == 0, found.stderr
    assert found.stdout.startswith(
        "⚠ merge-conflict: deploy holds unresolved conflict markers; both sides are shown\ndeploy:"
    )
    assert found.stdout.count("merge-conflict") == 1
    checked = cli(ws, "check")
    assert checked.returncode == 1 and "merge-conflict" in checked.stdout
