"""Where memory-ls meets git (issue 31): a clone whose `.gitattributes` asks for the merge
driver that its git config lacks (`missing-merge-driver`), and a merge driver that fails
without leaving half a file behind."""

from __future__ import annotations

import io
import os
import subprocess
from pathlib import Path

import pytest
from store_helpers import Workspace

from memory_ls.cli import run
from memory_ls.core import check_store
from memory_ls.core.operations.disk_check import DiskDiagnostics
from memory_ls.core.services.diagnostics import Diagnostic
from memory_ls.core.services.index import MemoryIndex
from memory_ls.core.services.merge_driver_check import (
    CODE,
    DriverState,
    attribute_spans,
    driver_diagnostics,
    merge_driver_diagnostics,
)

ATTRIBUTES = "*.png binary\n# memory-ls: merge memories\n.serena/memories/**/*.md merge=memory-ls\n"


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def repo(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    """The workspace as a git repository whose `.gitattributes` names the driver, with
    no git config but its own (HOME is the test's)."""
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    git(ws.root, "init", "-q")
    ws.write(ws.root / ".gitattributes", ATTRIBUTES)
    ws.write(ws.primary / "notes.md", "# Notes\n")
    return ws


def codes(found: list[Diagnostic]) -> list[tuple[str, str, int, int, int]]:
    return [
        (os.path.basename(d.path), d.code, d.line, d.col, d.end_col)
        for d in found
        if d.code == CODE
    ]


# ----- the pure part ------------------------------------------------------------------


def test_attribute_spans_find_the_attribute_not_the_pattern() -> None:
    text = (
        "# a comment merge=memory-ls\n"
        "\n"
        '"my merge=memory-ls team/**/*.md" merge=memory-ls\r\n'
        "docs/*.md -merge\n"
        "merge=memory-ls\n"  # a pattern alone
        "  shared/**/*.md\ttext  merge=memory-ls  \n"
        "x.md merge=memory-lsx\n"
    )
    assert attribute_spans(text) == [(2, 34, 49), (5, 23, 38)]


def test_the_finding_says_what_is_missing_and_what_to_run() -> None:
    state = DriverState("/r/.gitattributes", ATTRIBUTES, None)
    found = driver_diagnostics(state, lambda path: True)
    assert codes(found) == [(".gitattributes", CODE, 2, 25, 40)]
    assert found[0].severity == "warning"
    assert "has no merge.memory-ls.driver" in found[0].message
    assert found[0].message.endswith("run memory-ls git-setup")
    blank = driver_diagnostics(DriverState("/r/.gitattributes", ATTRIBUTES, "  "), bool)
    assert blank[0].message == found[0].message


def test_a_driver_whose_program_is_gone_is_reported_and_a_present_one_is_not() -> None:
    command = "'/old venv/bin/memory-ls' merge-driver %O %A %B %P; s=$?; exit $s"
    state = DriverState("/r/.gitattributes", ATTRIBUTES, command)
    gone = driver_diagnostics(state, lambda path: path != "/old venv/bin/memory-ls")
    assert len(gone) == 1
    assert "runs /old venv/bin/memory-ls, which does not exist" in gone[0].message
    assert gone[0].message.endswith("run memory-ls git-setup")
    assert driver_diagnostics(state, lambda path: True) == []
    # A program found on PATH is not second-guessed (git's PATH may not be ours).
    bare = DriverState("/r/.gitattributes", ATTRIBUTES, "memory-ls merge-driver %O %A %B")
    assert driver_diagnostics(bare, lambda path: False) == []


def test_nothing_without_the_attribute() -> None:
    assert driver_diagnostics(DriverState("/r/.gitattributes", "*.png binary\n", None), bool) == []
    assert driver_diagnostics(None, bool) == []


# ----- with git -----------------------------------------------------------------------


def test_check_warns_on_the_attribute_line_until_the_driver_is_set(repo: Workspace) -> None:
    store = repo.store()
    assert codes(check_store(store)) == [(".gitattributes", CODE, 2, 25, 40)]
    # Configurable like every code; a check of some files leaves the repository alone.
    assert codes(check_store(repo.store(diagnostics={CODE: "off"}))) == []
    assert codes(check_store(store, [str(repo.primary / "notes.md")])) == []
    git(repo.root, "config", "merge.memory-ls.driver", "memory-ls merge-driver %O %A %B %P")
    assert codes(check_store(store)) == []


def test_the_command_line_check_exits_1_on_the_warning(repo: Workspace) -> None:
    out, err = io.StringIO(), io.StringIO()
    status = run(["check", "--root", str(repo.root), "--no-global"], io.StringIO(), out, err)
    assert status == 1
    assert out.getvalue().startswith(".gitattributes:3:26: warning missing-merge-driver ")


def test_a_subfolder_workspace_finds_the_repository_s_attributes(repo: Workspace) -> None:
    inner = repo.root / "service"
    inner.mkdir()
    found = merge_driver_diagnostics(str(inner))
    assert [(d.path, d.line) for d in found] == [(str(repo.root / ".gitattributes"), 2)]


def test_outside_git_nothing_is_read(ws: Workspace) -> None:
    ws.write(ws.root / ".gitattributes", ATTRIBUTES)
    assert merge_driver_diagnostics(str(ws.root)) == []


def test_workspace_diagnostics_follow_the_git_setup(repo: Workspace) -> None:
    index = MemoryIndex(repo.store().config)
    index.scan()
    disk = DiskDiagnostics(index, lambda path, found, text: tuple(d.code for d in found))
    changed = disk.check_all()
    attributes = str(repo.root / ".gitattributes")
    assert changed is not None and attributes in changed
    result_id, report = disk.report(attributes)
    assert report == (CODE,) and disk.setup_reported()
    assert disk.setup_changed() == set()  # nothing changed: stats only, same report
    # A memory's change does not drop the repository's report.
    repo.write(repo.primary / "other.md", "# Other\n")
    disk.update([str(repo.primary / "other.md")], index.update_paths([str(repo.primary)]))
    assert disk.report(attributes) == (result_id, report)
    git(repo.root, "config", "merge.memory-ls.driver", "memory-ls merge-driver %O %A %B %P")
    assert disk.setup_changed() == {attributes}
    assert disk.report(attributes) == (disk.clean_id, None) and not disk.setup_reported()
    git(repo.root, "config", "--unset", "merge.memory-ls.driver")
    assert disk.setup_changed() == {attributes}
    assert disk.report(attributes)[1] == (CODE,)


# ----- a failing driver ---------------------------------------------------------------


def merge_files_of(tmp_path: Path) -> tuple[str, str, str]:
    paths = []
    for name, text in (("base", "a\nb\nc\n"), ("ours", "a\nb\nC\n"), ("theirs", "A\nb\nc\n")):
        (tmp_path / name).write_text(text)
        paths.append(str(tmp_path / name))
    return paths[0], paths[1], paths[2]


def test_a_write_that_fails_leaves_ours_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory_ls.core.services import merge

    base, ours, theirs = merge_files_of(tmp_path)

    def no_replace(source: str, target: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(merge.os, "replace", no_replace)
    with pytest.raises(OSError):
        merge.merge_files(base, ours, theirs)
    assert Path(ours).read_text() == "a\nb\nC\n"
    assert sorted(os.listdir(tmp_path)) == ["base", "ours", "theirs"]  # no temporary left
    monkeypatch.undo()
    assert merge.merge_files(base, ours, theirs).clean
    assert Path(ours).read_text() == "A\nb\nC\n"


def test_the_driver_exits_2_on_any_failure_and_leaves_ours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Exit 1 means "conflicts marked in OURS"; a failure is 2, which the command
    git-setup registers answers with git's own text merge."""
    from memory_ls.core.services import merge

    base, ours, theirs = merge_files_of(tmp_path)

    def broken(*args: object, **kwargs: object) -> object:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(merge, "merge_memory", broken)
    err = io.StringIO()
    status = run(["merge-driver", base, ours, theirs, "m.md"], io.StringIO(), io.StringIO(), err)
    assert status == 2
    assert "memory-ls: merge-driver: m.md: RecursionError" in err.getvalue()
    assert Path(ours).read_text() == "a\nb\nC\n"
