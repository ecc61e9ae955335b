"""Completion after `[[note#`: the headings of that memory (`[[#` those of the note itself),
as Obsidian and Foam offer them (rules/headings.py)."""

from __future__ import annotations

from dataclasses import dataclass

from lsprotocol import types

from memory_ls.core.rules.headings import Heading, headings
from memory_ls.core.rules.names import is_valid_name, normalize_input
from memory_ls.lsp.server import MemoryServer
from memory_ls.lsp.targets import document_text, file_uri
from memory_ls.lsp.text import client_column

MAX_HEADINGS = 100


def split_heading(typed: str) -> tuple[str, int, str] | None:
    """(the memory named, where the heading's typed part starts in `typed`, that part)
    for what was typed after `[[` when it holds a `#`; None otherwise."""
    if "#" not in typed:
        return None
    # Obsidian's nested `[[note#Heading#Sub`: the part after the last `#` is being typed.
    at = typed.rindex("#") + 1
    part = typed[at:]
    lead = len(part) - len(part.lstrip())
    return typed[: typed.index("#")].strip(), at + lead, part[lead:]


@dataclass(frozen=True)
class HeadingSpot:
    """Where a heading is being typed: columns of the cursor's line (code points)."""

    target: str  # the memory named before `#` ("" for the note itself)
    typed: str
    start: int
    end: int  # where the item's edit ends (after the `]]` it replaces)
    closing: str


def _target_headings(ls: MemoryServer, spot: HeadingSpot, uri: str) -> tuple[str, list[Heading]]:
    """(the memory's name as shown, its headings); the open text wins over the file's."""
    if not spot.target:
        text, _version = document_text(ls, uri)
        return "this note", headings(text)
    name, is_global = normalize_input(spot.target)
    if not is_valid_name(name):
        return spot.target, []
    entry = ls.index.lookup(("global/" if is_global else "") + name)
    if entry is None:
        return spot.target, []
    text, _version = document_text(ls, file_uri(entry.memory.path))
    return entry.memory.qualified, headings(text)


def heading_list(
    ls: MemoryServer, spot: HeadingSpot, line: str, line_no: int, uri: str
) -> types.CompletionList:
    """The headings a `[[note#` link may name, those matching what was typed first
    (blocking: reads the memory)."""
    shown, found = _target_headings(ls, spot, uri)
    typed = spot.typed.casefold()
    titles = list(dict.fromkeys(heading.title for heading in found))
    ranked = [t for t in titles if t.casefold().startswith(typed)]
    ranked += [t for t in titles if typed in t.casefold() and t not in ranked]
    levels = {heading.title: heading.level for heading in reversed(found)}
    where = types.Range(
        start=types.Position(line=line_no, character=client_column(ls, line, spot.start)),
        end=types.Position(line=line_no, character=client_column(ls, line, spot.end)),
    )
    items = [
        types.CompletionItem(
            label=title,
            kind=types.CompletionItemKind.Reference,
            detail=f"{'#' * levels[title]} heading in {shown}",
            sort_text=f"{position:04d}",
            filter_text=title,
            text_edit=types.TextEdit(range=where, new_text=title + spot.closing),
        )
        for position, title in enumerate(ranked[:MAX_HEADINGS])
    ]
    return types.CompletionList(is_incomplete=len(ranked) > MAX_HEADINGS, items=items)
