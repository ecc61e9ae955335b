"""Word stems and stop words for relevance search (SPEC 2.6).

`stem` is light stemming: steps 1 and 5a of the Porter stemmer (M. F. Porter, 1980), which
take off inflections (plurals, -ed, -ing, a final y or e: `retries`, `retried` and `retry`
all become `retri`), written from the published algorithm with the particulars of SQLite's
FTS5 `porter` tokenizer (words under 3 or over 64 UTF-8 bytes left alone, the rules
working on the bytes). Porter's later steps, which take off derivations, are left out:
they join words of other meanings (`production` and `product`, `general` and
`generous`), which cost more in ranking than they gave.

The index keeps the words as written; a relevance search looks a word up under every
indexed word with the same stem, so the strict mode still matches words exactly. A word
always begins with its stem but for the stem's last letter (`happy`, `happi`; `hoping`,
`hope`), which is how the index's word list is searched for a stem's words.
"""

from __future__ import annotations

import functools

# Longer words (in UTF-8 bytes) are not stemmed, as in FTS5.
MAX_STEMMED_BYTES = 64
MIN_STEMMED_BYTES = 3

# English stop words: NLTK's list (from the Snowball stemmer project), without its
# contraction fragments (`don`, `ll`, `ve`, ...). A query's stop words are not required
# and do not count towards its rank; inside a "quoted phrase" they still must match.
STOP_WORDS = frozenset(
    (
        "i",
        "me",
        "my",
        "myself",
        "we",
        "our",
        "ours",
        "ourselves",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "he",
        "him",
        "his",
        "himself",
        "she",
        "her",
        "hers",
        "herself",
        "it",
        "its",
        "itself",
        "they",
        "them",
        "their",
        "theirs",
        "themselves",
        "what",
        "which",
        "who",
        "whom",
        "this",
        "that",
        "these",
        "those",
        "am",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "have",
        "has",
        "had",
        "having",
        "do",
        "does",
        "did",
        "doing",
        "a",
        "an",
        "the",
        "and",
        "but",
        "if",
        "or",
        "because",
        "as",
        "until",
        "while",
        "of",
        "at",
        "by",
        "for",
        "with",
        "about",
        "against",
        "between",
        "into",
        "through",
        "during",
        "before",
        "after",
        "above",
        "below",
        "to",
        "from",
        "up",
        "down",
        "in",
        "out",
        "on",
        "off",
        "over",
        "under",
        "again",
        "further",
        "then",
        "once",
        "here",
        "there",
        "when",
        "where",
        "why",
        "how",
        "all",
        "any",
        "both",
        "each",
        "few",
        "more",
        "most",
        "other",
        "some",
        "such",
        "no",
        "nor",
        "not",
        "only",
        "own",
        "same",
        "so",
        "than",
        "too",
        "very",
        "s",
        "t",
        "can",
        "will",
        "just",
        "should",
        "now",
    )
)


def _is_vowel(char: str, y_is_vowel: bool) -> bool:
    return char in "aeiou" or (y_is_vowel and char == "y")


def _vowel_consonant(word: str, consonant_before: bool) -> int:
    """The length of the word's first vowels-then-consonant run, 0 when it has none."""
    consonant = consonant_before
    at = 0
    while at < len(word):
        consonant = not _is_vowel(word[at], consonant)
        if not consonant:
            break
        at += 1
    at += 1
    while at < len(word):
        consonant = not _is_vowel(word[at], consonant)
        if consonant:
            return at + 1
        at += 1
    return 0


def _measure_above_0(stem: str) -> bool:
    return _vowel_consonant(stem, False) > 0


def _measure_above_1(stem: str) -> bool:
    first = _vowel_consonant(stem, False)
    return bool(first and _vowel_consonant(stem[first:], True))


def _measure_is_1(stem: str) -> bool:
    first = _vowel_consonant(stem, False)
    return bool(first and not _vowel_consonant(stem[first:], True))


def _ends_cvc(stem: str) -> bool:
    """Porter's *o: consonant, vowel, consonant, the last not w, x or y."""
    if stem[-1] in "wxy":
        return False
    mask = 0
    consonant = False
    for char in stem:
        consonant = not _is_vowel(char, consonant)
        mask = (mask << 1) + consonant
    return (mask & 0b111) == 0b101


def _has_vowel(stem: str) -> bool:
    return any(_is_vowel(char, at > 0) for at, char in enumerate(stem))


def _inflection(word: str) -> str:
    """Porter's steps 1 and 5a: plurals, -ed and -ing, a final y or e."""
    # Step 1a: plurals.
    if word.endswith("s"):
        if word[-2] == "e":
            if (len(word) > 4 and word[-4:-2] == "ss") or (len(word) > 3 and word[-3] == "i"):
                word = word[:-2]
            else:
                word = word[:-1]
        elif word[-2] != "s":
            word = word[:-1]
    # Step 1b: -eed, -ed, -ing.
    removed = False
    if len(word) > 3 and word.endswith("eed"):
        if _measure_above_0(word[:-3]):
            word = word[:-1]
    elif len(word) > 2 and word.endswith("ed"):
        if _has_vowel(word[:-2]):
            word, removed = word[:-2], True
    elif len(word) > 3 and word.endswith("ing") and _has_vowel(word[:-3]):
        word, removed = word[:-3], True
    if removed and len(word) >= 2:
        if len(word) > 2 and word[-2:] in ("at", "bl", "iz"):
            word += "e"
        else:
            last = word[-1]
            if not _is_vowel(last, False) and last not in "lsz" and last == word[-2]:
                word = word[:-1]
            elif _measure_is_1(word) and _ends_cvc(word):
                word += "e"
    # Step 1c: y after a vowel somewhere becomes i.
    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    # Step 5a: a final e goes, so that `cache` meets `cached` (`hope` keeps it, as `hoping`).
    if word.endswith("e"):
        stem = word[:-1]
        if _measure_above_1(stem) or (_measure_is_1(stem) and not _ends_cvc(stem)):
            word = stem
    return word


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A folded word's stem: the word without its inflection."""
    if word.isascii():
        if not MIN_STEMMED_BYTES <= len(word) <= MAX_STEMMED_BYTES:
            return word
        return _inflection(word)
    # FTS5 works on the UTF-8 bytes: one latin-1 character per byte does the same.
    raw = word.encode("utf-8")
    if not MIN_STEMMED_BYTES <= len(raw) <= MAX_STEMMED_BYTES:
        return word
    return _inflection(raw.decode("latin-1")).encode("latin-1").decode("utf-8", "replace")
