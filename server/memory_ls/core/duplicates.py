"""`near-duplicate` for one memory (SPEC 3.2): after an agent's write, and in the editor.

The memories that may nearly duplicate it come from the full-text index's keys
(core/fulltext.py, on disk: nothing per file is kept in memory), else from reading
every memory; each is then read and compared (core/similarity.py).
"""

from __future__ import annotations

import os

from memory_ls.core.diagnostics import (
    Diagnostic,
    apply_severities,
    near_duplicate_diagnostic,
    read_for_check,
)
from memory_ls.core.names import GLOBAL_PREFIX
from memory_ls.core.similarity import (
    Memo,
    Verdict,
    body_words,
    bucket_limit,
    keys,
    near_duplicate,
)
from memory_ls.core.store import Store

Candidate = tuple[str, str, bool]  # (path, qualified name, global scope)


def near_duplicate_diagnostics(
    store: Store, path: str, name: str, text: str, *, scan_fallback: bool = True
) -> list[Diagnostic]:
    """`near-duplicate` for the memory `name` (as Serena writes it: `global/x` for a
    global memory) at `path` whose text is `text`, with its configured severity.

    Candidates come from `store.search_index` when it can answer; else, with
    `scan_fallback`, from reading every memory (without it: nothing is reported).
    """
    if store.config.severities.get("near-duplicate") == "off":
        return []
    found = near_duplicates(store, path, name, text, scan_fallback=scan_fallback)
    if not found:
        return []
    return apply_severities([near_duplicate_diagnostic(path, found)], store.config.severities)


def near_duplicates(
    store: Store, path: str, name: str, text: str, *, scan_fallback: bool = True
) -> list[tuple[Memo, Verdict]]:
    """The memories that nearly duplicate this one, and why."""
    global_scope = name.startswith(GLOBAL_PREFIX)
    path = os.path.normpath(os.path.abspath(path))
    memo = Memo.of(path, name, global_scope, text)
    wanted = keys(name, global_scope, memo.words)
    index = store.search_index
    candidates = index.duplicate_candidates(wanted, [path]) if index is not None else None
    if candidates is None:
        if not scan_fallback:
            return []
        candidates = _scanned_candidates(store, set(wanted))
    found = []
    max_bytes = store.config.max_memory_bytes
    for other_path, qualified, other_global in candidates:
        if os.path.normpath(other_path) == path or qualified == name:
            continue
        try:
            other_text, _size, problem = read_for_check(other_path, max_bytes)
        except OSError:
            continue
        if other_text is None or problem is not None:
            continue
        other = Memo.of(other_path, qualified, other_global, other_text)
        verdict = near_duplicate(memo, other)
        if verdict is not None:
            found.append((other, verdict))
    return found


def _scanned_candidates(store: Store, wanted: set[int]) -> list[Candidate]:
    """The memories sharing a key (one not too common), found by reading them all (no
    usable index)."""
    max_bytes = store.config.max_memory_bytes
    sharing: list[tuple[Candidate, set[int]]] = []
    counts: dict[int, int] = {}
    for memory in store.scan():
        if not memory.valid:
            continue
        global_scope = memory.scope == "global"
        try:
            text, _size, problem = read_for_check(memory.path, max_bytes)
        except OSError:
            continue
        words = body_words(text) if text is not None and problem is None else ""
        shared = wanted.intersection(keys(memory.qualified, global_scope, words))
        if shared:
            sharing.append(((memory.path, memory.qualified, global_scope), shared))
            for key in shared:
                counts[key] = counts.get(key, 0) + 1
    return [
        candidate
        for candidate, shared in sharing
        if any(counts[key] <= bucket_limit(key) for key in shared)
    ]
