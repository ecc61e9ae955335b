"""The team's guard in `memory-ls changes` and `memory-ls check --staged`, on real git
repositories in tmp_path, through the command: changes to read-only memories (a `:ro`
folder, Serena's read_only_memory_patterns) fail, a delete/modify conflict is reported
as one, and a staged delete or rename fails on the memories that link to it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from store_helpers import Workspace

from memory_ls.core.operations.changes import STATUSES

IDENTITY = {
    "GIT_AUTHOR_NAME": "Test",
    "GIT_AUTHOR_EMAIL": "test@example.invalid",
    "GIT_COMMITTER_NAME": "Test",
    "GIT_COMMITTER_EMAIL": "test@example.invalid",
}
MOVED_TAIL = "".join(f"Line {i} stays as it was.\n" for i in range(8))


@pytest.fixture(autouse=True)
def identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in IDENTITY.items():
        monkeypatch.setenv(key, value)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memory_ls.cli", *args, "--no-global"],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **IDENTITY},
        timeout=60,
    )


@pytest.fixture
def team(ws: Workspace) -> Workspace:
    """A repository whose project file makes `vendor/` read-only and whose Serena
    configuration makes `policy_.*` read-only; main has a memory of each kind."""
    root = ws.root
    git(root, "init", "-q", "-b", "main")
    ws.write(root / "memory-ls.toml", 'additional-folders = ["vendor:ro"]\n')
    ws.write(root / ".serena" / "project.yml", "read_only_memory_patterns: ['policy_.*']\n")
    ws.write(root / "vendor" / "api_rules.md", f"# API rules\n\nVersioned.\n{MOVED_TAIL}")
    ws.write(root / "vendor" / "old_rules.md", "# Old rules\n\nGone soon.\n")
    ws.write(ws.primary / "policy_review.md", "# Review policy\n\nTwo approvals.\n")
    ws.write(ws.primary / "notes.md", "# Notes\n\nFree to edit.\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "checkout", "-qb", "feature")
    return ws


def test_changes_flags_every_kind_of_change_to_a_read_only_memory(team: Workspace) -> None:
    root = team.root
    team.write(root / "vendor" / "api_rules.md", f"# API rules\n\nVersioned, v2.\n{MOVED_TAIL}")
    team.write(root / "vendor" / "added.md", "# Added\n")
    git(root, "rm", "-q", "vendor/old_rules.md")
    team.write(team.primary / "policy_review.md", "# Review policy\n\nOne approval.\n")
    team.write(team.primary / "notes.md", "# Notes\n\nEdited freely.\n")
    done = cli(root, "changes", "--format", "json")
    assert done.returncode == 1, done.stderr
    rows = {row["name"]: row for row in json.loads(done.stdout)["changes"]}
    guarded = {
        name: [d for d in row["diagnostics"] if d["code"] == "read-only-changed"]
        for name, row in rows.items()
    }
    assert {name for name, found in guarded.items() if found} == {
        "api_rules",
        "added",
        "old_rules",
        "policy_review",
    }
    assert guarded["notes"] == []
    edit = guarded["api_rules"][0]
    assert edit["severity"] == "error"
    assert edit["message"].startswith(
        "api_rules is read-only: the folder vendor is read-only (`:ro`); the changes since "
        "main edit it. Read-only memories change only where they are owned"
    )
    assert "the changes since main delete it" in guarded["old_rules"][0]["message"]
    assert "the changes since main add it" in guarded["added"][0]["message"]
    pattern = guarded["policy_review"][0]["message"]
    assert "matches the pattern 'policy_.*' of read_only_memory_patterns" in pattern
    assert "(.serena/project.yml)" in pattern
    # The deleted memory's finding is on its old path (no file now).
    assert guarded["old_rules"][0]["path"] == "vendor/old_rules.md"
    text = cli(root, "changes")
    assert text.returncode == 1
    assert "error read-only-changed" in text.stdout
    assert "memory-ls: 4 error(s)" in text.stderr


def test_a_rename_out_of_or_into_a_read_only_folder_is_flagged(team: Workspace) -> None:
    root = team.root
    git(root, "mv", "vendor/api_rules.md", ".serena/memories/api_rules.md")
    git(root, "mv", ".serena/memories/notes.md", ".serena/memories/policy_notes.md")
    done = cli(root, "changes", "--format", "json")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    messages = {
        row["name"]: [d["message"] for d in row["diagnostics"] if d["code"] == "read-only-changed"]
        for row in report["changes"]
    }
    assert [row["status"] for row in report["changes"]] == ["renamed", "renamed"]
    assert messages["api_rules"][0].startswith(
        "api_rules is read-only: the folder vendor is read-only (`:ro`); the changes since "
        "main rename it to api_rules."
    )
    assert messages["policy_notes"][0].startswith(
        "policy_notes is read-only: it matches the pattern 'policy_.*'"
    )
    assert "rename notes to it" in messages["policy_notes"][0]


def test_the_guard_can_be_turned_off_and_plain_check_has_nothing_to_compare(
    team: Workspace,
) -> None:
    root = team.root
    team.write(root / "vendor" / "api_rules.md", "# API rules\n\nEdited.\n")
    # A plain check has no earlier version: the edited read-only memory is no finding.
    plain = cli(root, "check", "vendor/api_rules.md")
    assert plain.returncode == 0, plain.stdout + plain.stderr
    team.write(
        root / "memory-ls.toml",
        'additional-folders = ["vendor:ro"]\n\n[diagnostics]\nread-only-changed = "off"\n',
    )
    quiet = cli(root, "changes")
    assert quiet.returncode == 0, quiet.stdout + quiet.stderr
    assert "read-only-changed" not in quiet.stdout


def test_check_staged_flags_staged_changes_to_read_only_memories(team: Workspace) -> None:
    root = team.root
    team.write(team.primary / "policy_review.md", "# Review policy\n\nOne approval.\n")
    # Unstaged: not part of the commit, not the staged check's business.
    team.write(root / "vendor" / "api_rules.md", "# API rules\n\nEdited.\n")
    unstaged = cli(root, "check", "--staged")
    assert unstaged.returncode == 0, unstaged.stdout + unstaged.stderr
    git(root, "add", ".serena/memories/policy_review.md")
    staged = cli(root, "check", "--memories-only", "--staged")
    assert staged.returncode == 1
    assert staged.stdout.splitlines() == [
        ".serena/memories/policy_review.md:1:1: error read-only-changed policy_review is "
        "read-only: it matches the pattern 'policy_.*' of read_only_memory_patterns "
        "(.serena/project.yml); the staged changes edit it. Read-only memories change only "
        "where they are owned (like CODEOWNERS): undo the change, or change the rule if the "
        "memory is no longer read-only."
    ]


def test_check_staged_checks_the_memories_linking_to_a_deleted_or_renamed_one(
    team: Workspace,
) -> None:
    root = team.root
    m = team.primary
    team.write(m / "deploy.md", "# Deploy\n\nSee [[retry]] and [[nowhere]].\n")
    team.write(m / "oncall.md", "# On call\n\nSee `mem:timeouts`.\n")
    team.write(m / "retry.md", "# Retry\n\nThree times.\n")
    limits = "".join(f"Call {i} times out after {i} seconds.\n" for i in range(8))
    team.write(m / "timeouts.md", f"# Timeouts\n\n{limits}")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "memories")
    git(root, "rm", "-q", ".serena/memories/retry.md")
    git(root, "mv", ".serena/memories/timeouts.md", ".serena/memories/time_limits.md")
    # What pre-commit passes: no Markdown file that exists changed but the renamed one.
    done = cli(root, "check", "--memories-only", "--staged", ".serena/memories/time_limits.md")
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    # The linking memories' other findings ([[nowhere]]) are not this commit's.
    assert lines == [
        ".serena/memories/deploy.md:3:7: warning broken-link No memory named retry in the "
        "project's memory folders; create it or fix the name. (retry is deleted by the "
        "staged changes)",
        ".serena/memories/oncall.md:3:10: warning broken-link No memory named timeouts in "
        "the project's memory folders; create it or fix the name. (timeouts is renamed to "
        "time_limits by the staged changes)",
    ]
    # A delete alone: pre-commit passes no file at all.
    git(root, "reset", "-q")
    git(root, "rm", "-q", "--cached", ".serena/memories/retry.md")
    alone = cli(root, "check", "--memories-only", "--staged")
    assert alone.returncode == 1
    assert [line.split(":", 1)[0] for line in alone.stdout.splitlines()] == [
        ".serena/memories/deploy.md"
    ]
    # Nothing staged: nothing to check, not the whole store.
    git(root, "reset", "-q")
    clean = cli(root, "check", "--memories-only", "--staged")
    assert clean.returncode == 0, clean.stdout
    assert clean.stdout == ""


def test_check_staged_needs_git(ws: Workspace) -> None:
    ws.write(ws.primary / "a.md", "# A\n")
    refused = cli(ws.root, "check", "--staged")
    assert refused.returncode == 2
    assert "not in a git work tree: --staged needs git" in refused.stderr


def test_a_delete_modify_conflict_is_reported_as_a_conflict(team: Workspace) -> None:
    root = team.root
    m = team.primary
    team.write(m / "mine.md", "# Mine\n\nOne.\n")
    team.write(m / "theirs.md", "# Theirs\n\nOne.\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "two memories")
    git(root, "checkout", "-qb", "other")
    team.write(m / "mine.md", "# Mine\n\nOne, edited by them.\n")
    git(root, "rm", "-q", ".serena/memories/theirs.md")
    git(root, "commit", "-qam", "other side")
    git(root, "checkout", "-q", "feature")
    git(root, "rm", "-q", ".serena/memories/mine.md")
    team.write(m / "theirs.md", "# Theirs\n\nOne, edited by us.\n")
    git(root, "commit", "-qam", "our side")
    merged = subprocess.run(["git", "merge", "-q", "other"], cwd=root, capture_output=True)
    assert merged.returncode != 0  # the conflicts this test is about
    done = cli(root, "changes", "HEAD", "--format", "json")
    assert done.returncode == 1, done.stderr
    data = json.loads(done.stdout)
    rows = {row["name"]: row for row in data["changes"]}
    assert {name: (r["status"], r.get("conflict")) for name, r in rows.items()} == {
        "mine": ("conflict", "deleted by us, modified by them"),
        "theirs": ("conflict", "modified by us, deleted by them"),
    }
    assert data["summary"]["conflict"] == 2
    found = rows["mine"]["diagnostics"]
    assert [(d["code"], d["severity"]) for d in found] == [("merge-conflict", "error")]
    assert "keep this version (git add .serena/memories/mine.md)" in found[0]["message"]
    text = cli(root, "changes", "HEAD")
    assert text.returncode == 1
    first, *rest = text.stdout.splitlines()
    assert first.endswith("0 added, 0 changed, 0 renamed, 0 deleted, 2 conflict")
    assert "conflict mine  .serena/memories/mine.md  (deleted by us, modified by them)" in rest
    # With merge-conflict turned off the unmerged memories still fail.
    team.write(
        root / "memory-ls.toml",
        'additional-folders = ["vendor:ro"]\n\n[diagnostics]\nmerge-conflict = "off"\n',
    )
    quiet = cli(root, "changes", "HEAD", "--format", "github")
    assert quiet.returncode == 1
    assert "2 conflict" in quiet.stderr
    assert STATUSES[-1] == "conflict"


def test_concluding_a_merge_does_not_blame_this_branch_for_the_other_ones_changes(
    team: Workspace,
) -> None:
    """The merged branch's read-only changes are staged when a conflicted merge is
    concluded: only what the resolution itself changes is this commit's."""
    root = team.root
    m = team.primary
    git(root, "checkout", "-q", "main")
    # The owners update the read-only folder on main; both branches edit notes.
    team.write(root / "vendor" / "api_rules.md", f"# API rules\n\nVersioned, v2.\n{MOVED_TAIL}")
    team.write(root / "vendor" / "old_rules.md", "# Old rules\n\nStill here, v2.\n")
    team.write(m / "notes.md", "# Notes\n\nMain's words.\n")
    git(root, "commit", "-qam", "owners and notes")
    git(root, "checkout", "-q", "feature")
    team.write(m / "notes.md", "# Notes\n\nFeature's words.\n")
    git(root, "commit", "-qam", "notes")
    merged = subprocess.run(["git", "merge", "-q", "main"], cwd=root, capture_output=True)
    assert merged.returncode != 0  # notes.md conflicts
    team.write(m / "notes.md", "# Notes\n\nBoth words.\n")
    git(root, "add", ".serena/memories/notes.md")
    clean = cli(root, "check", "--memories-only", "--staged", ".serena/memories/notes.md")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    # A resolution that edits a read-only memory is this commit's change.
    team.write(root / "vendor" / "old_rules.md", "# Old rules\n\nEdited while merging.\n")
    git(root, "add", "vendor/old_rules.md")
    refused = cli(root, "check", "--memories-only", "--staged")
    assert refused.returncode == 1
    assert [line.split(":", 1)[0] for line in refused.stdout.splitlines()] == [
        "vendor/old_rules.md"
    ]
    assert "the staged changes edit it" in refused.stdout


def test_a_staged_memory_linking_to_a_staged_delete_is_reported_once(team: Workspace) -> None:
    root = team.root
    m = team.primary
    team.write(m / "deploy.md", "# Deploy\n\nSee [[retry]].\n")
    team.write(m / "retry.md", "# Retry\n\nThree times.\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "memories")
    team.write(m / "deploy.md", "# Deploy\n\nSee [[retry]] and [[nowhere]].\n")
    git(root, "add", ".serena/memories/deploy.md")
    git(root, "rm", "-q", ".serena/memories/retry.md")
    done = cli(root, "check", "--memories-only", "--staged", ".serena/memories/deploy.md")
    assert done.returncode == 1
    # A file the commit changes gets every finding; the broken link says why, once.
    assert [line.split(" broken-link ")[1] for line in done.stdout.splitlines()] == [
        "No memory named retry in the project's memory folders; create it or fix the name. "
        "(retry is deleted by the staged changes)",
        "No memory named nowhere in the project's memory folders; create it or fix the name.",
    ]
