"""The README stays a front door, and the docs say what the code does.

The docs site itself is built with `mkdocs build --strict` by `python3 tasks.py test`
(every link, anchor and generated reference page); these tests check what a build cannot:
the README's size and links, and that hand-written facts agree with the code.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

from memory_ls.cli import build_parser
from memory_ls.config import DEFAULT_SEVERITIES, DIAGNOSTIC_CODES
from memory_ls.mcp.server import TOOLS

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DIAGNOSTICS_GUIDE = ROOT / "docs" / "guides" / "diagnostics.md"
# Inline links and images whose target is no URL: [text](target) and ![alt](target).
_LOCAL_LINK = re.compile(r"\]\((?!https?://|mailto:|#)([^)\s]+)\)")


def _section(text: str, heading: str) -> str:
    found = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert found, f"no section '## {heading}'"
    return found.group(1)


def test_the_readme_is_a_front_door() -> None:
    """About 250 lines at most, with the two commands that set everything up."""
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    assert "python3 tasks.py demo" in text
    assert "python3 tasks.py test" in text


def test_the_readmes_links_lead_somewhere() -> None:
    """Every relative link and image of the README names a file of the repository."""
    text = README.read_text(encoding="utf-8")
    targets = {target.split("#", 1)[0] for target in _LOCAL_LINK.findall(text)}
    assert targets, "the README links to nothing"
    missing = sorted(target for target in targets if not (ROOT / target).exists())
    assert not missing, f"README.md links to files that do not exist: {missing}"


def test_the_readme_names_every_diagnostic_code() -> None:
    """SARIF rules point to the README's Diagnostics section (the package's page)."""
    section = _section(README.read_text(encoding="utf-8"), "Diagnostics")
    missing = [code for code in DIAGNOSTIC_CODES if f"`{code}`" not in section]
    assert not missing, f"README.md's Diagnostics section lacks {missing}"


def test_the_diagnostics_guide_has_each_code_with_its_default() -> None:
    """One section per code, in the code's order, its default severity the code's."""
    text = DIAGNOSTICS_GUIDE.read_text(encoding="utf-8")
    found = re.findall(r"^## `([a-z-]+)` \{#\1\}\n\n\*Default: (\w+)", text, re.M)
    assert [code for code, _ in found] == list(DIAGNOSTIC_CODES)
    wrong = {code: said for code, said in found if DEFAULT_SEVERITIES[code] != said}
    assert not wrong, f"defaults in {DIAGNOSTICS_GUIDE.name} differ from the code: {wrong}"


def test_the_reference_pages_cover_every_command_tool_and_setting(tmp_path: Path) -> None:
    """The generator's pages (docs/hooks/reference.py) hold each command, tool and setting."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "hooks" / "reference.py"), str(tmp_path)],
        cwd=tmp_path,
        env={"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache"), "PATH": ""},
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120,
        check=True,
    )
    pages = json.loads(done.stdout)
    commands = [
        name
        for action in build_parser()._actions
        if isinstance(action, argparse._SubParsersAction)
        for name in action.choices
    ]
    assert commands
    assert all(f"## `memory-ls {name}`" in pages["reference/cli.md"] for name in commands)
    assert all(f"## `{tool}`" in pages["reference/mcp-tools.md"] for tool in TOOLS)
    manifest = json.loads((ROOT / "package.json").read_text(encoding="utf-8"))
    settings = manifest["contributes"]["configuration"]["properties"]
    assert all(f"## `{key}`" in pages["reference/vscode-settings.md"] for key in settings)
    assert all(f"`{code}`" in pages["reference/diagnostics.md"] for code in DIAGNOSTIC_CODES)
