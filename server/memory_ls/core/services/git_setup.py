"""`memory-ls git-setup`: have git merge memories with `memory-ls merge-driver`.

Two things make git use a merge driver: a `.gitattributes` line giving the memory
files the `merge=memory-ls` attribute (committed, so it holds for the whole team), and
the driver's command under `merge.memory-ls` in the repository's git config (each clone's
own, since it names a program on that machine). Without the config entry git merges the
files as text, so a clone that has not run the setup loses nothing but the driver (and
`check` says so: core/services/merge_driver_check.py). The command falls back to git's text
merge when memory-ls cannot run (FALLBACK).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from memory_ls.core.storage.folders import StoreConfig

DRIVER = "memory-ls"
ATTRIBUTE = f"merge={DRIVER}"
SECTION = f"merge.{DRIVER}"
DRIVER_NAME = "memory-ls: memories merged key by key (frontmatter) and as text (body)"
DRIVER_ARGUMENTS = "merge-driver %O %A %B %P"
# What the registered command does when memory-ls cannot merge (its program moved or gone:
# 126/127; it failed: 2; it died before writing: 1 without a marker in %A): git's own text
# merge of the file, so a conflict is marked and never settled silently as our side. git
# runs the command with `sh -c`; %A, %O, %B, %L and %P are the only `%`s git expands.
FALLBACK = (
    "s=$?; case $s in 0) exit 0;; 1) grep -q '^<<<<<<<' %A; [ $? = 1 ] || exit 1;; esac; "
    'echo "memory-ls: merge-driver failed (exit $s): merged as text by git merge-file" >&2; '
    "git merge-file --marker-size %L -L ours -L base -L theirs %A %O %B"
)
COMMENT = "# memory-ls: merge memories with `memory-ls merge-driver` (memory-ls git-setup)"
GIT_TIMEOUT_SECONDS = 20.0
_GLOB_SPECIAL = re.compile(r"([*?\[\\])")
# A line git-setup writes: one pattern (C-quoted or a single word), then the attribute.
_SETUP_LINE = re.compile(rf'(?:"(?:[^"\\]|\\.)*"|\S+)[ \t]+{re.escape(ATTRIBUTE)}[ \t]*')


class GitSetupError(Exception):
    """The setup cannot be done (no git, no repository, git refused a change)."""


@dataclass
class SetupReport:
    """What a setup or uninstall changed (empty lists: nothing)."""

    repository: str
    attributes_file: str
    added_lines: list[str] = field(default_factory=list)
    removed_lines: list[str] = field(default_factory=list)
    config_set: dict[str, str] = field(default_factory=dict)
    config_removed: list[str] = field(default_factory=list)
    skipped_folders: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        """Whether anything was written."""
        return bool(
            self.added_lines or self.removed_lines or self.config_set or self.config_removed
        )


def _git(repository: str, *args: str) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            ["git", "-C", repository, *args],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=GIT_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise GitSetupError(f"git could not run: {exc}") from exc


def repository_of(path: str) -> str:
    """The top folder of the git work tree holding `path`."""
    done = _git(path, "rev-parse", "--show-toplevel")
    if done.returncode != 0 or not done.stdout.strip():
        raise GitSetupError(f"{path} is not in a git work tree ({done.stderr.strip()})")
    return os.path.realpath(done.stdout.strip())


def driver_program(argv0: str | None = None, executable: str | None = None) -> str:
    """The running `memory-ls` by its absolute path, shell-quoted.

    git runs a driver with the PATH of whoever merges (an IDE, a GUI client, a shell
    without the virtual environment active), so a bare `memory-ls` may not be found or
    may be another install; an absolute path is found by all of them. Run as a module,
    the interpreter that runs it is named instead.
    """
    script = os.path.abspath(argv0 if argv0 is not None else sys.argv[0])
    if os.path.splitext(os.path.basename(script))[0] == "memory-ls" and os.path.isfile(script):
        return shlex.quote(script)
    return f"{shlex.quote(executable or sys.executable)} -m memory_ls.cli"


def driver_command(argv0: str | None = None, executable: str | None = None) -> str:
    """The driver's command line: the running memory-ls's merge-driver, then git's text
    merge when that could not merge (FALLBACK)."""
    return f"{driver_program(argv0, executable)} {DRIVER_ARGUMENTS}; {FALLBACK}"


def memory_patterns(config: StoreConfig, repository: str) -> tuple[list[str], list[str]]:
    """(`.gitattributes` patterns for the memory folders inside the repository, the
    folders outside it)."""
    patterns: list[str] = []
    outside: list[str] = []
    for folder in config.folders:
        real = os.path.realpath(folder.path)
        relative = os.path.relpath(real, repository)
        if relative == os.curdir or relative.startswith(os.pardir):
            outside.append(folder.path)
            continue
        escaped = _GLOB_SPECIAL.sub(r"\\\1", relative.replace(os.sep, "/"))
        pattern = _quoted(f"{escaped}/**/*.md")
        if pattern not in patterns:
            patterns.append(pattern)
    return patterns, outside


def _quoted(pattern: str) -> str:
    """A pattern as `.gitattributes` reads it: C-quoted where a space would end it."""
    if not any(c in pattern for c in ' "\t') and pattern.isprintable():
        return pattern
    quoted = pattern.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t")
    return f'"{quoted}"'


def attribute_lines(patterns: Sequence[str]) -> list[str]:
    """The `.gitattributes` lines for these patterns."""
    return [f"{pattern} {ATTRIBUTE}" for pattern in patterns]


def with_lines(text: str, lines: Sequence[str]) -> tuple[str, list[str]]:
    """`.gitattributes` text with the lines it lacks added at the end (after our comment)."""
    present = set(text.splitlines())
    missing = [line for line in lines if line not in present]
    if not missing:
        return text, []
    eol = "\r\n" if "\r\n" in text else "\n"
    head = text if not text or text.endswith("\n") else text + eol
    block = ([] if COMMENT in present else [COMMENT]) + missing
    return head + "".join(line + eol for line in block), missing


def without_lines(text: str) -> tuple[str, list[str]]:
    """`.gitattributes` text without the lines the setup writes (pattern + `merge=memory-ls`)."""
    kept: list[str] = []
    removed: list[str] = []
    for line in text.splitlines(keepends=True):
        bare = line.rstrip("\r\n")
        if bare == COMMENT or _SETUP_LINE.fullmatch(bare):
            removed.append(bare)
        else:
            kept.append(line)
    return "".join(kept), [line for line in removed if line != COMMENT]


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as exc:
        raise GitSetupError(f"cannot read {path}: {exc}") from exc


def _write(path: str, text: str) -> None:
    try:
        if not text.strip():
            if os.path.exists(path):
                os.remove(path)  # nothing but what we wrote was in it
            return
        with open(path, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
    except OSError as exc:
        raise GitSetupError(f"cannot write {path}: {exc}") from exc


def _config_get(repository: str, key: str) -> str | None:
    done = _git(repository, "config", "--local", "--get", key)
    return done.stdout.rstrip("\n") if done.returncode == 0 else None


def install(config: StoreConfig, command: str) -> SetupReport:
    """Write the attributes and the driver's git config; only what is missing or differs."""
    repository = repository_of(config.root)
    patterns, outside = memory_patterns(config, repository)
    attributes = os.path.join(repository, ".gitattributes")
    report = SetupReport(repository, attributes, skipped_folders=outside)
    text = _read(attributes)
    new_text, report.added_lines = with_lines(text, attribute_lines(patterns))
    if report.added_lines:
        _write(attributes, new_text)
    for key, value in ((f"{SECTION}.name", DRIVER_NAME), (f"{SECTION}.driver", command)):
        if _config_get(repository, key) != value:
            done = _git(repository, "config", "--local", key, value)
            if done.returncode != 0:
                raise GitSetupError(f"git config {key} failed: {done.stderr.strip()}")
            report.config_set[key] = value
    return report


def uninstall(config: StoreConfig) -> SetupReport:
    """Remove the attribute lines and the driver's git config entries the setup writes."""
    repository = repository_of(config.root)
    attributes = os.path.join(repository, ".gitattributes")
    report = SetupReport(repository, attributes)
    text = _read(attributes)
    new_text, report.removed_lines = without_lines(text)
    if new_text != text:
        _write(attributes, new_text)
    for key in (f"{SECTION}.name", f"{SECTION}.driver"):
        if _config_get(repository, key) is not None:
            done = _git(repository, "config", "--local", "--unset", key)
            if done.returncode != 0:
                raise GitSetupError(f"git config --unset {key} failed: {done.stderr.strip()}")
            report.config_removed.append(key)
    if report.config_removed:
        left = _git(repository, "config", "--local", "--get-regexp", rf"^{re.escape(SECTION)}\.")
        if left.returncode != 0:  # no key left: an empty `[merge "memory-ls"]` header goes too
            _git(repository, "config", "--local", "--remove-section", SECTION)
    return report
