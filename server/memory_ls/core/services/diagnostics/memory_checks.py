"""Checks of a memory file and its references: names, prefixes, routing, size, conflicts."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from memory_ls.core.rules.conflicts import find_conflicts, may_hold_markers
from memory_ls.core.rules.document import Document
from memory_ls.core.rules.names import caps_prefixes, has_topic, name_problem
from memory_ls.core.rules.references import Reference
from memory_ls.core.services.diagnostics.base import Diagnostic, Names
from memory_ls.core.services.diagnostics.heading_links import heading_diagnostic
from memory_ls.core.storage.folders import Folder, StoreConfig
from memory_ls.core.storage.memory import MemoryFile
from memory_ls.core.storage.routing import prefix_folder, unknown_prefix


def _folder_list(additional: Sequence[Folder]) -> str:
    return ", ".join(f.label for f in additional) or "none"


def _unknown_prefix_message(prefix: str, additional: Sequence[Folder], subject: str) -> str:
    return (
        f"Prefix {prefix} matches no additional folder (configured: {_folder_list(additional)}); "
        f"{subject} stays in the primary folder. Add a folder named {prefix.lower()} or rename."
    )


def _may_have_prefix(name: str) -> bool:
    """Whether a name can have an ALL-CAPS routing prefix (most names start lowercase)."""
    # The same test caps_prefixes starts with, done first because it is cheap.
    return "A" <= name[:1] <= "Z" and not has_topic(name)


class _UnknownPrefixes:
    """`unknown_prefix` for the many names of one text, the folder labels read once."""

    def __init__(self, additional: Sequence[Folder]) -> None:
        self.labels = {folder.label.lower() for folder in additional}

    def __call__(self, name: str) -> str | None:
        # routing.unknown_prefix: the name's prefix run, unless a prefix routes somewhere.
        if not self.labels:
            return None
        prefixes = caps_prefixes(name)  # longest first
        if not prefixes or any(p.lower() in self.labels for p in prefixes):
            return None
        # names.prefix_run: a name that is all capitals has no prefix (nothing follows).
        if len(prefixes[0]) < len(name):
            return prefixes[0]
        return prefixes[1] if len(prefixes) > 1 else None


def reference_diagnostics(
    path: str, refs: Iterable[Reference], config: StoreConfig, index: Names
) -> list[Diagnostic]:
    """`broken-link` and `unknown-prefix` for the references in one file."""
    found: list[Diagnostic] = []
    unknown = _UnknownPrefixes(config.additional)
    for ref in refs:
        at = (path, ref.line, ref.start, ref.line, ref.end)
        problem = name_problem(ref.name)
        if problem:
            found.append(
                Diagnostic(
                    *at,
                    "broken-link",
                    f"[[{ref.name}]] is not a valid memory name: {problem}.",
                    data={"name": ref.name, "isGlobal": ref.is_global},
                )
            )
            continue
        if config.patterns.ignored and config.patterns.is_ignored(ref.target):
            # Not broken: the memory is hidden on purpose, from agents and from us.
            found.append(
                Diagnostic(
                    *at,
                    "ignored-link",
                    f"{ref.target} matches ignored_memory_patterns ({config.patterns.where}): "
                    "agents and memory-ls cannot read it through this link.",
                    data={"name": ref.name, "isGlobal": ref.is_global},
                )
            )
            continue
        if not index.has(ref.name, ref.is_global):
            where = "the global folder" if ref.is_global else "the project's memory folders"
            found.append(
                Diagnostic(
                    *at,
                    "broken-link",
                    f"No memory named {ref.target} in {where}; create it or fix the name.",
                    data={"name": ref.name, "isGlobal": ref.is_global},
                )
            )
        elif ref.fragment:
            missing = heading_diagnostic(path, ref, config)
            if missing is not None:
                found.append(missing)
        if not ref.is_global and _may_have_prefix(ref.name):
            prefix = unknown(ref.name)
            if prefix:
                found.append(
                    Diagnostic(
                        *at,
                        "unknown-prefix",
                        _unknown_prefix_message(prefix, config.additional, f"a new {ref.name}"),
                        data={"name": ref.name, "prefix": prefix},
                    )
                )
    return found


def memory_diagnostics(
    memory: MemoryFile,
    doc: Document | None,
    size: int,
    config: StoreConfig,
    shadowed_by: MemoryFile | None = None,
) -> list[Diagnostic]:
    """Diagnostics about a memory file itself (not its references)."""
    found: list[Diagnostic] = []
    at = (memory.path, 0, 0, 0, 0)
    problem = name_problem(memory.name)
    if problem:
        found.append(
            Diagnostic(
                *at,
                "invalid-name",
                f"The file name {memory.name!r} is not a valid memory name ({problem}); "
                "it can be read, edited and renamed, but not created again; rename it.",
            )
        )
    if shadowed_by is not None:
        found.append(
            Diagnostic(
                *at,
                "shadowed",
                f"Hidden by {shadowed_by.path}, which has the same name earlier in lookup "
                "order; rename or delete one of them.",
                data={"by": shadowed_by.path},
            )
        )
    if size > config.max_memory_bytes:
        found.append(
            Diagnostic(
                *at,
                "too-large",
                f"This memory is {size} bytes, over the limit of {config.max_memory_bytes} "
                "(maxMemoryBytes); split it into smaller memories.",
            )
        )
    # A block broken by conflict markers is reported as the conflict (merge-conflict).
    if doc is not None and doc.problem is not None and not _conflicted(doc.raw_frontmatter):
        line = doc.problem.line
        found.append(
            Diagnostic(memory.path, line, 0, line, 0, "invalid-frontmatter", doc.problem.message)
        )
    if problem is None and memory.scope == "project" and _may_have_prefix(memory.name):
        prefix = unknown_prefix(memory.name, config.additional)
        if prefix:
            found.append(
                Diagnostic(
                    *at,
                    "unknown-prefix",
                    _unknown_prefix_message(prefix, config.additional, "this memory"),
                    data={"name": memory.name, "prefix": prefix},
                )
            )
        target = prefix_folder(memory.name, config.additional)
        # By path: after a settings change the index keeps its files (and their folders).
        if target is not None and target.path != memory.folder.path and not target.read_only:
            found.append(
                Diagnostic(
                    *at,
                    "misrouted",
                    f"{memory.name} routes by its prefix to the additional folder {target.label} "
                    f"({target.path}) but is stored in {memory.folder.path}; move it there.",
                    data={"name": memory.name, "target": target.path},
                )
            )
    return found


def _conflicted(raw: str | None) -> bool:
    """Whether a frontmatter block holds merge conflict markers."""
    return raw is not None and may_hold_markers(raw) and bool(find_conflicts(raw))


def conflict_diagnostics(path: str, text: str) -> list[Diagnostic]:
    """`merge-conflict`: one per conflict block (from `<<<<<<<` to `>>>>>>>`), and one per
    marker left outside a complete block."""
    found = find_conflicts(text)
    if not found:
        return []
    lines = text.split("\n")
    diagnostics = []
    for block in found.blocks:
        end_col = len(lines[block.end].rstrip("\r"))
        middle = f"base at line {block.base + 1}, " if block.base is not None else ""
        diagnostics.append(
            Diagnostic(
                path,
                block.start,
                0,
                block.end,
                end_col,
                "merge-conflict",
                f"Unresolved merge conflict (lines {block.start + 1}-{block.end + 1}: "
                f"{middle}theirs after line {block.separator + 1}): agents read both sides as "
                "knowledge. Keep ours, theirs or both and remove the marker lines.",
                data={
                    "start": block.start,
                    "base": block.base,
                    "separator": block.separator,
                    "end": block.end,
                },
            )
        )
    for line in found.stray:
        diagnostics.append(
            Diagnostic(
                path,
                line,
                0,
                line,
                len(lines[line].rstrip("\r")),
                "merge-conflict",
                "A merge conflict marker left behind: finish resolving the conflict and "
                "remove the marker line.",
                data={"stray": line},
            )
        )
    return diagnostics
