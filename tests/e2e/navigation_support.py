"""Helpers of the navigation e2e tests: positions in the client's units, and an editor that
applies workspace edits as a client does (text edits, then file operations), saves them,
and tells the server what changed on disk."""

from __future__ import annotations

import asyncio
import itertools
import os
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from e2e_support import Session, Workspace
from lsprotocol import types
from pygls.uris import to_fs_path

from memory_ls.config import merge_layers, parse_layer
from memory_ls.core import Store, resolve_store_config


def store_of(workspace: Workspace, options: dict[str, Any]) -> Store:
    """The store the server sees with these initialization options (for checking the disk)."""
    settings = merge_layers(parse_layer(options, "initializationOptions"))
    return Store(resolve_store_config(settings, str(workspace.root)))


def encoding(session: Session) -> str:
    """The position encoding the server chose."""
    assert session.initialized is not None
    return session.initialized.capabilities.position_encoding or "utf-16"


def position(session: Session, text: str, needle: str, offset: int = 0) -> types.Position:
    """Where `needle` (its first occurrence, plus `offset` characters) is, in client units."""
    at = text.index(needle) + offset
    line = text.count("\n", 0, at)
    start = text.rfind("\n", 0, at) + 1
    return types.Position(line=line, character=session.units(text[start:at]))


def span(session: Session, text: str, needle: str, start: str | None = None) -> types.Range:
    """The range of `needle`, searched from the first occurrence of `start` (if given)."""
    base = text.index(start) if start is not None else 0
    at = text.index(needle, base)
    line = text.count("\n", 0, at)
    line_start = text.rfind("\n", 0, at) + 1
    return types.Range(
        start=types.Position(line=line, character=session.units(text[line_start:at])),
        end=types.Position(line=line, character=session.units(text[line_start : at + len(needle)])),
    )


async def code_actions(
    session: Session, params: types.CodeActionParams
) -> list[types.CodeAction | types.Command]:
    """textDocument/codeAction, read as an editor reads the answer."""
    protocol = session.client.protocol
    msg_id = str(uuid.uuid4())
    answer = protocol.send_request(types.TEXT_DOCUMENT_CODE_ACTION, params, msg_id=msg_id)
    # lsprotocol reads every code action that carries a command as a Command (its union
    # hook only looks for a "command" key) and loses the action. Take the raw JSON and tell
    # the two apart by the type of "command", as the LSP specification has clients do.
    protocol._result_types[msg_id] = None
    raw = await asyncio.wrap_future(answer)
    converter = protocol._converter
    actions: list[types.CodeAction | types.Command] = []
    for item in raw or []:
        if isinstance(item.get("command"), str):
            actions.append(converter.structure(item, types.Command))
        else:
            actions.append(converter.structure(item, types.CodeAction))
    return actions


def _code_points(line: str, units: int, kind: str) -> int:
    """A column in the client's units as a code-point index of the line."""
    if kind == "utf-32":
        return units
    count = 0
    for index, char in enumerate(line):
        if count >= units:
            return index
        count += (
            len(char.encode("utf-8")) if kind == "utf-8" else len(char.encode("utf-16-le")) // 2
        )
    return len(line)


def apply_text_edits(text: str, edits: Sequence[types.TextEdit], kind: str) -> str:
    """Apply LSP text edits (all computed on `text`) as a client does."""
    lines = text.split("\n")

    def offset(at: types.Position) -> int:
        before = sum(len(line) + 1 for line in lines[: at.line])
        return before + _code_points(lines[at.line], at.character, kind)

    spans = sorted((offset(e.range.start), offset(e.range.end), e.new_text) for e in edits)
    for (_s1, end1, _t1), (start2, _e2, _t2) in itertools.pairwise(spans):
        assert end1 <= start2, f"overlapping edits: {edits}"
    for start, end, new in reversed(spans):
        text = text[:start] + new + text[end:]
    return text


class Editor:
    """Documents open in the client (with versions) and the edits it applies and saves."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.documents: dict[Path, tuple[str, int]] = {}
        # How many publications there were when each document was opened (a document
        # opened again starts again at version 1).
        self.opened_at: dict[Path, int] = {}

    def open(self, path: Path, text: str | None = None) -> str:
        """Open a file (its disk text unless given); return its URI."""
        content = path.read_text(encoding="utf-8") if text is None else text
        self.documents[path] = (content, 1)
        self.opened_at[path] = len(self.session.published)
        return self.session.open(str(path), content)

    def publications(self, path: Path) -> list[types.PublishDiagnosticsParams]:
        """Diagnostics published for the open document's current version."""
        uri, version = path.as_uri(), self.version(path)
        since = self.session.published[self.opened_at.get(path, 0) :]
        return [p for p in since if p.uri == uri and p.version == version]

    def close(self, path: Path) -> None:
        """Close a document (unsaved text is dropped)."""
        del self.documents[path]
        self.session.close(path.as_uri())

    def close_all(self) -> None:
        """Close every document this editor opened."""
        for path in list(self.documents):
            self.close(path)

    def version(self, path: Path) -> int | None:
        """The open document's version, None when it is not open."""
        known = self.documents.get(path)
        return known[1] if known else None

    def apply(self, edit: types.WorkspaceEdit) -> list[Path]:
        """Apply and save a workspace edit; return the paths changed on disk."""
        kind = encoding(self.session)
        events: list[types.FileEvent] = []
        touched: list[Path] = []
        for uri, edits in (edit.changes or {}).items():
            touched.append(self._edit(_path(uri), edits, None, kind, events))
        for change in edit.document_changes or ():
            if isinstance(change, types.TextDocumentEdit):
                edits = [e for e in change.edits if isinstance(e, types.TextEdit)]
                assert len(edits) == len(change.edits), change
                path = _path(change.text_document.uri)
                touched.append(self._edit(path, edits, change.text_document.version, kind, events))
            elif isinstance(change, types.RenameFile):
                touched.extend(self._rename(change, events))
            else:
                raise AssertionError(f"unexpected change {change}")
        if events:
            self.session.client.workspace_did_change_watched_files(
                types.DidChangeWatchedFilesParams(changes=events)
            )
        return touched

    def _edit(
        self,
        path: Path,
        edits: Sequence[types.TextEdit],
        version: int | None,
        kind: str,
        events: list[types.FileEvent],
    ) -> Path:
        open_version = self.version(path)
        if version is not None:
            assert version == open_version, f"edit for version {version} of {path}"
        text = (
            self.documents[path][0]
            if open_version is not None
            else path.read_text(encoding="utf-8")
        )
        new = apply_text_edits(text, edits, kind)
        if open_version is not None:
            self.documents[path] = (new, open_version + 1)
            self.session.replace_text(path.as_uri(), new, open_version + 1)
        path.write_text(new, encoding="utf-8")  # saved, as "save all" after a rename
        events.append(types.FileEvent(uri=path.as_uri(), type=types.FileChangeType.Changed))
        return path

    def _rename(self, change: types.RenameFile, events: list[types.FileEvent]) -> list[Path]:
        old, new = _path(change.old_uri), _path(change.new_uri)
        assert change.options is None or not change.options.overwrite
        assert old.is_file() and not new.exists(), (old, new)
        new.parent.mkdir(parents=True, exist_ok=True)
        os.rename(old, new)
        events.append(types.FileEvent(uri=change.old_uri, type=types.FileChangeType.Deleted))
        events.append(types.FileEvent(uri=change.new_uri, type=types.FileChangeType.Created))
        if old in self.documents:
            text, _version = self.documents[old]
            self.close(old)
            self.open(new, text)
        return [old, new]


def _path(uri: str) -> Path:
    assert uri.startswith("file://"), uri
    path = to_fs_path(uri)
    assert path is not None
    return Path(path)
