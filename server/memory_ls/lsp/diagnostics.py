"""Diagnostics (SPEC 3.2) for open Markdown documents, debounced while typing.

An edit after a pause is checked at once; edits that follow each other quickly are
coalesced into one run a moment after the last of them.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from collections.abc import Sequence
from urllib.parse import unquote

from lsprotocol import types
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from memory_ls.core.operations.agent_files import KnownAgentFiles, live_agent_diagnostics
from memory_ls.core.operations.duplicates import near_duplicate_diagnostics
from memory_ls.core.rules.supersede import Relations
from memory_ls.core.services.diagnostics import (
    Diagnostic,
    LineScans,
    apply_severities,
    editor_encoding_problem,
    text_diagnostics,
)
from memory_ls.core.services.index import MemoryIndex, Update
from memory_ls.lsp import agents
from memory_ls.lsp.server import MemoryServer
from memory_ls.lsp.text import client_range

SOURCE = "memory-ls"
# Edits closer together than this are typing: checked once, this long after the last.
TYPING_DELAY_SECONDS = 0.2
# Coalesces a burst of file events (an agent writing many memories) into one refresh.
REFRESH_DELAY_SECONDS = 0.05

_HEADING_LINK = re.compile(r"\[\[[^\[\]|\n]*#")

SEVERITIES = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}

logger = logging.getLogger(__name__)


def register(server: MemoryServer) -> None:
    """Register the document handlers that publish diagnostics."""
    publisher = Publisher(server)
    server.store_listeners.append(publisher.refresh_all)
    # Near-duplicates are found through the full-text index: re-published as it catches up.
    server.search_listeners.append(publisher.search_changed)
    server.index_listeners.append(publisher.paths_changed)
    # Other agents' files are checked against the set last listed: again when it changes.
    agents.of(server).listeners.append(publisher.agent_files_changed)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: MemoryServer, params: types.DidOpenTextDocumentParams) -> None:
        publisher.schedule(params.text_document.uri, 0.0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: MemoryServer, params: types.DidChangeTextDocumentParams) -> None:
        publisher.edited(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: MemoryServer, params: types.DidCloseTextDocumentParams) -> None:
        publisher.clear(params.text_document.uri)


def is_markdown(uri: str, language_id: str | None) -> bool:
    """Whether a document is Markdown (by language, else by file name)."""
    # Cursor's rules (`.mdc`) are Markdown with frontmatter, but editors other than Cursor
    # know no language for them (VS Code opens them as plain text).
    if uri.lower().endswith(".mdc"):
        return True
    if language_id:
        return language_id == "markdown"
    return uri.lower().endswith((".md", ".markdown"))


# Characters of an open note whose near-duplicates are looked for again on every edit.
NEAR_EDIT_LIMIT = 64 * 1024


class Publisher:
    """Computes and publishes the diagnostics of open documents, at most one run per document."""

    def __init__(self, ls: MemoryServer) -> None:
        self.ls = ls
        self._timers: dict[str, asyncio.TimerHandle] = {}
        self._refresh: asyncio.TimerHandle | None = None
        self._last_edit: dict[str, float] = {}  # loop time of each document's last edit
        # Each open document's line scans, so an edit reads the changed lines only.
        self._scans: dict[str, LineScans] = {}
        # The supersede relations on disk the open documents were last checked against.
        self._relations: frozenset[tuple[str, Relations]] | None = None
        # Each open document's near-duplicates, with the index generation they were found
        # in: a long note's are found again only when the index changes (its save).
        self._near: dict[str, tuple[int, list[Diagnostic]]] = {}
        self._near_generation = 0
        # Open documents that got the agent checks (agents' files, files CLAUDE.md imports).
        self._agent_uris: set[str] = set()

    def edited(self, uri: str) -> None:
        """A document changed: check it now after a pause, else after the typing stops."""
        now = asyncio.get_running_loop().time()
        typing = now - self._last_edit.get(uri, -TYPING_DELAY_SECONDS) < TYPING_DELAY_SECONDS
        self._last_edit[uri] = now
        # A run still waiting for an earlier edit means typing too: that run moves on.
        if typing or uri in self._timers:
            self.schedule(uri, TYPING_DELAY_SECONDS)
        else:
            self.schedule(uri, 0.0)

    def schedule(self, uri: str, delay: float) -> None:
        """Publish a document's diagnostics after `delay` seconds of quiet."""
        loop = asyncio.get_running_loop()
        timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        self._timers[uri] = loop.call_later(delay, self._start, uri)

    def refresh_all(self) -> None:
        """Re-publish every open document: the store or the settings changed."""
        if self._refresh is not None:
            self._refresh.cancel()
        loop = asyncio.get_running_loop()
        self._refresh = loop.call_later(REFRESH_DELAY_SECONDS, self._refresh_now)

    def search_changed(self, paths: set[str] | None) -> None:
        """The full-text index took in changed files: open memories may have new
        near-duplicates (or lost some)."""
        self._near_generation += 1
        if self.ls.config.severities.get("near-duplicate") != "off" and any(
            self.ls.index.memory_for(to_fs_path(d.uri) or "") is not None
            for d in list(self.ls.workspace.text_documents.values())
        ):
            self.refresh_all()

    def _refresh_now(self) -> None:
        self._refresh = None
        for document in list(self.ls.workspace.text_documents.values()):
            self.schedule(document.uri, 0.0)

    def paths_changed(self, index: MemoryIndex, paths: set[str], update: Update) -> None:
        """Files changed on disk: when the supersede relations changed with them, an open
        memory may have become superseded (or no longer be): check the open documents."""
        if not update.changed or not self.ls.workspace.text_documents:
            return
        # A `[[note#Heading]]` is checked against the note's headings on disk: whether it
        # is broken may have changed with the files.
        for document in list(self.ls.workspace.text_documents.values()):
            if "#" in document.source and _HEADING_LINK.search(document.source):
                self.schedule(document.uri, REFRESH_DELAY_SECONDS)
        task = asyncio.ensure_future(self._check_relations(index))
        task.add_done_callback(_log_failure)

    async def _check_relations(self, index: MemoryIndex) -> None:
        def relations_now() -> frozenset[tuple[str, Relations]]:
            index.learn_links()  # the changed files' relations are read again
            return frozenset((d.name, d.relations) for d in index.declarations())

        now = await self.ls.in_store_thread(relations_now)
        if index is self.ls.index and now != self._relations:
            self._relations = now
            self.refresh_all()

    def agent_files_changed(self, known: KnownAgentFiles) -> None:
        """The agents' files were listed again (files came or went): check the open ones."""
        for document in list(self.ls.workspace.text_documents.values()):
            path = os.path.normpath(to_fs_path(document.uri) or "")
            if document.uri in self._agent_uris or (
                known.related(path) and self.ls.index.memory_for(path) is None
            ):
                self.schedule(document.uri, 0.0)

    def clear(self, uri: str) -> None:
        """Forget a closed document and clear what it showed."""
        if uri in self._agent_uris:
            # Likely saved: the agents' files' reports on disk are made again.
            self._agent_uris.discard(uri)
            agents.of(self.ls).refresh()
        self._last_edit.pop(uri, None)
        self._scans.pop(uri, None)
        self._near.pop(uri, None)
        timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        self.ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=self.ls.closed_diagnostics(uri))
        )

    def _start(self, uri: str) -> None:
        self._timers.pop(uri, None)
        if self.ls.stopping:
            return
        document = open_document(self.ls, uri)
        if document is None or not is_markdown(uri, document.language_id):
            return
        if not self.ls.index.scanned:
            return  # the end of the scan refreshes every open document
        task = asyncio.ensure_future(self._publish(uri, document.source, document.version))
        task.add_done_callback(_log_failure)

    async def _publish(self, uri: str, text: str, version: int | None) -> None:
        found = await self.ls.in_store_thread(self._compute, uri, text)
        document = open_document(self.ls, uri)
        if document is None or document.version != version:
            return  # closed or edited meanwhile; a newer run is scheduled
        lines = text.split("\n")
        self.ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(
                uri=uri,
                version=version,
                diagnostics=to_lsp(self.ls, found, lines),
            )
        )

    def _compute(self, uri: str, text: str) -> Sequence[Diagnostic]:
        """Run the core checks on a document's text (in a store thread)."""
        ls = self.ls
        path = to_fs_path(uri) or ""
        index = ls.index
        memory = index.memory_for(path) if path else None
        encoding = (
            editor_encoding_problem(path, text, ls.config.max_memory_bytes) if memory else None
        )
        if memory is not None:
            # Files changed on disk and not read since are read first (few): their relations.
            index.learn_links()
        found = text_diagnostics(
            ls.config,
            index.name_index(),
            path,
            text,
            memory,
            index.shadowed_by(),
            encoding_problem=encoding,
            scans=self._scans.setdefault(uri, LineScans()),
            supersedes=index.supersede_graph() if memory is not None else None,
        )
        if memory is not None and memory.valid and encoding is None:
            found.extend(self._near_duplicates(uri, path, memory.qualified, text))
        if memory is None and path:
            found.extend(self._agent_checks(uri, path, text, found))
        return apply_severities(found, ls.config.severities)

    def _agent_checks(
        self, uri: str, path: str, text: str, found: Sequence[Diagnostic]
    ) -> list[Diagnostic]:
        """An agent's file's problems (CLAUDE.md, MEMORY.md, rules...), as `check` finds
        them, with this text; none for other files or before the files are listed."""
        known = agents.of(self.ls).current
        live = (
            live_agent_diagnostics(self.ls.config, known, os.path.normpath(path), text)
            if known is not None
            else None
        )
        if live is None:
            self._agent_uris.discard(uri)
            return []
        self._agent_uris.add(uri)
        had = {(d.line, d.col, d.code) for d in found}
        return [d for d in live if (d.line, d.col, d.code) not in had]

    def _near_duplicates(self, uri: str, path: str, name: str, text: str) -> list[Diagnostic]:
        """An open memory's near-duplicates: found again on every edit of a short note; a
        long one's (1 MB: 90 ms of shingling) only when the index has changed since."""
        generation = self._near_generation
        known = self._near.get(uri)
        if known is not None and known[0] == generation and len(text) > NEAR_EDIT_LIMIT:
            return known[1]
        found = near_duplicate_diagnostics(self.ls.store, path, name, text, scan_fallback=False)
        self._near[uri] = (generation, found)
        return found


def to_lsp(
    ls: MemoryServer, found: Sequence[Diagnostic], lines: list[str]
) -> list[types.Diagnostic]:
    """Core diagnostics of a text (split into `lines`) as protocol diagnostics."""
    return [
        types.Diagnostic(
            range=client_range(ls, lines, d.line, d.col, d.end_line, d.end_col),
            message=d.message,
            severity=SEVERITIES.get(d.severity, types.DiagnosticSeverity.Warning),
            code=d.code,
            source=SOURCE,
            data=dict(d.data) or None,
        )
        for d in found
    ]


def open_document(ls: MemoryServer, uri: str) -> TextDocument | None:
    """An open document by the URI the client gave; None when it is not open."""
    # pygls keys documents by the percent-decoded URI (a name with a space, `%` or an
    # emoji is spelled either way), and keeps the client's spelling in `document.uri`.
    document: TextDocument | None = ls.workspace.text_documents.get(unquote(uri))
    return document


def _log_failure(task: asyncio.Future[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.error("publishing diagnostics failed", exc_info=task.exception())
