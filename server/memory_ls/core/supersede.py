"""Which memories replace which: `supersedes` and `superseded_by` in frontmatter.

The convention of linked-note vaults: a newer note says `supersedes: OLD` (or a list), or the
older one says `superseded_by: NEW`. Either side is enough; a name is written as a memory
is referred to anywhere (`mem:` and one `.md` dropped, `[[...]]` accepted, `global/` kept).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memory_ls.core.names import normalize_input, qualify

SUPERSEDES = "supersedes"
SUPERSEDED_BY = "superseded_by"


@dataclass(frozen=True)
class Relations:
    """What one memory's frontmatter says it replaces and is replaced by (qualified names)."""

    supersedes: tuple[str, ...] = ()
    superseded_by: tuple[str, ...] = ()
    # Values that are not a name or a list of names, for a diagnostic to point at.
    problems: tuple[str, ...] = ()


def names_in(value: object) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(qualified names, problems) of a `supersedes`/`superseded_by` value."""
    items = value if isinstance(value, list) else [value]
    names: list[str] = []
    problems: list[str] = []
    for item in items:
        if not isinstance(item, str) or not item.strip():
            problems.append(f"{item!r} is not a memory name")
            continue
        text = item.strip()
        if text.startswith("[[") and text.endswith("]]"):
            text = text[2:-2].split("|", 1)[0]
        name, is_global = normalize_input(text)
        if not name:
            problems.append(f"{item!r} is not a memory name")
            continue
        names.append(qualify(name, is_global))
    return tuple(dict.fromkeys(names)), tuple(problems)


def relations(metadata: Mapping[str, Any]) -> Relations:
    """The supersede relations a memory's frontmatter declares."""
    if SUPERSEDES not in metadata and SUPERSEDED_BY not in metadata:
        return Relations()
    supersedes, first = (
        names_in(metadata[SUPERSEDES]) if metadata.get(SUPERSEDES) is not None else ((), ())
    )
    by, second = (
        names_in(metadata[SUPERSEDED_BY]) if metadata.get(SUPERSEDED_BY) is not None else ((), ())
    )
    return Relations(supersedes, by, first + second)
