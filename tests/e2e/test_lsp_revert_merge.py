"""A revert through the language server keeps a teammate's line that `git pull` brought
while the server watched (pytest-lsp over stdio, real git; issue 34 point 4)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from e2e_support import make_workspace
from test_lsp_journal_seen import journaled

MEMORY = "# Deploy\n\nStep one: build.\n\na\nb\nc\nd\n\nStep two: ship.\n"


def _git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    ident = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    done = subprocess.run(
        ["git", *ident, "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr


async def test_a_revert_after_a_watched_git_pull_merges_and_keeps_the_pulled_line(
    tmp_path: Path,
) -> None:
    workspace = make_workspace(tmp_path / "w")
    cache = tmp_path / "c"
    memory = workspace.primary / "deploy.md"
    memory.write_text(MEMORY)
    origin, mate = tmp_path / "origin.git", tmp_path / "mate"
    _git(tmp_path, "init", "-q", "--bare", str(origin))
    _git(workspace.root, "init", "-q")
    _git(workspace.root, "add", "-A")
    _git(workspace.root, "commit", "-qm", "start")
    _git(workspace.root, "push", "-q", str(origin), "main")
    _git(tmp_path, "clone", "-q", str(origin), str(mate))
    async with journaled(workspace, cache) as j:
        await j.until_entries(0)
        await j.server.command(
            "memory.edit",
            {"name": "deploy", "needle": "Step one: build.", "replacement": "Step one: make."},
        )
        (edit,) = await j.until_entries(1)
        _git(workspace.root, "commit", "-qam", "an edit")
        _git(workspace.root, "push", "-q", str(origin), "main")
        _git(mate, "pull", "-q", "origin", "main")
        theirs = mate / memory.relative_to(workspace.root)
        theirs.write_text(theirs.read_text() + "Step three: tell the team.\n")
        _git(mate, "commit", "-qam", "step three")
        _git(mate, "push", "-q", "origin", "main")
        _git(workspace.root, "pull", "-q", str(origin), "main")
        pulled, _ = await j.until_entries(2)
        assert (pulled["name"], pulled["source"]) == ("deploy", "git")

        answer = await j.request("revert", {"id": edit["id"]})
        assert answer["merged"] is True and answer["keptChanges"] == [pulled["id"]]
        text = memory.read_text()
        assert "Step one: build.\n" in text and "Step three: tell the team.\n" in text
