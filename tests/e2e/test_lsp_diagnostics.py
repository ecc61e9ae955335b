"""Diagnostics (SPEC 3.2) of open documents: each code appears and disappears."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from e2e_support import CLIENTS, Session, Workspace, make_workspace, session, write_file
from lsprotocol import types

pytestmark = pytest.mark.asyncio(loop_scope="module")

MAX_BYTES = 600


def make_problem_workspace(base: Path) -> Workspace:
    """The standard workspace plus memories with problems on disk."""
    workspace = make_workspace(base)
    workspace.write(".serena/memories/FEATURE_search.md", "# Search\n")
    workspace.write(".serena/memories/BUGFIX_login.md", "# Bug\n")
    workspace.write(".serena/memories/notes\u200bdraft.md", "# Draft\n")  # zero-width space
    workspace.write(".serena/memories/bad:draft.md", "# Draft\n")
    workspace.write(".serena/memories/shadow_me.md", "# Project copy\n")
    workspace.write("shared/spec/shadow_me.md", "# Spec copy\n")
    # global/shadow_me is another memory: neither shadowed nor shadowing.
    write_file(workspace.global_folder / "shadow_me.md", "# Global copy\n")
    return workspace


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=CLIENTS)
async def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Session]:
    """One server (and workspace) per client flavour; each test opens its own documents."""
    ws = make_problem_workspace(tmp_path_factory.mktemp("diagnostics"))
    # Open documents only: closed files' problems (test_lsp_workspace_diagnostics.py) would
    # replace what a closed document showed.
    options = ws.init_options(maxMemoryBytes=MAX_BYTES, diagnosticsScope="openFiles")
    async with session(ws, client_name=request.param, init_options=options) as running:
        yield running


def only(server: Session, uri: str, code: str) -> types.Diagnostic:
    """The one published diagnostic of a document with this code."""
    found = [d for d in server.client.diagnostics[uri] if d.code == code]
    assert len(found) == 1, server.client.diagnostics[uri]
    return found[0]


async def test_broken_link_appears_and_disappears(server: Session) -> None:
    uri = server.open("notes/broken.md", "# Notes\n😀 see [[nope]].\n")
    assert await server.wait_for_codes(uri, bool) == ["broken-link"]
    found = only(server, uri, "broken-link")
    assert found.source == "memory-ls"
    assert found.severity == types.DiagnosticSeverity.Warning
    assert found.message == (
        "No memory named nope in the project's memory folders; create it or fix the name."
    )
    assert found.range == types.Range(
        start=types.Position(line=1, character=server.units("😀 see [[")),
        end=types.Position(line=1, character=server.units("😀 see [[nope")),
    )
    server.replace_text(uri, "# Notes\n😀 see [[project_overview]].\n", version=2)
    assert await server.wait_for_codes(uri, lambda codes: not codes) == []


async def test_unknown_prefix_of_a_reference(server: Session) -> None:
    uri = server.open("notes/prefix.md", "Fix in `mem:BUGFIX_timeout`.\n")
    assert await server.wait_for_codes(uri, bool) == ["broken-link", "unknown-prefix"]
    message = only(server, uri, "unknown-prefix").message
    assert message.startswith("Prefix BUGFIX matches no additional folder (configured: feature")
    server.replace_text(uri, "Fix in `mem:FEATURE_checkout`.\n", version=2)
    assert await server.wait_for_codes(uri, lambda codes: not codes) == []


async def test_unknown_prefix_and_misrouted_memory_files(server: Session) -> None:
    bugfix = server.open(".serena/memories/BUGFIX_login.md")
    assert await server.wait_for_codes(bugfix, bool) == ["unknown-prefix"]
    misrouted = server.open(".serena/memories/FEATURE_search.md")
    assert await server.wait_for_codes(misrouted, bool) == ["misrouted"]
    assert "shared/feature" in only(server, misrouted, "misrouted").message
    # The same text in the folder its prefix routes to is fine.
    routed = server.open("shared/feature/FEATURE_search.md", "# Search\n")
    assert await server.wait_for_codes(routed, lambda codes: True) == []
    for uri in (bugfix, misrouted, routed):
        server.close(uri)
    await server.wait_for_codes(misrouted, lambda codes: not codes)
    assert server.codes(bugfix) == []


async def test_invalid_frontmatter_appears_and_disappears(server: Session) -> None:
    uri = server.open(".serena/memories/fm_check.md", "---\ntags: [a, b\n---\n# Body\n")
    assert await server.wait_for_codes(uri, bool) == ["invalid-frontmatter"]
    assert only(server, uri, "invalid-frontmatter").severity == types.DiagnosticSeverity.Error
    server.replace_text(uri, "---\ntags: [a, b]\n---\n# Body\n", version=2)
    assert await server.wait_for_codes(uri, lambda codes: not codes) == []
    server.replace_text(uri, "---\ntags: 5\n---\n# Body\n", version=3)
    assert await server.wait_for_codes(uri, bool) == ["invalid-frontmatter"]
    assert only(server, uri, "invalid-frontmatter").range.start.line == 1


async def test_frontmatter_of_other_markdown_is_not_checked(server: Session) -> None:
    uri = server.open("notes/plain.md", "---\ntags: [broken\n---\n[[nope]]\n")
    assert await server.wait_for_codes(uri, bool) == ["broken-link"]


@pytest.mark.parametrize(
    ("file_name", "shown"),
    [("bad:draft", "'bad:draft'"), ("notes\u200bdraft", "'notes\\u200bdraft'")],
    ids=["colon", "zero-width-space"],
)
async def test_invalid_name_shows_until_closed(server: Session, file_name: str, shown: str) -> None:
    uri = server.open(f".serena/memories/{file_name}.md")
    assert await server.wait_for_codes(uri, bool) == ["invalid-name"]
    assert shown in only(server, uri, "invalid-name").message
    server.close(uri)
    assert await server.wait_for_codes(uri, lambda codes: not codes) == []


@pytest.mark.parametrize(
    "file_name", ["inner space", "emoji_\U0001f9e0", "caf\u00e9", "100%"], ids=repr
)
async def test_documents_whose_uri_is_percent_encoded_get_diagnostics(
    server: Session, file_name: str
) -> None:
    # Names Serena accepts: their URIs carry %20, %F0%9F..., %25 (pygls keys documents by
    # the decoded URI, the client sends the encoded one).
    uri = server.open(f".serena/memories/{file_name}.md", "[[nowhere_at_all]]\n")
    assert await server.wait_for_codes(uri, bool) == ["broken-link"]
    server.close(uri)
    assert await server.wait_for_codes(uri, lambda codes: not codes) == []


async def test_too_large_follows_the_text(server: Session) -> None:
    uri = server.open(".serena/memories/size_check.md", "# Small\n")
    assert await server.wait_for_codes(uri, lambda codes: True) == []
    server.replace_text(uri, "# Big\n" + "x" * MAX_BYTES, version=2)
    assert await server.wait_for_codes(uri, bool) == ["too-large"]
    assert f"limit of {MAX_BYTES}" in only(server, uri, "too-large").message
    server.replace_text(uri, "# Small again\n", version=3)
    assert await server.wait_for_codes(uri, lambda codes: not codes) == []


async def test_shadowed_clears_when_the_other_memory_goes(server: Session) -> None:
    ws = server.workspace
    global_uri = server.open(str(ws.global_folder / "shadow_me.md"))
    assert await server.wait_for_codes(global_uri, lambda codes: True) == []
    uri = server.open("shared/spec/shadow_me.md")
    assert await server.wait_for_codes(uri, bool) == ["shadowed"]
    shadowed = only(server, uri, "shadowed")
    assert shadowed.severity == types.DiagnosticSeverity.Information
    assert str(ws.primary / "shadow_me.md") in shadowed.message
    await server.command("memory.delete", {"name": "shadow_me", "scope": "project"})
    assert await server.wait_for_codes(uri, lambda codes: not codes) == []


async def test_links_resolve_as_soon_as_a_save_creates_the_memory(server: Session) -> None:
    uri = server.open("notes/later.md", "Plan: [[later_note]]\n")
    assert await server.wait_for_codes(uri, bool) == ["broken-link"]
    await server.command("memory.save", {"name": "later_note", "content": "# Later\n"})
    assert await server.wait_for_codes(uri, lambda codes: not codes) == []


async def test_typing_is_debounced(server: Session) -> None:
    uri = server.open("notes/typing.md", "")
    await server.wait_for_codes(uri, lambda codes: True)
    text = ""
    for version, letter in enumerate("[[typed]]", start=2):
        text += letter
        server.replace_text(uri, text, version=version)
    await server.wait_for_codes(uri, bool)
    versions = [p.version for p in server.published if p.uri == uri]
    # One publication on open. The first edit after the pause is checked at once (it may
    # be out before the next edit comes); the rest of the burst once, for its last version.
    assert versions in ([1, 10], [1, 2, 10])


RETRY_POLICY = """# Payment retry policy

Failed card charges are retried by the retry worker, not by the API handler. The worker
reads the retry schedule from settings: 1 hour, 6 hours, 24 hours, then 72 hours. After
the fourth failure the subscription moves to past due and the customer gets the email.
"""


async def test_near_duplicate_appears_when_a_copy_is_saved_and_goes_with_an_edit(
    server: Session,
) -> None:
    uri = server.open(".serena/memories/payment_retries.md", RETRY_POLICY)
    assert await server.wait_for_codes(uri, lambda codes: True) == []
    # An agent writes the same memory again under another name.
    copy = RETRY_POLICY.replace("fourth", "fifth")
    await server.command("memory.save", {"name": "billing/retry_rules", "content": copy})
    assert await server.wait_for_codes(uri, bool) == ["near-duplicate"]
    found = only(server, uri, "near-duplicate")
    assert found.severity == types.DiagnosticSeverity.Information
    assert found.message.startswith("Near-duplicate of billing/retry_rules (their bodies are")
    assert found.data["others"] == ["billing/retry_rules"]
    # Rewritten into a memory of its own: no longer a near-duplicate.
    server.replace_text(uri, "# Refunds\n\nRefunds are issued from the admin panel.\n", version=2)
    assert await server.wait_for_codes(uri, lambda codes: not codes) == []
    # Linking them says they are related on purpose.
    server.replace_text(uri, RETRY_POLICY + "\nSee [[billing/retry_rules]].\n", version=3)
    server.replace_text(uri, RETRY_POLICY, version=4)
    assert await server.wait_for_codes(uri, bool) == ["near-duplicate"]
    server.replace_text(uri, RETRY_POLICY + "\nSee [[billing/retry_rules]].\n", version=5)
    assert await server.wait_for_codes(uri, lambda codes: not codes) == []
