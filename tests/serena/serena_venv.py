"""A virtual environment holding the real Serena, built once and reused across runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

SERENA_VERSION = "2.1.0"
SERENA_REQUIREMENT = f"serena-agent=={SERENA_VERSION}"
# Serena 2.1.0 declares Requires-Python >=3.11,<3.15.
SUPPORTED_PYTHONS = ("3.11", "3.12", "3.13", "3.14")
# Written last, so a half-built environment (an install killed midway) is never reused.
COMPLETE_STAMP = ".memory-ls-complete"
INSTALL_TIMEOUT_SECONDS = 1200


class SerenaInstallError(RuntimeError):
    """Serena could not be installed; the message says which step failed and its output."""


@dataclass(frozen=True)
class SerenaVenv:
    """A ready environment: its python, and how long getting it ready took."""

    python: Path
    seconds: float
    built: bool


def default_venv_dir() -> Path:
    """Outside the project's .venv, in the user's cache, so every worktree shares it."""
    override = os.environ.get("MEMORY_LS_SERENA_VENV")
    if override:
        return Path(override).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "memory-ls" / f"serena-{SERENA_VERSION}"


def venv_python(venv_dir: Path) -> Path:
    """The interpreter of a venv."""
    if os.name == "nt":
        return venv_dir / "Scripts" / "python.exe"
    return venv_dir / "bin" / "python"


def base_python() -> str:
    """A Python that Serena supports: this one when it is new enough, else one on PATH."""
    if f"{sys.version_info[0]}.{sys.version_info[1]}" in SUPPORTED_PYTHONS:
        return sys.executable
    for version in SUPPORTED_PYTHONS:
        found = shutil.which(f"python{version}")
        if found:
            return found
    raise SerenaInstallError(
        f"{SERENA_REQUIREMENT} needs Python {SUPPORTED_PYTHONS[0]} or newer; this is "
        f"{sys.version.split()[0]} and no python{SUPPORTED_PYTHONS[0]}+ is on PATH."
    )


def installed_version(python: Path) -> str | None:
    """The serena-agent version installed for this python, or None."""
    if not python.exists():
        return None
    probe = subprocess.run(
        [
            str(python),
            "-c",
            "import importlib.metadata as m; print(m.version('serena-agent'))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return probe.stdout.strip() if probe.returncode == 0 else None


def _run(step: str, command: list[str]) -> None:
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_SECONDS
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SerenaInstallError(f"{step} failed: {exc}") from exc
    if done.returncode != 0:
        tail = (done.stdout + done.stderr)[-4000:]
        raise SerenaInstallError(
            f"{step} failed (exit {done.returncode}): {' '.join(command)}\n{tail}"
        )


def ensure_serena_venv(venv_dir: Path | None = None) -> SerenaVenv:
    """Reuse the venv when it holds serena-agent==2.1.0, else build it afresh."""
    from filelock import FileLock

    venv_dir = venv_dir or default_venv_dir()
    venv_dir.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    python = venv_python(venv_dir)
    # Two test sessions (worktrees) may start at once: one builds, the other waits.
    with FileLock(str(venv_dir) + ".lock", timeout=INSTALL_TIMEOUT_SECONDS):
        if (venv_dir / COMPLETE_STAMP).exists() and installed_version(python) == SERENA_VERSION:
            return SerenaVenv(python, time.monotonic() - started, built=False)
        shutil.rmtree(venv_dir, ignore_errors=True)
        _run("creating the Serena venv", [base_python(), "-m", "venv", str(venv_dir)])
        _run(
            f"pip install {SERENA_REQUIREMENT}",
            [str(python), "-m", "pip", "install", "--quiet", SERENA_REQUIREMENT],
        )
        version = installed_version(python)
        if version != SERENA_VERSION:
            raise SerenaInstallError(
                f"after pip install, {venv_dir} reports serena-agent {version!r}, "
                f"not {SERENA_VERSION}"
            )
        (venv_dir / COMPLETE_STAMP).write_text(SERENA_REQUIREMENT + "\n")
    return SerenaVenv(python, time.monotonic() - started, built=True)


if __name__ == "__main__":
    ready = ensure_serena_venv()
    verb = "built" if ready.built else "reused"
    print(f"{verb} {ready.python} in {ready.seconds:.1f} s")
