"""Completion (SPEC 3.1): memory names after `[[` and `mem:`, routing prefixes, tags.

Filtering and ranking happen on the server (prefix matches first, then fuzzy ones; see
MemoryIndex.complete_names), so the client gets at most MAX_ITEMS items. The edit
replaces exactly what was typed and adds the closing `]]` or backtick only when it is
not there yet.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lsprotocol import types

from memory_ls.core.index import Entry, MemoryIndex
from memory_ls.core.references import in_fenced_code
from memory_ls.core.routing import routing_prefixes
from memory_ls.core.store import MemoryFile
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
TRIGGER_CHARACTERS = ["[", ":", "/", ",", "-"]

_WIKI_OPEN = re.compile(r"\[\[([^\[\]|\n]*)$")
_MEM_OPEN = re.compile(r"`mem:([^`\n]*)$")
_WIKI_REST = re.compile(r"[^\[\]|\n]*")
_MEM_REST = re.compile(r"[^`\n]*")
_CAPS_TYPED = re.compile(r"[A-Z][A-Z_]*")
_INLINE_TAGS = re.compile(r"^tags:\s*\[([^\]]*)$")
_BLOCK_ITEM = re.compile(r"^\s*-( *)(.*)$")
_BLOCK_TAGS_KEY = re.compile(r"^tags:\s*$")
_FENCE = "---"


@dataclass(frozen=True)
class Context:
    """Where completion was asked, in code points of the cursor's line."""

    kind: str  # "name" or "tag"
    typed: str
    start: int  # where the typed part starts
    cursor: int
    word_end: int  # end of the name the cursor is in (for replace edits)
    closing: str = ""  # what to add after the inserted text
    lead: str = ""  # what to add before it (a space after a bare `-`)
    existing: tuple[str, ...] = ()  # tags already in the list


def register(server: MemoryServer) -> None:
    """Register the completion provider."""

    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=TRIGGER_CHARACTERS, resolve_provider=True),
    )
    async def completion(ls: MemoryServer, params: types.CompletionParams) -> Payload | None:
        document = ls.workspace.get_text_document(params.text_document.uri)
        lines = [line.rstrip("\r\n") for line in document.lines]
        at = document.position_from_client_units(params.position)
        context = find_context(lines, at.line, at.character)
        if context is None:
            return None
        line = lines[at.line]
        if context.kind == "name" and not ls.index.scanned:
            # Just after start the names are moments away: answer once they are known
            # rather than with an empty list (bounded: a slow disk cannot hang the editor).
            await wait_for_names(ls)
        client = _Client.of(ls)
        if context.kind == "name" and (
            client.resolves_documentation or _previews_known(ls, context.typed)
        ):
            # No file read: a few index lookups, cheaper than a thread hop.
            return build_list(ls, context, line, params.position.line, client)
        return await ls.in_store_thread(build_list, ls, context, line, params.position.line, client)

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


def _previews_known(ls: MemoryServer, typed: str) -> bool:
    """Whether the inline previews a list for `typed` carries are in the preview cache."""
    index = ls.index
    first, _cut = index.complete_names(typed, None, INLINE_PREVIEWS)
    return all(
        found is not None and index.cached_metadata(found[0]) is not None
        for found in index.winners(first)
    )


def _entry_of(ls: MemoryServer, item: types.CompletionItem) -> Entry | None:
    """The memory a name item offers, found again by its label (items carry no path)."""
    if item.kind != types.CompletionItemKind.File:
        return None
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
        closed = beyond.startswith(("]]", "|"))
        closing = "" if closed else ("]" if beyond.startswith("]") else "]]")
        return _name_context(wiki.group(1), wiki.start(1), column, tail, closed, closing)
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
    raw: str, offset: int, column: int, tail: str, closed: bool, closing: str
) -> Context:
    lead = len(raw) - len(raw.lstrip())
    # Only a closed reference has a name after the cursor that the item may replace.
    word_end = column + len(tail) if closed else column
    return Context("name", raw[lead:], offset + lead, column, word_end, closing)


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


class Payload:
    """A result already in its JSON shape, sent as it is.

    pygls hands objects it does not know to json.dumps by their `__dict__` (cattrs passes
    them through untouched). A hundred lsprotocol items, then cattrs turning them back
    into dicts, cost several times the lookup that chose them: the list is built as JSON.
    """

    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


def build_list(
    ls: MemoryServer, context: Context, line: str, line_no: int, client: _Client
) -> Payload:
    """The completion list (a CompletionList in JSON) for a context."""
    index = ls.index
    if context.kind == "tag":
        edit = _EditMaker(ls, line, line_no, context, False, client.edit_range_default)
        items, cut = _tag_items(index, context, edit)
    else:
        edit = _EditMaker(
            ls, line, line_no, context, client.insert_replace, client.edit_range_default
        )
        items, cut = _name_items(ls, index, context, edit, client)
    # While the first scan runs the list is partial: make the client ask again.
    fields: dict[str, Any] = {"isIncomplete": cut or not index.scanned, "items": items}
    defaults = edit.defaults()
    if defaults is not None:
        fields["itemDefaults"] = defaults
    return Payload(**fields)


def _name_items(
    ls: MemoryServer, index: MemoryIndex, context: Context, edit: _EditMaker, client: _Client
) -> tuple[list[dict[str, Any]], bool]:
    # Names are Serena's (`global/NAME` for global memories), so `global/ti` is a prefix
    # like any other.
    typed, scope = context.typed, None
    chosen, cut = index.complete_names(typed, scope, MAX_ITEMS)
    folders = _FolderNames(ls)
    items: list[dict[str, Any]] = []
    if scope is None and _CAPS_TYPED.fullmatch(typed):
        for prefix, folder in _routing_prefixes(ls):
            if prefix.startswith(typed) and prefix != typed:
                items.append(
                    {
                        "label": prefix,
                        "kind": types.CompletionItemKind.Folder.value,
                        "detail": f"routing prefix: new memories go to {folders.folder(folder)}",
                        "sortText": f"0{len(items):04d}",
                        "filterText": prefix,
                    }
                )
                edit.add_to(items[-1], prefix, close=False)
    winners = index.winners(chosen, scope)
    kind = types.CompletionItemKind.File.value
    if edit.use_defaults and client.resolves_detail and client.resolves_documentation:
        # The usual case (VS Code's client): four fields an item, made in one go.
        closing = edit.closing
        items.extend(
            {
                "label": winner[0].qualified,
                "kind": kind,
                "sortText": _SORT_TEXTS[position],
                "textEditText": winner[0].qualified + closing,
            }
            for position, winner in enumerate(winners)
            if winner is not None  # None: deleted since the list was made
        )
        return items, cut
    details: dict[tuple[str, int], str] = {}  # one text per folder (and shadow count)
    for position, winner in enumerate(winners):
        if winner is None:
            continue
        memory, shadows = winner
        label = memory.qualified
        item = {"label": label, "kind": kind, "sortText": _SORT_TEXTS[position]}
        edit.add_to(item, label, close=True)
        if not client.resolves_detail:
            key = (memory.folder.path, shadows)
            detail = details.get(key)
            if detail is None:
                detail = details[key] = _detail(folders, memory, shadows)
            item["detail"] = detail
        if not client.resolves_documentation and position < INLINE_PREVIEWS:
            documentation = _documentation(folders, index, memory)
            item["documentation"] = {"kind": documentation.kind.value, "value": documentation.value}
        items.append(item)
    return items, cut


def _tag_items(
    index: MemoryIndex, context: Context, edit: _EditMaker
) -> tuple[list[dict[str, Any]], bool]:
    counts = index.tag_counts()
    candidates = sorted((t for t in counts if t not in context.existing), key=str.casefold)
    folded = context.typed.casefold()
    prefixed = [t for t in candidates if t.casefold().startswith(folded)]
    prefixed.sort(key=lambda tag: not tag.startswith(context.typed))
    chosen, cut = rank(context.typed, candidates, [t.casefold() for t in candidates], prefixed)
    items: list[dict[str, Any]] = []
    for position, tag in enumerate(chosen):
        item = {
            "label": tag,
            "kind": types.CompletionItemKind.Keyword.value,
            "detail": f"tag used by {counts[tag]} {'memory' if counts[tag] == 1 else 'memories'}",
            "sortText": f"{position:04d}",
            "filterText": tag,
        }
        edit.add_to(item, context.lead + tag, close=False)
        items.append(item)
    return items, cut


class _EditMaker:
    """Text edits over the typed part, in the client's position units (as JSON)."""

    def __init__(
        self,
        ls: MemoryServer,
        line: str,
        line_no: int,
        context: Context,
        insert_replace: bool,
        use_defaults: bool = False,
    ) -> None:
        def position(column: int) -> dict[str, int]:
            return {"line": line_no, "character": client_column(ls, line, column)}

        self.closing = context.closing
        start = position(context.start)
        self.insert = {"start": start, "end": position(context.cursor)}
        self.replace = {"start": start, "end": position(context.word_end)}
        self.insert_replace = insert_replace and context.word_end != context.cursor
        self.use_defaults = use_defaults

    def defaults(self) -> dict[str, Any] | None:
        """The list's shared edit range, where the client takes one (itemDefaults)."""
        if not self.use_defaults:
            return None
        if self.insert_replace:
            return {"editRange": {"insert": self.insert, "replace": self.replace}}
        return {"editRange": self.insert}

    def add_to(self, item: dict[str, Any], text: str, close: bool) -> None:
        """Give an item its edit: its own, or just its text over the list's shared range."""
        new_text = text + self.closing if close else text
        if self.use_defaults:
            # Sent even when it equals the label: some clients take no text as none.
            item["textEditText"] = new_text
        elif self.insert_replace:
            item["textEdit"] = {"newText": new_text, "insert": self.insert, "replace": self.replace}
        else:
            item["textEdit"] = {"range": self.insert, "newText": new_text}


def _routing_prefixes(ls: MemoryServer) -> list[tuple[str, str]]:
    """(prefix, folder path) for each additional folder a prefix routes to."""
    by_label = {folder.label.upper() + "_": folder.path for folder in ls.config.additional}
    return [(prefix, by_label[prefix]) for prefix in routing_prefixes(ls.config.additional)]


class _FolderNames:
    """Folders and files as people read them: relative to the workspace, else with `~`."""

    def __init__(self, ls: MemoryServer) -> None:
        self.root = ls.root
        self.home = os.path.expanduser("~")
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
    metadata = index.metadata(memory)
    facts = [f"**{memory.qualified}** · {memory.scope} · `{folders.file(memory)}`"]
    if metadata.tags:
        facts.append("tags: " + ", ".join(metadata.tags))
    if metadata.updated_at:
        facts.append(f"updated {metadata.updated_at}")
    text = "  \n".join(facts)
    if metadata.preview:
        text += "\n\n---\n\n" + metadata.preview
    return types.MarkupContent(kind=types.MarkupKind.Markdown, value=text)
