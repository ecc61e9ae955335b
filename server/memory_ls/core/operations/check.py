"""`memory-ls check`'s run over a store: the diagnostics of every memory (or of the files
and folders given), the store-wide ones (supersede relations, near duplicates) and, for the
whole store, the repository's merge-driver setup."""

from __future__ import annotations

import os
from collections.abc import Sequence

from memory_ls.core.layouts import find_agent_files
from memory_ls.core.rules.similarity import KeyTable
from memory_ls.core.rules.supersede import Declaration, SupersedeGraph, declaration_of_text
from memory_ls.core.services.agent_checks import agent_diagnostics
from memory_ls.core.services.diagnostics import (
    Diagnostic,
    NameIndex,
    apply_severities,
    expand_paths,
    read_declaration,
    read_for_check,
    repository_snapshot,
    shadow_map,
    store_duplicates,
    supersede_counts,
    supersede_diagnostics,
    text_diagnostics,
)
from memory_ls.core.services.merge_driver_check import merge_driver_diagnostics
from memory_ls.core.storage.agent_repository import repository_of
from memory_ls.core.storage.memory import MemoryFile
from memory_ls.core.store import Store


def check_store(store: Store, paths: Sequence[str] = ()) -> list[Diagnostic]:
    """Diagnostics for the whole store, or for the given files and folders only."""
    memories = store.scan()
    index = NameIndex.of(memories)
    # One `git ls-files` for the whole run rather than a stat per path (see stale_paths).
    exists = repository_snapshot(store.config)
    shadowed = shadow_map(memories)
    by_path = {m.path: m for m in memories}
    targets = expand_paths(paths) if paths else [m.path for m in memories]
    found: list[Diagnostic] = []
    duplicates = KeyTable() if store.config.severities.get("near-duplicate") != "off" else None
    declarations: dict[str, Declaration] = {}
    checked: list[MemoryFile] = []
    for path in targets:
        memory = by_path.get(os.path.abspath(path))
        try:
            text, size, encoding_problem = read_for_check(path, store.config.max_memory_bytes)
        except OSError:
            continue
        if duplicates is not None and memory is not None and memory.valid:
            duplicates.add(memory.path, memory.qualified, memory.scope == "global", text)
        found.extend(
            text_diagnostics(
                store.config,
                index,
                path,
                text,
                memory,
                shadowed,
                size,
                encoding_problem,
                exists=exists,
            )
        )
        if memory is not None:
            checked.append(memory)
            if text is not None and encoding_problem is None and supersede_counts(memory, shadowed):
                declared = declaration_of_text(memory.qualified, text)
                if declared is not None:
                    declarations[memory.path] = declared
    # Whether a memory is superseded depends on every memory's frontmatter: the files
    # not checked are read for their declarations only.
    if paths:
        for memory in memories:
            if memory.path not in declarations and supersede_counts(memory, shadowed):
                declared = read_declaration(memory, store.config.max_memory_bytes)
                if declared is not None:
                    declarations[memory.path] = declared
    graph = SupersedeGraph(declarations.values(), index.has_qualified)
    for memory in checked:
        if supersede_counts(memory, shadowed):
            found.extend(supersede_diagnostics(memory, graph.declaration(memory.qualified), graph))
    if duplicates is not None:
        found.extend(
            store_duplicates(
                duplicates,
                memories,
                {os.path.abspath(t) for t in targets} if paths else None,
                store.config.max_memory_bytes,
            )
        )
    found.extend(_agent_files_diagnostics(store, targets if paths else None))
    if not paths and store.config.severities.get("missing-merge-driver") != "off":
        # The repository's git setup (its .gitattributes): a check of the whole store only.
        found.extend(merge_driver_diagnostics(store.config.root))
    return apply_severities(found, store.config.severities)


def _agent_files_diagnostics(store: Store, targets: Sequence[str] | None) -> list[Diagnostic]:
    """Other agents' files (CLAUDE.md, AGENTS.md, rules, auto memory): all, or those given."""
    repository = repository_of(store.config.root)
    # The user's own files (~/.claude/CLAUDE.md) are not the repository's: a check of the
    # repository must not fail on them. Auto memory is this project's, though in the home.
    files = [f for f in find_agent_files(repository) if f.scope == "project"]
    if targets is not None:
        wanted = {os.path.abspath(t) for t in targets}
        files = [f for f in files if f.path in wanted]
    return agent_diagnostics(store.config, repository, files) if files else []
