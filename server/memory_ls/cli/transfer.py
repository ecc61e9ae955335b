"""`memory-ls export` and `memory-ls import`: memories as records, out and in."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any, TextIO

from memory_ls.cli.common import EXIT_OK, UsageError
from memory_ls.core.rules.errors import InvalidArguments
from memory_ls.core.store import Store


def _export(args: argparse.Namespace, store: Store, stdout: TextIO) -> int:
    records = store.export(args.scope)
    if args.format == "jsonl":
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    else:
        text = json.dumps(records, ensure_ascii=False, indent=2) + "\n"
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as exc:
            raise UsageError(f"cannot write {args.output}: {exc}") from exc
    else:
        stdout.write(text)
    return EXIT_OK


def _import(
    args: argparse.Namespace, store: Store, stdin: TextIO, stderr: TextIO
) -> dict[str, Any]:
    if args.source == "records":
        return store.import_records(_load_records(args.file, stdin), overwrite=args.overwrite)
    from memory_ls.core.operations.aicoder_import import import_aicoder

    if not os.path.exists(args.file):
        raise UsageError(f"no such file or folder: {args.file}")
    result = import_aicoder(store, args.source, args.file, overwrite=args.overwrite)
    if result["rejected"]:
        print(
            f"memory-ls: warning: {len(result['rejected'])} note(s) not imported "
            "(listed as rejected, with the reason)",
            file=stderr,
        )
    return result


def _load_records(path: str, stdin: TextIO) -> list[Any]:
    """Records from a JSON array or JSON Lines."""
    if path == "-":
        text = stdin.read()
    else:
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read {path}: {exc}") from exc
    stripped = text.strip()
    try:
        if stripped.startswith("["):
            records = json.loads(stripped)
        else:
            records = [json.loads(line) for line in stripped.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise InvalidArguments(f"{path} is not a JSON array or JSON Lines: {exc}") from exc
    if not isinstance(records, list):
        raise InvalidArguments(f"{path} does not hold a list of records")
    return records
