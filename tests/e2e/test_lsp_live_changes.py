"""Live changes (SPEC 3.5): files written on disk by anyone reach completion and diagnostics.

With the server's own watcher (any client, folders outside the workspace too), and with
only the client's file events (the server's watcher turned off).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from e2e_support import (
    CLIENTS,
    CURSOR,
    SERVER_ENV,
    Session,
    make_workspace,
    session,
    write_file,
)
from lsprotocol import types
from pytest_lsp import client_capabilities

pytestmark = pytest.mark.asyncio(loop_scope="module")

# SPEC 3.5 asks for one second; the test allows for a loaded machine and reports latency.
LIVE_TIMEOUT = 3.0
NO_SERVER_WATCH = {"MEMORY_LS_NO_SERVER_WATCH": "1"}


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=CLIENTS)
async def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[Session]:
    """A server watching the folders itself, one per client flavour."""
    workspace = make_workspace(tmp_path_factory.mktemp("live"))
    async with session(workspace, client_name=request.param) as running:
        yield running


async def resolves(server: Session, uri: str, resolved: bool) -> float:
    """Wait until the document's links all resolve (or all break); return the seconds taken."""
    started = time.monotonic()
    await server.wait_for_codes(
        uri,
        (lambda codes: not codes) if resolved else (lambda codes: "broken-link" in codes),
    )
    return time.monotonic() - started


async def names(server: Session, typed: str) -> list[str]:
    """The names completion offers after `[[typed`."""
    result = await server.complete_at(
        f"notes/names_{time.monotonic_ns()}.md", f"[[{typed}{CURSOR}]]"
    )
    assert result is not None
    return [item.label for item in result.items]


async def test_memories_written_and_deleted_by_an_agent(server: Session) -> None:
    ws = server.workspace
    uri = server.open("notes/agent.md", "[[agent_note]]\n")
    await resolves(server, uri, resolved=False)

    path = write_file(ws.primary / "agent_note.md", "# Written by an agent\n")
    latency = await resolves(server, uri, resolved=True)
    assert latency < LIVE_TIMEOUT
    assert "agent_note" in await names(server, "agent_n")

    path.unlink()
    await resolves(server, uri, resolved=False)
    assert "agent_note" not in await names(server, "agent_n")


async def test_folders_outside_the_workspace_are_watched(server: Session) -> None:
    ws = server.workspace
    uri = server.open("notes/outside.md", "[[team_extra]] and [[global/tip_extra]]\n")
    await resolves(server, uri, resolved=False)
    write_file(ws.outside / "team_extra.md", "# Team\n")
    write_file(ws.global_folder / "tip_extra.md", "# Tip\n")
    await resolves(server, uri, resolved=True)
    (ws.outside / "team_extra.md").unlink()
    await resolves(server, uri, resolved=False)
    assert server.codes(uri) == ["broken-link"]


async def test_changed_content_reaches_tags_and_previews(server: Session) -> None:
    ws = server.workspace
    path = write_file(ws.primary / "changing.md", "# First\n")
    uri = server.open("notes/changing.md", "[[changing]]\n")
    await resolves(server, uri, resolved=True)
    path.write_text("---\ntags: [freshly_added]\n---\n# Second\n", encoding="utf-8")

    async def tag_offered() -> bool:
        result = await server.complete_at(
            f"notes/tags_{time.monotonic_ns()}.md", f"---\ntags: [fresh{CURSOR}]\n---\n"
        )
        return result is not None and "freshly_added" in [i.label for i in result.items]

    await server.eventually(tag_offered, "the new tag never showed", timeout=LIVE_TIMEOUT)
    result = await server.complete_at("notes/preview.md", f"[[changing{CURSOR}]]")
    assert result is not None
    (item,) = [i for i in result.items if i.label == "changing"]
    assert "# Second" in (await server.documentation(item)).value


async def test_topic_folders_created_renamed_and_removed(server: Session) -> None:
    ws = server.workspace
    uri = server.open("notes/topics.md", "[[newtopic/a]] [[newtopic/b]]\n")
    await resolves(server, uri, resolved=False)
    staging = ws.base / "staging"
    write_file(staging / "a.md", "# A\n")
    write_file(staging / "b.md", "# B\n")
    # A whole folder moved in at once: no per-file creation events inside it.
    os.rename(staging, ws.primary / "newtopic")
    await resolves(server, uri, resolved=True)
    shutil.rmtree(ws.primary / "newtopic")
    await resolves(server, uri, resolved=False)
    assert server.codes(uri) == ["broken-link", "broken-link"]


async def test_a_rename_and_a_write_by_another_process(server: Session) -> None:
    ws = server.workspace
    uri = server.open("notes/renamed.md", "[[renamed_after]] [[cli_written]]\n")
    await resolves(server, uri, resolved=False)
    write_file(ws.primary / "renamed_before.md", "# Before\n")
    os.rename(ws.primary / "renamed_before.md", ws.primary / "renamed_after.md")
    # The command-line tool writes atomically (temporary file, then rename).
    subprocess.run(
        [sys.executable, "-c", "from memory_ls.cli import main; main()", "save", "cli_written"],
        input="# From the CLI\n",
        text=True,
        cwd=ws.root,
        env=SERVER_ENV,
        check=True,
        capture_output=True,
    )
    await resolves(server, uri, resolved=True)
    assert "renamed_before" not in await names(server, "renamed_")


async def test_a_primary_folder_created_after_the_start(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    options = ws.init_options(primaryFolder="agent/memories")
    async with session(ws, init_options=options) as fresh:
        uri = fresh.open("notes/later.md", "[[first_memory]]\n")
        await resolves(fresh, uri, resolved=False)
        write_file(ws.root / "agent" / "memories" / "first_memory.md", "# First\n")
        await resolves(fresh, uri, resolved=True)


async def test_a_folder_removed_and_created_again(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    async with session(ws) as fresh:
        uri = fresh.open("notes/global.md", "[[global/editor_tips]]\n")
        await resolves(fresh, uri, resolved=True)
        shutil.rmtree(ws.global_folder)
        await resolves(fresh, uri, resolved=False)
        write_file(ws.global_folder / "editor_tips.md", "# Back again\n")
        await resolves(fresh, uri, resolved=True)


# ----- only the client's file events ---------------------------------------------------


def memory_watch(client: Session) -> types.Registration:
    """The one registration of file events for the memory folders (not the repository's
    watch of `.git` that stale-path asks for outside a git repository)."""

    def of_memories(registration: types.Registration) -> bool:
        watchers = registration.register_options["watchers"]  # type: ignore[index]
        return any(".md" in str(watcher["globPattern"]) for watcher in watchers)

    (registration,) = [
        r
        for r in client.registrations
        if r.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES and of_memories(r)
    ]
    return registration


async def test_client_file_events_alone_keep_the_index_current(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    async with session(ws, env=NO_SERVER_WATCH) as client_only:
        registration = memory_watch(client_only)
        assert registration.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
        patterns = [w["globPattern"] for w in registration.register_options["watchers"]]
        # VS Code 1.65 has no RelativePattern: folders outside the workspace are not asked for.
        assert patterns == [
            ".serena/memories/**/*.md",
            "shared/feature/**/*.md",
            "shared/feature_builder/**/*.md",
            "shared/spec/**/*.md",
        ]

        uri = client_only.open("notes/events.md", "[[evented]]\n")
        await resolves(client_only, uri, resolved=False)
        path = write_file(ws.primary / "evented.md", "# Evented\n")
        assert "evented" not in await names(client_only, "evented")  # nobody told the server

        client_only.notify_files((path, types.FileChangeType.Created))
        await resolves(client_only, uri, resolved=True)
        assert "evented" in await names(client_only, "evented")

        path.unlink()
        client_only.notify_files((path, types.FileChangeType.Deleted))
        await resolves(client_only, uri, resolved=False)

        stray = write_file(ws.root / "elsewhere" / "evented.md", "# Not a memory folder\n")
        client_only.notify_files((stray, types.FileChangeType.Created))
        assert "evented" not in await names(client_only, "evented")


async def test_relative_patterns_cover_folders_outside_the_workspace(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    capabilities = client_capabilities("visual-studio-code")
    assert capabilities.workspace and capabilities.workspace.did_change_watched_files
    capabilities.workspace.did_change_watched_files.relative_pattern_support = True
    async with session(ws, capabilities=capabilities, env=NO_SERVER_WATCH) as client_only:
        registration = memory_watch(client_only)
        watchers = registration.register_options["watchers"]
        bases = [w["globPattern"]["baseUri"] for w in watchers]
        assert ws.outside.as_uri() in bases
        assert ws.global_folder.as_uri() in bases
        assert {w["globPattern"]["pattern"] for w in watchers} == {"**/*.md"}

        uri = client_only.open("notes/team.md", "[[team_evented]]\n")
        await resolves(client_only, uri, resolved=False)
        path = write_file(ws.outside / "team_evented.md", "# Team\n")
        client_only.notify_files((path, types.FileChangeType.Created))
        await resolves(client_only, uri, resolved=True)


async def test_no_registration_where_the_client_cannot_register(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    async with session(ws, client_name="neovim") as neovim:
        await neovim.command("memory.list", {})
        assert neovim.registrations == []


async def test_an_event_seen_by_both_sources_is_handled_once(server: Session) -> None:
    ws = server.workspace
    uri = server.open("notes/dedupe.md", "[[dup_a]] [[dup_b]]\n")
    await server.wait_for_codes(uri, lambda codes: codes == ["broken-link", "broken-link"])
    before = server.publications(uri)
    first = write_file(ws.primary / "dup_a.md", "# A\n")
    server.notify_files((first, types.FileChangeType.Created))
    await server.wait_for_codes(uri, lambda codes: codes == ["broken-link"])
    second = write_file(ws.primary / "dup_b.md", "# B\n")
    server.notify_files((second, types.FileChangeType.Created))
    await server.wait_for_codes(uri, lambda codes: not codes)
    assert server.publications(uri) == before + 2


async def test_a_folder_made_in_a_memory_folder_that_held_none(tmp_path: Path) -> None:
    """A memory folder that holds no folder is watched flat (core/storage/watching.py: no walk of
    its files first); a topic folder made in it later is read, and from then on it is
    watched whole: a file written in the new folder afterwards is seen too."""
    ws = make_workspace(tmp_path)
    flat = ws.root / "flat" / "memories"
    write_file(flat / "top.md", "# Top\n")
    options = ws.init_options(primaryFolder="flat/memories")
    async with session(ws, init_options=options) as fresh:
        uri = fresh.open("notes/topic.md", "[[topic/first]]\n[[topic/second]]\n")
        await resolves(fresh, uri, resolved=False)
        write_file(flat / "topic" / "first.md", "# First\n")  # the folder and a file at once
        await fresh.wait_for_codes(uri, lambda codes: codes == ["broken-link"])
        write_file(flat / "topic" / "second.md", "# Second\n")  # only a recursive watch sees it
        await resolves(fresh, uri, resolved=True)
