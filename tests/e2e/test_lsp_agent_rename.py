"""Renaming files that Claude Code's imports and MEMORY.md's links name, as the editor's
Explorer does (workspace/willRenameFiles): a real git repository, a temporary HOME with
Claude Code's auto memory, the real server."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from e2e_support import Session, Workspace, session, write_file
from lsprotocol import types

from memory_ls.core.layouts.claude import project_slug

pytestmark = pytest.mark.asyncio(loop_scope="module")

CLAUDE_MD = (
    "# Project\n\nSee @docs/setup.md and @~/.claude/shared.md.\n"
    "`@docs/setup.md` is code.\nAsk @alice.\n"
)
SETUP = "# Setup\n\nAlso @guide/intro.md and @../CLAUDE.md.\n"
INDEX = "# Memory\n\n- [Build](build.md#steps) — how to build\n- [Old](old/a.md)\n"
OVERVIEW_USER = "See [[project_overview]].\n"


class Repo:
    """A git repository (the workspace) and a HOME with Claude Code's auto memory."""

    def __init__(self, base: Path) -> None:
        self.workspace = Workspace(base)
        self.root = self.workspace.root
        self.home = base / "home"
        self.memory = self.home / ".claude" / "projects" / project_slug(str(self.root)) / "memory"

    def env(self) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "CLAUDE_CONFIG_DIR": "",
            "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "",
        }


def make_repo(base: Path) -> Repo:
    repo = Repo(base)
    ws = repo.workspace
    ws.write("CLAUDE.md", CLAUDE_MD)
    ws.write("docs/setup.md", SETUP)
    ws.write("docs/guide/intro.md", "# Intro\n")
    ws.write(".serena/memories/project_overview.md", "# Overview\n")
    ws.write(".serena/memories/overview_user.md", OVERVIEW_USER)
    subprocess.run(
        ["git", "-C", str(repo.root), "init", "-q", "-b", "main"], check=True, timeout=60
    )
    write_file(repo.home / ".claude" / "shared.md", "# Shared\n")
    write_file(repo.memory / "MEMORY.md", INDEX)
    write_file(repo.memory / "build.md", "# Build\n")
    write_file(repo.memory / "old" / "a.md", "# A\n")
    return repo


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    return make_repo(tmp_path_factory.mktemp("agent-rename"))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(repo: Repo) -> AsyncIterator[Session]:
    async with session(repo.workspace, init_options={}, env=repo.env()) as started:
        yield started


def globs(server: Session) -> list[str]:
    registered = [r for r in server.registrations if r.method == types.WORKSPACE_WILL_RENAME_FILES]
    if not registered:
        return []
    options: Any = registered[-1].register_options  # raw JSON in the test client
    return [f["pattern"]["glob"] for f in options["filters"]]


async def will_rename(server: Session, *pairs: tuple[Path, Path]) -> types.WorkspaceEdit | None:
    return await server.client.workspace_will_rename_files_async(
        types.RenameFilesParams(
            files=[types.FileRename(old_uri=o.as_uri(), new_uri=n.as_uri()) for o, n in pairs]
        )
    )


def edits_by_uri(edit: types.WorkspaceEdit) -> dict[str, tuple[int | None, list[types.TextEdit]]]:
    """Each file's text edits and the version they were computed on."""
    found: dict[str, tuple[int | None, list[types.TextEdit]]] = {}
    for uri, edits in (edit.changes or {}).items():
        found[uri] = (None, list(edits))
    for change in edit.document_changes or ():
        assert isinstance(change, types.TextDocumentEdit), change
        edits = [e for e in change.edits if isinstance(e, types.TextEdit)]
        found[change.text_document.uri] = (change.text_document.version, edits)
    return found


def applied(text: str, edits: list[types.TextEdit]) -> str:
    """A text with the edits made (ASCII texts: the client's units are code points)."""
    lines = text.split("\n")
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character))[::-1]:
        assert e.range.start.line == e.range.end.line
        line = lines[e.range.start.line]
        start, end = e.range.start.character, e.range.end.character
        lines[e.range.start.line] = line[:start] + e.new_text + line[end:]
    return "\n".join(lines)


def new_texts(edit: types.WorkspaceEdit | None, texts: dict[Path, str]) -> dict[Path, str]:
    """The files the edit changes, with their new texts (from `texts`, else the disk's)."""
    assert edit is not None
    assert not any(isinstance(c, types.RenameFile) for c in edit.document_changes or ())
    result = {}
    for uri, (_version, edits) in edits_by_uri(edit).items():
        path = Path(uri.removeprefix("file://"))
        text = texts.get(path, path.read_text(encoding="utf-8") if path.exists() else "")
        result[path] = applied(text, edits)
    return result


async def test_the_editor_is_asked_about_the_agents_files(server: Session, repo: Repo) -> None:
    async def registered() -> list[str]:
        for _ in range(100):
            found = globs(server)
            if f"{repo.root}/CLAUDE.md" in found:
                return found
            await asyncio.sleep(0.05)
        raise AssertionError(f"no willRenameFiles filter for CLAUDE.md: {globs(server)}")

    found = await registered()
    assert f"{repo.root}/docs/setup.md" in found
    assert f"{repo.root}/docs/guide/intro.md" in found
    assert f"{repo.root}/docs" in found  # a folder above an imported file
    assert f"{repo.home}/.claude/shared.md" in found
    assert f"{repo.memory}/**" in found
    assert f"{repo.root}/.serena/memories/**/*.md" in found  # the memory folders' still


async def test_an_imported_file_renamed(server: Session, repo: Repo) -> None:
    root = repo.root
    edit = await will_rename(server, (root / "docs/setup.md", root / "guides/setup.md"))
    assert new_texts(edit, {}) == {
        root / "CLAUDE.md": CLAUDE_MD.replace("See @docs/", "See @guides/"),
        # Its own relative imports name the same files from its new folder.
        root / "docs/setup.md": SETUP.replace("@guide/intro.md", "@../docs/guide/intro.md"),
    }


async def test_a_folder_renamed_and_a_home_import(server: Session, repo: Repo) -> None:
    root, home = repo.root, repo.home
    edit = await will_rename(
        server,
        (root / "docs", root / "manual"),
        (home / ".claude", home / ".agents"),  # the `~/` import stays under `~`
    )
    assert new_texts(edit, {}) == {
        root / "CLAUDE.md": CLAUDE_MD.replace("See @docs/", "See @manual/").replace(
            "@~/.claude/", "@~/.agents/"
        ),
    }


async def test_the_open_text_is_used(server: Session, repo: Repo) -> None:
    root = repo.root
    unsaved = "# Typed\n\nNow @docs/setup.md first.\n"
    uri = server.open(str(root / "CLAUDE.md"), unsaved, version=7)
    try:
        # A moment for the server to take the document in.
        for _ in range(50):
            edit = await will_rename(server, (root / "docs/setup.md", root / "s.md"))
            by_uri = edits_by_uri(edit) if edit is not None else {}
            if uri in by_uri and by_uri[uri][1][0].range.start.line == 2:
                break
            await asyncio.sleep(0.05)
        assert edit is not None
        version, edits = edits_by_uri(edit)[uri]
        assert version == 7
        assert applied(unsaved, edits) == "# Typed\n\nNow @s.md first.\n"
    finally:
        server.close(uri)


async def test_auto_memory_topic_files_renamed(server: Session, repo: Repo) -> None:
    memory = repo.memory
    edit = await will_rename(
        server,
        (memory / "build.md", memory / "topics/building.md"),
        (memory / "old", memory / "new"),
    )
    assert new_texts(edit, {}) == {
        memory / "MEMORY.md": INDEX.replace(
            "(build.md#steps)", "(topics/building.md#steps)"
        ).replace("(old/a.md)", "(new/a.md)"),
    }


async def test_memory_renames_are_unchanged_and_merged(server: Session, repo: Repo) -> None:
    serena = repo.root / ".serena/memories"
    memory_rename = (serena / "project_overview.md", serena / "overview.md")
    edit = await will_rename(server, memory_rename)
    assert edit is not None
    (change,) = edit.document_changes or ()
    assert isinstance(change, types.TextDocumentEdit)
    assert change.text_document.uri == (serena / "overview_user.md").as_uri()
    assert change.text_document.version is None
    (text_edit,) = change.edits
    assert isinstance(text_edit, types.TextEdit)
    assert text_edit.new_text == "overview"
    assert text_edit.range == types.Range(
        start=types.Position(line=0, character=6), end=types.Position(line=0, character=22)
    )
    # Both in one request: one edit with both files' rewrites.
    root = repo.root
    edit = await will_rename(server, memory_rename, (root / "docs/setup.md", root / "x.md"))
    changed = new_texts(edit, {})
    assert changed[serena / "overview_user.md"] == "See [[overview]].\n"
    assert changed[root / "CLAUDE.md"] == CLAUDE_MD.replace("See @docs/setup.md", "See @x.md")
    assert root / "docs/setup.md" in changed


async def test_unrelated_renames_change_nothing(server: Session, repo: Repo) -> None:
    root = repo.root
    assert await will_rename(server, (root / "src", root / "lib")) is None
    assert await will_rename(server, (root / "docs/other.md", root / "docs/o.md")) is None
