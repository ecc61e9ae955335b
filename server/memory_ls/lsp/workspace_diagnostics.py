"""Every memory's problems without opening it: workspace diagnostics (SPEC 3.2).

Open documents get their diagnostics by push as they are typed (diagnostics.py); this
module covers the files as they are on disk, as `memory-ls check` does:

- Clients with pull diagnostics for documents and the workspace (VS Code's language
  client says so with `textDocument.diagnostic` and `workspace.diagnostics`) pull
  `workspace/diagnostic`. Each file's report has a result id; an answer holds full
  reports for what the client does not have and `unchanged` for what it does. When
  nothing changed, the request is held until something does (the client asks again
  after each answer), so a change on disk reaches the client at once, and an idle
  editor costs nothing. `textDocument/diagnostic` answers an empty report for an open
  document (its problems come by push; both would show them twice) and the file's
  report for a closed one (the client pulls once more when a document closes).
- Other clients get the closed files' reports published, as they change.

`diagnosticsScope: "openFiles"` turns this off: every report the client holds is
cleared, nothing is computed.

Other agents' files (CLAUDE.md and what it imports, MEMORY.md and its topic files,
rules, AGENTS.md...) get their reports too, as `memory-ls check` finds them on disk:
computed again (in the disk-check worker) each time the agents' files are listed again
(agents.py: files created or deleted, store or settings changes, auto memory's file
events, an agent's file closed in the editor).

The repository's `.gitattributes` gets a report too when it names memory-ls's merge
driver and this clone's git config lacks it (`missing-merge-driver`): read with the
first check of the store and again (a few stats) with each later check; while it is
reported, every SETUP_RECHECK_SECONDS too, so it goes once `memory-ls git-setup` ran.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from collections.abc import Sequence
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from memory_ls.core.operations.agent_files import KnownAgentFiles, disk_agent_diagnostics
from memory_ls.core.operations.disk_check import DiskDiagnostics
from memory_ls.core.operations.duplicates import IndexedDuplicates
from memory_ls.core.services.diagnostics import Diagnostic
from memory_ls.core.services.index import MemoryIndex, Update
from memory_ls.core.services.search import BACKGROUND_SEARCH_SHARE
from memory_ls.core.storage.watching import SerialWorker
from memory_ls.lsp import agents
from memory_ls.lsp.diagnostics import to_lsp
from memory_ls.lsp.server import MemoryServer

IDENTIFIER = "memory-ls"
# The result id of an open document's (empty) pull report.
OPEN_RESULT_ID = "open"
# While the repository's git setup has a problem, how often it is looked at again.
SETUP_RECHECK_SECONDS = 5.0

# One file's report as stored: its URI and its protocol diagnostics.
Stored = tuple[str, tuple[types.Diagnostic, ...]]

logger = logging.getLogger(__name__)


def register(server: MemoryServer) -> None:
    """Serve workspace diagnostics (pull, or push for clients without pull)."""
    reports = WorkspaceReports(server)
    server.store_listeners.append(reports.store_changed)
    server.index_listeners.append(reports.paths_changed)
    server.search_listeners.append(reports.search_changed)
    server.client_file_listeners.append(reports.repository_changed)
    agents.of(server).listeners.append(reports.agents_changed)
    server.closed_diagnostics = reports.closed
    server.disk_problems = reports.problems

    @server.feature(
        types.TEXT_DOCUMENT_DIAGNOSTIC,
        types.DiagnosticOptions(
            identifier=IDENTIFIER,
            # Links resolve against other files: a save elsewhere changes this file's report.
            inter_file_dependencies=True,
            workspace_diagnostics=True,
        ),
    )
    async def document_diagnostic(
        ls: MemoryServer, params: types.DocumentDiagnosticParams
    ) -> types.DocumentDiagnosticReport:
        return reports.document(params.text_document.uri, params.previous_result_id)

    @server.feature(types.WORKSPACE_DIAGNOSTIC)
    async def workspace_diagnostic(
        ls: MemoryServer, params: types.WorkspaceDiagnosticParams
    ) -> types.WorkspaceDiagnosticReport:
        return await reports.workspace(params.previous_result_ids)


class WorkspaceReports:
    """The on-disk reports of the current index, and who is waiting for them to change."""

    def __init__(self, ls: MemoryServer) -> None:
        self.ls = ls
        self.disk: DiskDiagnostics[Stored] | None = None
        self._checked_for: tuple[Any, ...] | None = None
        self._changed: asyncio.Event | None = None
        # URIs of closed files whose reports were published (push clients).
        self._published: set[str] = set()
        self._worker = SerialWorker("memory-ls-disk-check")
        self._setup_timer: asyncio.TimerHandle | None = None
        # Other agents' files' reports as on disk (only files with problems): path ->
        # (result id, report), the ids this instance's own.
        self._agents: dict[str, tuple[str, Stored]] = {}
        self._agents_token = uuid.uuid4().hex[:8]
        self._agents_serial = 0

    # ----- what the client is told ---------------------------------------------------

    @property
    def enabled(self) -> bool:
        """Whether closed files get diagnostics (the diagnosticsScope setting)."""
        return self.ls.settings.diagnostics_scope == "workspace"

    def pulls(self) -> bool:
        """Whether the client pulls workspace diagnostics (else they are pushed)."""
        # No capability names workspace pull itself; the refresh support is what clients
        # that pull the workspace (VS Code's) declare with it. Neovim 0.11 pulls
        # documents only: it gets pushes.
        caps = self.ls.client_capabilities
        return bool(
            caps.text_document
            and caps.text_document.diagnostic
            and caps.workspace
            and caps.workspace.diagnostics
        )

    def closed(self, uri: str) -> list[types.Diagnostic]:
        """What a document shows once closed, for a client that is pushed to."""
        disk = self.disk
        if self.pulls() or not self.enabled or disk is None:
            return []
        _, stored = self._report(disk, to_fs_path(uri) or "")
        if stored is None:
            return []
        self._published.add(uri)
        return list(stored[1])

    def problems(self) -> dict[str, tuple[str, ...]]:
        """Each file's problem codes by path (files with none are left out)."""
        disk = self.disk if self.enabled else None
        if disk is None:
            return {}
        return {
            path: tuple(str(d.code) for d in stored[1])
            for path, (_result_id, stored) in self._current(disk).items()
        }

    def document(self, uri: str, previous: str | None) -> types.DocumentDiagnosticReport:
        """A document pull: empty while open (pushed as typed), else the file's report."""
        stored: Stored | None = None
        if uri in self.ls.workspace.text_documents:
            result_id = OPEN_RESULT_ID
        elif self.disk is not None and self.enabled:
            result_id, stored = self._report(self.disk, to_fs_path(uri) or "")
        else:
            result_id = "off"
        if previous == result_id:
            return types.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
        return types.RelatedFullDocumentDiagnosticReport(
            items=list(stored[1]) if stored else [], result_id=result_id
        )

    async def workspace(
        self, previous: Sequence[types.PreviousResultId]
    ) -> types.WorkspaceDiagnosticReport:
        """Full reports for what the client lacks, `unchanged` for the rest; held until
        there is something new to say."""
        known = {os.path.normpath(to_fs_path(p.uri) or p.uri): (p.uri, p.value) for p in previous}
        while True:
            changed = self._event()
            disk = self.disk if self.enabled else None
            if self.enabled and (disk is None or not disk.complete):
                await changed.wait()  # the first check of the store is still running
                continue
            items, news = await self.ls.in_store_thread(
                _answer, disk, known, dict(self._agents) if disk is not None else {}
            )
            if news:
                return types.WorkspaceDiagnosticReport(items=items)
            await changed.wait()

    def _report(self, disk: DiskDiagnostics[Stored], path: str) -> tuple[str, Stored | None]:
        """(result id, report) of one file: a memory's (or the git setup's), else an
        agent file's."""
        result_id, stored = disk.report(path)
        if stored is None:
            known = self._agents.get(os.path.normpath(path)) if self.enabled else None
            if known is not None:
                return known
        return result_id, stored

    def _current(self, disk: DiskDiagnostics[Stored] | None) -> dict[str, tuple[str, Stored]]:
        """Path -> (result id, report) of every file with problems (none while the first
        check of the store runs)."""
        if disk is None or not self.enabled:
            return {}
        return {**self._agents, **disk.reports()}

    def _event(self) -> asyncio.Event:
        if self._changed is None:
            self._changed = asyncio.Event()
        return self._changed

    def _wake(self) -> None:
        """Tell held workspace requests that reports changed."""
        if self._changed is not None:
            self._changed.set()
        self._changed = None

    # ----- keeping the reports current -----------------------------------------------

    def store_changed(self) -> None:
        """Settings or the index changed: check the whole store again if it is a new one."""
        ls = self.ls
        key = (ls.index, ls.config, self.enabled)
        if key == self._checked_for or not ls.index.scanned:
            return
        self._checked_for = key
        self.disk = None
        if not self.enabled:
            self._wake()
            self._publish_changes(set(), everything=True)
            return
        disk = DiskDiagnostics(ls.index, self._convert, IndexedDuplicates(ls.store))
        self.disk = disk

        def check() -> None:
            # Reading every file, as a first indexing does: searches meanwhile go first.
            pause = ls.search_index.turns.pauser(BACKGROUND_SEARCH_SHARE)

            def stop() -> bool:
                pause()
                return self.disk is not disk

            changed = disk.check_all(cancelled=stop)
            if changed is not None:
                ls.on_loop(lambda: self._checked(disk, changed, everything=True))

        self._worker.submit(check)

    def agents_changed(self, known: KnownAgentFiles) -> None:
        """The agents' files were listed again: their reports as on disk (in the worker)."""
        config = self.ls.config
        enabled = self.enabled

        def recheck() -> None:
            found = disk_agent_diagnostics(config, known) if enabled else {}
            reports = {
                path: self._convert(path, problems, text)
                for path, (problems, text) in found.items()
            }
            self.ls.on_loop(lambda: self._agents_checked(reports))

        self._worker.submit(recheck)

    def _agents_checked(self, reports: dict[str, Stored]) -> None:
        if self.ls.stopping:
            return
        changed: set[str] = set()
        for path in [p for p in self._agents if p not in reports]:
            del self._agents[path]
            changed.add(path)
        for path, report in reports.items():
            old = self._agents.get(path)
            if old is None or old[1] != report:
                self._agents_serial += 1
                self._agents[path] = (f"{self._agents_token}:{self._agents_serial}", report)
                changed.add(path)
        if changed and self.disk is not None:
            self._wake()
            self._publish_changes(changed, everything=False)

    def repository_changed(self, paths: list[str]) -> None:
        """The client reported workspace files created or removed (stale-path)."""
        disk = self.disk
        if disk is None or not paths:
            return

        def recheck() -> None:
            if self.disk is disk:
                changed = disk.repository_changed(paths)
                self.ls.on_loop(lambda: self._checked(disk, changed))

        self._worker.submit(recheck)

    def paths_changed(self, index: MemoryIndex, paths: set[str], update: Update) -> None:
        """Files changed on disk: recheck what they can affect."""
        disk = self.disk
        if disk is None or disk.index is not index:
            return

        def recheck() -> None:
            if self.disk is disk:
                changed = disk.update(paths, update)
                self.ls.on_loop(lambda: self._checked(disk, changed))

        self._worker.submit(recheck)

    def search_changed(self, paths: set[str] | None) -> None:
        """The full-text index took in changed files (None: all): near-duplicates follow."""
        disk = self.disk
        if disk is None or disk.index is not self.ls.index:
            return

        def recheck() -> None:
            if self.disk is disk and disk.complete:
                changed = disk.duplicates_changed(paths)
                self.ls.on_loop(lambda: self._checked(disk, changed))

        self._worker.submit(recheck)

    def _checked(
        self, disk: DiskDiagnostics[Stored], changed: set[str], everything: bool = False
    ) -> None:
        if disk is not self.disk or self.ls.stopping:
            return
        self._wake()
        self._publish_changes(changed, everything)
        self._follow_setup(disk)

    def _follow_setup(self, disk: DiskDiagnostics[Stored]) -> None:
        """While the git setup has a problem, look again in a while (in the worker)."""
        loop = self.ls.loop
        if self._setup_timer is not None or loop is None or not disk.setup_reported():
            return

        def recheck() -> None:
            if self.disk is disk:
                changed = disk.setup_changed()
                self.ls.on_loop(lambda: self._setup_checked(disk, changed))

        def due() -> None:
            self._setup_timer = None
            if disk is self.disk and not self.ls.stopping:
                self._worker.submit(recheck)

        self._setup_timer = loop.call_later(SETUP_RECHECK_SECONDS, due)

    def _setup_checked(self, disk: DiskDiagnostics[Stored], changed: set[str]) -> None:
        if changed:
            self._checked(disk, changed)
        elif disk is self.disk and not self.ls.stopping:
            self._follow_setup(disk)

    def _publish_changes(self, changed: set[str], everything: bool) -> None:
        """Push the closed files' changed reports to a client that does not pull."""
        ls = self.ls
        if self.pulls() or ls.stopping:
            return
        current = self._current(self.disk)
        uris = {stored[0] for _, stored in current.values()}
        if everything:
            # A new check of the store (or none): what was published and is gone, clears.
            targets = {from_fs_path(path) or path for path in changed} | uris | self._published
        else:
            targets = {from_fs_path(path) or path for path in changed}
        by_uri = {stored[0]: list(stored[1]) for _, stored in current.values()}
        for uri in sorted(targets):
            if uri in ls.workspace.text_documents:
                continue  # an open document shows its text's problems
            found = by_uri.get(uri, [])
            if found:
                self._published.add(uri)
            elif uri in self._published:
                self._published.discard(uri)
            else:
                continue
            ls.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=found)
            )

    def _convert(self, path: str, found: list[Diagnostic], text: str | None) -> Stored:
        lines = text.split("\n") if text is not None else []
        return (from_fs_path(path) or path, tuple(to_lsp(self.ls, found, lines)))


def _answer(
    disk: DiskDiagnostics[Stored] | None,
    known: dict[str, tuple[str, str]],
    agent_reports: dict[str, tuple[str, Stored]],
) -> tuple[list[types.WorkspaceDocumentDiagnosticReport], bool]:
    """The items of a workspace report (the memories' and the agents' files'), and whether
    any is news to the client."""
    items: list[types.WorkspaceDocumentDiagnosticReport] = []
    news = False
    current = {**agent_reports, **disk.reports()} if disk is not None else {}
    clean_id = disk.clean_id if disk is not None else "off"
    for path, (result_id, (uri, found)) in current.items():
        had = known.get(path)
        if had is not None and had[1] == result_id:
            items.append(
                types.WorkspaceUnchangedDocumentDiagnosticReport(
                    uri=had[0], result_id=result_id, version=None
                )
            )
        else:
            news = True
            items.append(
                types.WorkspaceFullDocumentDiagnosticReport(
                    uri=uri, items=list(found), result_id=result_id, version=None
                )
            )
    for path, (uri, had_id) in known.items():
        if path in current:
            continue
        if had_id == clean_id:
            items.append(
                types.WorkspaceUnchangedDocumentDiagnosticReport(
                    uri=uri, result_id=clean_id, version=None
                )
            )
        else:
            # Its problems are gone (fixed, deleted, or the scope is open files only).
            news = True
            items.append(
                types.WorkspaceFullDocumentDiagnosticReport(
                    uri=uri, items=[], result_id=clean_id, version=None
                )
            )
    return items, news
