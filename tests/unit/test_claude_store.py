"""A store with layout "claude": Claude Code's auto memory, MEMORY.md kept as it keeps it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from store_helpers import Workspace

from memory_ls.core import Store
from memory_ls.core.layouts.claude import (
    add_entry,
    canonical_top,
    describe_index,
    project_slug,
    remove_entry,
    rename_entry,
)


def memory_folder(ws: Workspace) -> Path:
    return ws.home / ".claude" / "projects" / project_slug(str(ws.root)) / "memory"


@pytest.fixture
def claude(ws: Workspace) -> Store:
    subprocess.run(["git", "init", "-q", str(ws.root)], check=True)
    return ws.store(layout="claude", environ={"HOME": str(ws.home)})


def test_the_primary_folder_is_claude_codes_and_there_is_no_global_folder(
    ws: Workspace, claude: Store
) -> None:
    assert claude.config.primary.path == str(memory_folder(ws))
    assert claude.config.global_folder is None
    explicit = ws.store(
        layout="claude", environ={"HOME": str(ws.home)}, global_folder=str(ws.tmp / "g")
    )
    assert explicit.config.global_folder is not None


def test_a_new_memory_gets_its_line_in_memory_md(ws: Workspace, claude: Store) -> None:
    result = claude.save(
        "debugging",
        "---\nname: Debugging the API\ndescription: How to attach the debugger to the API\n"
        "type: project\n---\nRun `make debug`.\n",
    )
    index = memory_folder(ws) / "MEMORY.md"
    assert index.read_text(encoding="utf-8") == (
        "# Memory\n- [Debugging the API](debugging.md) — How to attach the debugger to the API\n"
    )
    assert result["index"] == {
        "path": str(index),
        "change": "added",
        "line": 2,
        "entryLoaded": True,
        "loadedLines": 2,
        "totalLines": 2,
        "limitLines": 200,
        "totalBytes": len(index.read_bytes()),
        "limitBytes": 25_000,
    }
    # Saved again: no second line.
    again = claude.save("debugging", "Run `make debug` now.\n")
    assert again["index"]["change"] == "unchanged"
    assert index.read_text(encoding="utf-8").count("debugging.md") == 1


def test_an_entry_past_line_200_is_said_not_loaded(ws: Workspace, claude: Store) -> None:
    index = memory_folder(ws) / "MEMORY.md"
    ws.write(index, "# Memory\n" + "".join(f"- fact {n}\n" for n in range(205)))
    result = claude.save("late", "# Late topic\nDetails.\n")
    assert result["index"]["line"] == 207
    assert result["index"]["entryLoaded"] is False
    assert result["index"]["loadedLines"] == 200


def test_delete_and_move_keep_the_index(ws: Workspace, claude: Store) -> None:
    claude.save("alpha", "# Alpha\nFirst.\n")
    claude.save("beta", "# Beta\nSecond.\n")
    index = memory_folder(ws) / "MEMORY.md"
    moved = claude.move("alpha", "gamma")
    assert moved["index"]["change"] == "renamed"
    text = index.read_text(encoding="utf-8")
    assert "(gamma.md)" in text and "(alpha.md)" not in text
    deleted = claude.delete("beta")
    assert deleted["index"]["change"] == "removed"
    assert "beta.md" not in index.read_text(encoding="utf-8")
    # The index's changes are in the history like any write.
    assert [e.action for e in claude.history("MEMORY")][:1] == ["save"]


def test_the_index_itself_is_a_memory_that_gets_no_line(ws: Workspace, claude: Store) -> None:
    result = claude.save("MEMORY", "# Memory\n- my own index\n")
    assert "index" not in result
    assert (memory_folder(ws) / "MEMORY.md").read_text(encoding="utf-8").count("MEMORY.md") == 0


def test_a_memory_routed_elsewhere_gets_no_line(ws: Workspace) -> None:
    subprocess.run(["git", "init", "-q", str(ws.root)], check=True)
    store = ws.store(["shared/feature"], layout="claude", environ={"HOME": str(ws.home)})
    result = store.save("FEATURE_login", "# Login\n")
    assert "index" not in result
    assert not (memory_folder(ws) / "MEMORY.md").exists()


def test_index_text_rules() -> None:
    assert add_entry(None, "a.md", "# A\nThe a.\n") == "# Memory\n- [a](a.md) — A\n"
    assert add_entry("# M", "b.md", "") == "# M\n- [b](b.md)\n"
    assert add_entry("- [x](a.md)\n", "a.md", "") is None
    crlf = add_entry("# M\r\n", "c.md", "plain hook\n")
    assert crlf == "# M\r\n- [c](c.md) — plain hook\r\n"
    assert remove_entry("# M\n- [a](a.md) — x\n- [b](b.md)\n", "a.md") == "# M\n- [b](b.md)\n"
    assert remove_entry("# M\n", "a.md") is None
    assert rename_entry("- [a](a.md) see [also](a.md#x)\n", "a.md", "z.md") == (
        "- [a](z.md) see [also](z.md#x)\n"
    )
    state = describe_index("/m/MEMORY.md", "x\n" * 250, None, "unchanged")
    assert (state.loaded_lines, state.total_lines) == (200, 250)


def test_the_slug_is_the_main_worktrees(tmp_path: Path) -> None:
    main = tmp_path / "main_repo"
    subprocess.run(["git", "init", "-q", str(main)], check=True)
    (main / "f").write_text("x", encoding="utf-8")
    subprocess.run(["git", "-C", str(main), "add", "f"], check=True)
    subprocess.run(
        ["git", "-C", str(main), "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "x"],
        check=True,
    )
    linked = tmp_path / "linked"
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(linked)], check=True)
    assert canonical_top(str(linked / "sub")) == str(main)
    assert canonical_top(str(main)) == str(main)
    assert project_slug(str(main)).endswith("-main-repo")


def test_the_command_line_says_the_headroom_too(tmp_path: Path) -> None:
    import os
    import sys

    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "memory-ls.toml").write_text('layout = "claude"\n', encoding="utf-8")
    env = {**os.environ, "HOME": str(tmp_path / "home")}

    def cli(*args: str, stdin: str = "") -> str:
        done = subprocess.run(
            [sys.executable, "-m", "memory_ls.cli", *args],
            cwd=root,
            input=stdin,
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    saved = cli("save", "testing", stdin="# Tests\nRun them all.\n")
    assert "testing -> " in saved
    assert "MEMORY.md: entry added on line 2; 2 of 200 lines loaded, 198 to spare." in saved
    assert "its entry on line 2 now links the new name" in cli("move", "testing", "tests")
    assert "MEMORY.md: its entry removed; 1 of 200 lines loaded" in cli("delete", "tests")
