"""What `memory-ls git-setup` writes (core/git_setup.py), on text and paths."""

from __future__ import annotations

import subprocess
from pathlib import Path

from store_helpers import Workspace

from memory_ls.core.git_setup import (
    COMMENT,
    attribute_lines,
    driver_command,
    memory_patterns,
    with_lines,
    without_lines,
)


def test_the_driver_is_the_running_entry_point_by_its_absolute_path(tmp_path: Path) -> None:
    script = tmp_path / "venv dir" / "bin" / "memory-ls"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n")
    assert driver_command(str(script), "/usr/bin/python3") == (
        f"'{script}' merge-driver %O %A %B %P"
    )


def test_run_as_a_module_the_interpreter_is_named(tmp_path: Path) -> None:
    assert driver_command(str(tmp_path / "cli.py"), "/opt/py/bin/python3") == (
        "/opt/py/bin/python3 -m memory_ls.cli merge-driver %O %A %B %P"
    )


def test_patterns_cover_the_folders_inside_the_repository(ws: Workspace) -> None:
    store = ws.store(["shared/my team", "../elsewhere"])
    patterns, outside = memory_patterns(store.config, str(ws.root))
    assert patterns == [".serena/memories/**/*.md", '"shared/my team/**/*.md"']
    assert outside == [str(ws.tmp / "elsewhere"), str(ws.global_dir)]


def test_a_pattern_with_a_space_matches_in_git(ws: Workspace) -> None:
    store = ws.store(["shared/my team", 'shared/"odd"*'])
    patterns, _ = memory_patterns(store.config, str(ws.root))
    subprocess.run(["git", "init", "-q", str(ws.root)], check=True)
    (ws.root / ".gitattributes").write_text("".join(f"{x}\n" for x in attribute_lines(patterns)))
    done = subprocess.run(
        [
            "git",
            "-C",
            str(ws.root),
            "check-attr",
            "merge",
            "shared/my team/a/b.md",
            'shared/"odd"*/c.md',
            'shared/"odd"x/c.md',
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.splitlines() == [
        "shared/my team/a/b.md: merge: memory-ls",
        '"shared/\\"odd\\"*/c.md": merge: memory-ls',
        '"shared/\\"odd\\"x/c.md": merge: unspecified',
    ]


def test_lines_are_added_once_and_removed_exactly() -> None:
    user = "*.png binary\n# mine\n"
    lines = attribute_lines([".serena/memories/**/*.md", '"my team/**/*.md"'])
    added, new = with_lines(user, lines)
    assert added == (
        f"{user}{COMMENT}\n.serena/memories/**/*.md merge=memory-ls\n"
        '"my team/**/*.md" merge=memory-ls\n'
    )
    assert new == lines
    assert with_lines(added, lines) == (added, [])
    assert without_lines(added) == (user, lines)
    # A file without a final line break keeps its last line whole.
    assert with_lines("*.png binary", lines)[0].startswith("*.png binary\n# memory-ls")
