"""Which memories replace which: `supersedes` and `superseded_by` in frontmatter.

The convention of linked-note vaults: a newer note says `supersedes: OLD` (or a list), or the
older one says `superseded_by: NEW`. Either side is enough; a name is written as a memory
is referred to anywhere (`mem:` and one `.md` dropped, `[[...]]` accepted, `global/` kept).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from memory_ls.core.rules.document import parse_document
from memory_ls.core.rules.names import normalize_input, qualify

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


# Link keys (core/services/backlinks.py) under which the relations a file's frontmatter declares
# are indexed: SUPERSEDES_KEY + OLD for `supersedes: OLD`, SUPERSEDED_BY_KEY + NEW for
# `superseded_by: NEW`. No reference target or Serena key starts with these characters.
SUPERSEDES_KEY = "\x01"
SUPERSEDED_BY_KEY = "\x02"
# Both keys hold this word: a text without it declares nothing (no parse needed).
KEY_WORD = "supersede"


def relation_keys(found: Relations) -> tuple[str, ...]:
    """The link keys of a file's declared relations."""
    return tuple(SUPERSEDES_KEY + name for name in found.supersedes) + tuple(
        SUPERSEDED_BY_KEY + name for name in found.superseded_by
    )


def relations_from_keys(keys: Iterable[str]) -> Relations:
    """The relations a file's link keys record (the inverse of `relation_keys`)."""
    supersedes = [key[1:] for key in keys if key[:1] == SUPERSEDES_KEY]
    superseded_by = [key[1:] for key in keys if key[:1] == SUPERSEDED_BY_KEY]
    return Relations(tuple(supersedes), tuple(superseded_by))


def has_relation_keys(keys: Iterable[str]) -> bool:
    """Whether link keys record any declared relation."""
    return any(key[:1] in (SUPERSEDES_KEY, SUPERSEDED_BY_KEY) for key in keys)


@dataclass(frozen=True)
class Declaration:
    """What one memory's frontmatter declares, and where (0-based file lines of the keys)."""

    name: str  # the declaring memory's qualified name
    relations: Relations
    supersedes_line: int = 0
    superseded_by_line: int = 0

    def line_of(self, key: str) -> int:
        """The line of `supersedes` or `superseded_by`."""
        return self.supersedes_line if key == SUPERSEDES else self.superseded_by_line


def declaration(
    name: str, metadata: Mapping[str, Any], raw_frontmatter: str | None
) -> Declaration | None:
    """A memory's declaration from its parsed frontmatter; None when it declares nothing."""
    found = relations(metadata)
    if not (found.supersedes or found.superseded_by or found.problems):
        return None
    lines = {SUPERSEDES: 0, SUPERSEDED_BY: 0}
    for number, line in enumerate((raw_frontmatter or "").split("\n"), start=1):
        for key in lines:
            if not lines[key] and line.startswith(key + ":"):
                lines[key] = number
    return Declaration(name, found, lines[SUPERSEDES], lines[SUPERSEDED_BY])


def declaration_of_text(name: str, text: str) -> Declaration | None:
    """A memory's declaration read from its text (parsed only when it may hold one)."""
    if KEY_WORD not in text:
        return None
    doc = parse_document(text)
    if doc.raw_frontmatter is None or KEY_WORD not in doc.raw_frontmatter:
        return None
    return declaration(name, doc.metadata, doc.raw_frontmatter)


@dataclass(frozen=True)
class Successor:
    """A memory that supersedes another, and whose frontmatter says so."""

    name: str
    # The superseded memory's own `superseded_by` names it.
    by_old: bool = False
    # Its own `supersedes` names the superseded memory.
    by_new: bool = False

    def said_by(self, old: str) -> str:
        """Whose frontmatter says so, in words."""
        if self.by_old and self.by_new:
            return f"both {old}'s and {self.name}'s frontmatter say so"
        if self.by_old:
            return f"{old}'s frontmatter says so"
        return f"{self.name}'s frontmatter says so"


class SupersedeGraph:
    """Which memory supersedes which, store-wide, from every memory's declaration.

    Questions about one memory take the declaration of its current text (`own`, None
    when it declares nothing) in place of the one recorded for it, so an open document
    is judged as typed against the other memories as they are on disk.
    """

    def __init__(self, declarations: Iterable[Declaration], exists: Callable[[str], bool]) -> None:
        self.exists = exists
        self._declared: dict[str, Declaration] = {}
        # OLD -> the names whose declarations say `supersedes: OLD`.
        self._claimed_by: dict[str, list[str]] = {}
        for found in declarations:
            if found.name in self._declared:
                continue  # the first file of a name is the memory (lookup order)
            self._declared[found.name] = found
            for old in found.relations.supersedes:
                self._claimed_by.setdefault(old, []).append(found.name)
        self._involved = set(self._declared)
        for found in self._declared.values():
            self._involved.update(found.relations.supersedes, found.relations.superseded_by)

    def declaration(self, name: str) -> Declaration | None:
        """What the memory `name` declares, as recorded."""
        return self._declared.get(name)

    def involved(self) -> set[str]:
        """Every name that declares a relation or is named by one."""
        return set(self._involved)

    def touches(self, name: str) -> bool:
        """Whether `name` declares a relation or is named by one."""
        return name in self._involved

    def _newer(self, node: str, name: str, own: Declaration | None) -> dict[str, Successor]:
        """The memories said to supersede `node`, `name`'s declaration being `own`."""
        stated = own if node == name else self._declared.get(node)
        found: dict[str, Successor] = {}
        for new in stated.relations.superseded_by if stated is not None else ():
            found[new] = Successor(new, by_old=True)
        # `name`'s recorded declaration is replaced by `own`.
        claims = [new for new in self._claimed_by.get(node, ()) if new != name]
        if own is not None and node in own.relations.supersedes:
            claims.append(name)
        for new in claims:
            known = found.get(new)
            found[new] = Successor(new, by_old=known is not None and known.by_old, by_new=True)
        return found

    def successors(self, name: str, own: Declaration | None) -> list[Successor]:
        """The existing memories that supersede `name`, by name."""
        newer = self._newer(name, name, own)
        return [newer[new] for new in sorted(newer) if new != name and self.exists(new)]

    def cycle(self, name: str, own: Declaration | None) -> list[str] | None:
        """Names from `name` through newer and newer memories back to `name`, if they
        lead back there (a memory that supersedes itself: `[name, name]`)."""
        parents: dict[str, str] = {}
        pending = [name]
        while pending:
            node = pending.pop()
            for new in sorted(self._newer(node, name, own)):
                if new == name:
                    path = [node]
                    while path[-1] != name:
                        path.append(parents[path[-1]])
                    return [*reversed(path), name]
                if new not in parents:
                    parents[new] = node
                    pending.append(new)
        return None
