"""Fixtures for end-to-end tests: the real server over stdio, driven by pytest-lsp."""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e_support import Workspace, make_workspace


@pytest.fixture(scope="module")
def module_workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """A fresh standard workspace shared by one test module."""
    return make_workspace(tmp_path_factory.mktemp("ws"))


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    """A fresh standard workspace for one test."""
    return make_workspace(tmp_path)
