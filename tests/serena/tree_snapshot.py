"""Snapshots of file trees (path -> bytes or link target), shared by the driver and the tests.

This module runs under both the project's Python and Serena's venv: standard library only.
"""

from __future__ import annotations

import base64
import os
import shutil
from collections.abc import Mapping

# label/relative/path -> {"kind": "file", "b64": ...} | {"kind": "link", "target": ...}
# | {"kind": "dir"}; directories are kept so a tree can be rebuilt exactly, but are not
# compared (Serena makes empty topic folders even on a failed read).
Snapshot = dict[str, dict[str, str]]


def file_entry(data: bytes) -> dict[str, str]:
    """The snapshot entry of a file with these bytes."""
    return {"kind": "file", "b64": base64.b64encode(data).decode("ascii")}


def entry_bytes(entry: Mapping[str, str]) -> bytes:
    """The bytes of a file entry."""
    return base64.b64decode(entry["b64"])


def take(roots: Mapping[str, str]) -> Snapshot:
    """Every file, link and folder under each labelled root, links not followed."""
    found: Snapshot = {}
    for label, root in roots.items():
        if not os.path.isdir(root):
            continue
        for directory, dirnames, filenames in os.walk(root):
            for name in sorted(dirnames + filenames):
                path = os.path.join(directory, name)
                key = label + "/" + os.path.relpath(path, root).replace(os.sep, "/")
                if os.path.islink(path):
                    found[key] = {"kind": "link", "target": os.readlink(path)}
                elif os.path.isdir(path):
                    found[key] = {"kind": "dir"}
                else:
                    with open(path, "rb") as handle:
                        found[key] = file_entry(handle.read())
    return found


def restore(snapshot: Mapping[str, Mapping[str, str]], roots: Mapping[str, str]) -> None:
    """Make the labelled roots hold exactly what the snapshot holds."""
    for root in roots.values():
        shutil.rmtree(root, ignore_errors=True)
        os.makedirs(root)
    # Sorted, so a folder comes before what is in it.
    for key in sorted(snapshot):
        entry = snapshot[key]
        label, _, relative = key.partition("/")
        path = os.path.join(roots[label], *relative.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if entry["kind"] == "dir":
            os.makedirs(path, exist_ok=True)
        elif entry["kind"] == "link":
            os.symlink(entry["target"], path)
        else:
            with open(path, "wb") as handle:
                handle.write(entry_bytes(entry))


def compared(snapshot: Mapping[str, Mapping[str, str]]) -> dict[str, Mapping[str, str]]:
    """The entries that count in a comparison: files and links, not folders."""
    return {key: entry for key, entry in snapshot.items() if entry["kind"] != "dir"}
