"""The git merge simulation (bench/git_merge.py), small: the driver merges as plain
Markdown does, and git's text merge of the same branches conflicts more."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "git_merge.py"


def load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("git_merge_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while made
    spec.loader.exec_module(module)
    return module


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_with_the_driver_no_more_conflicts_than_plain_markdown(tmp_path: Path) -> None:
    output = tmp_path / "git_merge.json"
    report = load_bench().main(
        ["--agents", "3", "--edits", "10", "--memories", "6", "--output", str(output)]
    )
    assert json.loads(output.read_text()) == json.loads(json.dumps(report))
    ways = report["ways"]
    driver, no_driver, floor = ways["driver"], ways["no driver"], ways["plain (floor)"]
    assert driver["pairs"] == 3
    assert driver["conflictBlocks"] == floor["conflictBlocks"]
    assert driver["conflictedFiles"] == floor["conflictedFiles"]
    assert no_driver["conflictedFiles"] > floor["conflictedFiles"], "stamps conflict without it"
    assert driver["tagsLost"] == 0 and driver["unreadableFrontmatter"] == 0
    assert report["driverAtFloor"]
