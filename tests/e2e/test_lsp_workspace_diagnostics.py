"""Workspace diagnostics: every memory's problems without opening a file (pull and push)."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

import attrs
from e2e_support import Session, Workspace, make_workspace, session, wait_until, write_file
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled
from pygls.uris import to_fs_path
from pytest_lsp import client_capabilities

HELD = 0.5  # how long a request with nothing new must stay unanswered


def pull_capabilities() -> types.ClientCapabilities:
    """What vscode-languageclient 9 declares: VS Code's profile plus pull diagnostics."""
    caps = client_capabilities("visual-studio-code")
    text_document = attrs.evolve(
        caps.text_document,
        diagnostic=types.DiagnosticClientCapabilities(
            dynamic_registration=True, related_document_support=False
        ),
    )
    workspace = attrs.evolve(
        caps.workspace,
        diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True),
    )
    return attrs.evolve(caps, text_document=text_document, workspace=workspace)


def problem_workspace(base: Path) -> Workspace:
    """The standard workspace plus memories with problems on disk."""
    ws = make_workspace(base)
    ws.write(".serena/memories/BUGFIX_login.md", "# Bug\n")
    ws.write(".serena/memories/FEATURE_search.md", "# Search\n")
    ws.write(".serena/memories/bad:draft.md", "# Draft\n")
    ws.write(".serena/memories/plans.md", "# Plans\nSee [[later_note]].\n")
    return ws


def by_file(
    items: Sequence[types.WorkspaceDocumentDiagnosticReport],
) -> dict[str, types.WorkspaceDocumentDiagnosticReport]:
    """Reports by file name."""
    return {Path(to_fs_path(item.uri) or item.uri).name: item for item in items}


def codes(item: types.WorkspaceDocumentDiagnosticReport) -> list[str]:
    """The codes of a full report."""
    assert isinstance(item, types.WorkspaceFullDocumentDiagnosticReport), item
    return sorted(str(d.code) for d in item.items)


def previous(
    items: Sequence[types.WorkspaceDocumentDiagnosticReport],
) -> list[types.PreviousResultId]:
    """The result ids a client sends back after these reports."""
    return [types.PreviousResultId(uri=i.uri, value=i.result_id or "") for i in items]


def pull(
    server: Session, known: list[types.PreviousResultId]
) -> asyncio.Future[types.WorkspaceDiagnosticReport]:
    """Send workspace/diagnostic (the answer may be held until something changes)."""
    return asyncio.ensure_future(
        server.client.workspace_diagnostic_async(
            types.WorkspaceDiagnosticParams(previous_result_ids=known, identifier="memory-ls")
        )
    )


async def held(request: asyncio.Future[types.WorkspaceDiagnosticReport]) -> bool:
    """Whether a request is still unanswered after HELD seconds."""
    done, _ = await asyncio.wait({request}, timeout=HELD)
    return not done


def write_by_another_process(path: Path, text: str) -> None:
    """Write a file from a separate process, as an agent would."""
    subprocess.run(
        [sys.executable, "-c", "import sys; open(sys.argv[1], 'w').write(sys.argv[2])", path, text],
        check=True,
    )


async def test_full_then_unchanged_and_changes_on_disk(tmp_path: Path) -> None:
    ws = problem_workspace(tmp_path)
    async with session(ws, capabilities=pull_capabilities()) as server:
        caps = server.initialized.capabilities if server.initialized else None
        assert caps is not None and isinstance(caps.diagnostic_provider, types.DiagnosticOptions)
        assert caps.diagnostic_provider.workspace_diagnostics
        first = (await pull(server, [])).items
        reports = by_file(first)
        assert sorted(reports) == [
            "BUGFIX_login.md",
            "FEATURE_search.md",
            "bad:draft.md",
            "plans.md",
        ]
        assert codes(reports["BUGFIX_login.md"]) == ["unknown-prefix"]
        assert codes(reports["FEATURE_search.md"]) == ["misrouted"]
        assert codes(reports["bad:draft.md"]) == ["invalid-name"]
        assert codes(reports["plans.md"]) == ["broken-link"]
        assert all(item.result_id for item in first)
        assert server.published == []  # a pulling client is not pushed to

        # Nothing new: the request is held, not answered with the same reports again.
        waiting = pull(server, previous(first))
        assert await held(waiting)
        # Another process fixes one file and breaks another.
        write_by_another_process(ws.primary / "BUGFIX_login.md", "# Bug\nfixed, see [[nope]]\n")
        write_by_another_process(ws.primary / "bad:draft.md", "# Draft\n")  # same text: no news
        second = by_file((await asyncio.wait_for(waiting, 5)).items)
        assert codes(second["BUGFIX_login.md"]) == ["broken-link", "unknown-prefix"]
        for name in ("bad:draft.md", "FEATURE_search.md", "plans.md"):
            assert isinstance(second[name], types.WorkspaceUnchangedDocumentDiagnosticReport)
            assert second[name].result_id == reports[name].result_id

        # A memory that appears resolves the links to it; a deleted one clears.
        view = ClientView(first)
        view.apply(second.values())
        waiting = pull(server, view.previous())
        assert await held(waiting)
        write_file(ws.primary / "later_note.md", "# Later\n")
        (ws.primary / "FEATURE_search.md").unlink()
        while view.codes("plans.md") or view.codes("FEATURE_search.md"):
            view.apply((await asyncio.wait_for(waiting, 5)).items)
            waiting = pull(server, view.previous())
        assert view.codes("BUGFIX_login.md") == ["broken-link", "unknown-prefix"]
        assert view.codes("bad:draft.md") == ["invalid-name"]
        waiting.cancel()
        with contextlib.suppress(asyncio.CancelledError, JsonRpcRequestCancelled):
            await waiting


class ClientView:
    """What a client shows after applying workspace reports, as VS Code does."""

    def __init__(self, items: Iterable[types.WorkspaceDocumentDiagnosticReport]) -> None:
        self.shown: dict[str, tuple[str, str, list[str]]] = {}
        self.apply(items)

    def apply(self, items: Iterable[types.WorkspaceDocumentDiagnosticReport]) -> None:
        """Keep each report's result id; show a full report's codes."""
        for name, item in by_file(list(items)).items():
            kept = self.shown.get(name, (item.uri, "", []))[2]
            if isinstance(item, types.WorkspaceFullDocumentDiagnosticReport):
                kept = codes(item)
            self.shown[name] = (item.uri, item.result_id or "", kept)

    def codes(self, name: str) -> list[str]:
        """The codes shown for a file."""
        return self.shown[name][2] if name in self.shown else []

    def previous(self) -> list[types.PreviousResultId]:
        """The result ids the client sends back."""
        return [types.PreviousResultId(uri=uri, value=rid) for uri, rid, _ in self.shown.values()]


async def test_document_pull_is_empty_while_open(tmp_path: Path) -> None:
    ws = problem_workspace(tmp_path)
    async with session(ws, capabilities=pull_capabilities()) as server:
        await pull(server, [])  # the store has been checked
        uri = ws.uri(".serena/memories/BUGFIX_login.md")

        async def document(previous_id: str | None = None) -> types.DocumentDiagnosticReport:
            return await server.client.text_document_diagnostic_async(
                types.DocumentDiagnosticParams(
                    text_document=types.TextDocumentIdentifier(uri=uri),
                    previous_result_id=previous_id,
                )
            )

        closed = await document()
        assert isinstance(closed, types.RelatedFullDocumentDiagnosticReport)
        assert [d.code for d in closed.items] == ["unknown-prefix"]
        again = await document(closed.result_id)
        assert isinstance(again, types.RelatedUnchangedDocumentDiagnosticReport)
        # Open, its problems are pushed as typed: the pull report is empty (no duplicates).
        server.open(".serena/memories/BUGFIX_login.md")
        assert await server.wait_for_codes(uri, bool) == ["unknown-prefix"]
        opened = await document(closed.result_id)
        assert isinstance(opened, types.RelatedFullDocumentDiagnosticReport)
        assert list(opened.items) == []
        server.close(uri)
        await server.wait_for_codes(uri, lambda found: not found)
        reclosed = await document(opened.result_id)
        assert isinstance(reclosed, types.RelatedFullDocumentDiagnosticReport)
        assert [d.code for d in reclosed.items] == ["unknown-prefix"]


async def test_open_files_only_setting(tmp_path: Path) -> None:
    ws = problem_workspace(tmp_path)
    options = ws.init_options(diagnosticsScope="openFiles")
    async with session(ws, capabilities=pull_capabilities(), init_options=options) as server:
        waiting = pull(server, [])
        assert await held(waiting)  # nothing to report
        server.change_configuration({"diagnosticsScope": "workspace"})
        reports = (await asyncio.wait_for(waiting, 5)).items
        assert sorted(by_file(reports)) == [
            "BUGFIX_login.md",
            "FEATURE_search.md",
            "bad:draft.md",
            "plans.md",
        ], [(i.uri, codes(i)) for i in reports]
        # Back to open files: every report the client has is cleared.
        waiting = pull(server, previous(reports))
        server.change_configuration({"diagnosticsScope": "openFiles"})
        cleared = (await asyncio.wait_for(waiting, 5)).items
        assert by_file(cleared).keys() == by_file(reports).keys()
        assert all(codes(item) == [] for item in cleared)
        assert await held(pull(server, previous(cleared)))


async def test_pushed_to_clients_without_pull(tmp_path: Path) -> None:
    ws = problem_workspace(tmp_path)
    async with session(ws, client_name="neovim@v0.7.0") as server:
        bugfix = ws.uri(".serena/memories/BUGFIX_login.md")
        plans = ws.uri(".serena/memories/plans.md")
        assert await server.wait_for_codes(bugfix, bool) == ["unknown-prefix"]
        assert await server.wait_for_codes(plans, bool) == ["broken-link"]
        write_by_another_process(ws.primary / "later_note.md", "# Later\n")
        assert await server.wait_for_codes(plans, lambda found: not found) == []
        # Open, the text's problems; closed again, the file's.
        server.open(".serena/memories/BUGFIX_login.md", "# Bug\n[[nope]]\n")
        await server.wait_for_codes(bugfix, lambda found: "broken-link" in found)
        server.close(bugfix)
        assert await server.wait_for_codes(bugfix, lambda f: f == ["unknown-prefix"])
        # Neovim 0.7 does not answer workspace/configuration: the settings come along.
        scope = {"diagnosticsScope": "openFiles"}
        server.change_configuration(scope, settings={"memoryLs": scope})
        assert await server.wait_for_codes(bugfix, lambda found: not found) == []
        await wait_until(
            server.client,
            types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
            lambda: all(not server.codes(uri) for uri in server.client.diagnostics),
            lambda: str({uri: server.codes(uri) for uri in server.client.diagnostics}),
        )


RETRY_POLICY = """# Payment retry policy

Failed card charges are retried by the retry worker, not by the API handler. The worker
reads the retry schedule from settings: 1 hour, 6 hours, 24 hours, then 72 hours. After
the fourth failure the subscription moves to past due and the customer gets the email.
"""


async def test_near_duplicates_of_closed_files(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    ws.write(".serena/memories/retry_policy.md", RETRY_POLICY)
    ws.write(".serena/memories/retry_policies.md", "# Retries\n\nSee the worker.\n")
    async with session(ws, client_name="neovim@v0.7.0") as server:
        policy = ws.uri(".serena/memories/retry_policy.md")
        plural = ws.uri(".serena/memories/retry_policies.md")
        # Found once the full-text index is built (names alike: policy, policies).
        assert await server.wait_for_codes(plural, bool) == ["near-duplicate"]
        assert await server.wait_for_codes(policy, bool) == ["near-duplicate"]
        # An agent writes a copy: both sides learn of it.
        copy = ws.primary / "billing_retries.md"
        write_by_another_process(copy, RETRY_POLICY.replace("fourth", "fifth"))
        copy_uri = copy.as_uri()
        assert await server.wait_for_codes(copy_uri, bool) == ["near-duplicate"]
        await wait_until(
            server.client,
            types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
            lambda: "billing_retries" in str(server.client.diagnostics[policy][0].data),
            lambda: str(server.client.diagnostics[policy]),
        )
        # Deleted again: gone from the other side too.
        copy.unlink()
        await wait_until(
            server.client,
            types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
            lambda: "billing_retries" not in str(server.client.diagnostics[policy]),
            lambda: str(server.client.diagnostics[policy]),
        )
        assert server.codes(policy) == ["near-duplicate"]  # the plural name remains
