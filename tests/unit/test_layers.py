"""The package's layering holds: import-linter's contracts in pyproject.toml (the core's
layers, the front ends over the core and independent of each other, no editor protocol
or MCP SDK under the core, no import circle in the language server, its composition root
imported by the command line only), and the command line starts without loading an
editor protocol (its imports of the servers are inside the commands that start them)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_import_contracts_are_kept() -> None:
    # lint-imports analyses the package it finds on the path: this checkout's.
    env = {**os.environ, "PYTHONPATH": str(REPO / "server")}
    run = subprocess.run(
        [
            Path(sys.executable).with_name("lint-imports"),
            "--config",
            "pyproject.toml",
            "--no-cache",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout, run.stdout


def test_importing_the_core_and_cli_loads_no_editor_package() -> None:
    # What no static contract sees: the command line imports the servers lazily.
    code = (
        "import sys, memory_ls.core, memory_ls.core.services.diagnostics, memory_ls.cli;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pygls', 'lsprotocol')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
