"""The VSIX alone is enough: the bundle client-vscode/scripts/bundle_server.py builds runs
the language server's check and `memory-ls mcp` on a bare python3 (the standard library
only), through the launcher the extension runs (client-vscode/bundled/tool/server.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import TextContent

import memory_ls

REPO = Path(__file__).resolve().parents[2]
BUNDLE_SERVER = REPO / "client-vscode" / "scripts" / "bundle_server.py"
LAUNCHER = REPO / "client-vscode" / "bundled" / "tool" / "server.py"
TAG = f"cp{sys.version_info[0]}{sys.version_info[1]}"
# The environment of a machine that never saw memory-ls (nothing on PYTHONPATH).
CLEAN_ENV = {
    key: value
    for key, value in os.environ.items()
    if key not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP"}
}


def bare_python(folder: Path) -> Path:
    """A new venv of this machine's base interpreter, without pip: the standard library only."""
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = folder / "bin" / "python3"
    for module in ("mcp", "pydantic", "memory_ls", "pip"):
        found = subprocess.run(
            [str(python), "-I", "-c", f"import {module}"], capture_output=True, env=CLEAN_ENV
        )
        assert found.returncode != 0, f"the bare interpreter can import {module}"
    return python


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This machine's bundle as `npm run package` builds it (from the locks, with the hashes
    checked), beside a copy of the launcher; returns the launcher."""
    root = tmp_path_factory.mktemp("bundled")
    shutil.copytree(LAUNCHER.parent, root / "tool")
    build = subprocess.run(
        [sys.executable, str(BUNDLE_SERVER), "build", "--out", str(root / "libs")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    return root / "tool" / "server.py"


@pytest.fixture(scope="module")
def python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return bare_python(tmp_path_factory.mktemp("bare") / "venv")


def test_the_bundle_carries_the_mcp_sdk_for_every_python(bundle: Path) -> None:
    manifest = json.loads((bundle.parent.parent / "libs" / "bundle.json").read_text("utf-8"))
    for packages in manifest["packages"].values():
        assert {"mcp", "pydantic", "pydantic-core", "starlette", "uvicorn"} <= set(packages)
    assert "pydantic_core._pydantic_core" in manifest["native"]
    # Each version's folders exist; the launcher puts them on the path in this order.
    for tag, folders in manifest["paths"].items():
        assert folders[0] == tag and folders[-1] == "common", folders
        assert all((bundle.parent.parent / "libs" / folder).is_dir() for folder in folders)


def test_the_launcher_check_imports_every_native_module_on_a_bare_python(
    bundle: Path, python: Path
) -> None:
    check = subprocess.run(
        [str(python), "-I", str(bundle), "--check"],
        capture_output=True,
        text=True,
        check=False,
        env=CLEAN_ENV,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    info = json.loads(check.stdout.splitlines()[-1])
    assert info["memory_ls"] == memory_ls.__version__
    assert info["prefix"] == str(python.parent.parent)


async def test_memory_ls_mcp_runs_on_a_bare_python_from_the_bundle(
    bundle: Path, python: Path, tmp_path: Path
) -> None:
    """The command line the extension hands VS Code for its MCP server (`python3 -I
    server.py --cli mcp --root ROOT FLAGS`), driven by the MCP SDK's stdio client."""
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    root = tmp_path / "examples" / "workspace"
    flags = ["--additional-folders", "shared/feature,shared/spec"]
    params = StdioServerParameters(
        command=str(python),
        args=["-I", str(bundle), "--cli", "mcp", "--root", str(root), *flags],
        env={
            **CLEAN_ENV,
            "HOME": str(tmp_path / "home"),
            "XDG_CACHE_HOME": str(tmp_path / "cache"),
            "SERENA_HOME": str(tmp_path / "serena"),
        },
        cwd=str(root),
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {tool.name for tool in (await session.list_tools()).tools}
        assert {"list_memories", "write_memory", "read_memory", "search_memories"} <= tools
        listed = await session.call_tool("list_memories", {})
        assert not listed.is_error
        text = "\n".join(b.text for b in listed.content if isinstance(b, TextContent))
        assert "project_overview" in text, text
        written = await session.call_tool(
            "write_memory", {"memory_name": "FEATURE_bare_python", "content": "# Bare\n"}
        )
        assert not written.is_error, written.content
    assert (root / "shared" / "feature" / "FEATURE_bare_python.md").read_text() == "# Bare\n"


def test_the_launcher_reads_the_bundled_path_files_and_puts_their_folders_first(
    tmp_path: Path,
) -> None:
    """pywin32 (Windows) puts its folders on the path with a .pth file: the launcher reads
    the bundle's as site-packages' are read, and what they add comes before the interpreter's
    own folders."""
    shutil.copytree(LAUNCHER.parent, tmp_path / "tool")
    libs = tmp_path / "libs"
    (libs / TAG / "win32").mkdir(parents=True)
    (libs / TAG / "pywin32.pth").write_text("# folders\nwin32\nimport bootstrapped\n")
    (libs / TAG / "win32" / "bootstrapped.py").write_text("import sys\nsys.bootstrapped = 1\n")
    (libs / TAG / "win32" / "win32api.py").write_text("")
    package = libs / "common" / "memory_ls"
    (package / "lsp").mkdir(parents=True)
    (package / "lsp" / "__init__.py").write_text("")
    (package / "lsp" / "app.py").write_text("")
    # --check prints memory_ls.__version__: here, what the launcher made of the path.
    (package / "__init__.py").write_text(
        "import json, sys\n__version__ = json.dumps([sys.path[:3], hasattr(sys, 'bootstrapped')])\n"
    )
    manifest = {
        "target": "test",
        "pythons": [TAG],
        "native": ["win32api"],
        "paths": {TAG: [TAG, "common"]},
    }
    (libs / "bundle.json").write_text(json.dumps(manifest))
    check = subprocess.run(
        [sys.executable, "-I", str(tmp_path / "tool" / "server.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
        env=CLEAN_ENV,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    path, bootstrapped = json.loads(json.loads(check.stdout)["memory_ls"])
    assert path == [str(libs / TAG), str(libs / "common"), str(libs / TAG / "win32")]
    assert bootstrapped
