"""Memories merged by real git (issue 23): `memory-ls git-setup` in a temporary repository,
two branches edited with `memory-ls`, and `git merge` running the driver that git-setup
wrote into the repository's config."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from memory_ls.core.rules.document import parse_document
from memory_ls.core.services.git_setup import FALLBACK

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

MEMORY = ".serena/memories/deploy.md"
BASE_TEXT = """---
tags: [ops]
created_at: 2025-01-01T00:00:00Z
updated_at: 2025-01-01T00:00:00Z
owner: ann  # asks the on-call
---
# Deploy

Build with make.

Ship on Tuesdays.

Watch the dashboards afterwards.
"""


class Repo:
    """A git repository in tmp_path with memory-ls and git run in it, isolated from the
    user's git configuration."""

    def __init__(self, root: Path, home: Path) -> None:
        self.root = root
        self.env = {
            **os.environ,
            "HOME": str(home),
            "XDG_CACHE_HOME": str(home / "cache"),
            "XDG_CONFIG_HOME": str(home / "config"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "Ann",
            "GIT_AUTHOR_EMAIL": "ann@example.com",
            "GIT_COMMITTER_NAME": "Ann",
            "GIT_COMMITTER_EMAIL": "ann@example.com",
            # The driver runs this checkout's code, as the tool run below does.
            "PYTHONPATH": os.pathsep.join(sys.path),
        }

    def run(self, *command: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            command,
            cwd=self.root,
            env=self.env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def git(self, *args: str) -> str:
        done = self.run("git", *args)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def tool(self, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return self.run(sys.executable, "-m", "memory_ls.cli", *args, "--no-global", stdin=stdin)

    def write(self, relative: str, text: str) -> None:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def read(self, relative: str) -> str:
        return (self.root / relative).read_bytes().decode("utf-8")

    def commit(self, message: str) -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    """A repository whose first commit holds one memory, set up with git-setup."""
    root = tmp_path / "repo"
    root.mkdir()
    (tmp_path / "home").mkdir()
    space = Repo(root, tmp_path / "home")
    space.git("init", "-q", "-b", "main")
    space.write(MEMORY, BASE_TEXT)
    setup = space.tool("git-setup")
    assert setup.returncode == 0, setup.stderr
    space.commit("deploy notes")
    return space


def updated_at(text: str) -> str:
    match = re.search(r"^updated_at: (\S+)$", text, re.MULTILINE)
    assert match is not None, text
    return match.group(1)


def test_edits_of_different_paragraphs_merge_clean_with_the_later_stamp(repo: Repo) -> None:
    repo.git("checkout", "-q", "-b", "feature")
    edit = repo.tool(
        "edit", "deploy", "--needle", "Ship on Tuesdays.", "--replacement", "Ship daily."
    )
    assert edit.returncode == 0, edit.stderr
    # Their stamp is set a day ahead, so which side's time wins is not left to the clock.
    repo.write(
        MEMORY, re.sub(r"updated_at: \S+", "updated_at: 2030-01-02T03:04:05Z", repo.read(MEMORY))
    )
    repo.commit("feature: ship daily")
    repo.git("checkout", "-q", "main")
    edit = repo.tool(
        "edit", "deploy", "--needle", "Build with make.", "--replacement", "Build with nix."
    )
    assert edit.returncode == 0, edit.stderr
    ours_stamp = updated_at(repo.read(MEMORY))
    assert ours_stamp != "2025-01-01T00:00:00Z", "memory-ls stamped the edit"
    repo.commit("main: build with nix")

    merged = repo.run("git", "merge", "-q", "--no-edit", "feature")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    text = repo.read(MEMORY)
    assert "Build with nix." in text and "Ship daily." in text
    assert updated_at(text) == max(ours_stamp, "2030-01-02T03:04:05Z") == "2030-01-02T03:04:05Z"
    # Every other line of the frontmatter as it was written.
    assert "owner: ann  # asks the on-call\n" in text
    assert text.startswith("---\ntags: [ops]\ncreated_at: 2025-01-01T00:00:00Z\nupdated_at:")


def test_tags_added_on_both_branches_are_united(repo: Repo) -> None:
    body = parse_document(BASE_TEXT).body
    repo.git("checkout", "-q", "-b", "feature")
    saved = repo.tool("save", "deploy", "--tag", "ops", "--tag", "release", stdin=body)
    assert saved.returncode == 0, saved.stderr
    repo.commit("feature: tag release")
    repo.git("checkout", "-q", "main")
    saved = repo.tool("save", "deploy", "--tag", "ops", "--tag", "ci", stdin=body)
    assert saved.returncode == 0, saved.stderr
    repo.commit("main: tag ci")

    merged = repo.run("git", "merge", "-q", "--no-edit", "feature")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    text = repo.read(MEMORY)
    assert parse_document(text).tags == ["ops", "ci", "release"]
    listed = repo.tool("list", "--tag", "release", "--tag", "ci")
    assert listed.stdout.startswith("deploy "), listed.stdout


def test_the_same_line_changed_differently_conflicts_and_check_points_at_it(repo: Repo) -> None:
    repo.git("checkout", "-q", "-b", "feature")
    repo.tool("edit", "deploy", "--needle", "Ship on Tuesdays.", "--replacement", "Ship daily.")
    repo.commit("feature: daily")
    repo.git("checkout", "-q", "main")
    repo.tool("edit", "deploy", "--needle", "Ship on Tuesdays.", "--replacement", "Ship weekly.")
    repo.commit("main: weekly")

    merged = repo.run("git", "merge", "--no-edit", "feature")
    assert merged.returncode != 0
    assert "CONFLICT (content): Merge conflict in .serena/memories/deploy.md" in merged.stdout
    lines = repo.read(MEMORY).split("\n")
    start = lines.index("<<<<<<< ours")
    assert lines[start : start + 5] == [
        "<<<<<<< ours",
        "Ship weekly.",
        "=======",
        "Ship daily.",
        ">>>>>>> theirs",
    ]
    # The frontmatter itself merged: one stamp, no markers there.
    assert parse_document(repo.read(MEMORY)).problem is None

    check = repo.tool("check")
    assert check.returncode == 1
    rows = [line for line in check.stdout.splitlines() if " merge-conflict " in line]
    assert len(rows) == 1 and rows[0].startswith(f"{MEMORY}:{start + 1}:1: error merge-conflict")
    assert f"lines {start + 1}-{start + 5}" in rows[0]

    read = repo.tool("read", "deploy")
    assert read.returncode == 0
    assert read.stderr.startswith("memory-ls: Warning [merge-conflict]: memory 'deploy' holds 1")


def test_a_conflicted_frontmatter_key_is_reported_at_its_markers(repo: Repo) -> None:
    repo.git("checkout", "-q", "-b", "feature")
    repo.write(MEMORY, BASE_TEXT.replace("owner: ann  # asks the on-call", "owner: bob"))
    repo.commit("feature: bob")
    repo.git("checkout", "-q", "main")
    repo.write(MEMORY, BASE_TEXT.replace("owner: ann  # asks the on-call", "owner: cat"))
    repo.commit("main: cat")

    assert repo.run("git", "merge", "--no-edit", "feature").returncode != 0
    text = repo.read(MEMORY)
    assert "<<<<<<< ours\nowner: cat\n=======\nowner: bob\n>>>>>>> theirs\n---\n" in text
    check = repo.tool("check")
    rows = [line for line in check.stdout.splitlines() if MEMORY in line]
    # Lines 5 to 9: the block, not "not valid YAML".
    assert len(rows) == 1 and rows[0].startswith(f"{MEMORY}:5:1: error merge-conflict"), rows


def test_without_the_driver_both_stamps_conflict(repo: Repo) -> None:
    """What the driver saves a team from: the same edits conflict on `updated_at` alone."""
    repo.git("config", "--remove-section", "merge.memory-ls")  # a clone without the setup
    repo.git("checkout", "-q", "-b", "feature")
    repo.write(
        MEMORY,
        BASE_TEXT.replace("Ship on Tuesdays.", "Ship daily.").replace(
            "updated_at: 2025-01-01T00:00:00Z", "updated_at: 2025-02-02T00:00:00Z"
        ),
    )
    repo.commit("feature")
    repo.git("checkout", "-q", "main")
    repo.write(
        MEMORY,
        BASE_TEXT.replace("Build with make.", "Build with nix.").replace(
            "updated_at: 2025-01-01T00:00:00Z", "updated_at: 2025-03-03T00:00:00Z"
        ),
    )
    repo.commit("main")
    assert repo.run("git", "merge", "--no-edit", "feature").returncode != 0
    assert "<<<<<<<" in repo.read(MEMORY)


def test_git_setup_twice_changes_nothing_the_second_time(repo: Repo) -> None:
    attributes = repo.read(".gitattributes")
    config = (repo.root / ".git" / "config").read_bytes()
    assert ".serena/memories/**/*.md merge=memory-ls\n" in attributes
    driver = repo.git("config", "--get", "merge.memory-ls.driver").strip()
    assert driver == f"{sys.executable} -m memory_ls.cli merge-driver %O %A %B %P; {FALLBACK}"
    again = repo.tool("git-setup")
    assert again.returncode == 0, again.stderr
    assert "nothing to change (already set up" in again.stdout
    assert json.loads(repo.tool("git-setup", "--json").stdout)["changed"] is False
    assert repo.read(".gitattributes") == attributes
    assert (repo.root / ".git" / "config").read_bytes() == config
    assert repo.git("status", "--porcelain") == ""


def test_uninstall_removes_exactly_what_setup_added(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (tmp_path / "home").mkdir()
    repo = Repo(root, tmp_path / "home")
    repo.git("init", "-q", "-b", "main")
    repo.git("config", "merge.ours.driver", "true")
    repo.write(".gitattributes", "*.png binary\r\n")  # the user's, CRLF
    repo.write("shared/team/x.md", "# X\n")
    before_config = (root / ".git" / "config").read_bytes()

    setup = repo.tool("git-setup", "--additional-folders", "shared/team")
    assert setup.returncode == 0, setup.stderr
    assert repo.read(".gitattributes").endswith("shared/team/**/*.md merge=memory-ls\r\n")
    assert ".serena/memories/**/*.md merge=memory-ls\r\n" in repo.read(".gitattributes")
    assert repo.git("check-attr", "merge", "shared/team/x.md").strip().endswith("memory-ls")

    removed = repo.tool("git-setup", "--uninstall")
    assert removed.returncode == 0, removed.stderr
    assert repo.read(".gitattributes") == "*.png binary\r\n"
    assert (root / ".git" / "config").read_bytes() == before_config
    assert "nothing to change (not set up" in repo.tool("git-setup", "--uninstall").stdout


def test_setup_outside_a_repository_is_refused(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "plain").mkdir()
    repo = Repo(tmp_path / "plain", tmp_path / "home")
    repo.env["GIT_CEILING_DIRECTORIES"] = str(tmp_path)
    done = repo.tool("git-setup")
    assert done.returncode == 3
    assert "is not in a git work tree" in done.stderr
    assert not (tmp_path / "plain" / ".gitattributes").exists()


def test_an_installed_entry_point_is_written_by_its_path_and_run_by_git(tmp_path: Path) -> None:
    """A console script as pip writes it, in a folder with a space: git-setup names it by
    its absolute path, and git runs it with a PATH that does not have it."""
    scripts = tmp_path / "my venv" / "bin"
    scripts.mkdir(parents=True)
    script = scripts / "memory-ls"
    script.write_text(
        f"#!{sys.executable}\nimport sys\nfrom memory_ls.cli import main\nsys.exit(main())\n"
    )
    script.chmod(0o755)
    root = tmp_path / "repo"
    root.mkdir()
    (tmp_path / "home").mkdir()
    repo = Repo(root, tmp_path / "home")
    repo.git("init", "-q", "-b", "main")
    repo.write(MEMORY, BASE_TEXT)
    setup = repo.run(str(script), "git-setup", "--no-global")
    assert setup.returncode == 0, setup.stderr
    driver = repo.git("config", "--get", "merge.memory-ls.driver").strip()
    assert driver == f"'{script}' merge-driver %O %A %B %P; {FALLBACK}"
    repo.commit("deploy notes")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write(MEMORY, BASE_TEXT.replace("[ops]", "[ops, release]"))
    repo.commit("feature")
    repo.git("checkout", "-q", "main")
    repo.write(MEMORY, BASE_TEXT.replace("[ops]", "[ops, ci]"))
    repo.commit("main")
    repo.env["PATH"] = os.path.dirname(shutil.which("git") or "/usr/bin/git")
    merged = repo.run("git", "merge", "-q", "--no-edit", "feature")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert parse_document(repo.read(MEMORY)).tags == ["ops", "ci", "release"]


def install_launcher(folder: Path) -> Path:
    """A `memory-ls` console script as pip writes it, in `folder`/bin."""
    script = folder / "bin" / "memory-ls"
    script.parent.mkdir(parents=True)
    script.write_text(
        f"#!{sys.executable}\nimport sys\nfrom memory_ls.cli import main\nsys.exit(main())\n"
    )
    script.chmod(0o755)
    return script


NOTES = ".serena/memories/notes.md"
NOTES_TEXT = "# Notes\n\nThe release owner is ann.\n"


@pytest.mark.parametrize("breakage", ["deleted", "cannot-import"])
def test_a_driver_whose_install_is_gone_leaves_git_s_text_merge(
    tmp_path: Path, breakage: str
) -> None:
    """git-setup names this install's memory-ls; the install goes away (a venv deleted, or
    one whose Python no longer finds the package: exit 1 before writing anything). git
    then merges the memories as text: what merges, merges; a conflict is marked, never
    settled as our side without a word; and `check` points at the markers."""
    venv = tmp_path / "old venv"
    script = install_launcher(venv)
    root = tmp_path / "repo"
    root.mkdir()
    (tmp_path / "home").mkdir()
    repo = Repo(root, tmp_path / "home")
    repo.git("init", "-q", "-b", "main")
    repo.write(MEMORY, BASE_TEXT)
    repo.write(NOTES, NOTES_TEXT)
    setup = repo.run(str(script), "git-setup", "--no-global")
    assert setup.returncode == 0, setup.stderr
    repo.commit("notes")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write(MEMORY, BASE_TEXT.replace("Ship on Tuesdays.", "Ship daily."))
    repo.write(NOTES, NOTES_TEXT.replace("ann", "bob"))
    repo.commit("feature")
    repo.git("checkout", "-q", "main")
    repo.write(MEMORY, BASE_TEXT.replace("Build with make.", "Build with nix."))
    repo.write(NOTES, NOTES_TEXT.replace("ann", "cat"))
    repo.commit("main")
    if breakage == "deleted":
        shutil.rmtree(venv)
    else:
        script.write_text(f"#!{sys.executable}\nimport memory_ls_is_not_installed_here\n")

    merged = repo.run("git", "merge", "--no-edit", "feature")
    assert merged.returncode != 0
    assert f"CONFLICT (content): Merge conflict in {NOTES}" in merged.stdout
    # Edits of different lines: git's clean text merge.
    assert repo.read(MEMORY) == BASE_TEXT.replace("Ship on Tuesdays.", "Ship daily.").replace(
        "Build with make.", "Build with nix."
    )
    assert repo.git("status", "--porcelain", "--", NOTES, MEMORY).splitlines() == [
        f"M  {MEMORY}",
        f"UU {NOTES}",
    ]
    # The same line: git's markers, both sides kept.
    lines = repo.read(NOTES).split("\n")
    start = lines.index("<<<<<<< ours")
    assert lines[start : start + 5] == [
        "<<<<<<< ours",
        "The release owner is cat.",
        "=======",
        "The release owner is bob.",
        ">>>>>>> theirs",
    ]
    status = 127 if breakage == "deleted" else 1
    assert f"memory-ls: merge-driver failed (exit {status})" in merged.stderr

    check = repo.tool("check")
    assert check.returncode == 1, check.stdout + check.stderr
    rows = [line for line in check.stdout.splitlines() if " merge-conflict " in line]
    assert len(rows) == 1 and rows[0].startswith(f"{NOTES}:{start + 1}:1: error merge-conflict")
    gone = [line for line in check.stdout.splitlines() if " missing-merge-driver " in line]
    if breakage == "deleted":  # the driver runs a program that does not exist
        assert len(gone) == 1 and gone[0].startswith(".gitattributes:"), check.stdout
        assert f"runs {script}, which does not exist" in gone[0]
        assert gone[0].endswith("run memory-ls git-setup")
    else:
        assert gone == []


def test_git_setup_replaces_an_older_driver_command(repo: Repo) -> None:
    """A clone set up before the fallback existed gets the new command on a rerun."""
    old = f"{sys.executable} -m memory_ls.cli merge-driver %O %A %B %P"
    repo.git("config", "merge.memory-ls.driver", old)
    again = repo.tool("git-setup")
    assert again.returncode == 0, again.stderr
    new = f"{old}; {FALLBACK}"
    assert again.stdout == f"git config: set merge.memory-ls.driver = {new}\n"
    assert repo.git("config", "--get-all", "merge.memory-ls.driver") == f"{new}\n"
    assert "nothing to change" in repo.tool("git-setup").stdout


def test_check_warns_of_a_clone_without_the_driver(repo: Repo) -> None:
    """`.gitattributes` asks for the driver (committed), this clone's config lacks it:
    git would merge memories as text without a word. `check` says so, on that line."""
    assert repo.tool("check").returncode == 0
    repo.git("config", "--remove-section", "merge.memory-ls")  # a clone without the setup
    check = repo.tool("check")
    assert check.returncode == 1, check.stdout + check.stderr
    attributes = repo.read(".gitattributes").split("\n")
    line = next(n for n, text in enumerate(attributes) if text.endswith(" merge=memory-ls"))
    column = attributes[line].index("merge=memory-ls")
    rows = check.stdout.splitlines()
    assert len(rows) == 1, rows
    assert rows[0].startswith(
        f".gitattributes:{line + 1}:{column + 1}: warning missing-merge-driver "
    )
    assert "has no merge.memory-ls.driver" in rows[0]
    assert rows[0].endswith("run memory-ls git-setup")
    assert "1 warning(s)" in check.stderr
    # A check of some files only leaves the repository alone.
    assert repo.tool("check", MEMORY).returncode == 0
    # Set up again: clean.
    assert repo.tool("git-setup").returncode == 0
    assert repo.tool("check").returncode == 0
