"""Navigation rules as pure functions: the reference under a cursor, headings, references
to a memory, "did you mean" and fuzzy name search (SPEC 3.4)."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz, process
from rapidfuzz.distance import Levenshtein

from memory_ls.core.document import split_frontmatter
from memory_ls.core.fsio import read_utf8
from memory_ls.core.references import Reference, find_references, iter_lines_outside_code

_ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")


@dataclass(frozen=True)
class Heading:
    """A Markdown heading: level 1–6, its title and 0-based line."""

    level: int
    title: str
    line: int


@dataclass(frozen=True)
class Located:
    """A reference found in a file."""

    path: str
    reference: Reference


def reference_at(text: str, line: int, column: int) -> Reference | None:
    """The reference whose brackets or backticks contain the cursor (code-point column)."""
    for ref in find_references(text):
        if ref.line == line and ref.full_start <= column <= ref.full_end:
            return ref
    return None


def headings(text: str) -> list[Heading]:
    """ATX headings of a note, outside its frontmatter and fenced code."""
    raw, body, body_line = split_frontmatter(text)
    if raw is None:
        body, body_line = text, 0
    found = []
    for number, line in iter_lines_outside_code(body, body_line):
        match = _ATX_HEADING.match(line)
        if match and match.group(2).strip():
            found.append(Heading(len(match.group(1)), match.group(2).strip(), number))
    return found


def references_in_files(
    paths: Iterable[str], matches: Callable[[Reference], bool], needle: str
) -> list[Located]:
    """References for which `matches` holds, in the given files.

    `needle` (the bare name) is a cheap pre-filter: files that do not contain it are
    not parsed.
    """
    found: list[Located] = []
    for path in paths:
        try:
            text = read_utf8(path)
        except OSError:
            continue
        if text is None or needle not in text:
            continue
        found.extend(Located(path, ref) for ref in find_references(text) if matches(ref))
    return found


def did_you_mean(word: str, candidates: Sequence[str], limit: int = 3) -> list[str]:
    """The closest candidates to a mistyped word: small edit distance first, then similarity."""
    if not word or not candidates:
        return []
    # Allow about one typo per four characters, at least one.
    budget = max(1, len(word) // 4)
    close = [
        (Levenshtein.distance(word, c, score_cutoff=budget), c)
        for c in candidates
        if c != word and abs(len(c) - len(word)) <= budget
    ]
    ranked = sorted((d, c) for d, c in close if d <= budget)
    picks = [c for _d, c in ranked[:limit]]
    if len(picks) < limit:
        for candidate, score, _i in process.extract(
            word, list(candidates), scorer=fuzz.ratio, limit=limit * 2
        ):
            if score >= 80 and candidate != word and candidate not in picks:
                picks.append(candidate)
            if len(picks) == limit:
                break
    return picks


def fuzzy_names(query: str, names: Sequence[str], limit: int = 100) -> list[str]:
    """Names matching a query as workspace symbols do: subsequence first ("sugcom" finds
    `suggested_commands`), ranked by how tightly the letters sit."""
    if not query:
        return list(names[:limit])
    lowered = query.lower()
    scored: list[tuple[int, int, str]] = []
    for name in names:
        span = _subsequence_span(lowered, name.lower())
        if span is not None:
            scored.append((span, len(name), name))
    scored.sort()
    picks = [name for _span, _len, name in scored[:limit]]
    if len(picks) < limit:
        taken = set(picks)
        for name, score, _i in process.extract(
            query, list(names), scorer=fuzz.partial_ratio, limit=limit
        ):
            if score >= 75 and name not in taken:
                picks.append(name)
    return picks[:limit]


def _subsequence_span(query: str, name: str) -> int | None:
    """How many characters of `name` the letters of `query` span in order, or None."""
    start = name.find(query[0])
    if start < 0:
        return None
    best: int | None = None
    while start >= 0:
        position = start
        for char in query[1:]:
            position = name.find(char, position + 1)
            if position < 0:
                break
        else:
            span = position - start + 1
            best = span if best is None else min(best, span)
        start = name.find(query[0], start + 1)
    return best


def is_markdown(path: str) -> bool:
    """Whether a path names a Markdown file."""
    return os.path.splitext(path)[1].lower() in (".md", ".markdown")
