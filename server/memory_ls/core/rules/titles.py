"""A memory's title as listings, search and related memories show it: its first heading,
else its first line of text."""

from __future__ import annotations

import re

# A title longer than this is cut (with an ellipsis).
TITLE_CHARS = 100

_HEADING = re.compile(r"#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT_RULE = re.compile(r"(?:=+|-+)[ \t]*$")
_FENCE = re.compile(r"(`{3,}|~{3,})")


def title_of(body: str) -> str | None:
    """A memory's title: its first heading, else its first line of text (cut to TITLE_CHARS)."""
    first_line: str | None = None
    fence: str | None = None
    previous = ""
    for raw_line in body.splitlines():
        line = raw_line.strip()
        if fence is not None:
            if line.startswith(fence):
                fence = None
            continue
        opening = _FENCE.match(line)
        if opening:
            fence = opening.group(1)
            continue
        if line.startswith("#"):
            heading = _HEADING.fullmatch(line)
            if heading and heading.group(1):
                return _cut(heading.group(1))
        elif previous and _SETEXT_RULE.fullmatch(line) and not previous.startswith("#"):
            return _cut(previous)
        if line and first_line is None:
            first_line = line
        previous = line
    return None if first_line is None else _cut(first_line)


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1].rstrip() + "…"
