"""Checks against the repository: the context budget an agent reads, and stale paths."""

from __future__ import annotations

from collections.abc import Callable

from memory_ls.core.layouts import find_cut
from memory_ls.core.rules.stale_paths import RepoSnapshot, StalePath, lexists, stale_paths
from memory_ls.core.services.diagnostics.base import Diagnostic
from memory_ls.core.services.diagnostics.line_scans import PathMemo
from memory_ls.core.storage.folders import StoreConfig
from memory_ls.core.storage.git import list_files
from memory_ls.core.storage.memory import MemoryFile


def repository_snapshot(config: StoreConfig) -> Callable[[str], bool] | None:
    """`exists` for many stale-path questions at once, when git can list the workspace."""
    if config.severities.get("stale-path") == "off":
        return None
    files = list_files(config.root)
    return None if files is None else RepoSnapshot(config.root, files).exists


def repository_diagnostics(
    config: StoreConfig,
    path: str,
    text: str,
    memory: MemoryFile | None,
    exists: Callable[[str], bool] | None = None,
    memo: PathMemo | None = None,
) -> list[Diagnostic]:
    """`context-budget` (an agent reads only part of the file) and `stale-path`."""
    found: list[Diagnostic] = []
    severities = config.severities
    cut = find_cut(text, path, config.root) if severities.get("context-budget") != "off" else None
    if cut is not None:
        limit = cut.limit
        found.append(
            Diagnostic(
                path,
                cut.line,
                cut.col,
                cut.end_line,
                cut.end_col,
                "context-budget",
                f"{limit.agent} reads only the first {cut.limit_bytes} bytes of this file "
                f"({limit.use}; {cut.setting}); it is {cut.size} bytes, so everything from "
                f"here on (byte {cut.limit_bytes}, line {cut.line + 1}, column {cut.col + 1}) "
                "is cut off. Keep what agents must always see above this point; move the rest "
                "to other memories.",
                data={"agent": limit.agent, "limit": cut.limit_bytes, "size": cut.size},
            )
        )
    if memory is None or memory.scope != "project" or severities.get("stale-path") == "off":
        return found
    mentions = memo.find(text) if memo is not None else None
    for stale in stale_paths(text, memory.path, config.root, exists or lexists, mentions):
        found.append(stale_path_diagnostic(path, stale))
    return found


def stale_path_diagnostic(path: str, stale: StalePath) -> Diagnostic:
    """The `stale-path` diagnostic of a mention that names nothing in the workspace."""
    mention = stale.mention
    return Diagnostic(
        path,
        mention.line,
        mention.start,
        mention.line,
        mention.end,
        "stale-path",
        f"{mention.written} names nothing in the workspace (looked for "
        f"{' and '.join(stale.resolved)}); the code has moved on or the path is wrong. "
        "Fix the path or remove it: agents act on what memories say.",
        data={
            "path": mention.written,
            "kind": mention.kind,
            "resolved": list(stale.resolved),
            "bases": list(stale.bases),
        },
    )
