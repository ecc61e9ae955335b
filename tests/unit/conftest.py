"""Fixtures of the core unit tests (see store_helpers for what the workspace offers)."""

from __future__ import annotations

from pathlib import Path

import pytest
from store_helpers import Workspace


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    """A fresh workspace; HOME and the lock cache are inside tmp_path."""
    home = tmp_path / "home"
    cache = tmp_path / "cache"
    root = tmp_path / "ws"
    for folder in (home, cache, root):
        folder.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.delenv("SERENA_HOME", raising=False)
    return Workspace(tmp=tmp_path, root=root, home=home, cache=cache)
