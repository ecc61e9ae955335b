"""`memory-ls check`, `memory-ls changes` and `memory-ls context`: reports, with their exit
status (1: findings, or a context over its budget)."""

from __future__ import annotations

import argparse
import json
import os
from typing import TextIO

from memory_ls.cli.common import EXIT_FINDINGS, EXIT_OK, UsageError
from memory_ls.core.services.formats import has_findings, render, summary_line
from memory_ls.core.store import Store


def _check(args: argparse.Namespace, store: Store, stdout: TextIO, stderr: TextIO) -> int:
    from memory_ls.core.operations.check import check_staged, check_store

    for path in args.paths:
        if not os.path.exists(path):
            raise UsageError(f"no such file or folder: {path}")
    if args.json and args.report_format != "text":
        raise UsageError("give --json or --format, not both")
    paths = args.paths
    if args.memories_only and paths:
        paths = [p for p in paths if store.config.owner_of(os.path.abspath(p)) is not None]
        if not paths and not args.staged:
            # No memory among them; an empty list would check the whole store instead.
            print("memory-ls: no memory among the files given; nothing to check", file=stderr)
            return EXIT_OK
    store.clean_leftovers()
    # --staged with no path checks only what the staged changes do (a commit that only
    # deletes a memory: pre-commit passes no file).
    diagnostics = check_staged(store, paths) if args.staged else check_store(store, paths)
    if args.json:
        # The shape `check --json` always printed (absolute paths); --format json is richer.
        rows = [
            {
                "path": d.path,
                "line": d.line + 1,
                "column": d.col + 1,
                "endLine": d.end_line + 1,
                "endColumn": d.end_col + 1,
                "severity": d.severity,
                "code": d.code,
                "message": d.message,
            }
            for d in diagnostics
        ]
        print(json.dumps({"diagnostics": rows}, ensure_ascii=False, indent=2), file=stdout)
    else:
        stdout.write(
            render(
                diagnostics,
                args.report_format,
                root=store.config.root,
                name_of=store.config.qualified_name_of,
            )
        )
    print(summary_line(diagnostics), file=stderr)
    return EXIT_FINDINGS if has_findings(diagnostics) else EXIT_OK


def _changes(args: argparse.Namespace, store: Store, stdout: TextIO, stderr: TextIO) -> int:
    from memory_ls.core.operations.changes import (
        STATUSES,
        changes_json,
        changes_text,
        memory_changes,
    )

    fmt = "json" if args.json else args.report_format
    if args.json and args.report_format not in ("text", "json"):
        raise UsageError("give --json or --format, not both")
    report = memory_changes(store, args.rev)
    if fmt == "json":
        print(json.dumps(changes_json(report), ensure_ascii=False, indent=2), file=stdout)
    elif fmt == "text":
        stdout.write(changes_text(report))
    else:
        stdout.write(
            render(
                report.diagnostics,
                fmt,
                root=store.config.root,
                name_of=store.config.qualified_name_of,
            )
        )
        counts = ", ".join(
            f"{sum(1 for c in report.changes if c.status == s)} {s}"
            for s in STATUSES
            if s != "conflict" or report.conflicts
        )
        print(
            f"memory-ls: since {report.base.rev} ({report.base.how}): {counts}",
            file=stderr,
        )
    print(summary_line(report.diagnostics), file=stderr)
    # An unmerged memory fails even with merge-conflict turned off: it is no memory yet.
    failed = has_findings(report.diagnostics) or report.conflicts
    return EXIT_FINDINGS if failed else EXIT_OK


def _context(args: argparse.Namespace, store: Store, stdout: TextIO, stderr: TextIO) -> int:
    """What an agent loads working on FILE; 1 when the total exceeds the budget."""
    from memory_ls.core.operations.context import agent_context, relative_file, render_text
    from memory_ls.core.rules.errors import InvalidArguments

    root = store.config.root
    file = None
    if args.file is not None:
        # FILE as given on the command line: relative to the working folder.
        file = os.path.abspath(args.file)
        try:
            relative_file(root, file)
        except InvalidArguments as exc:
            raise UsageError(exc.message) from None
    result = agent_context(args.agent, root, file, budget=args.budget, store=store)
    if args.json:
        print(json.dumps(result.to_json(), ensure_ascii=False, indent=2), file=stdout)
    else:
        print(render_text(result), file=stdout)
    return EXIT_FINDINGS if result.over_budget else EXIT_OK
