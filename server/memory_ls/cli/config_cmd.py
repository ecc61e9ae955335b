"""`memory-ls config`: the resolved configuration and where each value came from."""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import TextIO

from memory_ls.cli.common import EXIT_OK, _relative
from memory_ls.config import Layer, explain_layers, merge_layers, plain_value
from memory_ls.core.storage.folders import StoreConfig, resolve_store_config
from memory_ls.project_file import ProjectFile, store_root


def _config(
    args: argparse.Namespace,
    project: ProjectFile | None,
    layers: Sequence[Layer],
    start: str,
    stdout: TextIO,
) -> int:
    """Print the resolved configuration and where each value came from."""
    root = store_root(start, project)
    settings = merge_layers(*layers)
    config = resolve_store_config(
        settings, root, project_file=project.path if project is not None else None
    )
    rows = explain_layers(*layers)
    if not args.show_all:
        # Diagnostics at their defaults are many and say nothing: shown with --all.
        rows = [r for r in rows if not r.key.startswith("diagnostics.") or r.source != "default"]
    if args.json:
        result = {
            "projectFile": project.path if project is not None else None,
            "root": root,
            "layout": config.layout,
            "folders": [
                {"kind": f.kind, "path": f.path, "readOnly": f.read_only} for f in config.folders
            ],
            "missingFolders": list(config.missing_additional),
            "settings": {
                row.key: {"value": plain_value(row.value), "source": row.source} for row in rows
            },
        }
        print(json.dumps(result, ensure_ascii=False, indent=2), file=stdout)
        return EXIT_OK
    where = project.path if project is not None else "none (defaults and flags only)"
    lines = [f"project file: {where}", f"root: {root}", ""]
    width = max(len(row.key) for row in rows)
    for row in rows:
        value = _shown_setting(row.key, row.value, config)
        lines.append(f"{row.key:<{width}}  {value}  ({row.source})")
    lines.append("")
    lines.append("folders:")
    for folder in config.folders:
        flags = " (read-only)" if folder.read_only else ""
        lines.append(f"  {folder.kind:<10} {_relative(folder.path, root)}{flags}")
    lines += [f"  missing    {_relative(m, root)} (skipped)" for m in config.missing_additional]
    print("\n".join(lines), file=stdout)
    return EXIT_OK


def _shown_setting(key: str, value: object, config: StoreConfig) -> str:
    """A setting's value as `memory-ls config` prints it."""
    if key == "layout" and value is None:
        return f"{config.layout} (detected)"
    if key == "primary-folder" and value is None:
        return _relative(config.primary.path, config.root)
    if key == "global-folder" and value is None:
        folder = config.global_folder
        return _relative(folder.path, config.root) if folder is not None else "(disabled)"
    if key == "additional-folders":
        folders = [
            _relative(f.path, config.root) + (":ro" if f.read_only else "")
            for f in value  # type: ignore[attr-defined]
        ]
        return ", ".join(folders) if folders else "(none)"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
