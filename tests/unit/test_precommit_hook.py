"""The `memory-ls-check` pre-commit hook, run by pre-commit itself.

The hook repository is this project's package (server/, pyproject.toml, the hook file)
committed to a temporary git repository: pre-commit installs it into a virtualenv of
its own (pip, from PyPI: the first run takes half a minute), then runs it on the files
it selects. The project under test is another temporary git repository.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE_FILES = ("pyproject.toml", "README.md", "LICENSE", ".pre-commit-hooks.yaml")
INSTALL_TIMEOUT = 900


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment pre-commit runs in: its own home, no user's global memories."""
    base = tmp_path_factory.mktemp("pre-commit")
    home = base / "home"
    home.mkdir()
    pip_cache = os.environ.get("PIP_CACHE_DIR") or str(Path.home() / ".cache" / "pip")
    # The hook runs the copy pre-commit installed, not the sources on our PYTHONPATH.
    inherited = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return {
        **inherited,
        "HOME": str(home),
        "PRE_COMMIT_HOME": str(base / "pre-commit-home"),
        # The wheels pip already has stay usable under the test's HOME.
        "PIP_CACHE_DIR": pip_cache,
        "GIT_AUTHOR_NAME": "Test",
        "GIT_AUTHOR_EMAIL": "test@example.invalid",
        "GIT_COMMITTER_NAME": "Test",
        "GIT_COMMITTER_EMAIL": "test@example.invalid",
    }


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Path:
    """This project's package and hook file, committed to a fresh git repository."""
    repo = tmp_path_factory.mktemp("hook-repo")
    for name in PACKAGE_FILES:
        shutil.copy2(REPO / name, repo / name)
    shutil.copytree(
        REPO / "server",
        repo / "server",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"),
    )
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-qm", "hook"], cwd=repo, check=True, env=env)
    return repo


@pytest.fixture
def project(tmp_path: Path, env: dict[str, str]) -> Path:
    """A repository with a bad memory, a good one, a shared one and a non-memory file."""
    root = tmp_path / "project"
    root.mkdir()
    write(root / ".serena" / "memories" / "bad.md", "# Bad\n\nSee [[nowhere]].\n")
    write(root / ".serena" / "memories" / "good.md", "# Good\n\nSee [[bad]] and [[FEATURE_x]].\n")
    write(root / "shared" / "feature" / "FEATURE_x.md", "# X\n\nSee [[gone_too]].\n")
    write(root / "docs" / "notes.md", "See [[nowhere]].\n")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True, env=env)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    return root


def pre_commit(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT,
    )


def test_try_repo_checks_the_changed_memories_only(
    hook_repo: Path, project: Path, env: dict[str, str]
) -> None:
    every = [".serena/memories/bad.md", ".serena/memories/good.md", "docs/notes.md"]
    failed = pre_commit(
        project, env, "try-repo", str(hook_repo), "memory-ls-check", "--files", *every
    )
    assert failed.returncode == 1, failed.stdout + failed.stderr
    found = [line for line in failed.stdout.splitlines() if " broken-link " in line]
    # good.md's links resolve against the whole store (FEATURE_x is not in its folders,
    # so that one is broken here); docs/notes.md is no memory and is not passed.
    assert [line.split(":", 1)[0] for line in found] == [
        ".serena/memories/bad.md",
        ".serena/memories/good.md",
    ]
    assert "FEATURE_x" in found[1] and "[[bad]]" not in failed.stdout

    passed = pre_commit(
        project, env, "try-repo", str(hook_repo), "memory-ls-check", "--files", "docs/notes.md"
    )
    assert passed.returncode == 0, passed.stdout + passed.stderr
    # pre-commit passes every Markdown file; the hook leaves those outside the store alone.
    assert "nowhere" not in passed.stdout


def test_the_project_file_names_the_shared_folders(
    hook_repo: Path, project: Path, env: dict[str, str]
) -> None:
    """The project file's folders are the hook's: no `files` or `args` to repeat them."""
    rev = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=hook_repo, check=True, capture_output=True, text=True
    ).stdout.strip()
    write(project / "memory-ls.toml", 'additional-folders = ["shared/feature"]\n')
    write(
        project / ".pre-commit-config.yaml",
        f"""repos:
  - repo: {hook_repo}
    rev: {rev}
    hooks:
      - id: memory-ls-check
""",
    )
    git(project, "add", ".pre-commit-config.yaml", "memory-ls.toml")
    done = pre_commit(
        project,
        env,
        "run",
        "--files",
        ".serena/memories/good.md",
        "shared/feature/FEATURE_x.md",
        "docs/notes.md",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    found = [line for line in done.stdout.splitlines() if " broken-link " in line]
    # With the shared folder in the store, good.md's [[FEATURE_x]] resolves; docs/notes.md
    # is no memory.
    assert [line.split(":", 1)[0] for line in found] == ["shared/feature/FEATURE_x.md"]
    assert "gone_too" in found[0]


def test_a_commit_deleting_a_linked_memory_fails_naming_the_linking_memory(
    hook_repo: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    """pre-commit passes no deleted file: the hook finds the delete in the index and
    checks the memories that link to it (issue 34 point 5), through a real `git commit`."""
    rev = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=hook_repo, check=True, capture_output=True, text=True
    ).stdout.strip()
    root = tmp_path / "linked"
    memories = root / ".serena" / "memories"
    write(memories / "retry.md", "# Retry\n\nThree times.\n")
    write(memories / "deploy.md", "# Deploy\n\nSee [[retry]].\n")
    write(
        root / ".pre-commit-config.yaml",
        f"repos:\n  - repo: {hook_repo}\n    rev: {rev}\n    hooks:\n      - id: memory-ls-check\n",
    )
    subprocess.run(["git", "init", "-q"], cwd=root, check=True, env=env)
    git(root, "add", "-A")
    installed = pre_commit(root, env, "install")
    assert installed.returncode == 0, installed.stdout + installed.stderr

    def commit(message: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", "commit", "-qm", message],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT,
        )

    first = commit("memories")
    assert first.returncode == 0, first.stdout + first.stderr
    git(root, "rm", "-q", ".serena/memories/retry.md")
    refused = commit("drop retry")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    # git sends a hook's output to standard error.
    found = [line for line in refused.stderr.splitlines() if " broken-link " in line]
    assert [line.split(":", 1)[0] for line in found] == [".serena/memories/deploy.md"]
    assert "(retry is deleted by the staged changes)" in found[0]
    # The commit did not happen; fixing the link lets it through.
    write(memories / "deploy.md", "# Deploy\n\nRetries are gone.\n")
    git(root, "add", ".serena/memories/deploy.md")
    fixed = commit("drop retry, fix the link")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
