"""`memory.changes` over workspace/executeCommand: the JSON `memory-ls changes` prints."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from e2e_support import Session, Workspace, make_workspace, session
from pygls.exceptions import JsonRpcException

pytestmark = pytest.mark.asyncio(loop_scope="module")

GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
}


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=GIT_ENV)


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """The standard workspace committed on main, then a branch with changes."""
    workspace = make_workspace(tmp_path_factory.mktemp("changes"))
    root = workspace.root
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "checkout", "-qb", "topic")
    git(root, "mv", ".serena/memories/style_guide.md", ".serena/memories/style.md")
    workspace.write(".serena/memories/new_note.md", "# New\n\nSee [[no_such_memory]].\n")
    return workspace


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(ws: Workspace) -> AsyncIterator[Session]:
    async with session(ws, init_options=ws.init_options()) as running:
        yield running


def cli_changes(ws: Workspace, *args: str) -> str:
    """What the command-line tool prints for the same store."""
    options = ws.init_options()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "memory_ls.cli",
            "changes",
            *args,
            "--additional-folders",
            ",".join(options["additionalFolders"]),
            "--global-folder",
            options["globalFolder"],
        ],
        cwd=ws.root,
        capture_output=True,
        text=True,
        env=GIT_ENV,
        timeout=60,
    )
    assert done.returncode == 1, done.stderr  # new_note's broken link
    return done.stdout


def plain(value: Any) -> Any:
    """A result as plain JSON data (the client hands back named tuples for objects)."""
    if hasattr(value, "_asdict"):
        return {key: plain(item) for key, item in value._asdict().items()}
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


async def test_changes_answers_what_the_cli_prints(server: Session, ws: Workspace) -> None:
    # An edit through the server itself, uncommitted: the working tree counts.
    await server.command(
        "memory.edit",
        {"name": "project_overview", "needle": "See", "replacement": "Read"},
    )
    result = plain(await server.command("memory.changes", {}))
    assert [(c["status"], c["name"]) for c in result["changes"]] == [
        ("added", "new_note"),
        ("changed", "project_overview"),
        ("renamed", "style"),
    ]
    assert result["base"]["rev"] == "main"
    overview = result["changes"][1]
    # The edit stamped updated_at: one more frontmatter line.
    assert overview["wordDiff"]["hunks"] == [{"line": 7, "removed": "See", "added": "Read"}]
    assert "updated_at" in overview["wordDiff"]["frontmatterKeys"]
    assert [d["code"] for d in result["changes"][0]["diagnostics"]] == ["broken-link"]
    assert result == json.loads(cli_changes(ws, "--format", "json"))

    with_text = plain(await server.command("memory.changes", {"rev": "main", "withText": True}))
    assert with_text.pop("text") == cli_changes(ws, "main")
    assert with_text["base"]["how"] == "given"


async def test_changes_refusals(server: Session) -> None:
    with pytest.raises(JsonRpcException) as unknown:
        await server.command("memory.changes", {"rev": "no-such-rev"})
    assert unknown.value.data["code"] == "invalid-arguments"
    assert "unknown revision no-such-rev" in unknown.value.message
    with pytest.raises(JsonRpcException) as wrong:
        await server.command("memory.changes", {"rev": 3})
    assert wrong.value.data["code"] == "invalid-arguments"
