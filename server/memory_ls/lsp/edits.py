"""Workspace edits in the shape the client accepts: versioned `documentChanges` (with file
renames) where it can apply them, else plain `changes`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lsprotocol import types

from memory_ls.core.operations.navigation import (
    Replacement,
    move_references,
    reference_replacements,
)
from memory_ls.core.rules.references import Reference
from memory_ls.core.services.backlinks import serena_key
from memory_ls.core.storage.memory import MovePlan
from memory_ls.lsp.server import MemoryServer
from memory_ls.lsp.targets import OpenText, file_uri, search
from memory_ls.lsp.text import client_range


@dataclass(frozen=True)
class FileEdit:
    """Replacements in one file, with the version of the text they were computed on."""

    uri: str
    version: int | None
    lines: list[str]
    replacements: list[Replacement]


def _workspace_edit_capability(ls: MemoryServer) -> types.WorkspaceEditClientCapabilities | None:
    workspace = ls.client_capabilities.workspace
    return workspace.workspace_edit if workspace else None


def can_rename_files(ls: MemoryServer) -> bool:
    """Whether the client applies RenameFile operations in a workspace edit."""
    capability = _workspace_edit_capability(ls)
    operations = capability.resource_operations if capability else None
    return types.ResourceOperationKind.Rename in (operations or ())


def uses_document_changes(ls: MemoryServer) -> bool:
    """Whether the client takes versioned `documentChanges`."""
    capability = _workspace_edit_capability(ls)
    return bool(capability and capability.document_changes)


def text_edits(ls: MemoryServer, edit: FileEdit) -> list[types.TextEdit]:
    """The replacements of one file as LSP text edits (client units)."""
    return [
        types.TextEdit(
            range=client_range(ls, edit.lines, r.line, r.start, r.line, r.end), new_text=r.text
        )
        for r in edit.replacements
    ]


def workspace_edit(
    ls: MemoryServer, files: Sequence[FileEdit], renames: Sequence[tuple[str, str]] = ()
) -> types.WorkspaceEdit:
    """Text edits, then file renames (old path, new path): the edits address the old files."""
    if not renames and not uses_document_changes(ls):
        return types.WorkspaceEdit(changes={f.uri: text_edits(ls, f) for f in files})
    changes: list[
        types.TextDocumentEdit | types.CreateFile | types.RenameFile | types.DeleteFile
    ] = [
        types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(
                uri=f.uri, version=f.version
            ),
            edits=list(text_edits(ls, f)),
        )
        for f in files
    ]
    changes.extend(
        types.RenameFile(
            old_uri=file_uri(old),
            new_uri=file_uri(new),
            options=types.RenameFileOptions(overwrite=False, ignore_if_exists=False),
        )
        for old, new in renames
    )
    return types.WorkspaceEdit(document_changes=changes)


def merge_edits(first: Sequence[FileEdit], second: Sequence[FileEdit]) -> list[FileEdit]:
    """Both lists' edits, one per file: where both change a file, the first's text and
    version, with the second's replacements that overlap none of the first's."""
    merged = list(first)
    where = {edit.uri: number for number, edit in enumerate(merged)}
    for edit in second:
        number = where.get(edit.uri)
        if number is None:
            where[edit.uri] = len(merged)
            merged.append(edit)
            continue
        kept = merged[number]
        extra = [r for r in edit.replacements if not any(_overlap(r, o) for o in kept.replacements)]
        replacements = sorted([*kept.replacements, *extra], key=lambda r: (r.line, r.start))
        merged[number] = FileEdit(kept.uri, kept.version, kept.lines, replacements)
    return merged


def _overlap(one: Replacement, other: Replacement) -> bool:
    return one.line == other.line and one.start < other.end and other.start < one.end


def plan_edit(
    ls: MemoryServer,
    plans: Sequence[MovePlan],
    open_texts: Mapping[str, OpenText],
    move_files: bool,
) -> types.WorkspaceEdit:
    """The edit that carries out moves: every reference rewritten, then (optionally) the files
    renamed. Blocking (reads the store): run it in a store thread."""
    files = plan_files(ls, plans, open_texts)
    renames = [(plan.source.path, plan.target) for plan in plans] if move_files else []
    return workspace_edit(ls, files, renames)


def plan_files(
    ls: MemoryServer, plans: Sequence[MovePlan], open_texts: Mapping[str, OpenText]
) -> list[FileEdit]:
    """The reference rewrites that moves call for, by file (blocking: reads the store)."""

    def matches(ref: Reference) -> bool:
        return any(plan.points_here(ref) for plan in plans)

    def new_text(ref: Reference) -> str:
        return next(plan.new_text(ref) for plan in plans if plan.points_here(ref))

    def refs_in(text: str) -> list[Reference]:
        return move_references(text, plans)

    # Several names (a folder renamed): no single name to pre-filter files with.
    needle = plans[0].source.name if len(plans) == 1 else ""
    # The files that link to a moved name, or mention it as Serena's rename finds it.
    keys = [
        key for plan in plans for key in (plan.source.qualified, serena_key(plan.source.qualified))
    ]
    files: list[FileEdit] = []
    for found in search(ls, open_texts, matches, needle, keys, refs_in):
        # As memory.move does: memories in read-only folders keep their text.
        if found.memory is not None and found.memory.read_only:
            continue
        replacements = reference_replacements(found.text, found.refs, new_text)
        if replacements:
            files.append(FileEdit(found.uri, found.version, found.lines, replacements))
    return files
