"""Unresolved git merge conflicts in a memory: the marker blocks, and how to resolve one.

A block is `<<<<<<< ours`, optionally diff3's `||||||| base`, `=======`, `>>>>>>> theirs`
on lines of their own (seven characters, as git writes them). A lone `=======` is a
Markdown heading underline, so it counts only inside a block; a `<<<<<<<`, `|||||||` or
`>>>>>>>` line outside a complete block is a marker left behind by a half-done resolution.

Markers inside fenced code (``` or ~~~) are an example, not a conflict: a memory about
resolving conflicts shows them. Markers indented (an indented code block, a list item)
never count, as git writes them at the start of a line. A block that starts outside code
is followed to its end whatever its sides hold, and the code after it is read as if
ours were kept (a side may open or close a fence). A real conflict inside a fenced block
looks the same as an example and is not found.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from memory_ls.core.rules.references import fence_step

MARKER_SIZE = 7
Side = Literal["ours", "theirs", "both"]
# A marker of exactly seven characters, then nothing or a space and a label.
_MARKER = re.compile(r"(<{7}|\|{7}|={7}|>{7})(?:[ \t][^\n]*)?\r?")
_SEPARATOR = "=" * MARKER_SIZE


@dataclass(frozen=True)
class ConflictBlock:
    """One conflict's 0-based marker lines: start, diff3's base (or None), separator, end."""

    start: int
    base: int | None
    separator: int
    end: int

    @property
    def ours(self) -> range:
        """The lines of our side."""
        return range(self.start + 1, self.separator if self.base is None else self.base)

    @property
    def theirs(self) -> range:
        """The lines of their side."""
        return range(self.separator + 1, self.end)

    @property
    def marker_lines(self) -> tuple[int, ...]:
        """Every marker line of the block."""
        middle = (self.separator,) if self.base is None else (self.base, self.separator)
        return (self.start, *middle, self.end)


@dataclass(frozen=True)
class Conflicts:
    """The complete blocks of a text and the stray marker lines outside them."""

    blocks: tuple[ConflictBlock, ...] = ()
    stray: tuple[int, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.blocks or self.stray)

    @property
    def first_line(self) -> int | None:
        """The 0-based line of the first marker, None when there is none."""
        lines = [block.start for block in self.blocks] + list(self.stray)
        return min(lines) if lines else None


def may_hold_markers(text: str) -> bool:
    """A cheap test: False when the text cannot hold a conflict marker."""
    return "<<<<<<<" in text or ">>>>>>>" in text or "|||||||" in text


def find_conflicts(text: str) -> Conflicts:
    """The conflict blocks and stray markers of a text."""
    if not may_hold_markers(text):
        return Conflicts()
    blocks: list[ConflictBlock] = []
    stray: list[int] = []
    start: int | None = None
    base: int | None = None
    separator: int | None = None
    fence: str | None = None  # the code fence open at this line, None outside code
    before: str | None = None  # the fence open where the current block started
    ours: str | None = None  # and the one open at the end of its ours side
    for number, line in enumerate(text.split("\n")):
        match = _marker(line) if start is not None or fence is None else None
        if match is None:
            fence = fence_step(fence, line)[0]
            continue
        kind = match.group(1)[0]
        if kind == "<":
            if start is not None:  # a block that never ended
                stray.extend(n for n in (start, base, separator) if n is not None)
                fence = before
            start, base, separator, before = number, None, None, fence
        elif start is None:
            if kind != "=":  # a lone `=======` underlines a heading
                stray.append(number)
        elif kind == "|" and base is None and separator is None:
            base, ours, fence = number, fence, before
        elif kind == "=" and separator is None:
            if base is None:
                ours, fence = fence, before
            separator = number
        elif kind == ">":
            if separator is None:
                stray.extend(n for n in (start, base, number) if n is not None)
                fence = before if base is None else ours
            else:
                blocks.append(ConflictBlock(start, base, separator, number))
                fence = ours
            start, base, separator = None, None, None
        # A second `=======` or `|||||||` inside a block is one side's text.
    if start is not None:
        stray.extend(n for n in (start, base, separator) if n is not None)
    return Conflicts(tuple(blocks), tuple(sorted(stray)))


def _marker(line: str) -> re.Match[str] | None:
    """The match of a marker line, None for any other line."""
    if len(line) < MARKER_SIZE or line[0] not in "<|=>":
        return None
    return _MARKER.fullmatch(line)


def resolution(lines: list[str], block: ConflictBlock, side: Side) -> list[str]:
    """The lines that replace a block (markers included) when `side` is kept."""
    ours = [lines[n] for n in block.ours]
    theirs = [lines[n] for n in block.theirs]
    if side == "ours":
        return ours
    if side == "theirs":
        return theirs
    return ours + theirs


def conflict_warning(qualified: str, text: str) -> str | None:
    """What a reader is told first about a memory holding an unresolved merge conflict."""
    found = find_conflicts(text)
    if not found:
        return None
    first = found.first_line
    assert first is not None
    count = len(found.blocks)
    what = (
        f"{count} unresolved git merge conflict(s)"
        if count
        else "git merge conflict markers left behind"
    )
    return (
        f"Warning [merge-conflict]: memory {qualified!r} holds {what} (from line "
        f"{first + 1}: `<<<<<<<`, `=======`, `>>>>>>>`). The text between the markers is "
        "two versions of the same lines, not settled knowledge: do not act on either "
        "side; resolve the conflict (keep one side or both, remove the markers) before "
        "relying on it."
    )
