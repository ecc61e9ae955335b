"""`stale-path` and `context-budget` in the editor: a real git repository, the real server."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from e2e_support import Session, Workspace, client_capabilities, make_workspace, session
from lsprotocol import types
from navigation_support import code_actions

pytestmark = pytest.mark.asyncio(loop_scope="function")

NOTE = """\
# Network notes

The retry logic lives in `src/net/retry.py`.
Deploying: [steps](../../docs/deploy.md), kept in [kept](docs/keep.md).
The folder `src/old/` is gone; `build/out.js` is ignored but there.
"""
# 10 + 400 * 6 bytes: 2,048 falls 4 bytes into the 340th rule (line 341), 100 just
# after the 15th (line 17).
AUTOLOAD = "# Always\n\n" + "Rule.\n" * 400


def git(root: Path, *args: str) -> None:
    """Run git in the workspace; fail the test on failure."""
    subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=True, timeout=60)


def make_repository(base: Path) -> Workspace:
    """The standard workspace as a git repository: a file moved, one deleted, one ignored."""
    workspace = make_workspace(base)
    root = workspace.root
    workspace.write("src/net/retry.py", "def retry(): ...\n")
    workspace.write("docs/deploy.md", "# Deploy\n")
    workspace.write("docs/keep.md", "# Keep\n")
    workspace.write(".gitignore", "build/\n")
    workspace.write("build/out.js", "built\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.org")
    git(root, "config", "user.name", "Test")
    git(root, "add", ".")
    git(root, "commit", "-qm", "first")
    git(root, "mv", "src/net/retry.py", "src/net/backoff.py")
    git(root, "commit", "-qm", "move retry")
    git(root, "rm", "-q", "docs/deploy.md")
    git(root, "commit", "-qm", "drop deploy")
    workspace.write(".serena/memories/network.md", NOTE)
    return workspace


def stale(server: Session, uri: str) -> dict[str, types.Diagnostic]:
    """The published stale-path diagnostics of a document, by the path they name."""
    text = NOTE.split("\n")
    found = {}
    for diagnostic in server.client.diagnostics.get(uri, ()):
        if diagnostic.code == "stale-path":
            start, end = diagnostic.range.start, diagnostic.range.end
            found[text[start.line][start.character : end.character]] = diagnostic
    return found


async def wait_for_stale(server: Session, uri: str, paths: set[str]) -> dict[str, types.Diagnostic]:
    """Wait until exactly these paths are reported stale."""
    await server.wait_for_codes(uri, lambda _codes: set(stale(server, uri)) == paths)
    return stale(server, uri)


async def fixes(server: Session, uri: str, diagnostic: types.Diagnostic) -> list[types.CodeAction]:
    """The quick fixes offered for one diagnostic."""
    result = await code_actions(
        server,
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]),
        ),
    )
    return [a for a in result if isinstance(a, types.CodeAction)]


def new_text(action: types.CodeAction) -> tuple[types.Range, str]:
    """The one text edit of an action."""
    assert action.edit is not None and action.edit.document_changes is not None
    (change,) = action.edit.document_changes
    assert isinstance(change, types.TextDocumentEdit)
    (edit,) = change.edits
    assert isinstance(edit, types.TextEdit)
    return edit.range, edit.new_text


async def test_stale_paths_their_fixes_and_repository_changes(tmp_path: Path) -> None:
    workspace = make_repository(tmp_path)
    async with session(workspace) as server:
        # The server asked for create and delete events of every workspace file.
        watchers = [
            watcher
            for registration in server.registrations
            if registration.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
            for watcher in registration.register_options["watchers"]  # type: ignore[index]
        ]
        assert any(
            w["globPattern"] in ("**/*", {"baseUri": workspace.root.as_uri(), "pattern": "**/*"})
            and w.get("kind") == 5
            for w in watchers
        ), watchers

        uri = server.open(".serena/memories/network.md", NOTE)
        found = await wait_for_stale(
            server, uri, {"src/net/retry.py", "../../docs/deploy.md", "src/old/"}
        )
        moved = found["src/net/retry.py"]
        assert moved.severity == types.DiagnosticSeverity.Warning
        assert moved.source == "memory-ls"
        assert moved.range.start == types.Position(
            line=2, character=NOTE.split("\n")[2].index("src")
        )

        # git mv: the moved file is offered first, and preferred.
        actions = await fixes(server, uri, moved)
        assert actions[0].title == "Change to src/net/backoff.py (git moved it there)"
        assert actions[0].is_preferred
        assert new_text(actions[0]) == (moved.range, "src/net/backoff.py")

        # Deleted: the closest existing path, written as the link was (from the memory).
        actions = await fixes(server, uri, found["../../docs/deploy.md"])
        assert actions[0].title == ("Change to ../../docs/keep.md (the closest existing path)")
        assert not actions[0].is_preferred

        # The folder appears, a kept file goes away: the client's events re-check the memory.
        workspace.write("src/old/thing.py", "x\n")
        server.notify_files((workspace.path("src/old"), types.FileChangeType.Created))
        await wait_for_stale(server, uri, {"src/net/retry.py", "../../docs/deploy.md"})
        workspace.path("docs/keep.md").unlink()
        server.notify_files((workspace.path("docs/keep.md"), types.FileChangeType.Deleted))
        await wait_for_stale(
            server, uri, {"src/net/retry.py", "../../docs/deploy.md", "docs/keep.md"}
        )

        # Turned off in the configuration: gone, and the file events are no longer asked for.
        server.change_configuration({"diagnostics": {"stale-path": "off"}})
        await wait_for_stale(server, uri, set())

        async def dropped() -> bool:
            return bool(server.unregistrations)

        await server.eventually(dropped, "the workspace watch is dropped")


async def test_no_stale_path_outside_git(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path)
    workspace.write("docs/keep.md", "# Keep\n")
    async with session(workspace) as server:
        uri = server.open(".serena/memories/network.md", NOTE + "\n[[nope]]\n")
        # Published (the broken link shows it), and no stale-path among them.
        assert await server.wait_for_codes(uri, bool) == ["broken-link"]


@pytest.mark.parametrize(
    ("limit", "expected"), [(None, (341, 4)), ("100", (17, 0)), ("9000", None)]
)
async def test_context_budget_in_the_editor(
    tmp_path: Path, limit: str | None, expected: tuple[int, int] | None
) -> None:
    workspace = make_workspace(tmp_path)
    env = {} if limit is None else {"AICODER_MEMORY_AUTOLOAD_LIMIT": limit}
    async with session(workspace, env={"AICODER_MEMORY_AUTOLOAD_LIMIT": "", **env}) as server:
        uri = server.open(".aicoder/memory/autoload.md", AUTOLOAD + "[[nope]]\n")
        codes = await server.wait_for_codes(uri, bool)
        budget = [d for d in server.client.diagnostics[uri] if d.code == "context-budget"]
        if expected is None:
            assert codes == ["broken-link"]
            return
        (found,) = budget
        line, character = expected
        assert found.range.start == types.Position(line=line, character=character)
        assert found.range.end == types.Position(line=len(AUTOLOAD.split("\n")), character=0)
        assert found.severity == types.DiagnosticSeverity.Warning
        assert found.message.startswith("AI Coder reads only the first")


def pushed_workspace_capabilities() -> types.ClientCapabilities:
    """VS Code's capabilities without diagnostic pull: closed files' reports are pushed."""
    capabilities = client_capabilities("visual-studio-code")
    assert capabilities.text_document is not None
    capabilities.text_document.diagnostic = None
    return capabilities


def watched_patterns(server: Session) -> list[object]:
    """The glob patterns of the file watches the server asked for and still holds."""
    dropped = {u.id for u in server.unregistrations}
    return [
        watcher["globPattern"]
        for registration in server.registrations
        if registration.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
        and registration.id not in dropped
        for watcher in registration.register_options["watchers"]  # type: ignore[index]
    ]


async def test_stale_path_follows_git_init_and_file_changes_without_restart(
    tmp_path: Path,
) -> None:
    """A memory no one opened: `git init` turns stale-path on, files coming and going
    re-check it, all through the client's file events."""
    workspace = make_workspace(tmp_path)
    root = workspace.root
    workspace.write(".serena/memories/network.md", "# Net\n\nRetries: `src/net/retry.py`.\n")
    uri = workspace.uri(".serena/memories/network.md")
    async with session(workspace, capabilities=pushed_workspace_capabilities()) as server:
        # Not a repository: off, and only the workspace's .git is watched.
        git_watch = ("**/.git", {"baseUri": root.as_uri(), "pattern": ".git"})
        everything = ("**/*", {"baseUri": root.as_uri(), "pattern": "**/*"})

        def watching(patterns: tuple[object, ...]) -> bool:
            return any(pattern in watched_patterns(server) for pattern in patterns)

        await server.eventually(async_true(lambda: watching(git_watch)), "a watch of .git")
        server.open(".serena/memories/other.md", "# Other\n[[nope]]\n")
        await server.wait_for_codes(workspace.uri(".serena/memories/other.md"), bool)
        assert "stale-path" not in server.codes(uri)

        git(root, "init", "-q", "-b", "main")
        server.notify_files((root / ".git", types.FileChangeType.Created))
        assert await server.wait_for_codes(uri, lambda codes: "stale-path" in codes) == [
            "stale-path"
        ]
        await server.eventually(async_true(lambda: watching(everything)), "a watch of every file")
        assert not watching(git_watch)

        workspace.write("src/net/retry.py", "def retry(): ...\n")
        server.notify_files((workspace.path("src/net"), types.FileChangeType.Created))
        await server.wait_for_codes(uri, lambda codes: "stale-path" not in codes)
        workspace.path("src/net/retry.py").unlink()
        server.notify_files((workspace.path("src/net/retry.py"), types.FileChangeType.Deleted))
        await server.wait_for_codes(uri, lambda codes: "stale-path" in codes)

        # The repository goes away: off again.
        shutil.rmtree(root / ".git")
        server.notify_files((root / ".git", types.FileChangeType.Deleted))
        await server.wait_for_codes(uri, lambda codes: "stale-path" not in codes)


def async_true(check: Callable[[], bool]) -> Callable[[], Awaitable[bool]]:
    """An `eventually` check of a plain condition."""

    async def run() -> bool:
        return check()

    return run
