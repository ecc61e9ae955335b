"""Quick fixes for diagnostics (SPEC 3.4): move a `misrouted` memory where its name routes,
create the memory behind a `broken-link`, "did you mean" for a `broken-link` (closest
names, or the closest heading of a `[[note#Heading]]`) or an `unknown-prefix` (closest
routing prefixes; creating its folder or dropping the prefix: lsp/prefix_fixes.py), the
path a `stale-path` moved to (lsp/repository.py), and accept ours, theirs or both for a
`merge-conflict`.

The move is a RenameFile in a workspace edit, planned by the store's move rules: the
name does not change, so no reference needs rewriting, and the editor moves the open
document along with the file (a command moving it behind the editor's back would leave
an open buffer on a deleted path). Clients without file renames get the memory.move
command instead. Creating runs memory.create: a memory.save of what New Memory writes
(a heading), so the new file is routed, written and indexed like any other save, then
window/showDocument opens it where the client can.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from memory_ls.core.operations.navigation import (
    Replacement,
    name_span,
    plan_move_of,
    prefix_suggestions,
)
from memory_ls.core.operations.report import answer_with_findings
from memory_ls.core.rules.conflicts import ConflictBlock, Side, find_conflicts, resolution
from memory_ls.core.rules.errors import Exists, InvalidArguments, MemoryStoreError
from memory_ls.core.rules.names import did_you_mean, split_qualified, valid_name_for
from memory_ls.core.rules.references import Reference, find_references
from memory_ls.lsp import prefix_fixes
from memory_ls.lsp.commands import refusal
from memory_ls.lsp.diagnostics import SOURCE
from memory_ls.lsp.edits import (
    FileEdit,
    can_rename_files,
    uses_document_changes,
    workspace_edit,
)
from memory_ls.lsp.server import MemoryServer
from memory_ls.lsp.targets import document_text, shown_path, wait_for_names
from memory_ls.lsp.text import client_range

QUICK_FIX = types.CodeActionKind.QuickFix
# The command of "Create memory": memory.save with New Memory's first text, then the new
# memory opened in the editor (window/showDocument) where the client can.
CREATE_COMMAND = "memory.create"

logger = logging.getLogger(__name__)
FIXABLE = frozenset(
    {"misrouted", "broken-link", "unknown-prefix", "invalid-name", "stale-path", "merge-conflict"}
)
_ACCEPT_TITLES: tuple[tuple[Side, str], ...] = (
    ("ours", "Accept ours"),
    ("theirs", "Accept theirs"),
    ("both", "Accept both (ours, then theirs)"),
)
# The fixes that depend on which names the index knows (did you mean, create).
NEED_NAMES = frozenset({"broken-link"})


@dataclass(frozen=True)
class Snapshot:
    """The document the fixes are computed on."""

    uri: str
    text: str
    version: int | None

    @property
    def lines(self) -> list[str]:
        """The text's lines without line ends."""
        return self.text.split("\n")


def register(server: MemoryServer) -> None:
    """Register the quick-fix provider and the command its "Create memory" runs."""
    server.command(CREATE_COMMAND)(create_memory)
    prefix_fixes.register(server)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[QUICK_FIX]),
    )
    async def code_action(
        ls: MemoryServer, params: types.CodeActionParams
    ) -> list[types.CodeAction] | None:
        only = params.context.only
        if only and not any(kind in ("", QUICK_FIX) for kind in only):
            return None
        ours = [d for d in params.context.diagnostics if d.source == SOURCE and d.code in FIXABLE]
        if not ours:
            return None
        if not await wait_for_names(ls):
            # Which names exist is not known yet: no fix may treat a link as broken.
            ours = [d for d in ours if d.code not in NEED_NAMES]
        uri = params.text_document.uri
        text, version = document_text(ls, uri)
        snapshot = Snapshot(uri, text, version)
        return await ls.in_store_thread(quick_fixes, ls, snapshot, ours) or None


def quick_fixes(
    ls: MemoryServer, doc: Snapshot, diagnostics: Sequence[types.Diagnostic]
) -> list[types.CodeAction]:
    """The fixes for the given diagnostics; one action per distinct fix (blocking)."""
    offered: dict[str, types.CodeAction] = {}
    refs = {(ref.line, ref.start): ref for ref in find_references(doc.text)}
    for diagnostic in diagnostics:
        for key, action in _fixes(ls, doc, refs, diagnostic):
            known = offered.get(key)
            if known is None:
                offered[key] = action
            elif known.diagnostics is not None:
                # `[[FEATUER_x]]` is both a broken link and an unknown prefix: one fix for both.
                known.diagnostics = [*known.diagnostics, diagnostic]
    return list(offered.values())


def _fixes(
    ls: MemoryServer,
    doc: Snapshot,
    refs: Mapping[tuple[int, int], Reference],
    diagnostic: types.Diagnostic,
) -> Iterator[tuple[str, types.CodeAction]]:
    if diagnostic.code == "misrouted":
        yield from _move(ls, doc, diagnostic)
        return
    if diagnostic.code == "invalid-name":
        yield from _rename_invalid(ls, doc, diagnostic)
        return
    if diagnostic.code == "merge-conflict":
        yield from _accept(ls, doc, diagnostic)
        return
    if diagnostic.code == "stale-path":
        if ls.repository is not None:
            yield from ls.repository.fixes(doc.uri, doc.text, doc.version, diagnostic)
        return
    if diagnostic.code == "unknown-prefix":
        yield from prefix_fixes.prefix_fixes(ls, doc.uri, diagnostic)
    data: Any = diagnostic.data
    if diagnostic.code == "broken-link" and isinstance(data, dict) and "heading" in data:
        yield from _heading_fix(ls, doc, refs, diagnostic, data.get("suggestion"))
        return
    ref = _reference(ls, doc, refs, diagnostic)
    if ref is None:
        return
    if diagnostic.code == "broken-link":
        yield from _create(ls, ref, diagnostic)
        # The name is replaced within its scope (its `global/` kept): compare bare names.
        scope = "global" if ref.is_global else "project"
        bare = [split_qualified(name)[0] for name in ls.index.names(scope)]
        close = did_you_mean(ref.name, bare)
        for position, name in enumerate(close):
            yield _replace(ls, doc, ref, name, diagnostic, preferred=position == 0)
    elif not ref.is_global:
        for name in prefix_suggestions(ref.name, ls.config.additional):
            yield _replace(ls, doc, ref, name, diagnostic, preferred=False)
        prefix = data.get("prefix") if isinstance(data, dict) else None
        plain = prefix_fixes.without_prefix(ref.name, prefix) if isinstance(prefix, str) else None
        if plain is not None:
            yield _replace(ls, doc, ref, plain, diagnostic, preferred=False)


def _heading_fix(
    ls: MemoryServer,
    doc: Snapshot,
    refs: Mapping[tuple[int, int], Reference],
    diagnostic: types.Diagnostic,
    suggestion: object,
) -> Iterator[tuple[str, types.CodeAction]]:
    """Put the closest heading in place of a missing one (`[[note#Retyr]]`)."""
    if not isinstance(suggestion, str):
        return
    at = ls.workspace.position_codec.position_from_client_units(doc.lines, diagnostic.range.start)
    ref = next(
        (r for r in refs.values() if r.line == at.line and r.fragment_start == at.character),
        None,
    )
    if ref is None or not ref.fragment:
        return
    # Obsidian's nested `[[note#Heading#Sub]]`: only the last heading was missing.
    kept = ref.fragment[: ref.fragment.rindex("#") + 1] if "#" in ref.fragment else ""
    change = Replacement(ref.line, ref.fragment_start, ref.fragment_end, kept + suggestion)
    edit = FileEdit(doc.uri, doc.version, doc.lines, [change])
    yield (
        f"heading:{ref.line}:{ref.fragment_start}:{suggestion}",
        types.CodeAction(
            title=f"Change to #{kept + suggestion}",
            kind=QUICK_FIX,
            diagnostics=[diagnostic],
            is_preferred=True,
            edit=workspace_edit(ls, [edit]),
        ),
    )


def _accept(
    ls: MemoryServer, doc: Snapshot, diagnostic: types.Diagnostic
) -> Iterator[tuple[str, types.CodeAction]]:
    """Accept ours / theirs / both for the conflict block the diagnostic starts at."""
    # Marker lines are ASCII from column 0: the client's line is ours.
    line = diagnostic.range.start.line
    block = next((b for b in find_conflicts(doc.text).blocks if b.start == line), None)
    if block is None:
        return  # an older diagnostic, or a stray marker: nothing to choose between
    lines = doc.lines
    for side, title in _ACCEPT_TITLES:
        edit = _block_edit(ls, lines, block, side)
        if uses_document_changes(ls):
            identifier = types.OptionalVersionedTextDocumentIdentifier(
                uri=doc.uri, version=doc.version
            )
            change = types.WorkspaceEdit(
                document_changes=[types.TextDocumentEdit(text_document=identifier, edits=[edit])]
            )
        else:
            change = types.WorkspaceEdit(changes={doc.uri: [edit]})
        action = types.CodeAction(
            title=title, kind=QUICK_FIX, diagnostics=[diagnostic], edit=change
        )
        yield f"conflict:{block.start}:{side}", action


def _block_edit(
    ls: MemoryServer, lines: list[str], block: ConflictBlock, side: Side
) -> types.TextEdit:
    """The edit that puts one side (or both) in place of a block, markers included."""
    kept = resolution(lines, block, side)
    if block.end + 1 < len(lines):
        new_text = "".join(f"{line}\n" for line in kept)
        where = client_range(ls, lines, block.start, 0, block.end + 1, 0)
    else:  # the block ends the text, without a line break after it
        new_text = "\n".join(kept)
        where = client_range(ls, lines, block.start, 0, block.end, len(lines[block.end]))
    return types.TextEdit(range=where, new_text=new_text)


def _reference(
    ls: MemoryServer,
    doc: Snapshot,
    refs: Mapping[tuple[int, int], Reference],
    diagnostic: types.Diagnostic,
) -> Reference | None:
    """The reference a diagnostic was published for, if the text still has it there."""
    codec = ls.workspace.position_codec
    at = codec.position_from_client_units(doc.lines, diagnostic.range.start)
    ref = refs.get((at.line, at.character))
    data: Any = diagnostic.data
    named = data.get("name") if isinstance(data, dict) else None
    # A diagnostic from an older version of the text may sit on another reference now.
    return ref if ref is not None and named in (None, ref.name) else None


def _move(
    ls: MemoryServer, doc: Snapshot, diagnostic: types.Diagnostic
) -> Iterator[tuple[str, types.CodeAction]]:
    path = to_fs_path(doc.uri)
    memory = ls.index.memory_for(path) if path else None
    if memory is None:
        return
    try:
        plan = plan_move_of(ls.store, memory, memory.qualified)
    except MemoryStoreError:
        return  # e.g. a file of that name is already there: no safe move to offer
    title = f"Move {memory.qualified} to {shown_path(ls, plan.folder.path)}"
    action = types.CodeAction(
        title=title, kind=QUICK_FIX, diagnostics=[diagnostic], is_preferred=True
    )
    if can_rename_files(ls):
        action.edit = workspace_edit(ls, [], [(memory.path, plan.target)])
    else:
        arguments = {"name": memory.qualified, "newName": memory.qualified, "scope": memory.scope}
        action.command = types.Command(title=title, command="memory.move", arguments=[arguments])
    yield f"move:{memory.path}", action


def _rename_invalid(
    ls: MemoryServer, doc: Snapshot, diagnostic: types.Diagnostic
) -> Iterator[tuple[str, types.CodeAction]]:
    """Rename a file whose name breaks the rules to the closest free valid name."""
    path = to_fs_path(doc.uri)
    memory = ls.index.memory_for(path) if path else None
    if memory is None or memory.valid or memory.folder.read_only or not can_rename_files(ls):
        return
    base = valid_name_for(memory.name)
    new_name, number = base, 1
    # A free name: another memory (or file) of that name would be shadowed or overwritten.
    while ls.store.locate_all(new_name, memory.scope) or os.path.lexists(
        memory.folder.file_for(new_name)
    ):
        number += 1
        new_name = f"{base}_{number}"
    target = memory.folder.file_for(new_name)
    title = f"Rename to {memory.folder.qualified(new_name)}"
    action = types.CodeAction(
        title=title,
        kind=QUICK_FIX,
        diagnostics=[diagnostic],
        is_preferred=True,
        edit=workspace_edit(ls, [], [(memory.path, target)]),
    )
    yield f"rename:{memory.path}", action


def _create(
    ls: MemoryServer, ref: Reference, diagnostic: types.Diagnostic
) -> Iterator[tuple[str, types.CodeAction]]:
    if not ref.valid:
        return
    try:
        route = ls.store.route(ref.target)
    except MemoryStoreError:
        return  # ignored by Serena's patterns, or no global folder: nothing can create it
    if route["readOnly"]:
        return  # the save would be refused
    title = f"Create memory {ref.target} in {shown_path(ls, route['folder'])}"
    yield (
        f"create:{ref.target}",
        types.CodeAction(
            title=title,
            kind=QUICK_FIX,
            diagnostics=[diagnostic],
            command=types.Command(
                title=title, command=CREATE_COMMAND, arguments=[{"name": ref.target}]
            ),
        ),
    )


def new_memory_text(name: str) -> str:
    """What a new memory starts as: a heading with its name (as New Memory writes it)."""
    return f"# {name.split('/')[-1]}\n\n"


async def create_memory(ls: MemoryServer, *arguments: object) -> dict[str, Any]:
    """`memory.create {name}`: save a new memory with its heading, then show it."""
    if len(arguments) != 1 or not isinstance(arguments[0], dict):
        raise refusal(InvalidArguments(f"{CREATE_COMMAND} takes one object: {{name}}."))
    name = arguments[0].get("name")
    if not isinstance(name, str):
        raise refusal(InvalidArguments(f"{CREATE_COMMAND}: name must be a string."))

    def create() -> dict[str, Any]:
        store = ls.store.fork()  # its own record of changes, for the findings
        if store.route(name)["exists"]:
            raise Exists(f"Memory {name!r} already exists; nothing was written.")
        result = store.save(name, new_memory_text(name), create_only=True)
        return answer_with_findings(store, result)[0]

    try:
        result = await ls.in_store_thread(create)
    except MemoryStoreError as error:
        raise refusal(error) from error
    ls.paths_written([result["path"]])
    window = ls.client_capabilities.window
    if window and window.show_document and window.show_document.support:
        # Not awaited: the answer to the command does not wait for the editor.
        task = asyncio.ensure_future(_show(ls, result["path"], new_memory_text(name)))
        task.add_done_callback(_log_show_failure)
    return result


async def _show(ls: MemoryServer, path: str, text: str) -> None:
    end = types.Position(line=text.count("\n"), character=0)
    await ls.window_show_document_async(
        types.ShowDocumentParams(
            uri=from_fs_path(path) or path,
            take_focus=True,
            selection=types.Range(start=end, end=end),
        )
    )


def _log_show_failure(task: asyncio.Future[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.info("the client did not show the new memory: %s", task.exception())


def _replace(
    ls: MemoryServer,
    doc: Snapshot,
    ref: Reference,
    name: str,
    diagnostic: types.Diagnostic,
    preferred: bool,
) -> tuple[str, types.CodeAction]:
    """Put `name` in place of the referenced name (its `global/` or `.md` kept)."""
    lines = doc.lines
    start, end = name_span(lines[ref.line], ref)
    edit = FileEdit(doc.uri, doc.version, lines, [Replacement(ref.line, start, end, name)])
    return (
        f"replace:{ref.line}:{start}:{name}",
        types.CodeAction(
            title=f"Change to {name}",
            kind=QUICK_FIX,
            diagnostics=[diagnostic],
            is_preferred=preferred or None,
            edit=workspace_edit(ls, [edit]),
        ),
    )
