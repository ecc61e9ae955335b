"""`near-duplicate` for one memory (SPEC 3.2): after an agent's write, and in the editor.

The memories that may nearly duplicate it come from the full-text index's keys
(core/services/search/, on disk: nothing per file is kept in memory), else from reading
every memory; each is then read and compared (core/rules/similarity.py).
"""

from __future__ import annotations

import os

from memory_ls.core.rules.document import split_frontmatter
from memory_ls.core.rules.names import GLOBAL_PREFIX
from memory_ls.core.rules.similarity import (
    SHINGLE_KEY,
    SKETCH_MATCHES,
    Memo,
    Verdict,
    bucket_limit,
    candidate_pairs,
    heading_key,
    keys,
    near_duplicate,
    words,
)
from memory_ls.core.services.diagnostics import (
    Diagnostic,
    apply_severities,
    near_duplicate_diagnostic,
    read_for_check,
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
    wanted = keys(name, global_scope, memo.words, memo.title)
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
        body = split_frontmatter(text)[1] if text is not None and problem is None else ""
        found = keys(memory.qualified, global_scope, words(body), heading_key(body))
        shared = wanted.intersection(found)
        if shared:
            sharing.append(((memory.path, memory.qualified, global_scope), shared))
            for key in shared:
                counts[key] = counts.get(key, 0) + 1
    kept = []
    for candidate, shared in sharing:
        usable = [key for key in shared if counts[key] <= bucket_limit(key)]
        sketched = sum(1 for key in usable if key & 3 == SHINGLE_KEY)
        if sketched < len(usable) or sketched >= SKETCH_MATCHES:
            kept.append(candidate)
    return kept


Found = dict[str, list[tuple[Memo, Verdict]]]


class IndexedDuplicates:
    """Near-duplicates of a whole store and of changed files, through a full-text index
    (for a language server's workspace diagnostics)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def all(self) -> Found | None:
        """Every memory with near-duplicates -> them; None while the index cannot answer."""
        index = self.store.search_index
        groups = index.duplicate_groups() if index is not None else None
        if groups is None:
            return None
        max_bytes = self.store.config.max_memory_bytes
        memos: dict[str, Memo | None] = {}

        def memo(candidate: Candidate) -> Memo | None:
            path = candidate[0]
            if path not in memos:
                memos[path] = _read_memo(candidate, max_bytes)
            return memos[path]

        by_path = {c[0]: c for _key, members in groups for c in members}
        buckets = [(key, [c[0] for c in members]) for key, members in groups]
        found: Found = {}
        for first, second in sorted(candidate_pairs(buckets)):
            a, b = memo(by_path[first]), memo(by_path[second])
            verdict = near_duplicate(a, b) if a is not None and b is not None else None
            if verdict is not None and a is not None and b is not None:
                found.setdefault(a.path, []).append((slim(b), verdict))
                found.setdefault(b.path, []).append((slim(a), verdict))
        return found

    def of(self, path: str, name: str, text: str) -> list[tuple[Memo, Verdict]] | None:
        """The near-duplicates of one memory; None while the index cannot answer."""
        index = self.store.search_index
        if index is None or index.duplicate_candidates([]) is None:
            return None
        found = near_duplicates(self.store, path, name, text, scan_fallback=False)
        return [(slim(m), v) for m, v in found]


def slim(memo: Memo) -> Memo:
    """A memory's identity without its words (what a kept finding needs)."""
    return Memo(memo.path, memo.qualified, memo.global_scope, "")


def _read_memo(candidate: Candidate, max_bytes: int) -> Memo | None:
    path, qualified, global_scope = candidate
    try:
        text, _size, problem = read_for_check(path, max_bytes)
    except OSError:
        return None
    if text is None or problem is not None:
        return None
    return Memo.of(os.path.normpath(path), qualified, global_scope, text)
