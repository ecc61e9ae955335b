"""When two memories are near-duplicates (`near-duplicate`, SPEC 3.2): the measures.

Agents write a second memory about the same thing under a slightly different name
(`payments/retry_policy` and `payments/retry_policies`), or copy one and edit a few
words. Two measures, chosen on the labelled pairs of bench/near_duplicates/:

- Names: equal once normalised. Words are cut at `_ - / .`, spaces and camelCase,
  case-folded, lightly stemmed (`policies` = `policy`), filler words that say nothing
  about the subject dropped (`notes`, `memory`, ...) and put in order. Numbers and
  versions stay (`plan_v1` and `plan_v2` are two notes, not one). An edit distance on
  raw names calls `FEATURE_auth` and `FEATURE_oauth` or `step_1` and `step_2` the same
  and was less precise on the labelled set.
- Bodies: the Jaccard similarity of their sets of word 3-shingles (three words in a
  row; the frontmatter left out) at least BODY_THRESHOLD percent, for bodies of at least
  MIN_WORDS words (short memories, and skeletons, are alike by nature). A copy edited
  in a few places keeps most of its shingles; two notes that fill one template (the
  same sentences, other facts) share few, because each fact breaks the three shingles
  around it. An edit similarity of the word sequences (rapidfuzz's Indel ratio) scored
  such a pair (staging and production databases) 77 against 79 for a copy with a
  paragraph appended: no threshold told them apart, where shingles scored 21 and 64.
- Headings: the same first heading (normalised as names are) and bodies whose sets of
  words (stemmed) have a Jaccard similarity of at least TITLE_THRESHOLD: the same
  memory written again in other words keeps its heading and most of its words, yet
  few of its shingles. On eight such paraphrases the word sets scored 58 to 78 (the
  shingles 10 to 27, under BODY_THRESHOLD); on eight pairs of unrelated memories under
  one generic heading (`# Overview`, `# Notes`, `# TODO`, two deployment checklists of
  other apps) 7 to 17. A template filled twice with other facts (staging and production
  databases) scores 55: under one heading it would be reported, as it reads as a copy.

Pairs to compare are found through keys, never by comparing all pairs: the normalised
name, the whole normalised body, the normalised first heading, and the SKETCH_SIZE
smallest hashes of the body's word 3-shingles (a bottom-k MinHash). Memories that share
a name, a body or a heading are compared, and those that share at least SKETCH_MATCHES
of their smallest hashes: two bodies with half their shingles in common almost surely
do (the chance that they do not is about 0.3%), two that merely quote one path or phrase
rarely. A shingle or heading key held by more than BUCKET_LIMIT memories is boilerplate
(a template's phrase, `# Overview`) and proposes nothing. Keys are stable across
processes, so the full-text index keeps them on disk (core/services/search/).
"""

from __future__ import annotations

import array
import functools
import hashlib
import heapq
import re
import unicodedata
import zlib
from collections.abc import Callable, Iterable, Sequence, Set
from dataclasses import dataclass
from typing import TypeVar

from memory_ls.core.rules.document import parse_document, split_frontmatter
from memory_ls.core.rules.references import find_references

# Jaccard similarity (0-100) of two bodies' shingles from which they are near-duplicates:
# the middle of the range that separates the labelled pairs (bench/near_duplicates).
BODY_THRESHOLD = 50.0
# Jaccard similarity (0-100) of two bodies' sets of words from which two memories of one
# heading are near-duplicates: between unrelated bodies under a generic heading (at most
# 17) and paraphrases (at least 58), nearer the first (tests/unit/test_near_duplicate_heading.py).
TITLE_THRESHOLD = 40.0
# Bodies shorter than this many words are never compared (skeletons, one-liners).
MIN_WORDS = 20
SKETCH_SIZE = 16
# Memories sharing this many of their sketches' hashes are compared.
SKETCH_MATCHES = 3
# ... when their similarity estimated from their sketches is at least this (0-100): a
# pair at the threshold (50) falls below it about once in a hundred, by chance.
ESTIMATE_FLOOR = 25.0
SHINGLE_WORDS = 3
# A key that more memories than this share is a template's phrase: it proposes no pair.
BUCKET_LIMIT = 40
# Whole names and whole bodies shared by more than this are still reported (a bulk copy).
EXACT_BUCKET_LIMIT = 500
# Bodies are compared on at most this many words each (bounded work on huge files).
COMPARE_WORDS = 20_000
# The kind of a key, in its two low bits.
SHINGLE_KEY, NAME_KEY, BODY_KEY, TITLE_KEY = 0, 1, 2, 3

Member = TypeVar("Member", int, str)

_WORD = re.compile(r"[^\W_]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_HEADING = re.compile(r"#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"`{3,}|~{3,}")
# Words in names that say what kind of note it is, not what it is about.
FILLER_WORDS = frozenset(
    {"note", "notes", "memo", "memory", "memories", "info", "doc", "docs", "md", "the", "a"}
)


def fold(text: str) -> str:
    """Lower case, accents removed (as the full-text index compares words)."""
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def stem(word: str) -> str:
    """A light English stemmer for plurals: `policies` -> `policy`, `flows` -> `flow`."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def name_words(name: str) -> list[str]:
    """The words of a memory's name (its scope prefix not included), folded and stemmed."""
    spaced = name if name.islower() else _CAMEL.sub(" ", name)
    return [stem(word) for word in _WORD.findall(fold(spaced))]


def name_key(name: str) -> str:
    """A name as the near-duplicate check compares names: its subject words, in order."""
    words = name_words(name)
    subject = [word for word in words if word not in FILLER_WORDS] or words
    return " ".join(sorted(subject))


def heading_key(body: str) -> str:
    """A body's first Markdown heading (outside fenced code) as names are compared; "" if none."""
    fence: str | None = None
    for line in body.splitlines():
        stripped = line.strip()
        opening = _FENCE.match(stripped)
        if opening is not None and (fence is None or stripped.startswith(fence)):
            fence = opening.group(0) if fence is None else None
        elif fence is None and (found := _HEADING.fullmatch(stripped)) is not None:
            return name_key(found.group(1))
    return ""


def words(body: str) -> str:
    """A body's folded words joined by spaces: what bodies are compared on."""
    return " ".join(_WORD.findall(fold(body)))


def _key(kind: int, text: str) -> int:
    """A stable 63-bit key of a kind (fits SQLite's INTEGER)."""
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return ((int.from_bytes(digest, "big") >> 3) << 2) | kind


def shingles(words: str) -> set[int]:
    """The hashes of a body's word 3-shingles (three words in a row)."""
    split = words.split(" ")[:COMPARE_WORDS]
    return {
        zlib.crc32(" ".join(split[at : at + SHINGLE_WORDS]).encode("utf-8", "surrogatepass"))
        for at in range(max(len(split) - SHINGLE_WORDS + 1, 1))
    }


def sketch(words: str) -> list[int]:
    """The SKETCH_SIZE smallest hashes of a body's word shingles (nothing when short)."""
    if words.count(" ") + 1 < MIN_WORDS:
        return []
    return [(value << 2) | SHINGLE_KEY for value in heapq.nsmallest(SKETCH_SIZE, shingles(words))]


def keys(qualified: str, global_scope: bool, words: str, title: str = "") -> list[int]:
    """The keys under which a memory meets its possible near-duplicates (`title`: its
    `heading_key`)."""
    bare = qualified.split("/", 1)[1] if global_scope else qualified
    # Names are compared within a scope: a personal note may share a project note's name.
    found = [_key(NAME_KEY, ("g:" if global_scope else "p:") + name_key(bare))]
    shingled = sketch(words)
    if shingled:
        found.append(_key(BODY_KEY, words))
        if title:
            found.append(_key(TITLE_KEY, title))
        found.extend(shingled)
    return found


def bucket_limit(key: int) -> int:
    """How many memories may share a key for it to propose pairs."""
    # A heading more memories share than this is a template's (`# Overview`).
    return BUCKET_LIMIT if key & 3 in (SHINGLE_KEY, TITLE_KEY) else EXACT_BUCKET_LIMIT


@dataclass(frozen=True)
class Memo:
    """What the comparison needs of one memory."""

    path: str
    qualified: str  # `global/NAME` for a global memory
    global_scope: bool
    words: str  # `words` of its body (frontmatter left out)
    text: str = ""  # the whole text, for what it refers to (read only for a match)
    title: str = ""  # heading_key of its body

    @classmethod
    def of(cls, path: str, qualified: str, global_scope: bool, text: str) -> Memo:
        """Read what is compared from a memory's text."""
        body = split_frontmatter(text)[1]
        return cls(path, qualified, global_scope, words(body), text, heading_key(body))

    @functools.cached_property
    def mentions(self) -> frozenset[str]:
        """Names it refers to ([[x]], mem:x, frontmatter supersedes / superseded_by)."""
        text = self.text
        found = (
            {r.target for r in find_references(text)} if "[[" in text or "mem:" in text else set()
        )
        raw, _body, _line = split_frontmatter(text)
        if raw is not None and "supersede" in raw:
            metadata = parse_document(text).metadata
            for field in ("supersedes", "superseded_by"):
                found.update(_names_in(metadata.get(field)))
        return frozenset(found)

    @property
    def bare_name(self) -> str:
        """The name without its `global/` prefix."""
        return self.qualified.split("/", 1)[1] if self.global_scope else self.qualified

    @functools.cached_property
    def name_key(self) -> str:
        """`name_key` of its name (worked out once: a memory meets many others)."""
        return name_key(self.bare_name)

    @functools.cached_property
    def shingles(self) -> frozenset[int]:
        """Its body's shingles, none when the body is too short to compare."""
        return (
            frozenset(shingles(self.words))
            if self.words.count(" ") + 1 >= MIN_WORDS
            else frozenset()
        )

    @functools.cached_property
    def word_set(self) -> frozenset[str]:
        """Its body's words, stemmed (what two memories of one heading are compared on)."""
        return frozenset(stem(word) for word in self.words.split(" ")[:COMPARE_WORDS])


def _names_in(value: object) -> Iterable[str]:
    if isinstance(value, str):
        return [value.strip()]
    if isinstance(value, list):
        return [item.strip() for item in value if isinstance(item, str)]
    return []


def body_similarity(a: str, b: str) -> float:
    """Jaccard similarity (0-100) of two bodies' word shingles."""
    return jaccard(shingles(a), shingles(b))


def jaccard(first: Set[int], second: Set[int]) -> float:
    """Jaccard similarity (0-100) of two sets of shingles."""
    return 100.0 * len(first & second) / max(len(first | second), 1)


def jaccard_of(first: Set[str], second: Set[str]) -> float:
    """Jaccard similarity (0-100) of two sets of words."""
    return 100.0 * len(first & second) / max(len(first | second), 1)


@dataclass(frozen=True)
class Verdict:
    """Why two memories are near-duplicates ("name", "body", "title"), and how alike they are."""

    reason: str
    score: float


def near_duplicate(a: Memo, b: Memo, threshold: float = BODY_THRESHOLD) -> Verdict | None:
    """Whether two memories are near-duplicates, and why.

    Memories that refer to each other are related on purpose (a link, a supersedes):
    never near-duplicates. Two files of one name are `shadowed`, not this.
    """
    if a.path == b.path or a.qualified == b.qualified:
        return None
    short = not a.shingles or not b.shingles
    score = 0.0 if short else jaccard(a.shingles, b.shingles)
    if a.global_scope == b.global_scope and a.name_key == b.name_key:
        verdict = Verdict("name", score)
    elif score >= threshold:
        verdict = Verdict("body", score)
    elif not short and a.title and a.title == b.title:
        alike = jaccard_of(a.word_set, b.word_set)
        if alike < TITLE_THRESHOLD:
            return None
        verdict = Verdict("title", alike)
    else:
        return None
    if a.qualified in b.mentions or b.qualified in a.mentions:
        return None
    return verdict


def candidate_pairs(
    buckets: Iterable[tuple[int, Sequence[Member]]],
    estimate: Callable[[Member, Member], float] | None = None,
) -> set[tuple[Member, Member]]:
    """Pairs (first < second) of the members worth comparing, from each shared key's
    members: sharing a name or a body key, or SKETCH_MATCHES sketch keys (keys held by
    too many members left out) and, when their sketches are at hand, an `estimate` of
    their similarity of at least ESTIMATE_FLOOR."""
    pairs: set[tuple[Member, Member]] = set()
    sketched: dict[tuple[Member, Member], int] = {}
    for key, members in buckets:
        if len(members) < 2 or len(members) > bucket_limit(key):
            continue
        ordered = sorted(set(members))
        for at, first in enumerate(ordered):
            for second in ordered[at + 1 :]:
                pair = (first, second)
                if key & 3 != SHINGLE_KEY:
                    pairs.add(pair)
                else:
                    sketched[pair] = sketched.get(pair, 0) + 1
    for pair, count in sketched.items():
        if count >= SKETCH_MATCHES and (estimate is None or estimate(*pair) >= ESTIMATE_FLOOR):
            pairs.add(pair)
    return pairs


class KeyTable:
    """The keys of many memories, for the pairs that share one (a whole-store pass)."""

    def __init__(self) -> None:
        # Each member's path, qualified name and scope, in flat lists: no tuple per memory
        # for the cyclic garbage collector to walk again and again (a 100,000-memory check).
        self.paths: list[str] = []
        self.names: list[str] = []
        self.global_scopes = bytearray()
        # Key -> the member holding it, or the members when several do (most keys: one).
        self._owners: dict[int, int | list[int]] = {}
        # Each member's sketch, SKETCH_SIZE slots a member (flat: no object per memory).
        self._sketches = array.array("q")

    def add(self, path: str, qualified: str, global_scope: bool, text: str | None) -> None:
        """Take a memory's keys (its name only when its text is unknown)."""
        number = len(self.paths)
        self.paths.append(path)
        self.names.append(qualified)
        self.global_scopes.append(global_scope)
        body = split_frontmatter(text)[1] if text is not None else ""
        owners = self._owners
        found = keys(qualified, global_scope, words(body), heading_key(body))
        sketched = [key for key in found if key & 3 == SHINGLE_KEY]
        self._sketches.extend(sketched + [-1] * (SKETCH_SIZE - len(sketched)))
        for key in found:
            held = owners.setdefault(key, number)
            if held == number:
                continue
            if isinstance(held, int):
                owners[key] = [held, number]
            else:
                held.append(number)

    def member(self, number: int) -> tuple[str, str, bool]:
        """(path, qualified name, global scope) of a member."""
        return self.paths[number], self.names[number], bool(self.global_scopes[number])

    def pairs(self) -> set[tuple[int, int]]:
        """Pairs of members (i < j) that share a key."""
        shared = ((k, v) for k, v in self._owners.items() if isinstance(v, list))
        return candidate_pairs(shared, self._estimate)

    def _estimate(self, first: int, second: int) -> float:
        """The two members' shingle similarity (0-100) estimated from their sketches: the
        share of the smallest hashes of both that each holds."""
        a = self._sketches[first * SKETCH_SIZE : (first + 1) * SKETCH_SIZE]
        b = self._sketches[second * SKETCH_SIZE : (second + 1) * SKETCH_SIZE]
        both = set(a) & set(b)
        union = heapq.nsmallest(SKETCH_SIZE, {v for v in (*a, *b) if v >= 0})
        return 100.0 * sum(1 for value in union if value in both) / max(len(union), 1)
