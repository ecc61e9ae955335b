"""Headings of a note, and the `#Heading` part of a `[[note#Heading]]` link (SPEC 2.7).

Which heading a fragment names follows the wiki-link tools people already use:
Obsidian ("Link to a heading in a note": `[[Note#Heading]]`, `[[Note#Heading#Sub]]`
for a nested one, `[[Note#^id]]` for a block) and Foam match the heading's text; Obsidian
and Marksman ignore case. A fragment may also be written as the heading's GitHub anchor
(`[[note#retry-policy]]`, github-slugger's algorithm, which Marksman accepts too), as a
link copied from a rendered page is.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from memory_ls.core.rules.document import split_frontmatter
from memory_ls.core.rules.names import did_you_mean
from memory_ls.core.rules.references import iter_lines_outside_code

_ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_SPACES = re.compile(r"\s+")
# Obsidian's block references (`[[note#^a1b2]]`) name a paragraph, not a heading.
BLOCK_MARK = "^"


@dataclass(frozen=True)
class Heading:
    """A Markdown heading: level 1–6, its title and 0-based line."""

    level: int
    title: str
    line: int


def headings(text: str) -> list[Heading]:
    """ATX headings of a note, outside its frontmatter and fenced code."""
    raw, body, body_line = split_frontmatter(text)
    if raw is None:
        body, body_line = text, 0
    found = []
    for number, line in iter_lines_outside_code(body, body_line):
        if "#" not in line:
            continue
        match = _ATX_HEADING.match(line)
        if match and match.group(2).strip():
            found.append(Heading(len(match.group(1)), match.group(2).strip(), number))
    return found


def heading_slug(title: str) -> str:
    """A heading's GitHub anchor (github-slugger): lower case, punctuation dropped, each
    space a hyphen (`Retry policy (v2)` -> `retry-policy-v2`)."""
    kept = (
        ch
        for ch in title.strip().lower()
        if ch in " -" or unicodedata.category(ch)[0] in "LMN" or unicodedata.category(ch) == "Pc"
    )
    return "".join(kept).replace(" ", "-")


def _folded(text: str) -> str:
    return _SPACES.sub(" ", text.strip()).casefold()


def wanted_heading(fragment: str) -> str | None:
    """The heading a link's fragment names: its last `#` part (Obsidian's nested form);
    None for a block reference or an empty fragment, which name no heading."""
    last = fragment.rsplit("#", 1)[-1].strip()
    if not last or last.startswith(BLOCK_MARK):
        return None
    return last


def heading_matches(wanted: str, title: str) -> bool:
    """Whether a fragment names a heading: its text ignoring case and runs of spaces, or
    its GitHub anchor."""
    folded = _folded(wanted)
    return folded == _folded(title) or folded == heading_slug(title)


def find_heading(found: Sequence[Heading], fragment: str) -> Heading | None:
    """The first heading a link's fragment names (None: a block, or no such heading)."""
    wanted = wanted_heading(fragment)
    if wanted is None:
        return None
    return next((heading for heading in found if heading_matches(wanted, heading.title)), None)


def closest_heading(found: Sequence[Heading], fragment: str) -> str | None:
    """The heading a mistyped fragment most likely meant, if one is close."""
    wanted = wanted_heading(fragment)
    if wanted is None or not found:
        return None
    titles = list(dict.fromkeys(heading.title for heading in found))
    by_folded = {_folded(title): title for title in titles}
    close = did_you_mean(_folded(wanted), list(by_folded))
    return by_folded[close[0]] if close else None
