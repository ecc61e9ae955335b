"""The core library stays free of editor code (no pygls, no lsprotocol)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[2] / "server" / "memory_ls" / "core"
EDITOR_PACKAGES = {"pygls", "lsprotocol"}


def imported_roots(path: Path) -> set[str]:
    """Top-level package names a module imports."""
    tree = ast.parse(path.read_text(), filename=str(path))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def test_no_core_module_imports_editor_packages() -> None:
    modules = sorted(CORE.rglob("*.py"))
    assert len(modules) >= 8
    offenders = {str(m.name): imported_roots(m) & EDITOR_PACKAGES for m in modules}
    assert {name: found for name, found in offenders.items() if found} == {}


def test_importing_the_core_and_cli_loads_no_editor_package() -> None:
    code = (
        "import sys, memory_ls.core, memory_ls.core.services.diagnostics, memory_ls.cli;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pygls', 'lsprotocol')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
