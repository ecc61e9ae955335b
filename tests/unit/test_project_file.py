"""The project file (issue 31): found as ruff finds its configuration, validated with clear
errors, read by the `memory-ls` command from any subdirectory, and written by `init`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memory_ls.config import ConfigError, FolderSetting, merge_layers
from memory_ls.project_file import (
    ProjectWatch,
    find_project_file,
    load_project,
    read_project_file,
    render_project_file,
)

# The console script pip installs beside the interpreter: what a user runs.
MEMORY_LS = str(Path(sys.executable).parent / "memory-ls")

STORE = """\
additional-folders = [
  "shared/feature",
  "shared/vendor:ro",
  {path = "shared/spec", read-only = true},
]
global-folder = "../global"
max-memory-bytes = 4096

[diagnostics]
broken-link = "error"
"""


def run(cwd: Path, *args: str, stdin: str, home: Path) -> subprocess.CompletedProcess[str]:
    """Run the installed `memory-ls` in `cwd`, with its own HOME and cache."""
    return subprocess.run(
        [MEMORY_LS, *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / "cache")},
        timeout=60,
        check=False,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with a project file, its folders, and a subdirectory to work from."""
    root = tmp_path / "repo"
    for folder in (
        ".serena/memories",
        "shared/feature",
        "shared/vendor",
        "shared/spec",
        "src/deep",
    ):
        (root / folder).mkdir(parents=True)
    (tmp_path / "global").mkdir()
    (tmp_path / "home").mkdir()
    (root / "memory-ls.toml").write_text(STORE)
    return root


def cli(repo: Path, cwd: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return run(cwd, *args, stdin=stdin, home=repo.parent / "home")


def test_found_in_the_nearest_parent_dotted_first_pyproject_only_with_its_table(
    tmp_path: Path,
) -> None:
    top, sub = tmp_path / "top", tmp_path / "top" / "a" / "b"
    sub.mkdir(parents=True)
    assert find_project_file(str(sub)) is None
    (top / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert find_project_file(str(sub)) is None  # no [tool.memory-ls]: passed over
    (top / "pyproject.toml").write_text('[tool.memory-ls]\nlayout = "aicoder"\n')
    assert find_project_file(str(sub)) == str(top / "pyproject.toml")
    (top / "a" / "memory-ls.toml").write_text("")
    assert find_project_file(str(sub)) == str(top / "a" / "memory-ls.toml")
    (top / "a" / ".memory-ls.toml").write_text("")
    assert find_project_file(str(sub)) == str(top / "a" / ".memory-ls.toml")
    project = load_project(str(top))
    assert project is not None and project.in_pyproject
    assert merge_layers(project.layer).layout == "aicoder"


def test_folders_are_relative_to_the_file_and_every_form_is_read(repo: Path) -> None:
    project = read_project_file(str(repo / "memory-ls.toml"))
    settings = merge_layers(project.layer)
    assert settings.additional_folders == (
        FolderSetting(str(repo / "shared/feature"), False),
        FolderSetting(str(repo / "shared/vendor"), True),
        FolderSetting(str(repo / "shared/spec"), True),
    )
    assert settings.global_folder == str(repo.parent / "global")
    assert settings.max_memory_bytes == 4096
    assert settings.severity("broken-link") == "error"
    (repo / "memory-ls.toml").write_text("global = false\n")
    assert not merge_layers(read_project_file(str(repo / "memory-ls.toml")).layer).global_enabled


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "additonal-folders = []\n",
            "additonal-folders: unknown key (did you mean 'additional-folders'?)",
        ),
        ('max-memory-bytes = "4k"\n', 'max-memory-bytes: expected a whole number, got "4k"'),
        (
            'layout = "cursor"\n',
            'layout: expected one of "serena", "aicoder", "claude", got "cursor"',
        ),
        ('additional-folders = "a,b"\n', "additional-folders: expected an array of folders"),
        (
            'additional-folders = [{path = "a", readonly = true}]\n',
            "additional-folders[0].readonly: unknown key (did you mean 'read-only'?)",
        ),
        (
            '[diagnostics]\nbroken-links = "off"\n',
            "diagnostics.broken-links: unknown diagnostic code (did you mean 'broken-link'?)",
        ),
        (
            'global = false\nglobal-folder = "g"\n',
            "global: false and global-folder cannot be used together",
        ),
        ("layout = \n", "not valid TOML"),
    ],
)
def test_bad_input_names_the_file_the_key_and_what_is_allowed(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = tmp_path / "memory-ls.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as error:
        read_project_file(str(path))
    assert str(path) in str(error.value)
    assert expected in str(error.value)


def test_what_is_written_reads_back_the_same(tmp_path: Path) -> None:
    project = read_project_file(str(_write(tmp_path / "memory-ls.toml", STORE)))
    text = render_project_file(dict(project.layer.values), str(tmp_path))
    again = read_project_file(str(_write(tmp_path / "again" / "memory-ls.toml", text)))
    # Written relative to its own directory: the same folders from the copy's place.
    assert 'global-folder = "../global"' in text and '"shared/vendor:ro"' in text
    assert merge_layers(again.layer).max_memory_bytes == 4096
    assert merge_layers(again.layer).severity("broken-link") == "error"


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_a_watch_keeps_the_last_good_file_and_says_what_is_wrong_once(tmp_path: Path) -> None:
    path = _write(tmp_path / "memory-ls.toml", "max-memory-bytes = 10\n")
    watch = ProjectWatch(str(tmp_path))
    assert watch.refresh() == (True, None)
    path.write_text("max-memory-bytes = -1\n")
    changed, problem = watch.refresh()
    assert not changed and problem is not None and "max-memory-bytes" in str(problem)
    assert watch.project is not None and merge_layers(watch.project.layer).max_memory_bytes == 10
    assert watch.refresh() == (False, None)  # said once
    path.write_text("max-memory-bytes = 20\n")
    assert watch.refresh() == (True, None) and watch.error is None
    path.unlink()
    assert watch.refresh() == (True, None) and watch.project is None


def test_the_command_line_reads_it_from_any_subdirectory(repo: Path) -> None:
    deep = repo / "src" / "deep"
    saved = cli(repo, deep, "save", "FEATURE_auth", "--tag", "auth", stdin="# Auth\n")
    assert saved.returncode == 0, saved.stderr
    assert (repo / "shared/feature/FEATURE_auth.md").is_file()
    assert not (deep / ".serena").exists()
    listed = cli(repo, deep, "list", "--json")
    assert [m["name"] for m in json.loads(listed.stdout)["memories"]] == ["FEATURE_auth"]
    big = cli(repo, deep, "save", "big", stdin="x" * 5000)
    assert big.returncode == 3 and "too-large" in big.stderr
    # A flag wins over the file, key by key.
    flagged = cli(repo, deep, "--max-memory-bytes", "10000", "save", "big", stdin="x" * 5000)
    assert flagged.returncode == 0, flagged.stderr


def test_config_prints_each_value_and_where_it_came_from(repo: Path) -> None:
    shown = cli(repo, repo / "src", "config", "--json", "--max-memory-bytes", "99")
    assert shown.returncode == 0, shown.stderr
    result = json.loads(shown.stdout)
    assert result["projectFile"] == str(repo / "memory-ls.toml")
    assert result["root"] == str(repo)
    settings = result["settings"]
    assert settings["max-memory-bytes"] == {"value": 99, "source": "command-line flags"}
    assert settings["global-folder"]["source"] == str(repo / "memory-ls.toml")
    assert settings["secrets"] == {"value": "refuse", "source": "default"}
    assert settings["diagnostics.broken-link"]["value"] == "error"
    text = cli(repo, repo, "config").stdout
    assert f"project file: {repo / 'memory-ls.toml'}" in text
    assert "shared/vendor (read-only)" in text


def test_an_invalid_file_exits_2_and_writes_nothing(repo: Path) -> None:
    (repo / "memory-ls.toml").write_text("additional-folder = ['shared/feature']\n")
    done = cli(repo, repo, "save", "FEATURE_x", stdin="# x\n")
    assert done.returncode == 2
    assert "memory-ls.toml" in done.stderr and "did you mean 'additional-folders'" in done.stderr
    assert not list(repo.rglob("FEATURE_x.md"))


def test_the_journal_belongs_to_the_store_not_to_the_flags(repo: Path) -> None:
    assert cli(repo, repo / "src", "--no-global", "save", "note", stdin="# one\n").returncode == 0
    assert cli(repo, repo, "save", "note", stdin="# two\n").returncode == 0
    history = json.loads(cli(repo, repo / "src" / "deep", "history", "note", "--json").stdout)
    assert len(history["entries"]) == 2


# --- init ------------------------------------------------------------------------------


def _tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts[:1]
    }


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, check=True
    ).stdout


@pytest.fixture
def bare_repo(tmp_path: Path) -> Path:
    """A git repository with memories but no project file, and an agent's MCP files."""
    root = tmp_path / "repo"
    for folder in (".serena/memories", "shared/feature", "src", ".vscode"):
        (root / folder).mkdir(parents=True)
    (tmp_path / "home").mkdir()
    _git(root, "init", "-q")
    other = {"mcpServers": {"github": {"command": "gh-mcp", "args": ["--stdio"]}}}
    (root / ".mcp.json").write_text(json.dumps(other, indent=4))
    # VS Code's mcp.json may hold comments: never rewritten (the entry is printed instead).
    (root / ".vscode" / "mcp.json").write_text('{\n  // mine\n  "servers": {}\n}\n')
    return root


def test_init_sets_the_repository_up_once_and_changes_no_byte_the_second_time(
    bare_repo: Path,
) -> None:
    first = cli(bare_repo, bare_repo / "src", "--additional-folders", "../shared/feature", "init")
    assert first.returncode == 0, first.stderr
    project = read_project_file(str(bare_repo / "memory-ls.toml"))
    assert merge_layers(project.layer).additional_folders == (
        FolderSetting(str(bare_repo / "shared/feature"), False),
    )
    assert "shared/feature" in (bare_repo / "memory-ls.toml").read_text()
    servers = json.loads((bare_repo / ".mcp.json").read_text())["mcpServers"]
    assert servers["github"] == {"command": "gh-mcp", "args": ["--stdio"]}
    assert servers["memory-ls"] == {"command": "memory-ls", "args": ["mcp"]}
    cursor = json.loads((bare_repo / ".cursor" / "mcp.json").read_text())["mcpServers"]
    assert cursor["memory-ls"]["args"] == ["mcp", "--root", "${workspaceFolder}"]
    assert (bare_repo / ".vscode" / "mcp.json").read_text().startswith("{\n  // mine")
    assert "is not plain JSON" in first.stdout
    assert "merge=memory-ls" in (bare_repo / ".gitattributes").read_text()
    assert _git(bare_repo, "config", "merge.memory-ls.driver").strip()
    assert "memory-ls-check" in first.stdout and "memory-ls check --format github" in first.stdout

    before, config = _tree(bare_repo), _git(bare_repo, "config", "--local", "--list")
    again = cli(bare_repo, bare_repo, "init")
    assert again.returncode == 0, again.stderr
    assert _tree(bare_repo) == before
    assert _git(bare_repo, "config", "--local", "--list") == config
    assert "written" not in again.stdout


def test_init_never_rewrites_a_project_file_it_disagrees_with(bare_repo: Path) -> None:
    (bare_repo / "memory-ls.toml").write_text("# ours\nmax-memory-bytes = 100\n")
    before = _tree(bare_repo)
    done = cli(bare_repo, bare_repo, "--max-memory-bytes", "200", "init")
    assert done.returncode == 3
    assert "max-memory-bytes" in done.stderr
    assert _tree(bare_repo) == before


def test_a_pyproject_is_read_again_when_it_changes(tmp_path: Path) -> None:
    pyproject = _write(tmp_path / "pyproject.toml", '[project]\nname = "x"\n')
    assert find_project_file(str(tmp_path)) is None
    pyproject.write_text('[project]\nname = "x"\n\n[tool.memory-ls]\nglobal = false\n')
    assert find_project_file(str(tmp_path)) == str(pyproject)


def test_check_memories_only_leaves_other_markdown_alone(repo: Path) -> None:
    (repo / "docs").mkdir()
    (repo / "docs" / "notes.md").write_text("See [[nowhere]].\n")
    (repo / "shared/feature/FEATURE_x.md").write_text("See [[gone]].\n")
    alone = cli(repo, repo, "check", "--memories-only", "docs/notes.md")
    assert alone.returncode == 0 and "nothing to check" in alone.stderr
    both = cli(
        repo, repo, "check", "--memories-only", "docs/notes.md", "shared/feature/FEATURE_x.md"
    )
    assert both.returncode == 1
    assert "FEATURE_x.md" in both.stdout and "notes.md" not in both.stdout
