"""An open document's scans carried from one version to the next, changed lines only; secrets."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from typing import TypeVar

from memory_ls.core.rules.references import Reference, find_references, references_in_line
from memory_ls.core.rules.secrets import SecretHit, find_secrets, with_article
from memory_ls.core.rules.stale_paths import PathMention, find_path_mentions, mentions_in_line
from memory_ls.core.services.diagnostics.base import Diagnostic


class ReferenceMemo:
    """`find_references` for successive versions of one open document.

    In a plain note (no frontmatter, no fenced code) the lines before and after an edit
    keep their references (moved by the lines added or removed); only the changed lines
    are read again. Anything else is read whole, as find_references reads it.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lines: list[str] | None = None  # of the last version, when it was plain
        self._refs: list[Reference] = []

    def find(self, text: str) -> list[Reference]:
        """`find_references(text)`, reading only the lines changed since the last call."""
        with self._lock:
            old = self._lines
            if not _is_plain(text):
                self._lines = None
                return find_references(text)
            lines = text.split("\n")
            if old is None:
                refs = find_references(text)
            else:
                start, old_end, new_end = _changed_lines(old, lines)
                fresh: list[Reference] = []
                for number in range(start, new_end):
                    line = lines[number]
                    if "[[" in line or "mem:" in line:
                        fresh.extend(references_in_line(line, number))
                refs = _splice(self._refs, start, old_end, new_end, fresh)
            self._lines, self._refs = lines, refs
            return list(refs)


class SecretMemo:
    """`find_secrets` for successive versions of one open document.

    Findings are per line: the lines before and after an edit keep theirs (moved by the
    lines added or removed) and only the changed lines are scanned again.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lines: list[str] = []
        self._hits: list[SecretHit] = []

    def find(self, text: str) -> list[SecretHit]:
        """`list(find_secrets(text))`, scanning only the lines changed since the last call."""
        lines = text.split("\n")
        with self._lock:
            start, old_end, new_end = _changed_lines(self._lines, lines)
            fresh = list(find_secrets("\n".join(lines[start:new_end]), start))
            hits = _splice(self._hits, start, old_end, new_end, fresh)
            self._lines, self._hits = lines, hits
            return list(hits)


class PathMemo:
    """`find_path_mentions` for successive versions of one open document, reading only
    the lines changed since the last call where the text is plain (as ReferenceMemo)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lines: list[str] | None = None  # of the last version, when it was plain
        self._mentions: list[PathMention] = []

    def find(self, text: str) -> list[PathMention]:
        """`find_path_mentions(text)`, reading only the lines changed since the last call."""
        with self._lock:
            old = self._lines
            if not _is_plain(text):
                self._lines = None
                return find_path_mentions(text)
            lines = text.split("\n")
            if old is None:
                mentions = find_path_mentions(text)
            else:
                start, old_end, new_end = _changed_lines(old, lines)
                fresh = [
                    mention
                    for number in range(start, new_end)
                    for mention in mentions_in_line(lines[number], number)
                ]
                mentions = _splice(self._mentions, start, old_end, new_end, fresh)
            self._lines, self._mentions = lines, mentions
            return list(mentions)


def _is_plain(text: str) -> bool:
    """Whether every line of a text is outside frontmatter and fenced code."""
    # A fence line holds ``` or ~~~; frontmatter starts the text (after a BOM) with ---.
    return "```" not in text and "~~~" not in text and not text.lstrip("\ufeff").startswith("---")


Lined = TypeVar("Lined", Reference, SecretHit, PathMention)


def _splice(
    old: list[Lined], start: int, old_end: int, new_end: int, fresh: list[Lined]
) -> list[Lined]:
    """Per-line findings once lines start..old_end became start..new_end (found: `fresh`)."""
    shift = new_end - old_end
    after = [
        item if not shift else replace(item, line=item.line + shift)
        for item in old
        if item.line >= old_end
    ]
    return [item for item in old if item.line < start] + fresh + after


def _changed_lines(old: list[str], new: list[str]) -> tuple[int, int, int]:
    """(start, old end, new end): the lines that differ between two versions of a text."""
    start, limit = 0, min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    old_end, new_end = len(old), len(new)
    while old_end > start and new_end > start and old[old_end - 1] == new[new_end - 1]:
        old_end -= 1
        new_end -= 1
    return start, old_end, new_end


@dataclass
class LineScans:
    """An open document's line-by-line scans, carried from one version to the next."""

    secrets: SecretMemo = field(default_factory=SecretMemo)
    references: ReferenceMemo = field(default_factory=ReferenceMemo)
    paths: PathMemo = field(default_factory=PathMemo)


def secret_diagnostics(path: str, text: str, memo: SecretMemo | None = None) -> list[Diagnostic]:
    """`possible-secret` for lines of a project memory that look like credentials."""
    hits = memo.find(text) if memo is not None else find_secrets(text)
    return [
        Diagnostic(
            path,
            hit.line,
            hit.start,
            hit.line,
            hit.end,
            "possible-secret",
            f"This looks like {with_article(hit.kind)}. Project memories are committed to git: "
            "remove it, keep it in a secret store, and rotate it if it was real.",
            data={"kind": hit.kind},
        )
        for hit in hits
    ]
