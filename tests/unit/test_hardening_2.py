"""Hardening rules found by the server-level tests (issue 7), held at the core level too."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from store_helpers import Workspace

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")


@pytest.mark.parametrize("name", ["linkfile", "linkdir/new", "linkdir/a/b", "FEATURE_link"])
def test_route_refuses_what_save_refuses_a_link_leading_outside(ws: Workspace, name: str) -> None:
    store = ws.store(["team/feature"])
    outside = ws.tmp / "outside"
    ws.write(outside / "target.md", "outside\n")
    (outside / "dir").mkdir()
    ws.primary.mkdir(parents=True)
    os.symlink(outside / "target.md", ws.primary / "linkfile.md")
    os.symlink(outside / "dir", ws.primary / "linkdir")
    os.symlink(outside / "target.md", ws.root / "team" / "feature" / "FEATURE_link.md")
    # A dry run of save must not promise a path the save would refuse.
    with ws.refuses("outside-store"):
        store.route(name)
    with ws.refuses("outside-store"):
        store.save(name, "pwned")
    assert (outside / "target.md").read_text() == "outside\n"
    assert list((outside / "dir").iterdir()) == []


def test_route_still_answers_for_a_link_that_stays_inside(ws: Workspace) -> None:
    store = ws.store()
    ws.write(ws.primary / "real" / "note.md", "real\n")
    os.symlink(ws.primary / "real", ws.primary / "alias")
    routed = store.route("alias/new")
    assert routed["path"] == str(ws.primary / "alias" / "new.md")
    assert routed["exists"] is False
    assert Path(store.save("alias/new", "x")["path"]).read_text() == "x"
