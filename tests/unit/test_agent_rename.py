"""Renaming files that Claude Code's imports and MEMORY.md's links name (core/operations/
agent_rename.py): the changes that keep them naming the same files."""

from __future__ import annotations

import os
from pathlib import Path

from memory_ls.core.layouts import AgentFile, Repository
from memory_ls.core.operations.agent_files import KnownAgentFiles
from memory_ls.core.operations.agent_rename import (
    apply_changes,
    moved_path,
    rename_changes,
)
from memory_ls.core.operations.navigation import Replacement


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def known_files(root: Path, home: Path, *files: AgentFile) -> KnownAgentFiles:
    repository = Repository(str(root), str(root), (), str(home), {})
    return KnownAgentFiles(repository, files, {f.path: f for f in files}, frozenset())


def disk(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError:
        return None


def after(changes: dict[str, list[Replacement]], path: Path) -> str:
    return apply_changes(path.read_text(encoding="utf-8"), changes[str(path)])


def setup(tmp_path: Path, claude_md: str) -> tuple[KnownAgentFiles, Path, Path]:
    root, home = tmp_path / "repo", tmp_path / "home"
    claude = write(root / "CLAUDE.md", claude_md)
    write(root / "docs/setup.md", "# Setup\n")
    write(root / "docs/guide/intro.md", "# Intro\n")
    write(home / ".claude/shared.md", "# Shared\n")
    known = known_files(root, home, AgentFile(str(claude), "claude", "instructions"))
    return known, root, home


def test_relative_home_and_absolute_imports_keep_their_style(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    text = (
        f"See @docs/setup.md, @./docs/setup.md and @{root}/docs/setup.md.\n"
        "Also @~/.claude/shared.md and @alice.\n"
    )
    known, root, home = setup(tmp_path, text)
    renamed = [
        (str(root / "docs/setup.md"), str(root / "guides/setup.md")),
        (str(home / ".claude/shared.md"), str(home / "notes/shared.md")),
    ]
    changes = rename_changes(known, renamed, disk)
    assert list(changes) == [str(root / "CLAUDE.md")]
    assert after(changes, root / "CLAUDE.md") == (
        f"See @guides/setup.md, @./guides/setup.md and @{root}/guides/setup.md.\n"
        "Also @~/notes/shared.md and @alice.\n"
    )


def test_a_renamed_folder_moves_the_imports_under_it(tmp_path: Path) -> None:
    known, root, _home = setup(tmp_path, "@docs/guide/intro.md\n@docs/setup.md\n@src/x.md\n")
    changes = rename_changes(known, [(str(root / "docs"), str(root / "manual"))], disk)
    assert after(changes, root / "CLAUDE.md") == (
        "@manual/guide/intro.md\n@manual/setup.md\n@src/x.md\n"
    )
    # A folder of the same prefix is another folder.
    assert rename_changes(known, [(str(root / "do"), str(root / "x"))], disk) == {}


def test_imports_in_code_and_missing_files_are_left_alone(tmp_path: Path) -> None:
    text = "`@docs/setup.md`\n\n```\n@docs/setup.md\n```\n@docs/setup.md.\n"
    known, root, _home = setup(tmp_path, text)
    changes = rename_changes(known, [(str(root / "docs/setup.md"), str(root / "b.md"))], disk)
    (change,) = changes[str(root / "CLAUDE.md")]
    assert change == Replacement(5, 1, 14, "b.md")
    assert after(changes, root / "CLAUDE.md") == text.replace("@docs/setup.md.", "@b.md.")


def test_a_renamed_importing_file_keeps_its_relative_imports(tmp_path: Path) -> None:
    known, root, _home = setup(tmp_path, "@docs/setup.md\n")
    write(root / "docs/setup.md", "@guide/intro.md @../CLAUDE.md @~/.claude/shared.md @gone.md\n")
    renamed = [(str(root / "docs/setup.md"), str(root / "docs/guide/deep/setup.md"))]
    changes = rename_changes(known, renamed, disk)
    assert after(changes, root / "CLAUDE.md") == "@docs/guide/deep/setup.md\n"
    # Its own imports name the same files from the new folder; a missing one stays.
    assert after(changes, root / "docs/setup.md") == (
        "@../intro.md @../../../CLAUDE.md @~/.claude/shared.md @gone.md\n"
    )
    # The CLAUDE.md itself moved: its imports follow.
    renamed = [(str(root / "CLAUDE.md"), str(root / "agents/CLAUDE.md"))]
    changes = rename_changes(known, renamed, disk)
    assert after(changes, root / "CLAUDE.md") == "@../docs/setup.md\n"
    assert after(changes, root / "docs/setup.md") == (
        "@guide/intro.md @../agents/CLAUDE.md @~/.claude/shared.md @gone.md\n"
    )


def test_both_ends_moved_together_change_nothing(tmp_path: Path) -> None:
    known, root, _home = setup(tmp_path, "@docs/setup.md\n")
    write(root / "docs/setup.md", "@guide/intro.md\n")
    renamed = [(str(root / "docs"), str(root / "manual"))]
    changes = rename_changes(known, renamed, disk)
    assert list(changes) == [str(root / "CLAUDE.md")]


def test_memory_index_links_follow_their_topic_files(tmp_path: Path) -> None:
    root, home = tmp_path / "repo", tmp_path / "home"
    memory = home / ".claude/projects/x/memory"
    index = write(
        memory / "MEMORY.md",
        "# Memory\n\n- [Build](build.md#steps) — how\n- [Old](./old/a.md)\n"
        "- [Web](https://example.com/build.md)\n`[Build](build.md)`\n- [Gone](gone.md)\n",
    )
    write(memory / "build.md", "# Build\n")
    write(memory / "old/a.md", "# A\n")
    known = known_files(root, home, AgentFile(str(index), "claude", "memory-index", "user"))
    renamed = [
        (str(memory / "build.md"), str(memory / "topics/building.md")),
        (str(memory / "old"), str(memory / "new")),
        (str(memory / "gone.md"), str(memory / "still-gone.md")),
    ]
    changes = rename_changes(known, renamed, disk)
    assert after(changes, index) == (
        "# Memory\n\n- [Build](topics/building.md#steps) — how\n- [Old](./new/a.md)\n"
        "- [Web](https://example.com/build.md)\n`[Build](build.md)`\n- [Gone](gone.md)\n"
    )
    # A topic file moved out of the folder: relative to MEMORY.md's folder still.
    renamed = [(str(memory / "build.md"), str(home / "build.md"))]
    changes = rename_changes(known, renamed, disk)
    assert "[Build](../../../../build.md#steps)" in after(changes, index)


def test_unrelated_renames_change_nothing(tmp_path: Path) -> None:
    known, root, _home = setup(tmp_path, "@docs/setup.md\n")
    assert rename_changes(known, [(str(root / "src"), str(root / "lib"))], disk) == {}
    assert rename_changes(known, [], disk) == {}


def test_open_texts_are_read_through_the_reader(tmp_path: Path) -> None:
    known, root, _home = setup(tmp_path, "# on disk, no imports\n")
    claude = str(root / "CLAUDE.md")
    unsaved = "Typed: @docs/setup.md\n"

    def read(path: str) -> str | None:
        return unsaved if path == claude else disk(path)

    changes = rename_changes(known, [(str(root / "docs/setup.md"), str(root / "s.md"))], read)
    assert changes == {claude: [Replacement(0, 8, 21, "s.md")]}


def test_moved_path() -> None:
    renamed = [(f"{os.sep}a{os.sep}b", f"{os.sep}c")]
    assert moved_path(f"{os.sep}a{os.sep}b{os.sep}x.md", renamed) == f"{os.sep}c{os.sep}x.md"
    assert moved_path(f"{os.sep}a{os.sep}b", renamed) == f"{os.sep}c"
    assert moved_path(f"{os.sep}a{os.sep}bc", renamed) is None
