"""The package's layering holds: import-linter's contracts in pyproject.toml (no import
circle in the language server, its composition root imported by the command line only,
a core without editor protocols)."""

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
