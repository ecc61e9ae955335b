"""What `memory-ls git-setup` writes (core/services/git_setup.py), on text and paths."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from store_helpers import Workspace

from memory_ls.core.services.git_setup import (
    COMMENT,
    FALLBACK,
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
        f"'{script}' merge-driver %O %A %B %P; {FALLBACK}"
    )


def test_run_as_a_module_the_interpreter_is_named(tmp_path: Path) -> None:
    assert driver_command(str(tmp_path / "cli.py"), "/opt/py/bin/python3") == (
        f"/opt/py/bin/python3 -m memory_ls.cli merge-driver %O %A %B %P; {FALLBACK}"
    )


def test_the_fallback_is_git_merge_file_with_ours_base_theirs_in_its_order() -> None:
    # `git merge-file [-L current -L base -L other] current base other`: %A ours, %O base.
    assert FALLBACK.endswith("git merge-file --marker-size %L -L ours -L base -L theirs %A %O %B")
    # git expands only its placeholders; any other `%` would reach the shell as it is.
    assert set(re.findall(r"%(.)", FALLBACK)) <= {"A", "O", "B", "L", "P"}


def fake_merge_driver(tmp_path: Path, status: int, writes: str | None) -> str:
    """A stand-in for memory-ls's merge-driver: writes `writes` to OURS, exits `status`."""
    script = tmp_path / "driver"
    write = f"printf '%s' '{writes}' > \"$2\"\n" if writes is not None else ""
    script.write_text(f"#!/bin/sh\n{write}exit {status}\n")
    script.chmod(0o755)
    return f"{script} %O %A %B %P; {FALLBACK}"


def run_driver(tmp_path: Path, command: str) -> tuple[int, str, str]:
    """Run a driver command as git does (`sh -c`, placeholders quoted), on three files
    whose middle line each side changed: (exit status, OURS afterwards, stderr)."""
    files = {"base": "a\nb\nc\n", "ours": "a\nB-ours\nc\n", "theirs": "a\nB-theirs\nc\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    expanded = (
        command.replace("%O", shlex.quote(str(tmp_path / "base")))
        .replace("%A", shlex.quote(str(tmp_path / "ours")))
        .replace("%B", shlex.quote(str(tmp_path / "theirs")))
        .replace("%L", "7")
        .replace("%P", "'m.md'")
    )
    # No user's git config (merge.conflictStyle) in what git merge-file writes.
    env = {**os.environ, "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
    env.pop("XDG_CONFIG_HOME", None)
    done = subprocess.run(
        ["sh", "-c", expanded], capture_output=True, text=True, cwd=tmp_path, env=env, check=False
    )
    return done.returncode, (tmp_path / "ours").read_text(), done.stderr


MARKED = "a\n<<<<<<< ours\nB-ours\n=======\nB-theirs\n>>>>>>> theirs\nc\n"


@pytest.mark.parametrize(
    "status",
    [127, 126, 2, 3, 1],
    ids=["not-found", "not-executable", "failed", "other", "died-without-markers"],
)
def test_a_driver_that_cannot_merge_leaves_git_merge_file_s_markers(
    tmp_path: Path, status: int
) -> None:
    code, ours, stderr = run_driver(tmp_path, fake_merge_driver(tmp_path, status, None))
    assert (code, ours) == (1, MARKED)  # one conflict: git marks the path conflicted
    assert f"merge-driver failed (exit {status})" in stderr


def test_what_the_driver_merged_is_passed_on(tmp_path: Path) -> None:
    clean = run_driver(tmp_path, fake_merge_driver(tmp_path, 0, "merged"))
    assert clean[:2] == (0, "merged")
    marked = run_driver(tmp_path, fake_merge_driver(tmp_path, 1, "<<<<<<< ours"))
    assert marked[:2] == (1, "<<<<<<< ours") and marked[2] == ""


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
