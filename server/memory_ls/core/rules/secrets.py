"""Spotting credentials in memories: they are committed to git and agents copy things in."""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass

Finder = str | re.Pattern[str]

# (kind, pattern, finders, anchored): specific token formats first, the generic
# assignment last. A line can only match where one of the pattern's finders occurs
# (strings are searched in the lowercased text for `(?i)` patterns); when `anchored`, a
# match starts exactly where a finder occurrence starts (after a zero-width `\b` or
# lookbehind). Looking for finders first keeps a 1 MB note to milliseconds: most patterns
# open with `\b`, and then the regex engine tries every position of the text.
_PATTERNS: tuple[tuple[str, re.Pattern[str], tuple[Finder, ...], bool], ...] = (
    (
        "private key",
        re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"),
        ("-----BEGIN ",),
        True,
    ),
    (
        "AWS access key",
        re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[A-Z0-9]{16}\b"),
        (re.compile("A(?:KIA|SIA|GPA|IDA|ROA|IPA|NPA|NVA)"),),
        True,
    ),
    (
        "AWS secret key",
        re.compile(r"(?i)aws_?secret_?access_?key\s*[:=]\s*[\"']?[A-Za-z0-9/+=]{40}\b"),
        ("aws",),
        True,
    ),
    (
        "GitHub token",
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"),
        (re.compile("g(?:h[pousr]_|ithub_pat_)"),),
        True,
    ),
    ("GitLab token", re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}"), ("glpat-",), True),
    ("Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), ("xox",), True),
    ("Stripe key", re.compile(r"\b[rs]k_live_[A-Za-z0-9]{20,}"), ("k_live_",), False),
    ("Google API key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b"), ("AIza",), True),
    ("Anthropic API key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{20,}"), ("sk-",), True),
    ("OpenAI API key", re.compile(r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{20,}"), ("sk-",), True),
    ("npm token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), ("npm_",), True),
    (
        "JSON web token",
        re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
        ("eyJ",),
        True,
    ),
    (
        # scheme://user:password@host (a database or broker URL, a clone URL with a token):
        # the user and password, not a port (registry:5000@sha256:...) nor the user again
        # (postgres:postgres, guest:guest: a well-known default, not a leak).
        "password in a URL",
        re.compile(
            r"(?<=://)(?P<user>[^\s:/@?#\"'`<>]*):(?!(?P=user)@)(?!\d{1,5}@)"
            r"(?P<value>[^\s/?#\"'`]{3,})(?=@[A-Za-z0-9\[])"
        ),
        ("://",),
        False,
    ),
    (
        "password or secret assignment",
        re.compile(
            r"(?i)(?<![a-z0-9])(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?token"
            r"|auth[_-]?token|client[_-]?secret|private[_-]?key)(?![a-z0-9])[\"']?\s*[:=]\s*[\"']?(?P<value>[^\s\"'`,;]{6,})"
        ),
        ("passw", "pwd", "secret", "api", "access", "auth", "client", "private"),
        True,
    ),
)
# Values that document a setting rather than leak one: template syntax, masks, and words
# that name what goes there.
_TEMPLATE = (
    r"<.*>|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|%[A-Za-z_]+%|\{\{.*\}\}|[x*.\-_]+|"
    r"\{[A-Za-z_][A-Za-z0-9_.]*\}|%\([A-Za-z_]+\)s|\[[^\]]*\]|"
    r"(?:your|my|some|the|example|dummy|fake|placeholder|changeme|redacted|none|null|"
    r"true|false|required|optional|env|os\.environ|process\.env|getenv)\b.*"
)
_PLACEHOLDER = re.compile(rf"(?i)^(?:{_TEMPLATE}|pass(?:word|wd)?|pwd|pw|secret|token)$")
# In a URL a bare `pass` or `password` is a password that works (issue 34: the
# `postgres://user:pass@host` of a memory was written), as detect-secrets' BasicAuthDetector
# also holds: only template syntax and masks document one there.
_URL_PLACEHOLDER = re.compile(rf"(?i)^(?:{_TEMPLATE})$")
_URL_KIND = "password in a URL"


@dataclass(frozen=True)
class SecretHit:
    """Where something that looks like a credential is (0-based line, code-point columns)."""

    kind: str
    line: int
    start: int
    end: int


# Each distinct finder once (with whether it is looked for in the lowercased text), and
# the patterns it serves: a short memory costs a few string searches, not a regex per line.
_FOLDS = tuple(bool(pattern.flags & re.IGNORECASE) for _kind, pattern, _f, _a in _PATTERNS)


def _finder_table() -> dict[tuple[Finder, bool], list[int]]:
    table: dict[tuple[Finder, bool], list[int]] = {}
    for index, (_kind, _pattern, finders, _anchored) in enumerate(_PATTERNS):
        for finder in finders:
            table.setdefault((finder, _FOLDS[index]), []).append(index)
    return table


_FINDERS = _finder_table()


def with_article(kind: str) -> str:
    """ "an AWS access key", "a Stripe key": a kind of secret as a sentence names it."""
    return ("an " if kind[:1].lower() in "aeio" else "a ") + kind


def find_secrets(text: str, first_line: int = 0) -> Iterator[SecretHit]:
    """Lines of `text` that look like they hold a credential, one hit per line at most."""
    folded = _fold(text)
    # Which patterns may match on which line (0-based within `text`).
    candidates: dict[int, set[int]] = {}
    starts: list[int] = []
    lines: list[str] = []
    for (finder, fold), indexes in _FINDERS.items():
        haystack = folded if fold else text
        if isinstance(finder, str) and finder not in haystack:
            continue
        for at in _occurrences(finder, haystack):
            if not starts:
                lines = text.split("\n")
                starts = [0, *itertools.accumulate(len(line) + 1 for line in lines)]
            candidates.setdefault(bisect.bisect_right(starts, at) - 1, set()).update(indexes)
    for number in sorted(candidates):
        line = lines[number]
        if len(line) < 8:
            continue
        folded_line = folded[starts[number] : starts[number] + len(line)]
        for index in sorted(candidates[number]):
            kind, pattern, finders, anchored = _PATTERNS[index]
            if anchored:
                haystack = folded_line if _FOLDS[index] else line
                match = _match_at_finders(pattern, line, haystack, finders)
            else:
                match = pattern.search(line)
            if match is None:
                continue
            value = match.groupdict().get("value")
            placeholder = _URL_PLACEHOLDER if kind == _URL_KIND else _PLACEHOLDER
            if value is not None and placeholder.match(value):
                continue
            yield SecretHit(kind, first_line + number, match.start(), match.end())
            break


def _fold(text: str) -> str:
    """`text` lowercased so that `(?i)` finders are found by plain search, same length."""
    # Besides A-Z, `(?i)` matches four letters to ASCII ones: İ and ı to i, ſ to s, the
    # Kelvin sign to k (which lower() already does). İ is also the one character whose
    # lower() grows, which would shift every position after it.
    if not text.isascii():
        text = text.replace("\u0130", "i").replace("\u0131", "i").replace("\u017f", "s")
    return text.lower()


def _occurrences(finder: Finder, haystack: str) -> list[int]:
    """Every position where `finder` occurs in `haystack`, overlapping ones too."""
    found: list[int] = []
    if isinstance(finder, str):
        at = haystack.find(finder)
        while at >= 0:
            found.append(at)
            at = haystack.find(finder, at + 1)
        return found
    match = finder.search(haystack)
    while match is not None:
        found.append(match.start())
        match = finder.search(haystack, match.start() + 1)
    return found


def _match_at_finders(
    pattern: re.Pattern[str], line: str, haystack: str, finders: tuple[Finder, ...]
) -> re.Match[str] | None:
    """`pattern.search(line)`, trying only where a finder occurs in `haystack`."""
    for at in sorted({at for finder in finders for at in _occurrences(finder, haystack)}):
        # match() at a position still sees the characters before it (`\b`, lookbehind).
        match = pattern.match(line, at)
        if match is not None:
            return match
    return None
