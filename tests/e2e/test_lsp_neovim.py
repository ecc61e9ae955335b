"""A real Neovim (Debian's 0.7) drives the server headless: completion and a command.

Once with the client started by the test script, once with the README's init.lua.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from e2e_support import SERVER_COMMAND, SERVER_ENV, Workspace

HERE = Path(__file__).parent
SCRIPT = HERE / "neovim_client.lua"
README_INIT = HERE / "neovim_init.lua"

pytestmark = pytest.mark.skipif(shutil.which("nvim") is None, reason="needs nvim (Debian: neovim)")


def run_neovim(
    workspace: Workspace, tmp_path: Path, init: str, extra_env: dict[str, str]
) -> dict[str, Any]:
    """Run the client script in a headless Neovim; return what it recorded."""
    out = tmp_path / "neovim.json"
    env = {
        **SERVER_ENV,
        "MLS_ROOT": str(workspace.root),
        "MLS_OUT": str(out),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        **extra_env,
    }
    (workspace.root / "notes").mkdir(exist_ok=True)
    finished = subprocess.run(
        ["nvim", "--headless", "-u", init, "-i", "NONE", "-n", "-c", f"luafile {SCRIPT}"],
        env=env,
        cwd=workspace.root,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.exists(), finished.stderr
    results: dict[str, Any] = json.loads(out.read_text())
    assert finished.returncode == 0, results.get("error") or finished.stderr
    return results


def check_results(results: dict[str, Any], workspace: Workspace) -> None:
    """Completion after `[[pro` and a memory.route command came back right."""
    (overview,) = [item for item in results["completion"] if item["label"] == "project_overview"]
    edit = overview["textEdit"]
    assert edit["newText"] == "project_overview]]"
    # Neovim 0.7 offers no position encodings: UTF-16 columns ("See [[" is ASCII).
    assert edit["range"] == {
        "start": {"line": 0, "character": 6},
        "end": {"line": 0, "character": 9},
    }
    assert overview["detail"] == "project · .serena/memories"
    assert results["route"] == {
        "name": "SPEC_from_neovim",
        "path": str(workspace.path("shared/spec/SPEC_from_neovim.md")),
        "folder": str(workspace.path("shared/spec")),
        "routedBy": "prefix",
        "exists": False,
        "readOnly": False,
        # (unknownPrefix is null: Neovim's JSON decoding leaves null keys out.)
    }
    assert not os.path.exists(results["route"]["path"])


def test_neovim_completes_names_and_runs_a_command(workspace: Workspace, tmp_path: Path) -> None:
    extra = {
        "MLS_CMD": json.dumps(SERVER_COMMAND),
        "MLS_INIT": json.dumps(workspace.init_options()),
    }
    check_results(run_neovim(workspace, tmp_path, "NONE", extra), workspace)


def test_the_readme_init_lua_works(workspace: Workspace, tmp_path: Path) -> None:
    # The snippet runs `memory-ls serve` from PATH, as an installed tool would.
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    results = run_neovim(workspace, tmp_path, str(README_INIT), {"PATH": path})
    check_results(results, workspace)
    assert results["omnifunc"] == "v:lua.vim.lsp.omnifunc"
