"""Navigation (SPEC 3.4): hover, definition, document links, references, workspace and
document symbols, with VS Code's (UTF-16) and Neovim's (UTF-8) client capabilities."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import contextmanager

import pytest
import pytest_asyncio
from e2e_support import CLIENTS, Session, Workspace, make_workspace, session, write_file
from lsprotocol import types
from navigation_support import Editor, position, span

pytestmark = pytest.mark.asyncio(loop_scope="module")

BULK = 120  # more memories than one workspace-symbol answer holds
LINKER = (
    "# Linker\n"
    "😀 Plain [[FEATURE_checkout]] and labelled [[FEATURE_checkout|the checkout]].\n"
    "Serena writes `mem:FEATURE_checkout`; personal [[global/style_guide]].\n"
    "Broken [[style_guid]] here; shared [[style_guide]].\n"
)
CHECKOUT = (
    "---\ntags: [checkout, auth]\nupdated_at: 2025-10-08T03:07:11Z\n---\n"
    "# Checkout\n\nThe checkout flow, step by step.\n"
)
OUTLINE = (
    "---\ntitle: '# not a heading'\n---\n"
    "# Top\nintro\n## First\n### Deeper 😀\ntext\n## Second\n```\n# code\n```\n# Other\nend"
)
_documents = itertools.count()


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    """The standard workspace plus references to FEATURE_checkout in every kind of folder."""
    workspace = make_workspace(tmp_path_factory.mktemp("navigation"))
    workspace.write("shared/feature/FEATURE_checkout.md", CHECKOUT)
    workspace.write(".serena/memories/linker.md", LINKER)
    workspace.write(".serena/memories/suggested_commands.md", "# Commands\n")
    workspace.write(".serena/memories/outline.md", OUTLINE)
    write_file(workspace.outside / "checkout_rules.md", "Team rule: see [[FEATURE_checkout]].\n")
    write_file(
        workspace.global_folder / "checkout_habits.md",
        "Personal: `mem:FEATURE_checkout` and [[global/style_guide|mine]].\n",
    )
    # Markdown on disk that is not a memory and not open: not searched.
    workspace.write("notes/on_disk.md", "[[FEATURE_checkout]]\n")
    for number in range(BULK):
        workspace.write(f".serena/memories/bulk/note_{number:03d}.md", f"# Bulk {number}\n")
    return workspace


@pytest_asyncio.fixture(scope="module", loop_scope="module", params=CLIENTS)
async def server(request: pytest.FixtureRequest, ws: Workspace) -> AsyncIterator[Session]:
    """One server per client flavour; tests only read the store."""
    async with session(ws, client_name=request.param) as running:
        yield running


@contextmanager
def opened(server: Session, text: str, relative: str | None = None) -> Iterator[str]:
    """A document open for one test (a fresh note unless `relative` is given)."""
    path = server.workspace.path(relative or f"notes/nav_{next(_documents)}.md")
    editor = Editor(server)
    uri = editor.open(path, text)
    try:
        yield uri
    finally:
        editor.close_all()


def doc_id(uri: str) -> types.TextDocumentIdentifier:
    """A document identifier."""
    return types.TextDocumentIdentifier(uri=uri)


async def hover(server: Session, uri: str, at: types.Position) -> types.Hover | None:
    """Hover at a position."""
    return await server.client.text_document_hover_async(
        types.HoverParams(text_document=doc_id(uri), position=at)
    )


async def definition(server: Session, uri: str, at: types.Position) -> list[str]:
    """The target URIs of go-to-definition at a position."""
    result = await server.client.text_document_definition_async(
        types.DefinitionParams(text_document=doc_id(uri), position=at)
    )
    if result is None:
        return []
    assert isinstance(result, list), result
    return [
        item.target_uri if isinstance(item, types.LocationLink) else item.uri for item in result
    ]


async def references(
    server: Session, uri: str, at: types.Position, declaration: bool = False
) -> list[tuple[str, int]]:
    """(path relative to the test base, line) of each reference found, sorted."""
    result = await server.client.text_document_references_async(
        types.ReferenceParams(
            text_document=doc_id(uri),
            position=at,
            context=types.ReferenceContext(include_declaration=declaration),
        )
    )
    base = server.workspace.base.as_uri() + "/"
    return sorted((loc.uri.removeprefix(base), loc.range.start.line) for loc in result or [])


def markdown(result: types.Hover | None) -> str:
    """A hover's Markdown text."""
    assert result is not None
    assert isinstance(result.contents, types.MarkupContent), result.contents
    assert result.contents.kind == types.MarkupKind.Markdown
    return result.contents.value


# ----- hover -------------------------------------------------------------------------------


async def test_hover_shows_folder_scope_tags_update_and_preview(server: Session) -> None:
    with opened(server, LINKER) as uri:
        result = await hover(server, uri, position(server, LINKER, "[[FEATURE_checkout|", 4))
        text = markdown(result)
        assert "**`FEATURE_checkout`** · project memory in `shared/feature`" in text
        assert "tags: `checkout`, `auth`" in text
        assert "updated 2025-10-08T03:07:11Z" in text
        assert text.endswith("# Checkout\n\nThe checkout flow, step by step.")
        assert result is not None
        assert result.range == span(server, LINKER, "FEATURE_checkout", "[[FEATURE_checkout|")


async def test_hover_on_a_memory_without_frontmatter_gives_the_file_time(server: Session) -> None:
    with opened(server, "see `mem:suggested_commands`\n") as uri:
        text = markdown(await hover(server, uri, types.Position(line=0, character=8)))
        assert "project memory in `.serena/memories`" in text
        assert "(file time)" in text


async def test_hover_on_the_project_name_and_on_the_global_one(server: Session) -> None:
    hidden = server.workspace.global_folder
    with opened(server, LINKER) as uri:
        project = markdown(await hover(server, uri, position(server, LINKER, "[[style_guide]]", 3)))
        personal = markdown(await hover(server, uri, position(server, LINKER, "global/style", 2)))
    assert project.startswith("**`style_guide`** · project memory in `.serena/memories`")
    # style_guide and global/style_guide are two memories: neither hides the other.
    assert "hides" not in project and "hides" not in personal
    assert personal.startswith(f"**`global/style_guide`** · global memory in `{hidden}`")
    assert "Style guide (personal)" in personal


async def test_hover_on_a_broken_link_says_so(server: Session) -> None:
    with opened(server, LINKER) as uri:
        text = markdown(await hover(server, uri, position(server, LINKER, "style_guid]]", 1)))
    assert text.startswith(
        "**Broken link**: no memory named `style_guid` in the project's memory folders."
    )
    assert "Did you mean `style_guide`?" in text
    assert "Saving it would create `.serena/memories/style_guid.md`." in text


async def test_no_hover_away_from_references(server: Session) -> None:
    with opened(server, LINKER) as uri:
        assert await hover(server, uri, position(server, LINKER, "Plain")) is None
        assert await hover(server, uri, types.Position(line=0, character=2)) is None


# ----- definition and document links -------------------------------------------------------


async def test_definition_from_every_reference_form(server: Session) -> None:
    ws = server.workspace
    checkout = ws.path("shared/feature/FEATURE_checkout.md").as_uri()
    personal = (ws.global_folder / "style_guide.md").as_uri()
    with opened(server, LINKER) as uri:
        for needle, offset in (
            ("[[FEATURE_checkout]]", 0),  # on the opening brackets
            ("[[FEATURE_checkout|", 10),  # on the name of a labelled link
            ("the checkout]]", 5),  # on its label
            ("`mem:FEATURE_checkout`", 8),
        ):
            at = position(server, LINKER, needle, offset)
            assert await definition(server, uri, at) == [checkout], needle
        at = position(server, LINKER, "global/style_guide", 3)
        assert await definition(server, uri, at) == [personal]
        assert await definition(server, uri, position(server, LINKER, "style_guid]]")) == []
        assert await definition(server, uri, position(server, LINKER, "Plain")) == []


async def test_definition_link_underlines_the_whole_reference(server: Session) -> None:
    with opened(server, LINKER) as uri:
        result = await server.client.text_document_definition_async(
            types.DefinitionParams(
                text_document=doc_id(uri), position=position(server, LINKER, "`mem:FEAT", 3)
            )
        )
    assert isinstance(result, list) and isinstance(result[0], types.LocationLink)
    assert result[0].origin_selection_range == span(server, LINKER, "`mem:FEATURE_checkout`")


async def test_document_links_for_every_reference_that_resolves(server: Session) -> None:
    ws = server.workspace
    with opened(server, LINKER) as uri:
        links = await server.client.text_document_document_link_async(
            types.DocumentLinkParams(text_document=doc_id(uri))
        )
    assert links is not None
    found = [(link.range, link.target) for link in links]
    checkout = ws.path("shared/feature/FEATURE_checkout.md").as_uri()
    assert found == [
        (span(server, LINKER, "FEATURE_checkout", "Plain"), checkout),
        (span(server, LINKER, "FEATURE_checkout", "labelled"), checkout),
        (span(server, LINKER, "FEATURE_checkout", "mem:"), checkout),
        (
            span(server, LINKER, "global/style_guide"),
            (ws.global_folder / "style_guide.md").as_uri(),
        ),
        (span(server, LINKER, "style_guide", "shared"), (ws.primary / "style_guide.md").as_uri()),
    ]


# ----- references --------------------------------------------------------------------------

CHECKOUT_REFERENCES = [
    ("global/checkout_habits.md", 0),
    ("project/.serena/memories/linker.md", 1),
    ("project/.serena/memories/linker.md", 1),
    ("project/.serena/memories/linker.md", 2),
    ("team/checkout_rules.md", 0),
]


async def test_references_in_every_folder_and_open_document(server: Session) -> None:
    # An open note that is not saved yet counts; a note only on disk does not.
    note = "Draft\n\nAlso [[ FEATURE_checkout ]].\n"
    with opened(server, note, "notes/draft.md"), opened(server, LINKER) as uri:
        at = position(server, LINKER, "FEATURE_checkout", 3)
        found = await references(server, uri, at)
        with_declaration = await references(server, uri, at, declaration=True)
    open_note = uri.removeprefix(server.workspace.base.as_uri() + "/")
    assert found == sorted(
        [
            *CHECKOUT_REFERENCES,
            ("project/notes/draft.md", 2),
            *[(open_note, line) for line in (1, 1, 2)],
        ]
    )
    assert sorted(set(with_declaration) - set(found)) == [
        ("project/shared/feature/FEATURE_checkout.md", 0)
    ]


async def test_references_from_inside_the_memory_file(server: Session) -> None:
    path = "shared/feature/FEATURE_checkout.md"
    with opened(server, CHECKOUT, path) as uri:
        found = await references(server, uri, position(server, CHECKOUT, "step by step"))
    assert found == CHECKOUT_REFERENCES


async def test_references_use_the_open_text_of_a_memory(server: Session) -> None:
    edited = "# Linker\n\n\nMoved down: [[FEATURE_checkout]]\n"
    with opened(server, edited, ".serena/memories/linker.md") as uri:
        found = await references(server, uri, position(server, edited, "FEATURE_checkout"))
    assert [item for item in found if "linker" in item[0]] == [
        ("project/.serena/memories/linker.md", 3)
    ]


async def test_references_follow_shadowing(server: Session) -> None:
    ws = server.workspace
    with opened(server, LINKER) as uri:
        project = await references(server, uri, position(server, LINKER, "[[style_guide]]", 2))
    note = uri.removeprefix(ws.base.as_uri() + "/")
    personal_path = str(ws.global_folder / "style_guide.md")
    with opened(server, "# Style guide (personal)\n", personal_path) as personal:
        hidden = await references(server, personal, types.Position(line=0, character=3))
    assert project == sorted([("project/.serena/memories/linker.md", 3), (note, 3)])
    assert hidden == [("global/checkout_habits.md", 0), ("project/.serena/memories/linker.md", 2)]


async def test_references_of_a_broken_link_are_its_other_mentions(server: Session) -> None:
    with opened(server, "[[style_guid]]\n") as first, opened(server, "x [[style_guid]]\n"):
        found = await references(server, first, types.Position(line=0, character=4))
    # Both notes, and the linker memory.
    assert sorted(line for _path, line in found) == [0, 0, 3]


# ----- symbols -----------------------------------------------------------------------------


async def workspace_symbols(
    server: Session, query: str
) -> Sequence[types.WorkspaceSymbol | types.SymbolInformation]:
    """Workspace symbols for a query (a WorkspaceSymbol with a full location reads back as the
    SymbolInformation it is shaped like)."""
    result = await server.client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
    assert result is not None
    return result


async def test_workspace_symbols_match_fuzzy_and_are_capped(server: Session) -> None:
    found = await workspace_symbols(server, "sugcom")
    assert found[0].name == "suggested_commands"
    assert found[0].kind == types.SymbolKind.File
    assert found[0].container_name == "project · .serena/memories"
    location = found[0].location
    assert isinstance(location, types.Location)
    assert location.uri == server.workspace.path(".serena/memories/suggested_commands.md").as_uri()
    checkout = await workspace_symbols(server, "FEATchk")
    assert checkout[0].name == "FEATURE_checkout"
    assert checkout[0].container_name == "project · shared/feature"
    personal = await workspace_symbols(server, "edtips")
    assert [s.name for s in personal][:1] == ["global/editor_tips"]
    assert personal[0].container_name == f"global · {server.workspace.global_folder}"
    assert len(await workspace_symbols(server, "note")) == 100
    assert await workspace_symbols(server, "zzzz") == []


async def test_document_symbols_are_the_headings_as_a_tree(server: Session) -> None:
    with opened(server, OUTLINE) as uri:
        result = await server.client.text_document_document_symbol_async(
            types.DocumentSymbolParams(text_document=doc_id(uri))
        )
    assert result is not None
    tree = [item for item in result if isinstance(item, types.DocumentSymbol)]
    assert len(tree) == len(result)

    def shape(symbols: Sequence[types.DocumentSymbol]) -> list[object]:
        return [
            (s.name, s.range.start.line, s.range.end.line, shape(s.children or [])) for s in symbols
        ]

    assert shape(tree) == [
        ("Top", 3, 11, [("First", 5, 7, [("Deeper 😀", 6, 7, [])]), ("Second", 8, 11, [])]),
        ("Other", 12, 13, []),
    ]
    deeper = tree[0].children[0].children[0]  # type: ignore[index]
    assert deeper.selection_range == span(server, OUTLINE, "Deeper 😀")
    assert tree[1].range.end.character == server.units("end")


async def test_closed_files_are_read_from_disk_and_missing_ones_are_empty(
    server: Session,
) -> None:
    ws = server.workspace
    closed = ws.path(".serena/memories/linker.md").as_uri()
    at = position(server, LINKER, "[[FEATURE_checkout]]", 3)
    assert "shared/feature" in markdown(await hover(server, closed, at))
    missing = ws.path("notes/never_written.md").as_uri()
    assert await hover(server, missing, types.Position(line=0, character=0)) is None
    links = await server.client.text_document_document_link_async(
        types.DocumentLinkParams(text_document=doc_id(missing))
    )
    assert not links


async def test_capabilities_advertise_every_navigation_feature(server: Session) -> None:
    assert server.initialized is not None
    capabilities = server.initialized.capabilities
    assert capabilities.hover_provider and capabilities.definition_provider
    assert capabilities.references_provider and capabilities.document_symbol_provider
    assert capabilities.workspace_symbol_provider
    assert capabilities.document_link_provider == types.DocumentLinkOptions(resolve_provider=False)
    assert capabilities.rename_provider == types.RenameOptions(prepare_provider=True)
    code_actions = capabilities.code_action_provider
    assert isinstance(code_actions, types.CodeActionOptions)
    assert list(code_actions.code_action_kinds or ()) == [types.CodeActionKind.QuickFix]
