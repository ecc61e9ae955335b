"""`missing-merge-driver`: the repository asks git for memory-ls's merge driver, and this
clone's git config does not have it.

`.gitattributes` (committed, the whole team's) gives the memory files `merge=memory-ls`;
the driver's command is each clone's own git config (`memory-ls git-setup` writes it).
A clone that never ran git-setup has the attribute without the command, and git then
merges the memories as text without a word: the `updated_at` stamps and tags that the
driver merges key by key conflict again. A command whose program is gone (a virtual
environment moved or deleted) is reported too: git-setup's command then falls back to
git's text merge, an older one keeps our side.

`driver_diagnostics` is a pure function of what was read (`read_state`: the repository's
top `.gitattributes`, and only when it names the driver one `git config --get`);
`DriverWatch` reads again only after one of the files that decide it changed (stats).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from collections.abc import Callable
from dataclasses import dataclass

from memory_ls.core.services.diagnostics import Diagnostic
from memory_ls.core.services.git_setup import ATTRIBUTE, SECTION
from memory_ls.core.storage.git import work_tree_top

CODE = "missing-merge-driver"
DRIVER_KEY = f"{SECTION}.driver"
GIT_TIMEOUT_SECONDS = 10.0
# A `.gitattributes` line: a pattern (C-quoted, or up to the first blank), then attributes.
_PATTERN = re.compile(r'[ \t]*(?:"(?:[^"\\]|\\.)*"|[^ \t]+)')
_TOKEN = re.compile(r"[^ \t]+")


@dataclass(frozen=True)
class DriverState:
    """What decides the finding: the attributes file and the driver's command (None: unset)."""

    attributes_path: str
    text: str
    command: str | None


def attribute_spans(text: str) -> list[tuple[int, int, int]]:
    """(line, start, end) of each `merge=memory-ls` attribute in `.gitattributes` text
    (0-based, code points); comments and blank lines are skipped."""
    spans = []
    for number, line in enumerate(text.split("\n")):
        line = line.rstrip("\r")
        stripped = line.lstrip(" \t")
        if not stripped or stripped.startswith("#"):
            continue
        pattern = _PATTERN.match(line)
        rest = pattern.end() if pattern else 0
        for token in _TOKEN.finditer(line, rest):
            if token.group() == ATTRIBUTE:
                spans.append((number, token.start(), token.end()))
    return spans


def program_of(command: str) -> str | None:
    """The program a driver command runs when it names one by its absolute path."""
    try:
        words = shlex.split(command, comments=False)
    except ValueError:
        return None
    program = words[0] if words else None
    return program if program is not None and os.path.isabs(program) else None


def driver_diagnostics(
    state: DriverState | None, exists: Callable[[str], bool]
) -> list[Diagnostic]:
    """`missing-merge-driver` on the first `.gitattributes` line that names the driver,
    when the command is unset (or blank) or runs a program that does not exist."""
    if state is None:
        return []
    spans = attribute_spans(state.text)
    if not spans:
        return []
    line, start, end = spans[0]
    command = (state.command or "").strip()
    program = program_of(command) if command else None
    if not command:
        message = (
            f"This repository has git merge memories with memory-ls ({ATTRIBUTE}), but this "
            f"clone's git config has no {DRIVER_KEY}: git merges them as plain text, and "
            "stamps and tags that two branches both changed conflict. To set it up, run "
            "memory-ls git-setup"
        )
    elif program is not None and not exists(program):
        message = (
            f"git's merge driver for memories ({DRIVER_KEY}) runs {program}, which does "
            "not exist (a moved or deleted install?): memories are not merged by "
            "memory-ls. To register this install, run memory-ls git-setup"
        )
    else:
        return []
    return [
        Diagnostic(
            state.attributes_path,
            line,
            start,
            line,
            end,
            CODE,
            message,
            data={"lines": [span[0] for span in spans], "driver": command or None},
        )
    ]


def _config_files(top: str) -> list[str]:
    """The git config files that can set the driver (the repository's, the user's)."""
    files = []
    marker = os.path.join(top, ".git")
    directory = marker
    if os.path.isfile(marker):  # a worktree or submodule: "gitdir: PATH"
        try:
            with open(marker, encoding="utf-8") as handle:
                line = handle.readline().strip()
        except OSError:
            line = ""
        if line.startswith("gitdir:"):
            directory = os.path.normpath(os.path.join(top, line[len("gitdir:") :].strip()))
    files.append(os.path.join(directory, "config"))
    try:  # a linked worktree's config is its main repository's
        with open(os.path.join(directory, "commondir"), encoding="utf-8") as handle:
            common = handle.readline().strip()
        files.append(os.path.join(os.path.normpath(os.path.join(directory, common)), "config"))
    except OSError:
        pass
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
    files.append(os.path.join(xdg, "git", "config"))
    files.append(os.environ.get("GIT_CONFIG_GLOBAL") or os.path.expanduser("~/.gitconfig"))
    return files


def _config_get(top: str, key: str) -> tuple[bool, str | None]:
    """(whether git answered, the key's value or None when unset)."""
    try:
        done = subprocess.run(
            ["git", "-C", top, "config", "--get", key],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=GIT_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False, None
    if done.returncode == 0:
        return True, done.stdout.rstrip("\n")
    return done.returncode == 1, None  # 1: unset; anything else: git could not tell


def read_state(root: str) -> DriverState | None:
    """The state of the repository holding `root`; None outside git, without the
    attribute at the top, or when git cannot say (git runs only when the attribute is)."""
    top = work_tree_top(root)
    if top is None:
        return None
    path = os.path.join(top, ".gitattributes")
    try:
        with open(path, encoding="utf-8", errors="replace", newline="") as handle:
            text = handle.read()
    except OSError:
        return None
    if ATTRIBUTE not in text or not attribute_spans(text):
        return None
    answered, command = _config_get(top, DRIVER_KEY)
    return DriverState(path, text, command) if answered else None


def merge_driver_diagnostics(root: str) -> list[Diagnostic]:
    """`missing-merge-driver` for the repository holding `root` (`memory-ls check`)."""
    return driver_diagnostics(read_state(root), os.path.exists)


def _stat(path: str) -> tuple[int, ...]:
    try:
        info = os.stat(path)
    except OSError:
        return (0,)
    return (info.st_mtime_ns, info.st_size, info.st_ino)


class DriverWatch:
    """The finding for one workspace, read again only after a file that decides it
    changed: the attributes, a git config file, the driver's program (stats only).
    Not thread-safe: one caller at a time (the server's disk-check worker)."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._key: tuple[object, ...] | None = None
        self._program: str | None = None
        self.state: DriverState | None = None

    def _current_key(self) -> tuple[object, ...]:
        top = work_tree_top(self.root)
        if top is None:
            return (None,)
        paths = [os.path.join(top, ".gitattributes"), *_config_files(top)]
        if self._program is not None:
            paths.append(self._program)
        return (top, *(_stat(path) for path in paths))

    def changed(self) -> list[Diagnostic] | None:
        """The findings when what decides them changed since the last call, else None."""
        key = self._current_key()
        if key == self._key:
            return None
        self.state = read_state(self.root)
        command = self.state.command if self.state is not None else None
        program = program_of(command) if command else None
        # A new program was not in the key: the next call reads once more, with it.
        self._key = key if program == self._program else None
        self._program = program
        return driver_diagnostics(self.state, os.path.exists)
