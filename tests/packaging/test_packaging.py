"""The package as it is published: one version, a wheel and sdist that install and run."""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import memory_ls

REPO = Path(__file__).resolve().parents[2]
LOCKS = REPO / "client-vscode" / "bundled" / "requirements"
sys.path.insert(0, str(REPO / "client-vscode" / "scripts"))
import bundle_server  # noqa: E402


def runtime_dependencies() -> list[Requirement]:
    """The installed package's dependencies (pyproject.toml's, as tasks.py installs them)."""
    requires = importlib.metadata.requires("memory-ls") or []
    return [
        r for r in map(Requirement, requires) if r.marker is None or "extra" not in str(r.marker)
    ]


def test_the_package_and_the_extension_have_one_version() -> None:
    """memory_ls.__version__ is the version: the package metadata and package.json agree."""
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^version\s*=\s*"', text, re.MULTILINE) is None, "a second version"
    assert re.search(r'^dynamic = \["version"\]$', text, re.MULTILINE)
    assert re.search(r'^version = \{ attr = "memory_ls.__version__" \}$', text, re.MULTILINE)
    manifest = json.loads((REPO / "package.json").read_text(encoding="utf-8"))
    assert manifest["version"] == memory_ls.__version__
    assert importlib.metadata.version("memory-ls") == memory_ls.__version__


def test_the_bundle_locks_pin_every_runtime_dependency_on_every_target() -> None:
    """Each CPython's lock satisfies pyproject's dependencies, the MCP SDK's included (the
    VSIX alone runs `memory-ls mcp`), with one version of each package per VSIX target."""
    dependencies = runtime_dependencies()
    assert len(dependencies) >= 10
    locks = sorted(LOCKS.glob("cp3*.txt"))
    assert [path.stem for path in locks] == ["cp310", "cp311", "cp312", "cp313", "cp314"]
    for path in locks:
        python = f"3.{path.stem[3:]}"
        text = path.read_text(encoding="utf-8")
        # Every pin is hash-checked when the VSIX is built.
        pinned = re.findall(r"^\S+==", text, re.MULTILINE)
        assert 0 < len(pinned) <= text.count("--hash=sha256:")
        for target in bundle_server.TARGETS:
            entries = bundle_server.locked(python, target)
            pins = {canonicalize_name(name): version for name, version, _ in entries}
            assert len(pins) == len(entries), f"{path.name}: a package twice on {target}"
            assert all(hashes for _, _, hashes in entries)
            for requirement in dependencies:
                name = canonicalize_name(requirement.name)
                marker = requirement.marker
                if marker is not None and not marker.evaluate({"python_version": python}):
                    continue
                assert name in pins, f"{path.name} does not pin {name} for {target}"
                assert requirement.specifier.contains(pins[name], prereleases=True), (
                    f"{path.name}: {name}=={pins[name]} does not satisfy {requirement}"
                )
            assert {"mcp", "pydantic", "pydantic-core", "starlette", "uvicorn"} <= set(pins)
            # The MCP SDK's stdio server imports pywin32 on Windows, and only there.
            assert ("pywin32" in pins) == target.startswith("win32"), target


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel and sdist `python -m build` makes from the checkout."""
    # From a copy of what the build reads: setuptools leaves build/ and *.egg-info behind.
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, source / name)
    shutil.copytree(
        REPO / "server",
        source / "server",
        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"),
    )
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(source)],
        check=True,
        capture_output=True,
    )
    return out


def test_build_makes_a_wheel_and_an_sdist_that_pass_twine_check(dist: Path) -> None:
    """Both files are there, carry the right version and files, and twine accepts them."""
    version = memory_ls.__version__
    wheel = dist / f"memory_ls-{version}-py3-none-any.whl"
    sdist = dist / f"memory_ls-{version}.tar.gz"
    assert sorted(dist.iterdir()) == [wheel, sdist]
    names = zipfile.ZipFile(wheel).namelist()
    assert "memory_ls/py.typed" in names
    assert f"memory_ls-{version}.dist-info/licenses/LICENSE" in names
    assert not [name for name in names if name.startswith(("tests/", "client-vscode/"))]
    check = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_the_wheel_installs_into_a_clean_venv_and_checks_the_example(
    dist: Path, tmp_path: Path
) -> None:
    """pip install of the wheel alone gives a working `memory-ls` (dependencies from pip)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    wheel = next(dist.glob("*.whl"))
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", str(wheel)],
        check=True,
        env=env,
        cwd=tmp_path,
    )
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    workspace = tmp_path / "examples" / "workspace"
    where = subprocess.run(
        [str(python), "-c", "import memory_ls; print(memory_ls.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
        cwd=workspace,
    )
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout
    check = subprocess.run(
        # No flags: the example's memory-ls.toml defines its store (issue 31).
        [str(venv / "bin" / "memory-ls"), "check"],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        cwd=workspace,
    )
    assert check.returncode == 1, check.stderr
    lines = check.stdout.splitlines()
    assert any(
        line.startswith(".serena/memories/project_overview.md:14:29: warning broken-link")
        for line in lines
    ), check.stdout
    assert any("error invalid-name" in line for line in lines), check.stdout
    assert "2 error(s), 4 warning(s), 1 note(s)" in check.stderr
