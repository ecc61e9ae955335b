"""The agents' layouts: one registry, and every surface that names a layout agrees with it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

import pytest

from memory_ls.config import LayoutName
from memory_ls.core.layouts import (
    CONTEXT_LIMITS,
    LAYOUTS,
    NO_PATTERNS,
    detect_layout,
    find_cut,
    store_patterns,
    watched_files,
)

ROOT = Path(__file__).resolve().parents[2]


def test_the_settings_the_cli_and_the_extension_offer_the_registered_layouts() -> None:
    from memory_ls.cli import build_parser

    assert set(get_args(LayoutName)) == set(LAYOUTS)
    manifest = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))
    properties = manifest["contributes"]["configuration"]["properties"]
    enum = [v for v in properties["memoryLs.layout"]["enum"] if v is not None]
    assert set(enum) == set(LAYOUTS)
    parser = build_parser()
    layout_actions = [a for a in parser._actions if "--layout" in a.option_strings]
    assert layout_actions and set(layout_actions[0].choices or ()) == set(LAYOUTS)


def test_each_layout_names_its_primary_folder_and_a_global_folder_if_it_has_one(
    tmp_path: Path,
) -> None:
    env = {"HOME": str(tmp_path / "home")}
    for layout in LAYOUTS.values():
        primary = layout.primary_path(str(tmp_path), env)
        if layout.primary_at is None:
            assert primary and not Path(primary).is_absolute(), layout.name
        else:  # Claude Code's auto memory lies in the home folder
            assert Path(primary).is_absolute() and primary.startswith(env["HOME"]), layout.name
        assert bool(layout.global_folder(env)) is layout.has_global, layout.name


@pytest.mark.parametrize(
    ("folders", "expected"),
    [
        ([], "serena"),
        ([".serena/memories"], "serena"),
        ([".aicoder/memory"], "aicoder"),
        ([".serena/memories", ".aicoder/memory"], "serena"),
    ],
)
def test_the_layout_is_detected_from_the_agents_folders(
    tmp_path: Path, folders: list[str], expected: str
) -> None:
    for folder in folders:
        (tmp_path / folder).mkdir(parents=True)
    assert detect_layout(str(tmp_path)) == expected


def test_the_patterns_of_a_root_without_agent_configuration_protect_nothing(
    tmp_path: Path,
) -> None:
    patterns = store_patterns(str(tmp_path), {"SERENA_HOME": str(tmp_path / "home")})
    assert patterns == NO_PATTERNS
    assert not patterns.is_read_only("anything")


def test_serenas_patterns_hold_whatever_the_layout(tmp_path: Path) -> None:
    (tmp_path / ".serena").mkdir()
    (tmp_path / ".serena" / "project.yml").write_text(
        "read_only_memory_patterns: ['core_.*']\n", encoding="utf-8"
    )
    env = {"SERENA_HOME": str(tmp_path / "home")}
    assert store_patterns(str(tmp_path), env).is_read_only("core_rules")
    assert str(tmp_path / ".serena" / "project.yml") in watched_files(str(tmp_path), env)


def test_context_limits_come_from_the_layouts(tmp_path: Path) -> None:
    assert (
        tuple(limit for layout in LAYOUTS.values() for limit in layout.context_limits)
        == CONTEXT_LIMITS
    )
    path = str(tmp_path / ".aicoder" / "memory" / "autoload.md")
    cut = find_cut("x" * 3000, path, str(tmp_path), {})
    assert cut is not None and cut.limit.agent == "AI Coder" and cut.limit_bytes == 2048
    assert find_cut("x" * 3000, str(tmp_path / "notes.md"), str(tmp_path), {}) is None
