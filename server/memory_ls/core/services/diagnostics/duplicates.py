"""Near-duplicate memories across the store, and which files shadow which."""

from __future__ import annotations

from collections.abc import Sequence

from memory_ls.core.rules.similarity import KeyTable, Memo, Verdict, near_duplicate
from memory_ls.core.services.diagnostics.base import Diagnostic, read_for_check
from memory_ls.core.storage.memory import MemoryFile


def shadow_map(memories: Sequence[MemoryFile]) -> dict[str, MemoryFile]:
    """Path of each shadowed memory -> the memory that hides it."""
    first: dict[str, MemoryFile] = {}
    shadowed: dict[str, MemoryFile] = {}
    for memory in memories:
        if not memory.valid:
            continue
        winner = first.setdefault(memory.qualified, memory)
        if winner is not memory:
            shadowed[memory.path] = winner
    return shadowed


def store_duplicates(
    table: KeyTable, memories: Sequence[MemoryFile], targets: set[str] | None, max_bytes: int
) -> list[Diagnostic]:
    """`near-duplicate` for the targets (None: every memory) among every memory of the
    store (keys of the targets already in `table`)."""
    known = set(table.paths) if targets is not None else set()
    for memory in memories if targets is not None else ():  # a check of some files only
        if memory.valid and memory.path not in known:
            try:
                text = _checkable_text(memory.path, max_bytes)
            except OSError:
                continue
            table.add(memory.path, memory.qualified, memory.scope == "global", text)
    memos: dict[int, Memo | None] = {}

    def memo(number: int) -> Memo | None:
        if number not in memos:
            path, qualified, global_scope = table.member(number)
            try:
                text = _checkable_text(path, max_bytes) or ""
                memos[number] = Memo.of(path, qualified, global_scope, text)
            except OSError:
                memos[number] = None
        return memos[number]

    others: dict[str, list[tuple[Memo, Verdict]]] = {}
    for first, second in sorted(table.pairs()):
        a, b = memo(first), memo(second)
        if a is None or b is None:
            continue
        if targets is not None and a.path not in targets and b.path not in targets:
            continue
        verdict = near_duplicate(a, b)
        if verdict is not None:
            others.setdefault(a.path, []).append((b, verdict))
            others.setdefault(b.path, []).append((a, verdict))
    return [
        near_duplicate_diagnostic(path, found)
        for path, found in sorted(others.items())
        if targets is None or path in targets
    ]


def _checkable_text(path: str, max_bytes: int) -> str | None:
    """A memory's text, None when it is far too large or not UTF-8."""
    text, _size, problem = read_for_check(path, max_bytes)
    return text if problem is None else None


_REASONS = {
    "name": "the names are the same once case, separators, plurals and words such as "
    "'notes' are set aside",
    "body": "their bodies are {score:.0f}% alike",
    "title": "they have the same heading and {score:.0f}% of their words in common",
    # Search by meaning's vectors (core/operations/meaning_duplicates.py).
    "meaning": "they say nearly the same thing: {score:.0f}% alike in meaning",
}
# A near-duplicate diagnostic names at most this many of the others.
NEAR_DUPLICATES_NAMED = 3


def near_duplicate_diagnostic(path: str, found: Sequence[tuple[Memo, Verdict]]) -> Diagnostic:
    """`near-duplicate` on a memory: the others it nearly duplicates, best first."""
    ranked = sorted(found, key=lambda pair: (-pair[1].score, pair[0].qualified))
    other, verdict = ranked[0]
    why = _REASONS[verdict.reason].format(score=verdict.score)
    if verdict.reason == "name" and verdict.score >= 50:
        why += f", and their bodies are {verdict.score:.0f}% alike"
    more = [memo.qualified for memo, _v in ranked[1:NEAR_DUPLICATES_NAMED]]
    also = ""
    if more:
        rest = len(ranked) - 1 - len(more)
        also = f" Also near: {', '.join(more)}" + (f" and {rest} more." if rest else ".")
    return Diagnostic(
        path,
        0,
        0,
        0,
        0,
        "near-duplicate",
        f"Near-duplicate of {other.qualified} ({why}). Merge them into one memory, delete "
        f"one, or link them ([[{other.qualified}]]) if both should stay.{also}",
        data={
            "others": [memo.qualified for memo, _v in ranked],
            "paths": [memo.path for memo, _v in ranked],
            "reason": verdict.reason,
            "score": round(verdict.score, 1),
        },
    )
