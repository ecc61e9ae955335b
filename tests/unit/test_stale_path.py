"""`stale-path` and `context-budget` through `memory-ls check`, in a real git repository."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from memory_ls.config import Layer, merge_layers
from memory_ls.core.layouts import CONTEXT_LIMITS
from memory_ls.core.rules.context_limits import effective_limit
from memory_ls.core.rules.stale_paths import (
    PathMention,
    Suggestion,
    find_path_mentions,
    suggest_paths,
    write_like,
)
from memory_ls.core.services.diagnostics import PathMemo
from memory_ls.core.storage.folders import resolve_store_config
from memory_ls.core.storage.git import RenameHistory

NOTE = """\
---
tags: [net]
see: 'in `src/in/frontmatter.py`'
---
# Network notes

The retry logic lives in `src/net/retry.py:42` (moved by git mv).
Deploying: [steps](../../docs/deploy.md) (deleted), [kept](docs/keep.md) from the root,
[kept too](../../docs/keep.md#usage) as Markdown resolves it.
Build output `build/out.js` is ignored but there; `build/never.js` is ignored and gone.
The folder `src/net/` is there, `src/old/` is not.
Not paths: `and/or`, `git mv a/b.py c/d.py`, `src/*.py`, `https://example.org/a.py`,
`/etc/passwd.conf`, [web](https://example.org/x.md), [top](#top), `mem:other`, `1/2.5`.

```sh
cat src/in/fence.py `src/in/fence.py`
```

[ref]: docs/missing.md
"""


def git(root: Path, *args: str) -> str:
    """Run git in the repository; fail the test on failure."""
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout


def make_repository(root: Path) -> Path:
    """A repository with a moved file, a deleted one, an ignored one and kept ones."""
    for relative, text in {
        "src/net/retry.py": "def retry(): ...\n",
        "docs/deploy.md": "# Deploy\n",
        "docs/keep.md": "# Keep\n",
        ".gitignore": "build/\n",
        "build/out.js": "built\n",
    }.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.org")
    git(root, "config", "user.name", "Test")
    git(root, "add", ".")
    git(root, "commit", "-qm", "first")
    git(root, "mv", "src/net/retry.py", "src/net/backoff.py")
    git(root, "commit", "-qm", "rename retry")
    git(root, "rm", "-q", "docs/deploy.md")
    git(root, "commit", "-qm", "drop deploy")
    memory = root / ".serena" / "memories" / "network.md"
    memory.parent.mkdir(parents=True)
    memory.write_text(NOTE)
    return memory


def check(root: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    """`memory-ls check --json` in root: (exit status, diagnostics)."""
    done = subprocess.run(
        [sys.executable, "-m", "memory_ls.cli", "check", "--json", "--no-global", *args],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": str(root.parent / "home"), **(env or {})},
        timeout=60,
    )
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)["diagnostics"]


def shown(diagnostics: list[dict[str, Any]], code: str) -> list[tuple[int, int, int, str]]:
    """(line, column, end column, first word of the message) of one code's diagnostics."""
    return [
        (d["line"], d["column"], d["endColumn"], d["message"].split()[0])
        for d in diagnostics
        if d["code"] == code
    ]


def at(line: int, path: str) -> tuple[int, int, int, str]:
    """Where `path` is written on a 1-based line of NOTE, as `check` reports it."""
    column = NOTE.split("\n")[line - 1].index(path) + 1
    return line, column, column + len(path), path


def test_check_reports_moved_deleted_and_missing_ignored_paths_only(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repository(root)
    status, diagnostics = check(root)
    assert status == 1
    assert shown(diagnostics, "stale-path") == [
        at(7, "src/net/retry.py"),
        at(8, "../../docs/deploy.md"),
        at(10, "build/never.js"),
        at(11, "src/old/"),
        at(19, "docs/missing.md"),
    ]
    by_path = {d["message"].split()[0]: d for d in diagnostics}
    assert "(looked for docs/deploy.md)" in by_path["../../docs/deploy.md"]["message"]
    # A link is looked for from the memory's folder and from the workspace root.
    assert (
        "(looked for .serena/memories/docs/missing.md and docs/missing.md)"
        in by_path["docs/missing.md"]["message"]
    )
    assert {d["severity"] for d in diagnostics} == {"warning"}


def test_deleting_a_file_on_disk_is_seen_without_a_commit(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repository(root)
    (root / "docs" / "keep.md").unlink()  # tracked, deleted, not committed
    _, diagnostics = check(root)
    assert [s[3] for s in shown(diagnostics, "stale-path")] == [
        "src/net/retry.py",
        "../../docs/deploy.md",
        "docs/keep.md",
        "../../docs/keep.md",
        "build/never.js",
        "src/old/",
        "docs/missing.md",
    ]


def test_no_stale_path_outside_git_unless_configured(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    memory = root / ".serena" / "memories" / "network.md"
    memory.parent.mkdir(parents=True)
    memory.write_text(NOTE)
    _, diagnostics = check(root)
    assert shown(diagnostics, "stale-path") == []
    layer = Layer(source="test", values={"diagnostics": {"stale-path": "hint"}})
    assert resolve_store_config(merge_layers(), str(root)).severities["stale-path"] == "off"
    configured = resolve_store_config(merge_layers(layer), str(root))
    assert configured.severities["stale-path"] == "hint"
    git(root, "init", "-q")
    assert resolve_store_config(merge_layers(), str(root)).severities["stale-path"] == "warning"


def test_global_memories_are_not_checked_for_paths(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repository(root)
    (root / ".serena" / "memories" / "network.md").unlink()
    global_folder = tmp_path / "global"
    global_folder.mkdir()
    (global_folder / "tips.md").write_text("See `src/gone/away.py`.\n")
    done = subprocess.run(
        [sys.executable, "-m", "memory_ls.cli", "check", "--global-folder", str(global_folder)],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": str(tmp_path / "home")},
        timeout=60,
    )
    assert done.returncode == 0, done.stdout


def test_renames_follow_git_mv_through_history(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repository(root)
    history = RenameHistory()
    assert history.renames(str(root)) == {"src/net/retry.py": "src/net/backoff.py"}
    git(root, "mv", "src/net/backoff.py", "src/backoff.py")  # staged, not committed
    # Read again once git's index changed (after the recheck interval).
    assert RenameHistory().renames(str(root)) == {
        "src/net/retry.py": "src/backoff.py",
        "src/net/backoff.py": "src/backoff.py",
    }
    assert RenameHistory().renames(str(tmp_path)) == {}


def test_mentions_keep_columns_and_skip_what_is_not_a_path() -> None:
    mentions = find_path_mentions(NOTE)
    assert [(m.line + 1, m.start + 1, m.end + 1, m.written) for m in mentions][:3] == [
        at(7, "src/net/retry.py"),
        at(8, "../../docs/deploy.md"),
        at(8, "docs/keep.md"),
    ]
    assert [m.kind for m in mentions][:3] == ["code", "link", "link"]
    written = {m.written for m in mentions}
    assert not written & {"and/or", "src/*.py", "src/in/fence.py", "src/in/frontmatter.py"}
    assert not any(w.startswith(("https:", "#", "mem:")) or w == "1/2.5" for w in written)
    encoded = find_path_mentions('[x](<docs/my%20notes.md> "title")\n')
    assert [(m.written, m.path, m.start) for m in encoded] == [
        ("docs/my%20notes.md", "docs/my notes.md", 5)
    ]


AUTOLOAD_HEAD = "# Always\n\n" + "Short rule.\n" * 160  # 10 + 160 * 12 = 1,930 bytes
AUTOLOAD = AUTOLOAD_HEAD + "Grüße: " + "é" * 200 + "\nTail.\n"


@pytest.mark.parametrize(
    ("limit", "expected"),
    [
        # 2,048: "Grüße: " (9 bytes) starts at 1,930, then 109 bytes of é (2 each): the
        # 55th é is cut in half, at column 7 + 54 = 61 (0-based) of line 162 (0-based).
        (None, (163, 62, 2048)),
        # 100: the heading (10 bytes) and 7 rules (84 bytes), then 6 characters of the 8th.
        ("100", (10, 7, 100)),
        ("not-a-number", (163, 62, 2048)),
        ("100000", None),
    ],
)
def test_context_budget_marks_where_ai_coder_cuts_autoload(
    tmp_path: Path, limit: str | None, expected: tuple[int, int, int] | None
) -> None:
    root = tmp_path / "ws"
    folder = root / ".aicoder" / "memory"
    folder.mkdir(parents=True)
    (folder / "autoload.md").write_text(AUTOLOAD)
    (folder / "other.md").write_text(AUTOLOAD)  # only autoload.md is loaded into prompts
    env = {} if limit is None else {"AICODER_MEMORY_AUTOLOAD_LIMIT": limit}
    if limit is None:
        os.environ.pop("AICODER_MEMORY_AUTOLOAD_LIMIT", None)
    _, diagnostics = check(root, env=env)
    budget = [d for d in diagnostics if d["code"] == "context-budget"]
    if expected is None:
        assert budget == []
        return
    assert len(budget) == 1
    found = budget[0]
    line, column, byte = expected
    assert (found["line"], found["column"]) == (line, column)
    assert found["path"].endswith("autoload.md") and found["severity"] == "warning"
    lines = AUTOLOAD.split("\n")
    assert (found["endLine"], found["endColumn"]) == (len(lines), len(lines[-1]) + 1)
    # The characters before the range fit in the limit; the one it starts on does not.
    before = "\n".join([*lines[: line - 1], lines[line - 1][: column - 1]])
    assert (
        len(before.encode())
        <= byte
        < len(before.encode()) + len(lines[line - 1][column - 1].encode())
    )
    assert f"byte {byte}, line {line}, column {column}" in found["message"]
    if limit == "not-a-number":
        assert "'not-a-number' is not a number of bytes" in found["message"]
    elif limit is not None:
        assert f"AICODER_MEMORY_AUTOLOAD_LIMIT={limit}" in found["message"]


def test_suggestions_follow_git_renames_then_the_closest_path() -> None:
    renames = {"src/net/a.py": "lib/network/a.py", "src/net/b.py": "lib/network/b.py"}
    files = ["lib/network/a.py", "lib/network/b.py", "docs/deploying.md", "docs/keep.md"]
    on_disk = set(files) | {"lib", "lib/network", "docs", "."}
    exists = on_disk.__contains__
    assert suggest_paths(["src/net/a.py"], ["root"], False, renames, files, exists) == [
        Suggestion("lib/network/a.py", "root", True)
    ]
    # A folder goes where most of its renamed files went.
    assert suggest_paths(["src/net"], ["root"], True, renames, files, exists) == [
        Suggestion("lib/network/", "root", True)
    ]
    # Not renamed: the closest path, in the base whose folder exists.
    closest = suggest_paths(
        [".serena/memories/docs/deploy.md", "docs/deploy.md"],
        ["memory", "root"],
        False,
        renames,
        files,
        exists,
    )
    assert closest[0] == Suggestion("docs/deploying.md", "root", False)
    memory = "/r/.serena/memories/x.md"
    link = PathMention(0, 0, 0, "../../docs/my%20deploy.md", "../../docs/my deploy.md", "link")
    assert write_like(link, Suggestion("docs/keep.md", "memory", False), memory, "/r") == (
        "../../docs/keep.md"
    )
    code = PathMention(0, 0, 0, "./src/old/", "./src/old/", "code")
    assert write_like(code, Suggestion("lib/network/", "root", True), memory, "/r") == (
        "./lib/network/"
    )


def test_path_memo_reads_changed_lines_and_agrees_with_a_full_scan() -> None:
    memo = PathMemo()
    lines = [f"line {i} names `src/m{i}/x.py` and [d](docs/d{i}.md)" for i in range(50)]
    versions = [
        lines,
        ["new first `a/b.py`", *lines],
        ["new first `a/b.py`", *lines[:10], *lines[20:]],
        [*lines[:5], "changed `c/d/`", *lines[6:]],
        ["```", *lines[:3], "```", *lines[3:]],  # fenced code: read whole
        lines[:3],
    ]
    for version in versions:
        text = "\n".join(version)
        assert memo.find(text) == find_path_mentions(text)


def test_autoload_limit_from_the_environment() -> None:
    (aicoder,) = [limit for limit in CONTEXT_LIMITS if limit.agent == "AI Coder"]
    assert (aicoder.pattern, aicoder.limit_bytes, aicoder.env_var) == (
        ".aicoder/memory/autoload.md",
        2048,
        "AICODER_MEMORY_AUTOLOAD_LIMIT",
    )
    assert effective_limit(aicoder, {}) == (2048, "AI Coder's default")
    assert effective_limit(aicoder, {"AICODER_MEMORY_AUTOLOAD_LIMIT": " "}) == (
        2048,
        "AI Coder's default",
    )
    assert effective_limit(aicoder, {"AICODER_MEMORY_AUTOLOAD_LIMIT": "4096"}) == (
        4096,
        "AICODER_MEMORY_AUTOLOAD_LIMIT=4096",
    )
    assert effective_limit(aicoder, {"AICODER_MEMORY_AUTOLOAD_LIMIT": "-1"})[0] == 2048
    assert aicoder.applies_to("/w/.aicoder/memory/autoload.md", "/w")
    assert not aicoder.applies_to("/w/.aicoder/memory/topic/autoload.md", "/w")
    assert not aicoder.applies_to("/w/other/.aicoder/memory/autoload.md", "/w")
