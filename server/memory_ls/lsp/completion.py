"""Completion (SPEC 3.1): memory names after `[[` and `mem:`, routing prefixes, tags.

Filtering and ranking happen on the server (prefix matches first, then fuzzy ones; see
MemoryIndex.complete_names), so the client gets at most MAX_ITEMS items. The edit
replaces exactly what was typed; a name after `[[` ends with `]]`, replacing the brackets
already there so that the cursor lands after them; after `mem:` the backtick is added
only when it is not there yet.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from json.encoder import encode_basestring_ascii as _q
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path

from memory_ls.core.operations.agent_navigation import PathCompletion, completion_at
from memory_ls.core.rules.references import in_fenced_code
from memory_ls.core.services.index import Entry, MemoryIndex, Metadata
from memory_ls.core.storage.memory import MemoryFile
from memory_ls.core.storage.routing import routing_prefixes
from memory_ls.lsp import agents
from memory_ls.lsp.agent_navigation import open_reader
from memory_ls.lsp.heading_completion import HeadingSpot, heading_list, split_heading
from memory_ls.lsp.protocol import JsonText
from memory_ls.lsp.server import MemoryServer
from memory_ls.lsp.targets import wait_for_names
from memory_ls.lsp.text import client_column

MAX_ITEMS = 50
# Clients that take documentation inline (no completionItem/resolve) get it, with its
# preview, for the first items only: each is a file read, and every item's would make
# each keystroke's answer several times heavier. Every item has its folder and scope.
INLINE_PREVIEWS = 5
_SORT_TEXTS = tuple(f"1{position:04d}" for position in range(MAX_ITEMS))
FUZZY_CUTOFF = 60
# `@` starts a Claude Code import, `(` a MEMORY.md link's target (agent_navigation.py).
# `#` the heading in a `[[note#Heading]]` link (heading_completion.py).
TRIGGER_CHARACTERS = ["[", ":", "/", ",", "-", "@", "(", "#"]

_WIKI_OPEN = re.compile(r"\[\[([^\[\]|\n]*)$")
_MEM_OPEN = re.compile(r"`mem:([^`\n]*)$")
_WIKI_REST = re.compile(r"[^\[\]|\n]*")
_MEM_REST = re.compile(r"[^`\n]*")
_CAPS_TYPED = re.compile(r"[A-Z][A-Z_]*")
_INLINE_TAGS = re.compile(r"^tags:\s*\[([^\]]*)$")
_BLOCK_ITEM = re.compile(r"^\s*-( *)(.*)$")
_BLOCK_TAGS_KEY = re.compile(r"^tags:\s*$")
_FENCE = "---"
_FILE_KIND = types.CompletionItemKind.File.value


@dataclass(frozen=True)
class Context:
    """Where completion was asked, in code points of the cursor's line."""

    kind: str  # "name", "tag" or "heading" (`typed` after `#`, `target` before it)
    typed: str
    start: int  # where the typed part starts
    cursor: int
    word_end: int  # end of the name the cursor is in (for replace edits)
    closing: str = ""  # what to add after the inserted text
    lead: str = ""  # what to add before it (a space after a bare `-`)
    existing: tuple[str, ...] = ()  # tags already in the list
    target: str = ""  # the memory whose headings are offered
    brackets: int = 0  # closing brackets after the name that the item's edit replaces


def register(server: MemoryServer) -> None:
    """Register the completion provider."""

    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=TRIGGER_CHARACTERS, resolve_provider=True),
    )
    async def completion(
        ls: MemoryServer, params: types.CompletionParams
    ) -> JsonText | types.CompletionList | None:
        document = ls.workspace.get_text_document(params.text_document.uri)
        lines = [line.rstrip("\r\n") for line in document.lines]
        at = document.position_from_client_units(params.position)
        context = find_context(lines, at.line, at.character)
        if context is None:
            # Paths after a CLAUDE.md's `@`, topic files in a MEMORY.md link.
            return await agent_paths(ls, params.text_document.uri, lines, at.line, at.character)
        line = lines[at.line]
        if context.kind == "heading":
            await wait_for_names(ls)
            end = context.word_end if context.brackets else context.cursor
            spot = HeadingSpot(context.target, context.typed, context.start, end, context.closing)
            return await ls.in_store_thread(
                heading_list, ls, spot, line, params.position.line, params.text_document.uri
            )
        if context.kind == "name" and not ls.index.scanned:
            # Just after start the names are moments away: answer once they are known
            # rather than with an empty list (bounded: a slow disk cannot hang the editor).
            await wait_for_names(ls)
        client = _Client.of(ls)
        inline = not client.resolves_documentation
        found = _Found.of(ls.index, context.typed, inline) if context.kind == "name" else None
        if found is not None and (client.resolves_documentation or found.previews is not None):
            # No file read: a few index lookups, cheaper than a thread hop.
            return build_list(ls, context, line, params.position.line, client, found)
        return await ls.in_store_thread(
            build_list, ls, context, line, params.position.line, client, found
        )

    @server.feature(types.COMPLETION_ITEM_RESOLVE)
    async def resolve(ls: MemoryServer, item: types.CompletionItem) -> types.CompletionItem:
        entry = _entry_of(ls, item)
        if entry is not None and item.detail is None:
            item.detail = _detail(_FolderNames(ls), entry.memory, len(entry.shadows))
        memory = entry.memory if entry is not None else None
        if memory is not None and item.documentation is None:
            item.documentation = await ls.in_store_thread(
                _documentation, _FolderNames(ls), ls.index, memory
            )
        return item


# The data of a path item: resolving it looks up no memory.
_PATH_ITEM = "path"


async def agent_paths(
    ls: MemoryServer, uri: str, lines: list[str], line: int, column: int
) -> types.CompletionList | None:
    """Paths for a Claude Code import or a MEMORY.md link being typed (None elsewhere)."""
    before = lines[line][:column] if 0 <= line < len(lines) else ""
    path = to_fs_path(uri)
    if not path or ("@" not in before and "](" not in before):
        return None
    known = await agents.of(ls).wait()
    if known is None:
        return None
    found = await ls.in_store_thread(
        completion_at, known, os.path.normpath(path), lines, line, column, open_reader(ls)
    )
    return _path_list(ls, lines[line], line, found) if found is not None else None


def _path_list(
    ls: MemoryServer, line: str, line_no: int, found: PathCompletion
) -> types.CompletionList:
    edit_range = types.Range(
        start=types.Position(line=line_no, character=client_column(ls, line, found.start)),
        end=types.Position(line=line_no, character=client_column(ls, line, found.end)),
    )
    items = [
        types.CompletionItem(
            label=choice.label,
            kind=types.CompletionItemKind.Folder
            if choice.folder
            else types.CompletionItemKind.File,
            detail=choice.detail,
            sort_text=f"{position:04d}",
            filter_text=choice.label,
            data=_PATH_ITEM,
            text_edit=types.TextEdit(
                range=edit_range,
                new_text=choice.label if choice.folder else choice.label + found.closing,
            ),
        )
        for position, choice in enumerate(found.choices)
    ]
    return types.CompletionList(is_incomplete=found.cut, items=items)


@dataclass(frozen=True)
class _Found:
    """The names a list offers, looked up once."""

    chosen: list[str]
    cut: bool  # more would match
    winners: list[tuple[MemoryFile, int] | None]  # (memory, shadows) per name
    # The first items' metadata for inline previews, where all of it is cached (else None).
    previews: list[Metadata] | None

    @classmethod
    def of(cls, index: MemoryIndex, typed: str, inline: bool = True) -> _Found:
        """Look up the names for `typed`, and (`inline`) the first ones' cached previews."""
        chosen, cut = index.complete_names(typed, None, MAX_ITEMS)
        winners = index.winners(chosen)
        if not inline:
            return cls(chosen, cut, winners, None)
        previews = [
            index.cached_metadata(winner[0]) if winner is not None else None
            for winner in winners[:INLINE_PREVIEWS]
        ]
        cached = [known for known in previews if known is not None]
        return cls(chosen, cut, winners, cached if len(cached) == len(previews) else None)


def _entry_of(ls: MemoryServer, item: types.CompletionItem) -> Entry | None:
    """The memory a name item offers, found again by its label (items carry no path)."""
    if item.kind != types.CompletionItemKind.File or item.data == _PATH_ITEM:
        return None  # not a memory's name (a path after `@` or in a MEMORY.md link)
    return ls.index.lookup(item.label)


@dataclass(frozen=True)
class _Client:
    """What the client's completion can do."""

    insert_replace: bool = False
    # Previews are sent on completionItem/resolve where the client asks for them there:
    # a hundred previews in every list would make each keystroke's answer heavy.
    resolves_documentation: bool = False
    # The same for the folder and scope, which clients show for the focused item.
    resolves_detail: bool = False
    # The list can say once where items go (LSP 3.17 itemDefaults.editRange): then each
    # item carries its text only, a list a third the size.
    edit_range_default: bool = False

    @classmethod
    def of(cls, ls: MemoryServer) -> _Client:
        """Read the client's completion capabilities."""
        document = ls.client_capabilities.text_document
        completion = document.completion if document else None
        listing = completion.completion_list if completion else None
        defaults = (listing.item_defaults if listing else None) or []
        item = completion.completion_item if completion else None
        if item is None:
            return cls(edit_range_default="editRange" in defaults)
        resolvable = item.resolve_support.properties if item.resolve_support else []
        return cls(
            insert_replace=bool(item.insert_replace_support),
            resolves_documentation="documentation" in resolvable,
            resolves_detail="detail" in resolvable,
            edit_range_default="editRange" in defaults,
        )


# ----- where are we? ---------------------------------------------------------------------


def find_context(lines: Sequence[str], line_no: int, column: int) -> Context | None:
    """The completion context at a position, or None where nothing is offered."""
    if not 0 <= line_no < len(lines):
        return None
    line = lines[line_no]
    before, after = line[:column], line[column:]
    wiki = _WIKI_OPEN.search(before)
    if (wiki or _MEM_OPEN.search(before)) and _in_code(lines, line_no):
        return None  # `[[x` in a code block is code: references there are not links
    if wiki:
        rest = _WIKI_REST.match(after)
        tail = rest.group(0) if rest else ""
        beyond = after[len(tail) :]
        if beyond.startswith("|"):  # `[[name|label]]`: the label stays as written
            context = _name_context(wiki.group(1), wiki.start(1), column, tail, True, "")
        else:
            # The item writes the closing `]]` and replaces the brackets already there
            # (the client's auto-closed `]]`), so the cursor ends after them, ready for
            # the next word (issue 34); no snippet needed, as clients without them work too.
            brackets = min(len(beyond) - len(beyond.lstrip("]")), 2)
            context = _name_context(
                wiki.group(1), wiki.start(1), column, tail, brackets > 0, "]]", brackets
            )
        heading = split_heading(context.typed)
        if heading is None:
            return context
        target, at, typed = heading
        return dataclasses.replace(
            context, kind="heading", typed=typed, start=context.start + at, target=target
        )
    mem = _MEM_OPEN.search(before)
    if mem:
        rest = _MEM_REST.match(after)
        tail = rest.group(0) if rest else ""
        closed = after[len(tail) :].startswith("`")
        return _name_context(
            mem.group(1), mem.start(1), column, tail, closed, "" if closed else "`"
        )
    if _in_frontmatter(lines, line_no):
        return _tag_context(lines, line_no, column)
    return None


def _in_code(lines: Sequence[str], line_no: int) -> bool:
    # Most notes have no fence at all: one search over the text decides it.
    before = "\n".join(lines[: line_no + 1])
    return ("```" in before or "~~~" in before) and in_fenced_code(lines, line_no)


def _name_context(
    raw: str, offset: int, column: int, tail: str, closed: bool, closing: str, brackets: int = 0
) -> Context:
    lead = len(raw) - len(raw.lstrip())
    # Only a closed reference has a name after the cursor that the item may replace.
    word_end = column + len(tail) if closed else column
    return Context(
        "name", raw[lead:], offset + lead, column, word_end + brackets, closing, brackets=brackets
    )


def _in_frontmatter(lines: Sequence[str], line_no: int) -> bool:
    if line_no == 0 or not lines or lines[0].rstrip() != _FENCE:
        return False
    return all(line.rstrip() != _FENCE for line in lines[1:line_no])


def _tag_context(lines: Sequence[str], line_no: int, column: int) -> Context | None:
    before = lines[line_no][:column]
    inline = _INLINE_TAGS.match(before)
    if inline:
        items = inline.group(1).split(",")
        typed = items[-1].lstrip().lstrip("'\"")
        listed = tuple(_unquote(item) for item in items[:-1])
        return Context("tag", typed, column - len(typed), column, column, existing=listed)
    item = _BLOCK_ITEM.match(before)
    if not item:
        return None
    existing: list[str] = []
    for previous in reversed(lines[1:line_no]):
        if _BLOCK_TAGS_KEY.match(previous):
            typed = item.group(2).lstrip("'\"")
            lead = "" if item.group(1) else " "
            return Context(
                "tag",
                typed,
                column - len(typed),
                column,
                column,
                lead=lead,
                existing=tuple(existing),
            )
        earlier = _BLOCK_ITEM.match(previous)
        if not earlier:
            return None
        existing.append(_unquote(earlier.group(2)))
    return None


def _unquote(item: str) -> str:
    return item.strip().strip("'\"")


# ----- what to offer ---------------------------------------------------------------------


def rank(
    typed: str, candidates: Sequence[str], folded: Sequence[str], prefixed: Sequence[str]
) -> tuple[list[str], bool]:
    """Up to MAX_ITEMS candidates for `typed`, prefix matches first, and whether cut."""
    # `folded` holds the candidates casefolded, position by position; `prefixed` the
    # candidates that start with `typed` ignoring case, already ranked.
    if not typed:
        return list(candidates[:MAX_ITEMS]), len(candidates) > MAX_ITEMS
    chosen = list(prefixed[: MAX_ITEMS + 1])
    if len(typed) > 1 and len(chosen) <= MAX_ITEMS:
        from rapidfuzz import fuzz, process

        seen = set(chosen)
        # One more than fits, to know whether the list was cut.
        fuzzy = process.extract(
            typed.casefold(),
            folded,
            scorer=fuzz.WRatio,
            score_cutoff=FUZZY_CUTOFF,
            limit=MAX_ITEMS + 1 + len(chosen),
        )
        chosen.extend(
            candidates[position] for _, _, position in fuzzy if candidates[position] not in seen
        )
    return chosen[:MAX_ITEMS], len(chosen) > MAX_ITEMS


def build_list(
    ls: MemoryServer,
    context: Context,
    line: str,
    line_no: int,
    client: _Client,
    found: _Found | None = None,
) -> JsonText:
    """The completion list (a CompletionList, as JSON text) for a context."""
    index = ls.index
    if context.kind == "tag":
        edit = _EditMaker(ls, line, line_no, context, False, client.edit_range_default)
        items, cut = _tag_items(index, context, edit)
    else:
        edit = _EditMaker(
            ls, line, line_no, context, client.insert_replace, client.edit_range_default
        )
        items, cut = _name_items(
            ls, index, context, edit, client, found or _Found.of(index, context.typed)
        )
    # While the first scan runs the list is partial: make the client ask again.
    incomplete = "true" if cut or not index.scanned else "false"
    defaults = edit.defaults()
    shared = f',"itemDefaults":{defaults}' if defaults is not None else ""
    return JsonText(f'{{"isIncomplete":{incomplete}{shared},"items":[{",".join(items)}]}}')


def _name_items(
    ls: MemoryServer,
    index: MemoryIndex,
    context: Context,
    edit: _EditMaker,
    client: _Client,
    found: _Found,
) -> tuple[list[str], bool]:
    # Names are Serena's (`global/NAME` for global memories), so `global/ti` is a prefix
    # like any other.
    typed, scope = context.typed, None
    cut = found.cut
    folders = _FolderNames(ls)
    items: list[str] = []
    if scope is None and _CAPS_TYPED.fullmatch(typed):
        for prefix, folder in _routing_prefixes(ls):
            if prefix.startswith(typed) and prefix != typed:
                fields = {
                    "label": prefix,
                    "kind": types.CompletionItemKind.Folder.value,
                    "detail": f"routing prefix: new memories go to {folders.folder(folder)}",
                    "sortText": f"0{len(items):04d}",
                    "filterText": prefix,
                }
                items.append(_item(fields, edit.partial(prefix)))
    winners = found.winners
    before, after = edit.parts()
    closing = _q(edit.closing)[1:]  # the quoted label's end: `label + closing` quoted
    key = folders.key
    parts = _PARTS
    # VS Code's client resolves both (its items are four fields); others get them inline.
    inline_detail = not client.resolves_detail
    inline_previews = 0 if client.resolves_documentation else INLINE_PREVIEWS
    for position, winner in enumerate(winners):
        if winner is None:  # deleted since the list was made
            continue
        memory, shadows = winner
        known = parts.get(memory.path)
        if known is None or known[0] is not memory or known[1] != shadows or known[2] != key:
            known = _remember(folders, memory, shadows)
        preview = ""
        if position < inline_previews:
            cached = found.previews[position] if found.previews is not None else None
            preview = _documentation_part(folders, memory, cached or index.metadata(memory))
        items.append(
            f'{known[3]}{_SORT_TEXTS[position]}",{before}{known[4]}{closing}{after}'
            f"{known[5] if inline_detail else ''}{preview}}}"
        )
    return items, cut


# Per memory, the JSON of what its item says whatever the list (its label and kind, the
# quoted name its edit writes, its folder and scope), made once and joined into each list:
# a keystroke's fifty items are then a few cached texts each. Keyed by path and checked
# against the memory itself (the index's object for that file), its shadows and the
# folders' names; bounded (emptied when full), previews likewise.
_PART_ENTRIES = 4096
_PREVIEW_ENTRIES = 256
_Parts = tuple[MemoryFile, int, tuple[str, str], str, str, str]
_PARTS: dict[str, _Parts] = {}
_PREVIEWS: dict[str, tuple[MemoryFile, Metadata, tuple[str, str], str]] = {}


def _remember(folders: _FolderNames, memory: MemoryFile, shadows: int) -> _Parts:
    """The parts of a memory's item (see _PARTS), made and kept."""
    label = _q(memory.qualified)
    parts = (
        memory,
        shadows,
        folders.key,
        f'{{"label":{label},"kind":{_FILE_KIND},"sortText":"',
        label[:-1],  # the label quoted but not closed: what the edit writes goes on
        f',"detail":{_q(_detail(folders, memory, shadows))}',
    )
    if len(_PARTS) >= _PART_ENTRIES:
        _PARTS.clear()
    _PARTS[memory.path] = parts
    return parts


def _documentation_part(folders: _FolderNames, memory: MemoryFile, metadata: Metadata) -> str:
    """An item's inline documentation (a JSON fragment), kept per memory and metadata."""
    known = _PREVIEWS.get(memory.path)
    if (
        known is not None
        and known[0] is memory
        and known[1] == metadata
        and known[2] == folders.key
    ):
        return known[3]
    text = _documentation_text(folders, memory, metadata)
    part = f',"documentation":{{"kind":"markdown","value":{_q(text)}}}'
    if len(_PREVIEWS) >= _PREVIEW_ENTRIES:
        _PREVIEWS.clear()
    _PREVIEWS[memory.path] = (memory, metadata, folders.key, part)
    return part


def _tag_items(index: MemoryIndex, context: Context, edit: _EditMaker) -> tuple[list[str], bool]:
    counts = index.tag_counts()
    candidates = sorted((t for t in counts if t not in context.existing), key=str.casefold)
    folded = context.typed.casefold()
    prefixed = [t for t in candidates if t.casefold().startswith(folded)]
    prefixed.sort(key=lambda tag: not tag.startswith(context.typed))
    chosen, cut = rank(context.typed, candidates, [t.casefold() for t in candidates], prefixed)
    items: list[str] = []
    for position, tag in enumerate(chosen):
        fields = {
            "label": tag,
            "kind": types.CompletionItemKind.Keyword.value,
            "detail": f"tag used by {counts[tag]} {'memory' if counts[tag] == 1 else 'memories'}",
            "sortText": f"{position:04d}",
            "filterText": tag,
        }
        items.append(_item(fields, edit.edit(context.lead + tag)))
    return items, cut


def _item(fields: dict[str, Any], edit: str) -> str:
    """An item's JSON text: its fields and its edit (a fragment made by _EditMaker)."""
    return json.dumps(fields, separators=(",", ":"))[:-1] + "," + edit + "}"


class _EditMaker:
    """Text edits over the typed part, in the client's position units, as JSON fragments
    (the ranges written once per list)."""

    def __init__(
        self,
        ls: MemoryServer,
        line: str,
        line_no: int,
        context: Context,
        insert_replace: bool,
        use_defaults: bool = False,
    ) -> None:
        def position(column: int) -> str:
            return f'{{"line":{line_no},"character":{client_column(ls, line, column)}}}'

        self.closing = context.closing
        start = position(context.start)
        # An edit that writes the closing brackets replaces those there: one range over
        # them (an insert range would keep them, doubled).
        end = context.word_end if context.brackets else context.cursor
        self._typed = f'{{"start":{start},"end":{position(context.cursor)}}}'
        self.insert_replace = (
            insert_replace and context.word_end != context.cursor and not context.brackets
        )
        self.use_defaults = use_defaults
        self._insert = f'{{"start":{start},"end":{position(end)}}}'
        replace = f'{{"start":{start},"end":{position(context.word_end)}}}'
        self._both = f'"insert":{self._insert},"replace":{replace}'

    def partial(self, new_text: str) -> str:
        """The edit of an item the name goes on after (a routing prefix): over the typed
        part only, the closing brackets kept after the cursor."""
        if not self.insert_replace and self._typed != self._insert:
            return f'"textEdit":{{"range":{self._typed},"newText":{_q(new_text)}}}'
        return self.edit(new_text)

    def defaults(self) -> str | None:
        """The list's shared edit range (itemDefaults, JSON), where the client takes one."""
        if not self.use_defaults:
            return None
        if self.insert_replace:
            return f'{{"editRange":{{{self._both}}}}}'
        return f'{{"editRange":{self._insert}}}'

    def edit(self, new_text: str) -> str:
        """An item's edit (a JSON fragment): its own, or its text over the shared range."""
        before, after = self.parts()
        return f"{before}{_q(new_text)}{after}"

    def parts(self) -> tuple[str, str]:
        """What goes before and after the quoted new text in `edit`."""
        if self.use_defaults:
            # Sent even when it equals the label: some clients take no text as none.
            return '"textEditText":', ""
        if self.insert_replace:
            return '"textEdit":{"newText":', f",{self._both}}}"
        return f'"textEdit":{{"range":{self._insert},"newText":', "}"


def _routing_prefixes(ls: MemoryServer) -> list[tuple[str, str]]:
    """(prefix, folder path) for each additional folder a prefix routes to."""
    by_label = {folder.label.upper() + "_": folder.path for folder in ls.config.additional}
    return [(prefix, by_label[prefix]) for prefix in routing_prefixes(ls.config.additional)]


class _FolderNames:
    """Folders and files as people read them: relative to the workspace, else with `~`."""

    def __init__(self, ls: MemoryServer) -> None:
        self.root = ls.root
        self.home = os.path.expanduser("~")
        self.key = (self.root, self.home)  # what the names shown depend on
        self._folders: dict[str, str] = {}

    def folder(self, path: str) -> str:
        """A folder for people (computed once per folder)."""
        shown = self._folders.get(path)
        if shown is None:
            shown = self._folders[path] = _shown(self.root, self.home, path)
        return shown

    def file(self, memory: MemoryFile) -> str:
        """A memory's file for people."""
        return f"{self.folder(memory.folder.path)}/{memory.name}.md"


def _shown(root: str, home: str, path: str) -> str:
    relative = os.path.relpath(path, root)
    if not relative.startswith(".."):
        return relative
    return "~" + path[len(home) :] if path.startswith(home + os.sep) else path


def _detail(folders: _FolderNames, memory: MemoryFile, shadows: int) -> str:
    text = f"{memory.scope} · {folders.folder(memory.folder.path)}"
    if memory.folder.read_only:
        text += " · read-only"
    if shadows:
        text += f" · shadows {shadows}"
    return text


def _documentation(
    folders: _FolderNames, index: MemoryIndex, memory: MemoryFile
) -> types.MarkupContent:
    text = _documentation_text(folders, memory, index.metadata(memory))
    return types.MarkupContent(kind=types.MarkupKind.Markdown, value=text)


def _documentation_text(folders: _FolderNames, memory: MemoryFile, metadata: Metadata) -> str:
    facts = [f"**{memory.qualified}** · {memory.scope} · `{folders.file(memory)}`"]
    if metadata.tags:
        facts.append("tags: " + ", ".join(metadata.tags))
    if metadata.updated_at:
        facts.append(f"updated {metadata.updated_at}")
    text = "  \n".join(facts)
    if metadata.preview:
        text += "\n\n---\n\n" + metadata.preview
    return text
