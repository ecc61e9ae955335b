"""Other agents' files in the editor: CLAUDE.md and its imports, Claude Code's auto memory
(MEMORY.md and its topic files) in a temporary HOME, a real git repository, the real server."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import attrs
import pytest
from e2e_support import TIMEOUT, Session, Workspace, session, write_file
from lsprotocol import types
from pytest_lsp import client_capabilities

from memory_ls.core.layouts.claude import project_slug

pytestmark = pytest.mark.asyncio(loop_scope="function")

CLAUDE_MD = "# Project\n\nSee @docs/setup.md and @docs/missing.md.\nAsk @alice.\n"
SETUP = "# Setup\n\nAlso @more.md and @../CLAUDE.md.\n"
INDEX = "# Memory\n\n- [Build](build.md) — how to build\n"


@dataclass
class Repo:
    """A git repository (the workspace) and a HOME with Claude Code's auto memory."""

    workspace: Workspace
    home: Path

    @property
    def root(self) -> Path:
        return self.workspace.root

    @property
    def memory(self) -> Path:
        """The auto memory folder Claude Code keeps for this repository."""
        slug = project_slug(str(self.root))
        return self.home / ".claude" / "projects" / slug / "memory"

    def env(self) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "CLAUDE_CONFIG_DIR": "",
            "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "",
        }


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=True, timeout=60)


def make_repo(base: Path) -> Repo:
    workspace = Workspace(base)
    workspace.write("CLAUDE.md", CLAUDE_MD)
    workspace.write("docs/setup.md", SETUP)
    workspace.write("docs/guide/intro.md", "# Intro\n")
    workspace.write("src/app.py", "print('hi')\n")
    workspace.write(".serena/memories/project_overview.md", "# Overview\n")
    git(workspace.root, "init", "-q", "-b", "main")
    repo = Repo(workspace, base / "home")
    write_file(repo.memory / "MEMORY.md", INDEX)
    write_file(repo.memory / "build.md", "# Build\n\nRun make.\n")
    write_file(repo.memory / "orphan.md", "# Orphan\n\nNever indexed.\n")
    return repo


@asynccontextmanager
async def started(repo: Repo) -> AsyncIterator[Session]:
    async with session(repo.workspace, init_options={}, env=repo.env()) as server:
        yield server


def open_file(server: Session, path: Path, text: str | None = None) -> str:
    """Open any file (in the workspace or not) as Markdown; return its URI."""
    return server.open(str(path), text)


def messages(server: Session, uri: str, code: str) -> list[str]:
    return [d.message for d in server.client.diagnostics.get(uri, ()) if d.code == code]


# ----- live diagnostics -------------------------------------------------------------------


async def test_claude_md_and_its_imports_are_checked_as_typed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    async with started(repo) as server:
        uri = open_file(server, repo.root / "CLAUDE.md")
        await server.wait_for_codes(uri, lambda codes: "broken-import" in codes)
        (message,) = messages(server, uri, "broken-import")
        assert message.startswith("@docs/missing.md imports")
        broken = next(d for d in server.client.diagnostics[uri] if d.code == "broken-import")
        line = CLAUDE_MD.split("\n")[2]
        assert broken.range.start == types.Position(line=2, character=line.index("@docs/m"))
        assert broken.source == "memory-ls"

        # The editor's text, not the disk's: fixed as typed, back as typed.
        server.replace_text(uri, "# Project\n\nSee @docs/setup.md.\n", 2)
        await server.wait_for_codes(uri, lambda codes: "broken-import" not in codes)
        server.replace_text(uri, "# Project\n\n@docs/gone.md\n", 3)
        await server.wait_for_codes(uri, lambda codes: "broken-import" in codes)
        (message,) = messages(server, uri, "broken-import")
        assert message.startswith("@docs/gone.md imports")

        # A file CLAUDE.md imports gets its own imports checked (its cycle back too).
        setup = open_file(server, repo.root / "docs" / "setup.md")
        await server.wait_for_codes(setup, lambda codes: "broken-import" in codes)
        assert "@more.md" in messages(server, setup, "broken-import")[0]
        server.replace_text(setup, "# Setup\n\nNothing imported.\n", 2)
        await server.wait_for_codes(setup, lambda codes: codes == [])


async def test_auto_memory_index_and_topics_in_the_editor(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    async with started(repo) as server:
        orphan = open_file(server, repo.memory / "orphan.md")
        await server.wait_for_codes(orphan, lambda codes: codes == ["unindexed-memory"])
        assert messages(server, orphan, "unindexed-memory")[0].startswith("orphan.md is never")
        build = open_file(server, repo.memory / "build.md")
        index = open_file(server, repo.memory / "MEMORY.md")
        # MEMORY.md's links name topic files beside it, not repository paths: no problem.
        await server.wait_for_codes(index, lambda codes: codes == [])

        server.replace_text(index, INDEX + "- [Gone](gone.md) — missing\n", 2)
        await server.wait_for_codes(index, lambda codes: "broken-link" in codes)
        assert messages(server, index, "broken-link")[0].startswith("gone.md does not exist")
        server.replace_text(index, "# Memory\n" + "- line\n" * 210 + "- [Build](build.md)\n", 3)
        await server.wait_for_codes(index, lambda codes: "context-budget" in codes)
        server.replace_text(index, INDEX, 4)
        await server.wait_for_codes(index, lambda codes: codes == [])

        # Other files as on disk: the index saved with the orphan's entry, a file event.
        (repo.memory / "MEMORY.md").write_text(INDEX + "- [Orphan](orphan.md)\n")
        server.notify_files((repo.memory / "MEMORY.md", types.FileChangeType.Changed))
        await server.wait_for_codes(orphan, lambda codes: codes == [])
        assert server.codes(build) == []


async def test_new_agent_files_and_memories_keep_their_diagnostics(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    async with started(repo) as server:
        # A memory's diagnostics are what they were (no agent checks on it).
        memory = server.open(".serena/memories/network.md", "# Net\n\n@docs/nope.md [[nope]]\n")
        assert await server.wait_for_codes(memory, bool) == ["broken-link"]
        # A plain Markdown file no CLAUDE.md imports gets none.
        plain = server.open("notes/plain.md", "@docs/nope.md\n[[nope]]\n")
        assert await server.wait_for_codes(plain, bool) == ["broken-link"]

        # A CLAUDE.md created in a subfolder: listed again after the file event.
        repo.workspace.write("src/CLAUDE.md", "@missing.md\n")
        sub = server.open("src/CLAUDE.md")
        server.notify_files((repo.root / "src" / "CLAUDE.md", types.FileChangeType.Created))
        await server.wait_for_codes(sub, lambda codes: codes == ["broken-import"])
        # The missing file appears: the import is no longer broken.
        repo.workspace.write("src/missing.md", "# Here\n")
        server.notify_files((repo.root / "src" / "missing.md", types.FileChangeType.Created))
        await server.wait_for_codes(sub, lambda codes: codes == [])


# ----- navigation -------------------------------------------------------------------------


def at(text: str, needle: str, offset: int = 1) -> types.Position:
    """The position `offset` characters into the first `needle` of a text."""
    before = text[: text.index(needle) + offset].split("\n")
    return types.Position(line=len(before) - 1, character=len(before[-1]))


async def definition(server: Session, uri: str, position: types.Position) -> list[str]:
    result = await server.client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=position
        )
    )
    if result is None:
        return []
    assert isinstance(result, list)
    return [
        item.target_uri if isinstance(item, types.LocationLink) else item.uri  # type: ignore[union-attr]
        for item in result
    ]


async def hover(server: Session, uri: str, position: types.Position) -> str | None:
    result = await server.client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position)
    )
    if result is None:
        return None
    assert isinstance(result.contents, types.MarkupContent)
    return result.contents.value


async def references(
    server: Session, uri: str, position: types.Position, declaration: bool = False
) -> list[tuple[str, int, int]]:
    result = await server.client.text_document_references_async(
        types.ReferenceParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=position,
            context=types.ReferenceContext(include_declaration=declaration),
        )
    )
    return sorted((r.uri, r.range.start.line, r.range.start.character) for r in result or [])


async def test_imports_and_index_links_navigate_to_their_files(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    setup_uri = (repo.root / "docs" / "setup.md").as_uri()
    claude_uri = (repo.root / "CLAUDE.md").as_uri()
    async with started(repo) as server:
        claude = open_file(server, repo.root / "CLAUDE.md")
        # Go to definition: the imported file; nothing for a missing file or a mention.
        assert await definition(server, claude, at(CLAUDE_MD, "@docs/setup")) == [setup_uri]
        assert await definition(server, claude, at(CLAUDE_MD, "@docs/setup", 0)) == [setup_uri]
        assert await definition(server, claude, at(CLAUDE_MD, "@docs/missing")) == []
        assert await definition(server, claude, at(CLAUDE_MD, "@alice")) == []

        # Hover: where the file is, whether it exists, its estimated tokens.
        shown = await hover(server, claude, at(CLAUDE_MD, "setup.md"))
        assert shown is not None
        tokens = (len(SETUP) + 3) // 4
        assert shown == f"**`docs/setup.md`** · exists · about {tokens} tokens (estimated)"
        missing = await hover(server, claude, at(CLAUDE_MD, "@docs/missing"))
        assert missing is not None and "**does not exist**" in missing
        assert "`docs/missing.md`" in missing
        assert await hover(server, claude, at(CLAUDE_MD, "@alice")) is None

        # In an imported file, its own imports navigate too (relative to it).
        setup = open_file(server, repo.root / "docs" / "setup.md")
        assert await definition(server, setup, at(SETUP, "@../CLAUDE.md")) == [claude_uri]

        # References: anywhere in an imported file, the imports that name it.
        importing = (claude_uri, 2, CLAUDE_MD.split("\n")[2].index("@docs/setup"))
        assert await references(server, setup, types.Position(line=0, character=0)) == [importing]
        assert await references(server, claude, at(CLAUDE_MD, "@docs/setup")) == [importing]
        with_file = await references(server, setup, types.Position(line=1, character=0), True)
        assert with_file == sorted([importing, (setup_uri, 0, 0)])

        # MEMORY.md: its links lead to the topic files, which are "indexed by" it.
        index = open_file(server, repo.memory / "MEMORY.md")
        build_uri = (repo.memory / "build.md").as_uri()
        assert await definition(server, index, at(INDEX, "build.md")) == [build_uri]
        build_hover = await hover(server, index, at(INDEX, "build.md", 3))
        assert build_hover is not None
        assert build_hover.startswith("**`~/.claude/projects/")
        assert "build.md`** · exists · about 5 tokens" in build_hover
        build = open_file(server, repo.memory / "build.md")
        index_uri = (repo.memory / "MEMORY.md").as_uri()
        link = (index_uri, 2, INDEX.split("\n")[2].index("build.md"))
        assert await references(server, build, types.Position(line=2, character=3)) == [link]
        # A topic file no entry names: no references (as for any other file).
        orphan = open_file(server, repo.memory / "orphan.md")
        assert await references(server, orphan, types.Position(line=0, character=0)) == []

        # An entry past what Claude Code loads says so.
        long_index = "# Memory\n" + "- line\n" * 210 + "- [Build](build.md)\n"
        server.replace_text(index, long_index, 2)
        late = await hover(server, index, at(long_index, "build.md"))
        assert late is not None and "this entry is not loaded" in late

        # A memory's navigation is what it was: no agent answer for `@` in it.
        memory = server.open(".serena/memories/notes.md", "# Notes\n\n@docs/setup.md\n")
        assert await definition(server, memory, types.Position(line=2, character=3)) == []
        assert await hover(server, memory, types.Position(line=2, character=3)) is None


# ----- completion -------------------------------------------------------------------------


async def complete(
    server: Session, uri: str, text: str, version: int
) -> list[types.CompletionItem]:
    """Replace the document's text (CURSOR marks the cursor) and complete there."""
    before, after = text.split("¦", 1)
    server.replace_text(uri, before + after, version)
    lines = before.split("\n")
    result = await server.complete(uri, len(lines) - 1, len(lines[-1]))
    return list(result.items) if result is not None else []


def edits(items: list[types.CompletionItem]) -> list[tuple[str, str, int, int]]:
    """Each item's label, new text and the columns it replaces."""
    found = []
    for item in items:
        edit = item.text_edit
        assert isinstance(edit, types.TextEdit), item
        found.append(
            (item.label, edit.new_text, edit.range.start.character, edit.range.end.character)
        )
    return found


async def test_paths_complete_after_at_and_in_memory_md_links(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    async with started(repo) as server:
        claude = open_file(server, repo.root / "CLAUDE.md")
        # The repository's files and folders as git lists them, relative to CLAUDE.md;
        # hidden ones once a `.` is typed; CLAUDE.md itself left out.
        items = await complete(server, claude, "# P\n\nSee @¦", 2)
        assert [(i.label, i.kind) for i in items] == [
            ("docs/", types.CompletionItemKind.Folder),
            ("src/", types.CompletionItemKind.Folder),
        ]
        assert [i.label for i in await complete(server, claude, "@.¦", 3)] == [".serena/"]
        # The segment being typed is what is replaced (the rest of it after the cursor too).
        items = await complete(server, claude, "x @docs/se¦tu and more", 4)
        assert edits(items) == [("setup.md", "setup.md", 8, 12)]
        items = await complete(server, claude, "@docs/¦", 5)
        assert [(i.label, i.detail) for i in items] == [("guide/", "folder"), ("setup.md", "file")]
        # Not an import: in code, or an e-mail address.
        assert await complete(server, claude, "`@do¦`", 6) == []
        assert await complete(server, claude, "me@do¦", 7) == []
        # Memory names after `[[` are offered as before.
        items = await complete(server, claude, "[[project_ov¦", 8)
        assert [i.label for i in items] == ["project_overview"]

        # In a file CLAUDE.md imports, relative to that file.
        setup = open_file(server, repo.root / "docs" / "setup.md")
        assert [i.label for i in await complete(server, setup, "@gu¦", 2)] == ["guide/"]
        # A file nothing imports gets no paths.
        plain = server.open("notes/plain.md", "")
        assert await complete(server, plain, "@do¦", 2) == []

        # MEMORY.md: the topic files beside it, those not yet indexed first, closed.
        index = open_file(server, repo.memory / "MEMORY.md")
        items = await complete(server, index, INDEX + "- [Orphan](¦", 2)
        line = len("- [Orphan](")
        assert edits(items) == [
            ("orphan.md", "orphan.md)", line, line),
            ("build.md", "build.md)", line, line),
        ]
        assert [i.detail for i in items] == [
            "topic file, not indexed",
            "topic file, already in the index",
        ]
        items = await complete(server, index, INDEX + "- [Orphan](orp¦han.md)", 3)
        assert edits(items) == [("orphan.md", "orphan.md", line, line + len("orphan.md"))]


# ----- workspace diagnostics --------------------------------------------------------------


def pull_capabilities() -> types.ClientCapabilities:
    """VS Code's profile plus pull diagnostics (vscode-languageclient 9)."""
    caps = client_capabilities("visual-studio-code")
    text_document = attrs.evolve(
        caps.text_document,
        diagnostic=types.DiagnosticClientCapabilities(dynamic_registration=True),
    )
    workspace = attrs.evolve(
        caps.workspace,
        diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True),
    )
    return attrs.evolve(caps, text_document=text_document, workspace=workspace)


async def pulled_until(
    server: Session,
    reports: dict[str, types.WorkspaceDocumentDiagnosticReport],
    done: Callable[[dict[str, list[str]]], bool],
) -> dict[str, list[str]]:
    """Pull workspace diagnostics (held until news) until the codes by file name satisfy
    `done`; `reports` keeps the client's view (by URI)."""

    def view() -> dict[str, list[str]]:
        return {
            Path(uri).name: sorted(str(d.code) for d in report.items)
            for uri, report in reports.items()
            if isinstance(report, types.WorkspaceFullDocumentDiagnosticReport) and report.items
        }

    while not done(view()):
        known = [types.PreviousResultId(uri=u, value=r.result_id or "") for u, r in reports.items()]
        answer = await asyncio.wait_for(
            server.client.workspace_diagnostic_async(
                types.WorkspaceDiagnosticParams(previous_result_ids=known, identifier="memory-ls")
            ),
            TIMEOUT,
        )
        for item in answer.items:
            if isinstance(item, types.WorkspaceFullDocumentDiagnosticReport):
                reports[item.uri] = item
    return view()


async def test_agent_files_in_workspace_diagnostics(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    async with session(
        repo.workspace, init_options={}, env=repo.env(), capabilities=pull_capabilities()
    ) as server:
        reports: dict[str, types.WorkspaceDocumentDiagnosticReport] = {}
        found = await pulled_until(server, reports, lambda codes: "orphan.md" in codes)
        assert found["CLAUDE.md"] == ["broken-import"]
        assert found["setup.md"] == ["broken-import", "import-cycle"]
        assert found["orphan.md"] == ["unindexed-memory"]

        # Fixed on disk (a file event): its report clears; the others stay.
        (repo.root / "CLAUDE.md").write_text("# Project\n\nSee @docs/setup.md.\n")
        server.notify_files((repo.root / "CLAUDE.md", types.FileChangeType.Changed))
        found = await pulled_until(server, reports, lambda codes: "CLAUDE.md" not in codes)
        assert found["orphan.md"] == ["unindexed-memory"]
