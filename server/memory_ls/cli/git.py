"""git's side: `memory-ls merge-driver` and `memory-ls git-setup`."""

from __future__ import annotations

import argparse
import json
import os
from typing import TextIO

from memory_ls.cli.common import EXIT_FINDINGS, EXIT_OK, EXIT_REFUSED, EXIT_USAGE, _relative
from memory_ls.core.storage.folders import StoreConfig


def _merge_driver(args: argparse.Namespace, stderr: TextIO) -> int:
    """Merge one memory for git: the result in OURS; 0 when clean, 1 with conflicts marked."""
    from memory_ls.core.services.merge import MergeFailed, conflict_style_of_repository, merge_files

    style = args.conflict_style or conflict_style_of_repository(os.getcwd())
    try:
        result = merge_files(args.base, args.ours, args.theirs, style=style)
    except Exception as exc:  # any failure: OURS untouched, exit 2
        # OURS is as it was (merge_files replaces it whole or not at all); the command
        # git-setup registers then merges it as text, a bare driver leaves it conflicted.
        reason = exc if isinstance(exc, (OSError, MergeFailed)) else repr(exc)
        print(f"memory-ls: merge-driver: {args.pathname or args.ours}: {reason}", file=stderr)
        return EXIT_USAGE
    if result.conflicts:
        keys = (
            f" (frontmatter: {', '.join(result.conflicted_keys)})" if result.conflicted_keys else ""
        )
        print(
            f"memory-ls: merge-driver: {args.pathname or args.ours}: "
            f"{result.conflicts} conflict(s){keys}",
            file=stderr,
        )
        return EXIT_FINDINGS
    return EXIT_OK


def _git_setup(
    args: argparse.Namespace, config: StoreConfig, stdout: TextIO, stderr: TextIO
) -> int:
    from memory_ls.core.services.git_setup import GitSetupError, driver_command, install, uninstall

    try:
        if args.uninstall:
            report = uninstall(config)
        else:
            report = install(config, args.driver_command or driver_command())
    except GitSetupError as exc:
        print(f"memory-ls: git-setup: {exc}", file=stderr)
        return EXIT_REFUSED
    if args.json:
        result = {
            "repository": report.repository,
            "attributesFile": report.attributes_file,
            "addedLines": report.added_lines,
            "removedLines": report.removed_lines,
            "configSet": report.config_set,
            "configRemoved": report.config_removed,
            "skippedFolders": report.skipped_folders,
            "changed": report.changed,
        }
        print(json.dumps(result, ensure_ascii=False, indent=2), file=stdout)
        return EXIT_OK
    attributes = _relative(report.attributes_file, os.getcwd())
    for folder in report.skipped_folders:
        print(f"memory-ls: git-setup: {folder} is outside the repository; skipped", file=stderr)
    for line in report.added_lines:
        print(f"{attributes}: added  {line}", file=stdout)
    for line in report.removed_lines:
        print(f"{attributes}: removed  {line}", file=stdout)
    for key, value in report.config_set.items():
        print(f"git config: set {key} = {value}", file=stdout)
    for key in report.config_removed:
        print(f"git config: removed {key}", file=stdout)
    if not report.changed:
        state = "not set up" if args.uninstall else "already set up"
        print(
            f"memory-ls: git-setup: nothing to change ({state} in {report.repository})", file=stdout
        )
    return EXIT_OK
