"""`memory-ls changes [REV]`: memories added, changed, renamed and deleted since a
revision, on real git repositories in tmp_path (the core, then the command)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from store_helpers import Workspace

from memory_ls.core.operations.changes import (
    EMPTY_TREE,
    WORD_DIFF_CHARS,
    WORD_DIFF_HUNKS,
    WORD_DIFF_MAX_WORDS,
    changes_json,
    changes_text,
    frontmatter_keys_changed,
    memory_changes,
    parse_name_status,
    word_diff_of,
)
from memory_ls.core.rules.errors import InvalidArguments

IDENTITY = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
}


@pytest.fixture(autouse=True)
def identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in IDENTITY.items():
        monkeypatch.setenv(key, value)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


RETRY = (
    "---\ntags: [net]\nupdated_at: 2024-01-01T00:00:00Z\n---\n# Retry\n\nWe retry 3 times.\nKept.\n"
)
RETRY_NEW = (
    "---\ntags: [net, http]\nupdated_at: 2024-02-01T00:00:00Z\n---\n"
    "# Retry\n\nWe retry 5 times with jitter.\nKept.\n"
)


# Enough unchanged lines for git to see the edited file as renamed (50% similar).
MOVED_TAIL = "".join(f"Line {i} stays as it was.\n" for i in range(8))


@pytest.fixture
def branch(ws: Workspace) -> Workspace:
    """main with memories; a branch `feature` that adds, edits, renames (git mv, one
    also edited), deletes, plus uncommitted work; main moves on after the fork."""
    root = ws.root
    git(root, "init", "-q", "-b", "main")
    m = ws.primary
    ws.write(m / "retry.md", RETRY)
    ws.write(m / "old_name.md", "# Old\n\nA body that moves.\n")
    ws.write(m / "moved_edited.md", f"# Moved\n\nOne two three four.\n{MOVED_TAIL}")
    ws.write(m / "gone.md", "# Gone\n\nBye.\n")
    ws.write(m / "untouched.md", "# Untouched\n\nSame.\n")
    ws.write(m / "dirty.md", "# Dirty\n\nBefore the edit.\n")
    ws.write(root / "src" / "code.py", "x = 1\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "checkout", "-qb", "feature")
    ws.write(m / "retry.md", RETRY_NEW)
    ws.write(m / "added.md", "# Added\n\nSee [[nowhere]] and [[retry]].\n")
    git(root, "mv", str(m / "old_name.md"), str(m / "new_name.md"))
    (m / "topic").mkdir()
    git(root, "mv", str(m / "moved_edited.md"), str(m / "topic" / "moved.md"))
    ws.write(m / "topic" / "moved.md", f"# Moved\n\nOne two THREE four.\n{MOVED_TAIL}")
    git(root, "rm", "-q", str(m / "gone.md"))
    ws.write(root / "src" / "code.py", "x = 2\n")  # not a memory
    git(root, "add", "-A")
    git(root, "commit", "-qm", "feature work")
    # Uncommitted: an edit, an untracked memory, a staged one.
    ws.write(m / "dirty.md", "# Dirty\n\nAfter the edit.\n")
    ws.write(m / "untracked.md", "# Untracked\n\nNew.\n")
    ws.write(m / "staged.md", "# Staged\n\nNew too.\n")
    git(root, "add", str(m / "staged.md"))
    # main moves on: its new memory is no change of this branch.
    git(root, "stash", "-q", "--include-untracked")
    git(root, "checkout", "-q", "main")
    ws.write(m / "main_only.md", "# Main only\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "main moves on")
    git(root, "checkout", "-q", "feature")
    git(root, "stash", "pop", "-q", "--index")
    return ws


def by_name(changes: object) -> dict[str, tuple[str, str | None]]:
    assert isinstance(changes, tuple)
    return {c.name: (c.status, c.old_name) for c in changes}


def test_changes_since_the_merge_base_include_the_working_tree(branch: Workspace) -> None:
    store = branch.store(global_folder=None)
    report = memory_changes(store)
    assert report.base.rev == "main"
    assert report.base.how == "merge base of HEAD and main"
    assert report.base.commit == git(branch.root, "merge-base", "HEAD", "main")
    assert by_name(report.changes) == {
        "added": ("added", None),
        "dirty": ("changed", None),
        "gone": ("deleted", None),
        "new_name": ("renamed", "old_name"),
        "retry": ("changed", None),
        "staged": ("added", None),
        "topic/moved": ("renamed", "moved_edited"),
        "untracked": ("added", None),
    }
    changes = {c.name: c for c in report.changes}
    # Diagnostics of the changed ones, with the store as context ([[retry]] resolves).
    assert [(d.code, d.line) for d in changes["added"].diagnostics] == [("broken-link", 2)]
    assert all(not c.diagnostics for n, c in changes.items() if n != "added")
    retry = changes["retry"].word_diff
    assert retry is not None
    assert [(h.line, h.removed, h.added) for h in retry.hunks] == [
        (7, "3 times.", "5 times with jitter.")
    ]
    assert retry.frontmatter_keys == ("tags", "updated_at")
    assert (retry.added_words, retry.removed_words) == (4, 2)
    moved = changes["topic/moved"].word_diff
    assert moved is not None and [(h.removed, h.added) for h in moved.hunks] == [("three", "THREE")]
    assert changes["new_name"].word_diff is None  # renamed as is
    dirty = changes["dirty"].word_diff
    assert dirty is not None and [(h.removed, h.added) for h in dirty.hunks] == [
        ("Before", "After")
    ]


def test_a_given_revision(branch: Workspace) -> None:
    store = branch.store(global_folder=None)
    since_head = memory_changes(store, "HEAD")
    assert since_head.base.how == "given"
    assert by_name(since_head.changes) == {
        "dirty": ("changed", None),
        "staged": ("added", None),
        "untracked": ("added", None),
    }
    # Since main itself: main's newer memory is gone on this branch.
    since_main = by_name(memory_changes(store, "main").changes)
    assert since_main["main_only"] == ("deleted", None)
    with pytest.raises(InvalidArguments, match="unknown revision no-such-branch"):
        memory_changes(store, "no-such-branch")
    with pytest.raises(InvalidArguments, match="not a revision"):
        memory_changes(store, "--output=x")


def test_origin_head_comes_first_then_no_default_branch(branch: Workspace) -> None:
    root = branch.root
    store = branch.store(global_folder=None)
    first = git(root, "rev-list", "--max-parents=0", "HEAD")
    git(root, "update-ref", "refs/remotes/origin/trunk", first)
    git(root, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/trunk")
    report = memory_changes(store)
    assert (report.base.rev, report.base.commit) == ("origin/trunk", first)
    # Without origin/HEAD, main or master: since HEAD, the uncommitted changes only.
    git(root, "symbolic-ref", "--delete", "refs/remotes/origin/HEAD")
    git(root, "update-ref", "-d", "refs/remotes/origin/trunk")
    git(root, "branch", "-q", "-m", "main", "trunk")
    fallback = memory_changes(store)
    assert fallback.base.rev == "HEAD"
    assert "no default branch" in fallback.base.how
    assert set(by_name(fallback.changes)) == {"dirty", "staged", "untracked"}


def test_a_repository_with_no_commit_and_no_repository(ws: Workspace) -> None:
    ws.write(ws.primary / "first.md", "# First\n")
    store = ws.store(global_folder=None)
    with pytest.raises(InvalidArguments, match="not in a git work tree"):
        memory_changes(store)
    git(ws.root, "init", "-q", "-b", "main")
    report = memory_changes(store)
    assert report.base.commit == EMPTY_TREE
    assert by_name(report.changes) == {"first": ("added", None)}
    assert changes_text(report).startswith(
        "Memories changed in a repository with no commit yet, working tree included: 1 added"
    )


def test_shared_folders_count_and_paths_are_relative_to_the_top(ws: Workspace) -> None:
    """A store in a subfolder of the repository, with a shared folder."""
    top = ws.root
    git(top, "init", "-q", "-b", "main")
    ws.write(top / "README.md", "x\n")
    git(top, "add", "-A")
    git(top, "commit", "-qm", "base")
    sub = top / "app"
    ws.write(sub / "shared" / "feature" / "FEATURE_x.md", "# X\n")
    ws.write(sub / ".serena" / "memories" / "note.md", "# Note\n\n[[FEATURE_x]]\n")
    store = ws.store(["shared/feature"], root=sub, global_folder=None)
    report = changes_json(memory_changes(store, "HEAD"))
    assert report["root"] == str(top)
    assert [(c["status"], c["name"], c["path"]) for c in report["changes"]] == [
        ("added", "note", "app/.serena/memories/note.md"),
        ("added", "FEATURE_x", "app/shared/feature/FEATURE_x.md"),
    ]
    assert all(c["diagnostics"] == [] for c in report["changes"])


def test_renames_across_the_folders_edge_and_ignored_memories(ws: Workspace) -> None:
    """A memory moved out of the folders is deleted, one moved in is added; Serena's
    ignored_memory_patterns hide a memory here too."""
    root = ws.root
    git(root, "init", "-q", "-b", "main")
    body = "".join(f"Line {i} of a note that moves around.\n" for i in range(6))
    ws.write(ws.primary / "leaving.md", body)
    ws.write(root / "docs" / "arriving.md", body.replace("Line", "Row"))
    ws.write(root / ".serena" / "project.yml", "ignored_memory_patterns: ['scratch_.*']\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    (root / "docs" / "old").mkdir(parents=True)
    git(root, "mv", str(ws.primary / "leaving.md"), str(root / "docs" / "old" / "leaving.md"))
    git(root, "mv", str(root / "docs" / "arriving.md"), str(ws.primary / "arriving.md"))
    ws.write(ws.primary / "scratch_pad.md", "# Ignored\n\n[[nowhere]]\n")
    report = memory_changes(ws.store(global_folder=None), "HEAD")
    assert by_name(report.changes) == {
        "arriving": ("added", None),
        "leaving": ("deleted", None),
    }


def test_json_and_text_of_a_report(branch: Workspace) -> None:
    store = branch.store(global_folder=None)
    report = memory_changes(store)
    data = changes_json(report)
    assert data["version"] == 1 and data["workingTree"] is True
    assert data["summary"]["added"] == 3 and data["summary"]["renamed"] == 2
    assert data["summary"]["diagnostics"]["warning"] == 1
    renamed = next(c for c in data["changes"] if c["name"] == "new_name")
    assert renamed["oldPath"] == ".serena/memories/old_name.md"
    assert renamed["path"] == ".serena/memories/new_name.md"
    added = next(c for c in data["changes"] if c["name"] == "added")
    assert added["diagnostics"][0]["path"] == ".serena/memories/added.md"
    assert added["diagnostics"][0]["code"] == "broken-link"
    text = changes_text(report)
    first, *rest = text.splitlines()
    assert first.startswith("Memories changed since main (")
    assert first.endswith("working tree included: 3 added, 2 changed, 2 renamed, 1 deleted")
    assert "renamed  old_name -> new_name  .serena/memories/new_name.md" in rest
    assert "    line 7: [-3 times.-]{+5 times with jitter.+}" in rest
    assert any(line.startswith("    .serena/memories/added.md:3:") for line in rest)


def test_word_diff_is_capped() -> None:
    old = " ".join(f"w{i}" for i in range(40))
    new = " ".join(f"w{i}" if i % 4 else f"X{i}" for i in range(40)) + " " + "long" * 50
    diff = word_diff_of(old, new)
    assert len(diff.hunks) == WORD_DIFF_HUNKS
    assert diff.more_hunks == 11 - WORD_DIFF_HUNKS
    assert (diff.added_words, diff.removed_words) == (11, 10)
    tail = word_diff_of("a b", "a b " + "z" * 500).hunks[0]
    assert len(tail.added) == WORD_DIFF_CHARS and tail.added.endswith("…")


def test_a_big_rewrite_is_one_run_of_words() -> None:
    many = WORD_DIFF_MAX_WORDS + 1
    old = " ".join(f"a{i}" for i in range(many))
    new = " ".join(f"b{i}" for i in range(many))
    diff = word_diff_of(f"# T\n\n{old}\n", f"# T\n\n{new}\n")
    assert (diff.added_words, diff.removed_words, diff.more_hunks) == (many, many, 0)
    assert [hunk.line for hunk in diff.hunks] == [3]
    assert diff.hunks[0].added.startswith("b0 b1 b2") and diff.hunks[0].added.endswith("…")


def test_frontmatter_keys_changed_without_parsing() -> None:
    assert frontmatter_keys_changed("a: 1\nb:\n  - x\n", "a: 1\nb:\n  - y\nc: [\n") == ("b", "c")
    assert frontmatter_keys_changed(None, "tags: [x]\n") == ("tags",)
    assert frontmatter_keys_changed("a: 1\n", "a: 1\n") == ()


def test_parse_name_status() -> None:
    out = b"M\0a.md\0R087\0b.md\0c d.md\0D\0e.md\0"
    assert parse_name_status(out) == [
        ("M", "a.md", None),
        ("R", "b.md", "c d.md"),
        ("D", "e.md", None),
    ]


# ----- the command ------------------------------------------------------------------------------


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memory_ls.cli", "changes", "--no-global", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **IDENTITY},
        timeout=60,
    )


def test_changes_command_in_every_format(branch: Workspace) -> None:
    root = branch.root
    text = cli(root)
    assert text.returncode == 1, text.stderr  # added.md has a broken link
    assert text.stdout.startswith("Memories changed since main (")
    assert text.stderr == "memory-ls: 0 error(s), 1 warning(s), 0 note(s)\n"
    data = json.loads(cli(root, "--format", "json").stdout)
    assert {c["name"] for c in data["changes"]} >= {"added", "retry", "new_name", "gone"}
    assert json.loads(cli(root, "--json").stdout) == data
    github = cli(root, "--format", "github")
    assert github.stdout.splitlines() == [
        "::warning file=.serena/memories/added.md,line=3,col=7,endColumn=13,endLine=3,"
        "title=memory-ls broken-link::No memory named nowhere in the project's memory "
        "folders; create it or fix the name."
    ]
    assert "since main (merge base of HEAD and main): 3 added, 2 changed" in github.stderr
    sarif = json.loads(cli(root, "--format", "sarif").stdout)
    assert [r["ruleId"] for r in sarif["runs"][0]["results"]] == ["broken-link"]
    clean = cli(root, "HEAD")  # the uncommitted ones have no problem
    assert clean.returncode == 0, clean.stdout
    assert "1 changed" in clean.stdout.splitlines()[0]


def test_changes_command_refusals(branch: Workspace, tmp_path: Path) -> None:
    unknown = cli(branch.root, "no-such-rev")
    assert unknown.returncode == 2
    assert "[invalid-arguments] unknown revision no-such-rev" in unknown.stderr
    outside = tmp_path / "not-git"
    outside.mkdir()
    refused = cli(outside)
    assert refused.returncode == 2
    assert "not in a git work tree" in refused.stderr
