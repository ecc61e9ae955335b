"""The language server warns of a clone that lacks the merge driver its `.gitattributes`
asks for (`missing-merge-driver`, issue 31), and the warning goes once `memory-ls
git-setup` ran in a terminal: pushed to clients without pull, pulled by those with it."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
from pathlib import Path

import attrs
import pytest
from e2e_support import TIMEOUT, Workspace, make_workspace, session, wait_until
from lsprotocol import types
from pytest_lsp import client_capabilities

from memory_ls.lsp.workspace_diagnostics import SETUP_RECHECK_SECONDS

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

ATTRIBUTES = "*.png binary\n.serena/memories/**/*.md merge=memory-ls\n"
CODE = "missing-merge-driver"
# Set up in a terminal, the warning goes at the server's next look.
GONE_WITHIN = SETUP_RECHECK_SECONDS + TIMEOUT


def repository(base: Path) -> Workspace:
    """The standard workspace as a git repository (its own config only) that asks for the
    driver in `.gitattributes`."""
    ws = make_workspace(base)
    run("git", "init", "-q", cwd=ws.root)
    ws.write(".gitattributes", ATTRIBUTES)
    return ws


def run(*command: str, cwd: Path) -> None:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd.parent)}
    env.pop("XDG_CONFIG_HOME", None)
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def git_setup(ws: Workspace) -> None:
    """`memory-ls git-setup` as a user runs it in the workspace."""
    run(sys.executable, "-m", "memory_ls.cli", "git-setup", "--no-global", cwd=ws.root)


async def test_pushed_on_the_attribute_line_and_gone_after_git_setup(tmp_path: Path) -> None:
    ws = repository(tmp_path)
    async with session(ws, client_name="neovim@v0.7.0") as server:
        uri = ws.uri(".gitattributes")
        assert await server.wait_for_codes(uri, bool) == [CODE]
        (found,) = server.client.diagnostics[uri]
        assert found.range == types.Range(
            start=types.Position(line=1, character=25), end=types.Position(line=1, character=40)
        )
        assert found.severity == types.DiagnosticSeverity.Warning
        assert found.message.endswith("run memory-ls git-setup")
        git_setup(ws)
        await wait_until(
            server.client,
            types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS,
            lambda: not server.codes(uri),
            lambda: f"diagnostics of {uri}: {server.codes(uri)}",
            timeout=GONE_WITHIN,
        )


def pull_capabilities() -> types.ClientCapabilities:
    """VS Code's profile plus pull diagnostics, as vscode-languageclient declares them."""
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


async def test_pulled_with_the_workspace_s_reports(tmp_path: Path) -> None:
    ws = repository(tmp_path)
    uri = ws.uri(".gitattributes")
    async with session(ws, capabilities=pull_capabilities()) as server:
        first = await server.client.workspace_diagnostic_async(
            types.WorkspaceDiagnosticParams(previous_result_ids=[], identifier="memory-ls")
        )
        reports = {item.uri: item for item in first.items}
        report = reports.get(uri)
        assert isinstance(report, types.WorkspaceFullDocumentDiagnosticReport), reports.keys()
        assert [d.code for d in report.items] == [CODE]
        # Requests with nothing new are held; set up, one is answered with it cleared.
        git_setup(ws)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + GONE_WITHIN
        items = first.items
        while True:
            known = [types.PreviousResultId(uri=i.uri, value=i.result_id or "") for i in items]
            answer = await asyncio.wait_for(
                server.client.workspace_diagnostic_async(
                    types.WorkspaceDiagnosticParams(
                        previous_result_ids=known, identifier="memory-ls"
                    )
                ),
                max(deadline - loop.time(), 0.001),
            )
            items = answer.items
            now = {item.uri: item for item in items}[uri]
            if isinstance(now, types.WorkspaceFullDocumentDiagnosticReport):
                assert list(now.items) == []
                break
