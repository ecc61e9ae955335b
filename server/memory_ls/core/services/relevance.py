"""Search queries and how memories answer them (SPEC 2.6), for the index and the scan alike.

A query is words and "quoted phrases", case- and accent-insensitive, whole words:
`auth*` matches words that start with `auth`, and so does the last word of a query
(search as you type) unless the query ends with a space. A word such as `login_flow`
or `auth/login` is the phrase of its words.

Two modes. `relevance` (the default): a query's English stop words are not required
(unless it has nothing else), a plain word also matches the words of its stem
(`retries` finds `retry`), and every memory that matches some of the words is ranked
by BM25, the memory's name and first heading weighing NAME_WEIGHT times its body; those
holding every word come first, those whose name holds them all before those. `all_words`:
every word and phrase must match as written (the semantics before relevance ranking).
In both, a memory that another matching memory supersedes (core/rules/supersede.py) comes
right after it, and says so.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from memory_ls.core.rules.conflicts import find_conflicts, may_hold_markers
from memory_ls.core.rules.errors import InvalidArguments
from memory_ls.core.rules.stemming import STOP_WORDS, stem
from memory_ls.core.rules.titles import title_of as listing_title

RELEVANCE = "relevance"
ALL_WORDS = "all_words"
SEARCH_MODES = (RELEVANCE, ALL_WORDS)
# A match in a memory's name or first heading weighs this many in its body (bm25 weights).
NAME_WEIGHT = 10.0
_NAME_WEIGHT = int(NAME_WEIGHT)
# `RoughRanker.add_many` looks at this many bytes of files at once (twice that held).
ROUGH_CHUNK = 4 * 2**20
SNIPPET_WIDTH = 160
# The lines of a memory that a per-memory result shows.
BEST_LINES = 3
# A memory's lines are looked at until this many hold a term (bounded work on a huge
# memory; a result shows fewer).
MAX_LINES = 60
# Stems shorter than this are looked up as the word itself (the stemmer leaves them be).
MIN_STEM = 3

_TOKEN = re.compile(r"[^\W_]+")
_QUERY_PART = re.compile(r'"([^"]*)"?(\*?)|(\S+)')
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*\r?$", re.MULTILINE)
_FENCE = re.compile(r"^[ \t]*(?:```|~~~)", re.MULTILINE)


def fold(text: str) -> str:
    """Text as the index compares it: lower case, accents removed."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def tokens(text: str) -> list[str]:
    """The folded words of a text, as the index's tokenizer cuts them."""
    return _TOKEN.findall(fold(text))


def occurrences(wanted: Sequence[str], prefix: bool, words: Sequence[str]) -> int:
    """How many times `wanted` occurs in a row in `words`, its last word maybe a prefix."""
    first, count, size = wanted[0], 0, len(wanted)
    if size == 1:  # most parts: counted at C speed
        if prefix:
            return sum(1 for word in words if word.startswith(first))
        return words.count(first) if isinstance(words, list) else list(words).count(first)
    last = size - 1
    for at, word in enumerate(words):
        if not (word == first or (size == 1 and prefix and word.startswith(first))):
            continue
        if size == 1:
            count += 1
            continue
        if at + size > len(words):
            break
        for offset in range(1, size):
            found, expected = words[at + offset], wanted[offset]
            if found != expected and not (offset == last and prefix and found.startswith(expected)):
                break
        else:
            count += 1
    return count


@dataclass(frozen=True)
class Part:
    """One thing a query asks for: a word or a phrase, the last word maybe a prefix."""

    words: tuple[str, ...]
    prefix: bool = False
    # A prefix only because it is the query's last word (no `*`): in relevance mode it
    # also matches by its stem (an agent's last word is seldom unfinished).
    typing: bool = field(default=False, compare=False)

    def expression(self) -> str:
        """The part in FTS5's query syntax, as written."""
        return '"' + " ".join(self.words) + '"' + (" *" if self.prefix else "")

    def found_in(self, words: Sequence[str]) -> int:
        """How many times the part occurs, as written, in a sequence of folded words."""
        return occurrences(self.words, self.prefix, words)

    @property
    def stem(self) -> str | None:
        """The stem a relevance search matches this part by: a plain word's, long enough."""
        if len(self.words) != 1 or (self.prefix and not self.typing):
            return None
        found = stem(self.words[0])
        return found if len(found) >= MIN_STEM else None

    @property
    def label(self) -> str:
        """The part as a result names it among the words it matched."""
        text = " ".join(self.words)
        return f'"{text}"' if len(self.words) > 1 else text

    @property
    def is_stop_word(self) -> bool:
        return len(self.words) == 1 and self.words[0] in STOP_WORDS


@dataclass(frozen=True)
class Query:
    """A parsed search query and its mode."""

    text: str
    parts: tuple[Part, ...]
    mode: str = RELEVANCE

    @property
    def terms(self) -> tuple[Part, ...]:
        """The parts that count: in relevance mode, all but stop words (unless none is left)."""
        if self.mode == ALL_WORDS:
            return self.parts
        kept = tuple(part for part in self.parts if not part.is_stop_word)
        return kept or self.parts

    @property
    def ignored(self) -> tuple[Part, ...]:
        """The stop words a relevance query does not require."""
        kept = self.terms
        return tuple(part for part in self.parts if part not in kept)

    def term_expressions(self, variants: Mapping[str, Sequence[str]] | None = None) -> list[str]:
        """Each term in FTS5's syntax: in relevance mode a word is any of its stem's
        `variants` (the indexed words with that stem)."""
        expressions = []
        for part in self.terms:
            words = variants.get(part.stem or "", ()) if variants and self.stemmed else ()
            if part.prefix:
                # The words the prefix covers would count twice.
                words = [word for word in words if not word.startswith(part.words[0])]
            if words:
                ored = " OR ".join(f'"{word}"' for word in words)
                if part.prefix:
                    ored += f" OR {part.expression()}"
                expressions.append(f"({ored})")
            else:
                expressions.append(part.expression())
        return expressions

    def expression(self, variants: Mapping[str, Sequence[str]] | None = None) -> str:
        """Every term must match."""
        return " AND ".join(self.term_expressions(variants))

    def any_expression(self, variants: Mapping[str, Sequence[str]] | None = None) -> str:
        """Some term must match."""
        return " OR ".join(self.term_expressions(variants))

    @property
    def keys(self) -> list[str]:
        """What a folded text must contain to hold each term (a word begins with its stem
        but for the stem's last letter)."""
        return [
            part.stem[:-1] if self.stemmed and part.stem else part.words[0] for part in self.terms
        ]

    @property
    def stemmed(self) -> bool:
        return self.mode == RELEVANCE

    def counts_of(self, part: Part, words: Sequence[str]) -> int:
        """How often one term occurs in a sequence of folded words."""
        return self.counts(words, only=part)[0]

    def counts(self, words: Sequence[str], only: Part | None = None) -> list[int]:
        """How often each term (or `only` that one) occurs in a sequence of folded words."""
        terms = self.terms if only is None else (only,)
        if not self.stemmed:
            return [part.found_in(words) for part in terms]
        found = []
        stems: list[str] | None = None
        for part in terms:
            wanted = part.stem
            if wanted is None:
                found.append(part.found_in(words))
                continue
            if stems is None:
                stems = [stem(word) for word in words]
            if part.prefix:
                start = part.words[0]
                found.append(
                    sum(
                        1
                        for word, its in zip(words, stems, strict=True)
                        if its == wanted or word.startswith(start)
                    )
                )
            else:
                found.append(stems.count(wanted))
        return found


def parse_query(text: str, mode: str = RELEVANCE) -> Query:
    """Parse a query; InvalidArguments when it has no word to look for or a wrong mode."""
    if mode not in SEARCH_MODES:
        raise InvalidArguments(f"mode must be one of {', '.join(SEARCH_MODES)}, not {mode!r}.")
    parts: list[Part] = []
    matches = list(_QUERY_PART.finditer(text))
    for number, match in enumerate(matches):
        quoted, star, bare = match.group(1), match.group(2), match.group(3)
        if bare is not None:
            star = "*" if bare.endswith("*") else ""
            # Search as you type: the last word may be unfinished, unless a space follows.
            typing = number == len(matches) - 1 and not text[match.end() :]
            words = tokens(bare)
            prefix = bool(star) or (typing and not bare.endswith(('"', "*")))
        else:
            words, prefix = tokens(quoted), bool(star)
        if words:
            part = Part(tuple(words), prefix, typing=prefix and not star and bare is not None)
            if part not in parts:
                parts.append(part)
    if not parts:
        raise InvalidArguments(
            f"query {text.strip()!r} has no word to search for (letters or digits)."
        )
    return Query(text, tuple(parts), mode)


# ----- what a memory shows of itself ------------------------------------------------------


def first_heading(body: str) -> str | None:
    """The text of the body's first Markdown heading (`# ...`) outside fenced code."""
    if "#" not in body:
        return None
    for match in _HEADING.finditer(body):
        text = match.group(1).strip()
        if text and len(_FENCE.findall(body, 0, match.start())) % 2 == 0:
            return text
    return None


def title_of(body: str) -> str:
    """A memory's title as a listing gives it (its first heading, else its first line)."""
    return listing_title(body) or ""


def title_text(qualified: str, body: str) -> str:
    """What the index's title column holds: the first heading, unless it only repeats the
    name (weighed once)."""
    heading = first_heading(body)
    if heading is None or tokens(heading) == tokens(qualified):
        return ""
    return heading


def snippet(line: str, at: int, width: int = SNIPPET_WIDTH) -> str:
    """A line cut to a readable width around the match."""
    stripped = line.lstrip()
    at = max(0, at - (len(line) - len(stripped)))
    text = stripped.rstrip()
    if len(text) <= width:
        return text
    start = max(0, min(at - width // 3, len(text) - width))
    cut = text[start : start + width]
    return ("…" if start else "") + cut + ("…" if start + width < len(text) else "")


@dataclass
class Hit:
    """One memory that answers a query, with what it matched and where."""

    name: str
    path: str
    score: float
    title: str
    matched: tuple[str, ...]
    # (file line, snippet), the lines with most terms first.
    lines: list[tuple[int, str]]
    superseded_by: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = field(default=(), repr=False)
    # "merge-conflict" when the memory holds unresolved conflict markers: both sides shown.
    warnings: tuple[str, ...] = ()
    # Search by meaning: the cosine similarity of the memory to the query, when it is
    # among the nearest (core/services/meaning/).
    similarity: float | None = None

    def _warned(self, row: dict[str, Any]) -> dict[str, Any]:
        """A row with the hit's warnings and similarity, when it has them (optional keys)."""
        if self.warnings:
            row["warnings"] = list(self.warnings)
        if self.similarity is not None:
            row["similarity"] = round(self.similarity, 3)
        return row

    def rows(self) -> list[dict[str, Any]]:
        """One row per matching line (`memory.search`, `memory-ls search`)."""
        return [
            self._warned(
                {
                    "name": self.name,
                    "path": self.path,
                    "line": line,
                    "text": text,
                    "score": round(self.score, 3),
                    "title": self.title,
                    "matched": list(self.matched),
                    "supersededBy": list(self.superseded_by),
                }
            )
            for line, text in self.lines
        ]

    def summary(self) -> dict[str, Any]:
        """One row for the memory, with its best lines (`search_memories`)."""
        best = sorted(self.lines[:BEST_LINES])
        return self._warned(
            {
                "name": self.name,
                "path": self.path,
                "title": self.title,
                "score": round(self.score, 3),
                "matched": list(self.matched),
                "supersededBy": list(self.superseded_by),
                "lines": [{"line": line, "text": text} for line, text in best],
            }
        )


def describe(
    query: Query,
    name: str,
    path: str,
    body: str,
    body_line: int,
    score: float,
    superseded_by: Sequence[str] = (),
) -> Hit:
    """The hit a memory makes: its lines with most terms first, the terms it holds."""
    in_name = [
        a + b
        for a, b in zip(
            query.counts(tokens(name)), query.counts(tokens(title_text(name, body))), strict=True
        )
    ]
    found = [0] * len(query.terms)
    rows: list[tuple[int, int, str, int]] = []
    lines = body.split("\n")
    keys = query.keys
    stopped = len(lines)
    for index, line in enumerate(lines):
        if len(rows) >= MAX_LINES:
            stopped = index
            break
        folded = fold(line)
        # Cheap first: a line without any term's key holds no term.
        if not any(key in folded for key in keys):
            continue
        counts = query.counts(_TOKEN.findall(folded))
        present = sum(1 for count in counts if count)
        if present:
            rows.append((-present, body_line + index + 1, line, _first_hit(query, line)))
            found = [a + b for a, b in zip(found, counts, strict=True)]
    missing = [n for n, (a, b) in enumerate(zip(found, in_name, strict=True)) if not (a or b)]
    if missing:
        # Past the lines looked at, or a phrase across lines.
        rest = "\n".join(lines[stopped:]) if stopped < len(lines) else ""
        for number in missing:
            part = query.terms[number]
            key = keys[number]
            if stopped < len(lines) and key in fold(rest):
                found[number] = any(
                    query.counts_of(part, _TOKEN.findall(fold(line)))
                    for line in lines[stopped:]
                    if key in fold(line)
                )
            if not found[number] and len(part.words) > 1:
                found[number] = query.counts_of(part, tokens(body))
    matched = tuple(
        part.label for part, a, b in zip(query.terms, found, in_name, strict=True) if a or b
    )
    rows.sort()
    if rows:
        shown = [(line, snippet(text, at)) for _p, line, text, at in rows]
    else:
        # It matched in its name, or a phrase across lines: its first line stands for it.
        first = next((i for i, ln in enumerate(lines) if ln.strip()), 0)
        shown = [(body_line + first + 1, snippet(lines[first] if lines else "", 0))]
    # A hit's text is already here: the cheap test first, the markers only when it passes.
    conflicted = may_hold_markers(body) and bool(find_conflicts(body))
    return Hit(
        name,
        path,
        score,
        title_of(body),
        matched,
        shown,
        tuple(superseded_by),
        warnings=("merge-conflict",) if conflicted else (),
    )


def _first_hit(query: Query, line: str) -> int:
    folded = fold(line)
    spots = [folded.find(key) for key in query.keys]
    return min((spot for spot in spots if spot >= 0), default=0)


def score_of(tier: int, relevance: float) -> float:
    """A result's score: 1 to 2 when its name (or first heading) holds every term, 0.5 to 1
    when it holds every term, else below 0.5; BM25 relevance (higher is better) orders
    within each."""
    share = relevance / (1.0 + relevance)
    return 1.0 + share if tier == 2 else (tier + share) / 2


def rows_of(hits: Iterable[Hit], limit: int) -> list[dict[str, Any]]:
    """The per-line rows of hits, at most `limit`."""
    rows: list[dict[str, Any]] = []
    for hit in hits:
        rows += hit.rows()
        if len(rows) >= limit:
            break
    return rows[:limit]


def enough(hits: Sequence[Hit], limit: int, per_memory: bool) -> bool:
    """Whether hits fill `limit` memories (or lines)."""
    if per_memory:
        return len(hits) >= limit
    return sum(len(hit.lines) for hit in hits) >= limit


# ----- superseded memories -------------------------------------------------------------


def order_by_supersession(hits: list[Hit], fetch: Callable[[str], Hit | None]) -> list[Hit]:
    """Hits with each superseded memory right after the newer one that replaces it.

    The newer memory takes the place (and score) of the first old one the query found
    (`fetch` finds it when it is not among the hits yet, whether or not it has the query's
    words): the query was about what both are about, and the newer one is what holds now.
    """
    ordered = list(hits)
    tried: set[str] = {hit.name for hit in ordered}
    moved: set[tuple[str, str]] = set()
    at = 0
    while at < len(ordered):
        hit = ordered[at]
        successor = None
        for name in hit.superseded_by:
            place = next((i for i, h in enumerate(ordered) if h.name == name), None)
            if place is None and name not in tried:
                tried.add(name)
                fetched = fetch(name)
                if fetched is not None:
                    ordered.append(fetched)
                    place = len(ordered) - 1
            if place is not None and place > at and (name, hit.name) not in moved:
                successor = place
                break
        if successor is None:
            at += 1
            continue
        newer = ordered.pop(successor)
        moved.add((newer.name, hit.name))
        ordered.insert(at, replace(newer, score=max(newer.score, hit.score)))
    return ordered


# ----- ranking by reading every memory ------------------------------------------------------


class ScanRanker:
    """Scores memories as the index's bm25 does, for the search that reads every file."""

    K1 = 1.2
    B = 0.75

    def __init__(self, query: Query) -> None:
        self.query = query
        self.documents = 0
        self.total_words = 0
        terms = query.terms
        self.containing = [0] * len(terms)
        # What a text must contain (folded) to hold a term at all: cheap to test first.
        self._keys = query.keys
        self._matches: list[tuple[list[float], int, int, Any]] = []

    def add(self, name: str, body: str, item: Any) -> None:
        """Count one searchable memory; keep it when it holds the terms it must."""
        self.documents += 1
        folded_name, folded_title = fold(name), fold(title_text(name, body))
        folded_body = fold(body)
        present = [
            key in folded_name or key in folded_title or key in folded_body for key in self._keys
        ]
        if not (any(present) if self.query.stemmed else all(present)):
            self.total_words += body.count(" ") + 1
            return
        name_words = _TOKEN.findall(folded_name)
        title_words = _TOKEN.findall(folded_title)
        body_words = _TOKEN.findall(folded_body)
        self.total_words += len(name_words) + len(title_words) + len(body_words)
        in_name = [
            a + b
            for a, b in zip(
                self.query.counts(name_words), self.query.counts(title_words), strict=True
            )
        ]
        in_body = self.query.counts(body_words)
        weighted = [NAME_WEIGHT * n + b for n, b in zip(in_name, in_body, strict=True)]
        for number, hits in enumerate(weighted):
            if hits:
                self.containing[number] += 1
        if all(weighted):
            tier = 2 if all(in_name) else 1
        elif any(weighted) and self.query.stemmed:
            tier = 0
        else:
            return
        length = len(name_words) + len(title_words) + len(body_words)
        self._matches.append((weighted, length, tier, item))

    def ranked(self) -> list[tuple[float, Any]]:
        """(score, item) of the matching memories, best first."""
        average = self.total_words / max(self.documents, 1)
        idf = [max(1e-6, math.log((self.documents - n + 0.5) / (n + 0.5))) for n in self.containing]
        scored = []
        for weighted, length, tier, item in self._matches:
            norm = self.K1 * (1 - self.B + self.B * length / max(average, 1e-9))
            relevance = sum(
                i * (w * (self.K1 + 1)) / (w + norm) for i, w in zip(idf, weighted, strict=True)
            )
            scored.append((score_of(tier, relevance), item))
        scored.sort(key=lambda pair: -pair[0])
        return scored


@dataclass(frozen=True)
class Searchable:
    """A memory as the scan reads it."""

    name: str
    path: str
    body: str
    body_line: int
    supersedes: tuple[str, ...] = ()
    superseded_by: tuple[str, ...] = ()


@dataclass
class Found:
    """What a search found: the hits asked for, and how many memories match in all."""

    hits: list[Hit]
    total: int | None = None
    # Hits that do not match the query, there because they supersede one that does (not
    # counted in `total`: "8 of 7 matching" would follow).
    added: int = 0
    # What the answer should say of how it was found (search by meaning not whole, say).
    notes: tuple[str, ...] = ()


def scan_search(
    query: Query,
    memories: Iterable[Searchable],
    limit: int,
    *,
    per_memory: bool = False,
    offset: int = 0,
    passed: Sequence[int] = (),
) -> Found:
    """Search memories by reading each, best first. `passed`: [memories, words] that the
    caller left out as holding no term (filled while `memories` is read), which count in
    the ranking's statistics all the same."""
    ranker = ScanRanker(query)
    successors: dict[str, list[str]] = {}
    every: dict[str, Searchable] = {}
    for memory in memories:
        for older in memory.supersedes:
            successors.setdefault(older, []).append(memory.name)
        every.setdefault(memory.name, memory)
        ranker.add(memory.name, memory.body, memory)
    if passed:
        ranker.documents += passed[0]
        ranker.total_words += passed[1]
    ranked = ranker.ranked()
    by_name = {memory.name: (score, memory) for score, memory in ranked}

    def hit_of(score: float, memory: Searchable) -> Hit:
        newer = dict.fromkeys((*memory.superseded_by, *successors.get(memory.name, ())))
        newer.pop(memory.name, None)
        return describe(
            query, memory.name, memory.path, memory.body, memory.body_line, score, tuple(newer)
        )

    added: list[str] = []

    def fetch(name: str) -> Hit | None:
        # A successor, whether or not it has the query's words (as the index's search does).
        found = by_name.get(name)
        if found is None and name in every:
            found = (0.0, every[name])
            added.append(name)
        return None if found is None else hit_of(*found)

    hits: list[Hit] = []
    wanted = limit + offset
    for score, memory in ranked:
        hits.append(hit_of(score, memory))
        if enough(hits, wanted, per_memory):
            break
    ordered = order_by_supersession(hits, fetch)
    if per_memory:
        ordered = ordered[offset : offset + limit]
    return Found(ordered, len(ranked), len(added))


def merge_found(parts: Sequence[Found], limit: int, per_memory: bool, offset: int) -> Found:
    """One answer from the answers of disjoint sets of memories (each enough for
    `limit` + `offset`), best first, superseded memories after their successors."""
    hits = sorted((hit for part in parts for hit in part.hits), key=lambda hit: -hit.score)
    by_name = {hit.name: hit for hit in hits}
    kept: list[Hit] = []
    for hit in hits:
        kept.append(hit)
        if enough(kept, limit + offset, per_memory):
            break
    ordered = order_by_supersession(kept, by_name.get)
    if per_memory:
        ordered = ordered[offset : offset + limit]
    totals = [part.total for part in parts]
    return Found(
        ordered,
        None if None in totals else sum(t for t in totals if t is not None),
        sum(part.added for part in parts),
    )
