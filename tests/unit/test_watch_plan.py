"""Which folders are watched flat (core/storage/watching.py `watch_plan`): those holding no folder,
whose watch becomes recursive when one appears (`appeared_folders`)."""

from __future__ import annotations

import os
from pathlib import Path

from memory_ls.core.storage.watching import appeared_folders, flat_folders, watch_plan


def test_a_folder_holding_no_folder_is_watched_flat(tmp_path: Path) -> None:
    flat, deep, linked, target = (tmp_path / n for n in ("flat", "deep", "linked", "target"))
    for folder in (flat, deep / "topic", linked, target):
        folder.mkdir(parents=True)
    (flat / "a.md").write_text("# A\n")
    os.symlink(target, linked / "shared")  # a linked folder: Serena's way to share
    missing = tmp_path / "later" / "memories"
    folders = [str(p) for p in (flat, deep, linked, missing)]
    plan = watch_plan(folders)
    assert sorted(plan) == sorted(
        [(str(flat), False), (str(deep), True), (str(linked), True), (str(tmp_path), False)]
    )
    # The ancestor watched for a missing folder is not one of the configured folders.
    assert flat_folders(plan, folders) == (str(flat),)


def test_a_folder_made_in_a_flat_watched_one_is_told_apart(tmp_path: Path) -> None:
    flat = tmp_path / "flat"
    (flat / "topic").mkdir(parents=True)
    (flat / "a.md").write_text("# A\n")
    (tmp_path / "other").mkdir()
    changed = [str(flat / "topic"), str(flat / "a.md"), str(tmp_path / "other"), str(flat / "gone")]
    assert appeared_folders(changed, [str(flat)]) == [str(flat / "topic")]
    assert appeared_folders(changed, []) == []
